"""Every Redis key of the product, built here and nowhere else (a static test keeps it so).

`{chain}` is a Redis Cluster hash tag: every key of one chain lives in one slot, so a turn's writes to
its chain go in one transaction even on a cluster.

    thought:<instance>:{<chain>}:<id>     hash   one thought (an answer's and a metrics thought's extra
                                                 fields include the turn's source and key: its Origin)
    chain:<instance>:{<chain>}            zset   thought ids, score = time
    chainmeta:<instance>:{<chain>}        hash   title, created_at, last_at, turns, last_answer_id, seq
    request:<instance>:{<chain>}:<rid>    string result of an already-served request (idempotency)
    tombstone:<instance>:{<chain>}        string the chain was deleted: its turns are refused
    chainkeys:<instance>:{<chain>}        set    keys of the chain its zset does not list: served-request
                                                 results (and thoughts an older writer left out of it)
    retrieved:<instance>:{<chain>}        set    memory ids the chain's turns retrieved (provenance)
    chainfeedback:<instance>:{<chain>}    set    answer ids whose feedback hash names the chain
    retrievedby:<instance>:<memory id>    set    chains of the instance whose turns retrieved the memory
    provenance:<instance>                 string set once the four sets above are complete for the
                                                 instance (`core.conversation.provenance`)
    chains:<instance>                     zset   chain ids, score = last activity
    instances                             set    every instance with chains
    newinstance:<instance>                string the write that told its caller the instance is new (a
                                                 claim: SET NX, kept NEW_INSTANCE_CLAIM_S, given up when the
                                                 write fails), so two first writes at once are not both
                                                 told (`new_instance_note`)
    finishing:<instance>:{<chain>}:<rid>  string the repeat that finishes a turn whose first call stopped
                                                 (a claim, kept FINISH_CLAIM_S: `Remember._finished`)
    summarising:<instance>:{<chain>}      string the process storing the chain's summary (a claim held for
                                                 the write, SUMMARY_CLAIM_S at most: `core.formation.summaries`)
    voice:feedback:<answer id>            hash   synthesis_quality, continued, abandoned, corrected,
                                                 time_to_next, feedback_score (+ instance, chain_id, at,
                                                 final, user_id, metrics_id); once rated: rating (+1 or
                                                 -1), rating_comment, rated_at
    feedback:index:<instance>             zset   answer ids, score = answer time (for analytics)
    feedback:pending:<instance>           zset   answers with no follow-up yet (for the abandon sweep)
    feedback:changes:<instance>           zset   answer ids, score = when their feedback hash or metrics
                                                 thought was last written or deleted (for the analytics
                                                 cache, `core.analytics.frames`); kept a day
    index:outbox                          list   thoughts still to be written to the memory index
    index:outbox:lock                     string the process draining the outbox (expires after 30 s)
    summaries:swept                       zset   instances, score = the last activity up to which the sweep
                                                 summarised quiet chains (core.formation.summaries)
    workbench:demo:loaded                 string set once the demo data is loaded
    deleted:chains:<instance>             set    chain ids the user deleted, kept for good (no text): an
                                                 import leaves those chains out (`core.admin.deleted`)
    deleted:memories:<instance>           set    memory and thought ids the user deleted one by one, likewise
    deleting:<instance>                   hash   deletions under way: what each must still erase (the text
                                                 and ids it removed) until its copies are redacted, so a
                                                 deletion killed midway is finished by the next one
                                                 (`core.admin.deletion`)
    import:<instance>:<file sha-256>      hash   an import's checkpoint: format, file, total, done (records
                                                 stored), started_at, finished_at
    unindexed:<instance>:<file sha-256>   hash   an import's messages stored but not yet committed to the
                                                 memory index: chain -> its message ids (a note dropped once
                                                 the bulk load commits; `core.conversation.indexing`)
    imports:unindexed                     hash   those notes' keys -> the process writing or indexing each,
                                                 so a search or sweep indexes the notes of a dead one
    demo:<instance>                       set    what the demo made there: chain:<id>, memory:<id>,
                                                 bank:<name>, past_task:<pk>, tool_run:<id> (demo reset
                                                 removes only these)

Ids are validated before they are joined: an id holding "{", "}", ":" or "*" could move a key to
another chain's slot, collide with another key, or widen a SCAN pattern to other chains.
"""

from __future__ import annotations

from core.ids import validate_id

INSTANCES = "instances"
OUTBOX = "index:outbox"
OUTBOX_LOCK = "index:outbox:lock"  # held by the one process draining the outbox
SUMMARIES_SWEPT = "summaries:swept"  # per instance: quiet chains summarised up to this last activity
DEMO_LOADED = "workbench:demo:loaded"
IMPORTS_UNINDEXED = "imports:unindexed"  # the notes of imports not yet committed to the index


def _chain(instance: str, chain_id: str) -> str:
    return f"{validate_id(instance, 'instance')}:{{{validate_id(chain_id, 'chain_id')}}}"


def thought_key(instance: str, chain_id: str, thought_id: str) -> str:
    return f"thought:{_chain(instance, chain_id)}:{validate_id(thought_id, 'thought id')}"


def chain_key(instance: str, chain_id: str) -> str:
    return f"chain:{_chain(instance, chain_id)}"


def chain_meta_key(instance: str, chain_id: str) -> str:
    return f"chainmeta:{_chain(instance, chain_id)}"


def request_key(instance: str, chain_id: str, request_id: str) -> str:
    return f"request:{_chain(instance, chain_id)}:{validate_id(request_id, 'request_id')}"


def chain_tombstone(instance: str, chain_id: str) -> str:
    """Set when a chain is deleted (before its keys go): a turn on the chain is refused from then on. In the
    chain's slot, so the turn's script checks it atomically with its writes."""
    return f"tombstone:{_chain(instance, chain_id)}"


def chain_keys_key(instance: str, chain_id: str) -> str:
    return f"chainkeys:{_chain(instance, chain_id)}"


def chain_retrieved_key(instance: str, chain_id: str) -> str:
    return f"retrieved:{_chain(instance, chain_id)}"


def chain_feedback_key(instance: str, chain_id: str) -> str:
    return f"chainfeedback:{_chain(instance, chain_id)}"


def retrieved_by_key(instance: str, memory_id: str) -> str:
    """In the memory's slot, not a chain's: it names chains of any slot."""
    return f"retrievedby:{validate_id(instance, 'instance')}:{validate_id(memory_id, 'memory id')}"


def provenance_key(instance: str) -> str:
    return f"provenance:{validate_id(instance, 'instance')}"


def chain_keys_pattern(instance: str, chain_id: str) -> str:
    """The SCAN pattern of every key of a chain, whatever its kind (the tombstone included): each is
    `<kind>:<instance>:{<chain>}` with or without `:<id>` after it, and ids hold no glob characters."""
    return f"*:{_chain(instance, chain_id)}*"


def thoughts_pattern(instance: str) -> str:
    """The SCAN pattern of every thought of an instance."""
    return f"thought:{validate_id(instance, 'instance')}:*"


def instance_requests_pattern(instance: str) -> str:
    """The SCAN pattern of every served-request result of an instance."""
    return f"request:{validate_id(instance, 'instance')}:*"


def new_instance_claim_key(instance: str) -> str:
    """Held by the first write to an instance that no store knows yet: the one write told it is new."""
    return f"newinstance:{validate_id(instance, 'instance')}"


def turn_finishing_key(instance: str, chain_id: str, request_id: str) -> str:
    """Held by the one repeat of a request that finishes its stored turn (the first call stopped)."""
    return f"finishing:{_chain(instance, chain_id)}:{validate_id(request_id, 'request_id')}"


def summarising_key(instance: str, chain_id: str) -> str:
    """Held by the process storing the chain's summary: of two sweeps at once, one stores and counts it."""
    return f"summarising:{_chain(instance, chain_id)}"


def feedback_key(answer_id: str) -> str:
    return f"voice:feedback:{validate_id(answer_id, 'answer id')}"


def chains_key(instance: str) -> str:
    return f"chains:{validate_id(instance, 'instance')}"


def chain_title_pattern(instance: str) -> str:
    """SORT's GET pattern of each chain's title: its `*` is a chain id of `chains_key(instance)`."""
    return f"chainmeta:{validate_id(instance, 'instance')}:{{*}}->title"


def feedback_index_key(instance: str) -> str:
    return f"feedback:index:{validate_id(instance, 'instance')}"


def feedback_pending_key(instance: str) -> str:
    return f"feedback:pending:{validate_id(instance, 'instance')}"


def feedback_changes_key(instance: str) -> str:
    return f"feedback:changes:{validate_id(instance, 'instance')}"


def demo_items_key(instance: str) -> str:
    return f"demo:{validate_id(instance, 'instance')}"


def deleted_chains_key(instance: str) -> str:
    """The chain ids deleted in the instance, for good (`core.admin.deleted`)."""
    return f"deleted:chains:{validate_id(instance, 'instance')}"


def deleted_memories_key(instance: str) -> str:
    """The memory and thought ids deleted one by one in the instance, for good (`core.admin.deleted`)."""
    return f"deleted:memories:{validate_id(instance, 'instance')}"


def deletion_journal_key(instance: str) -> str:
    """Deletions of the instance under way, each with what it must still erase (`core.admin.deletion`)."""
    return f"deleting:{validate_id(instance, 'instance')}"


def import_checkpoint_key(instance: str, file_hash: str) -> str:
    """Where an import of one file into one instance records how far it got (`workbench import`)."""
    return f"import:{validate_id(instance, 'instance')}:{validate_id(file_hash, 'file hash')}"


def import_unindexed_key(instance: str, file_hash: str) -> str:
    """An import's note of the messages it stored that the memory index has not committed yet."""
    return f"unindexed:{validate_id(instance, 'instance')}:{validate_id(file_hash, 'file hash')}"
