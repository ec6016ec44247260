"""The copies of deleted text that other records hold, found and replaced by "[deleted]".

A memory's words are copied, verbatim, into what is derived from it:
- a turn that retrieved it: its metrics thought (the context items and the prompt's list of memories),
  the served-request result kept for the turn's request id, and its answer (an extractive answer quotes
  it; an LLM answer may);
- the later turns of the chain it was said in, or of a chain whose answer quoted it: their prompts' chat
  history, their served-request results, and the `corrected` text a follow-up left on an answer; the
  chain's title, which quotes its first message (a statement forgotten from it, `core.admin.deletion`);
- the memory index: the conversation context of its neighbours (and so their text postings and their
  vectors, made with the message before), and indexed answers that quote it.

A copy cut short (a chain's title: the first 120 characters of its first message; a neighbour's context:
the first 4,000) may end inside the deleted words, where no whole copy of them is found: such a copy of a
message whose text changed is cut again from the message as redacted.

They are found by provenance rather than by searching every record for the words (which would also
blank a user's own message that happens to say the same thing): a turn names the memories it retrieved
by id, so the chains to look in are those holding a deleted id, plus the chains the text was said in,
and then those holding the id of a thought that quoted it among other words. Which chains hold an id,
and which records a chain has, are read from sets kept beside the thoughts
(`core.conversation.provenance`), so finding them costs what is deleted, not the whole instance. In those chains every
verbatim copy becomes "[deleted]" (whole words only: deleting "ok" leaves "book" alone); a neighbour's
context loses the deleted message; each index row that changed is written again, so its postings and
counters follow (`core.index.text`) and its vector is made anew. An LLM answer that restated a deleted
memory in its own words is not found by its text (docs/ARCHITECTURE.md, "Deleting").

Retrieval reads the instance and the shared instance: a deletion from the shared instance is looked for
in every instance.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from core.conversation import provenance
from core.conversation.keys import chain_meta_key, feedback_key
from core.conversation.thoughts import CATEGORY_USER, title_after_redaction
from core.ids import SHARED_INSTANCE, pg_text
from core.models import DELETED, MemoryContext

if TYPE_CHECKING:
    import redis

    from core.runtime import Workbench

_WORD = re.compile(r"\w+")
CONTEXT_CHARS = 4000  # a neighbour's context keeps this much of a message (`MemoryContext`)

# Rewrites fields of a hash that still exists: a record deleted meanwhile is not brought back in part.
_HSET_IF_EXISTS = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1
"""


def redact_copies(wb: Workbench, instance: str, texts: Iterable[str], ids: Iterable[str],
                  chains: Iterable[str], *, quoting: Iterable[str] = (),
                  rewriting: Callable[[str], None] = lambda instance: None) -> int:
    """Replace the copies of `texts` (what was deleted: memories `ids`, said in `chains` of `instance`)
    in the records derived from them; returns how many records were rewritten. `quoting`: memories that
    stay but quoted the texts (a correction's "(correcting: …)" of a deleted fact, rewritten by `mend`):
    the chains that retrieved them hold copies too, and their provenance is kept. `rewriting(instance)` is
    called before an instance's index rows are written again (a deletion in the shared instance redacts
    every instance's chains, and rewrites the files of those whose rows changed)."""
    deleted = _Deleted(frozenset(t for t in texts if t.strip()))
    ids = set(ids)
    named = ids | set(quoting)
    scope = (sorted(set(wb.thoughts.instances()) | set(wb.index.instances())) if instance == SHARED_INSTANCE
             else [instance])
    rewritten = 0
    for inst in scope:
        if deleted.texts:
            touched: dict[str, frozenset[str]] = {}
            messages: dict[str, str] = {}
            rewritten += _redact_redis(wb, inst, named, set(chains) if inst == instance else set(), deleted,
                                       touched, messages)
            rewritten += _redact_index(wb, inst, touched, deleted, messages, rewriting)
        # Their copies are redacted: nothing is left to find through the deleted memories' entries.
        provenance.drop_memories(wb.thoughts, inst, ids)
    return rewritten


class _Deleted:
    """A deletion's texts, and their redactor compiled once: most chains remove all of them."""

    def __init__(self, texts: frozenset[str]):
        self.texts, self._all = texts, redactor(texts)

    def redactor(self, texts: frozenset[str]) -> Callable[[str], str] | None:
        return self._all if texts == self.texts else redactor(texts)


def redactor(texts: Iterable[str]) -> Callable[[str], str] | None:
    """A function replacing every whole-word occurrence of the texts by "[deleted]" (None: no text)."""
    variants = {v for t in texts if t.strip() for v in (t, pg_text(t))}
    if not variants:
        return None
    parts = [(r"(?<!\w)" if v[0].isalnum() or v[0] == "_" else "") + re.escape(v)
             + (r"(?!\w)" if v[-1].isalnum() or v[-1] == "_" else "")
             for v in sorted(variants, key=len, reverse=True)]
    pattern = re.compile("|".join(parts))
    return lambda s: pattern.sub(DELETED, s) if s else s


def _redact_redis(wb: Workbench, instance: str, ids: set[str], said_in: set[str], deleted: _Deleted,
                  touched: dict[str, frozenset[str]], messages: dict[str, str]) -> int:
    """Thoughts, served results and feedback of the chains the text was `said_in` and of the chains naming
    one of `ids`; a thought that quoted the text is itself a source then (a turn that retrieved it holds a
    copy too), so this goes on until no new chain is found. `touched` receives the chains rewritten, each
    with the texts removed there; `messages` the thoughts' texts that changed, before and after."""
    r, store = wb.redis(), wb.thoughts
    provenance.ensure(store, instance)
    rewritten, chains = 0, set(said_in)
    while ids or chains:
        chains = (chains | provenance.chains_naming(store, instance, ids, set(touched))) - set(touched)
        ids = set()
        for chain, keys in provenance.record_keys(store, instance, chains).items():
            # The chain's meta too: its title quotes its first message (a statement forgotten from it).
            count, quoting, read, touched[chain] = _redact_chain(r, [*keys, chain_meta_key(instance, chain)],
                                                                 deleted, messages, said_here=chain in said_in)
            rewritten += count
            ids |= quoting
            if count:  # its answers' feedback or metrics may quote the text: the analytics re-read them
                store.feedback_changed(instance, read)
        chains = set()
    return rewritten


def _words(text: str) -> str:
    """The words of a text, lower-cased, each with a space either side: a text's words are in another's
    when its `_words` is a substring of the other's."""
    return " " + " ".join(_WORD.findall(text.casefold())) + " "


def _redact_chain(r: redis.Redis, keys: list[str], deleted: _Deleted, messages: dict[str, str], *,
                  said_here: bool) -> tuple[int, set[str], list[str], frozenset[str]]:
    """Rewrite a chain's thoughts, served results, feedback and title; returns how many records changed,
    the ids of the thoughts whose own text quoted the deleted text among other words, the ids of every
    thought read, and the texts removed. `messages` receives the thoughts' texts that changed (before and
    after): the copies cut from them are cut again.

    In a chain that only retrieved the deleted memory (not `said_here`), a text the user said again in
    their own message is theirs there: it stays, and so do its copies in the chain, which cannot be told
    from copies of the deleted memory."""
    hset = r.register_script(_HSET_IF_EXISTS)
    p = r.pipeline(transaction=False)
    for key in keys:
        p.type(key)
    kinds = p.execute()
    hashes = [k for k, kind in zip(keys, kinds, strict=True) if kind == "hash"]
    p = r.pipeline(transaction=False)
    for key in hashes:
        p.hgetall(key)
    thoughts = p.execute()
    own = [] if said_here else [_words(h.get("thought", "")) for h in thoughts if h.get("category") == CATEGORY_USER]
    texts = frozenset(t for t in deleted.texts if not any(_words(t) in o for o in own))
    redact = deleted.redactor(texts)
    read = [h["id"] for h in thoughts if h.get("id")]
    if redact is None:
        return 0, set(), read, texts
    feedback = [feedback_key(h["id"]) for h in thoughts if h.get("id")]
    p = r.pipeline(transaction=False)
    for key in feedback:
        p.hgetall(key)
    rewritten, quoting = 0, set()
    changed_here = {old: new for h in thoughts if (old := h.get("thought")) and (new := redact(old)) != old}
    messages.update(changed_here)
    for key, fields in zip(hashes + feedback, thoughts + p.execute(), strict=True):
        changed = {f: new for f, v in fields.items() if (new := _redact_value(v, redact)) != v}
        if "title" in fields and "thought" not in fields:  # the chain's meta
            changed.pop("title", None)
            if (title := title_after_redaction(fields["title"], changed_here, redact)) != fields["title"]:
                changed["title"] = title
        if changed and hset(keys=[key], args=[x for kv in changed.items() for x in kv]):
            rewritten += 1
            # A thought that quoted the text spreads it to the turns that retrieve it; one that only
            # said the same words ("Thanks!") is no source of it.
            if changed.get("thought", DELETED) != DELETED and "id" in fields:
                quoting.add(fields["id"])
    for key in (k for k, kind in zip(keys, kinds, strict=True) if kind == "string"):
        value = r.get(key)
        if value is not None and (new := _redact_value(value, redact)) != value:
            rewritten += int(bool(r.set(key, new, xx=True, keepttl=True)))
    return rewritten, quoting, read, texts


def _redact_value(value: str, redact: Callable[[str], str]) -> str:
    """A stored value with the deleted text replaced: inside the strings of a JSON value (written back
    as JSON), or in the text itself."""
    try:
        decoded = json.loads(value)
    except ValueError:
        return redact(value)
    if not isinstance(decoded, str | list | dict):
        return value
    new = _redact_json(decoded, redact)
    return value if new == decoded else json.dumps(new)


def _redact_json(value: Any, redact: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        return [_redact_json(v, redact) for v in value]
    if isinstance(value, dict):
        return {k: _redact_json(v, redact) for k, v in value.items()}
    return value


def _redact_index(wb: Workbench, instance: str, chains: dict[str, frozenset[str]], deleted: _Deleted,
                  messages: dict[str, str], rewriting: Callable[[str], None]) -> int:
    """Index rows of `chains` (each with the texts removed there): a neighbour's context without the
    deleted message, the context cut from a message that changed (`messages`, before and after) cut
    again from what it became, and every copy of the text replaced; changed rows are written again
    (postings, counters and vector follow)."""
    chains = {c: texts for c, texts in chains.items() if texts}
    if not chains or instance not in wb.index.instances():
        return 0
    redactors = {c: (deleted.redactor(texts), texts | {t[:CONTEXT_CHARS] for t in texts})
                 for c, texts in chains.items()}
    cut = {pg_text(old[:CONTEXT_CHARS]): new for old, new in messages.items()}
    changed = []
    for record in wb.index.records(instance, chains=sorted(chains)):
        redact, gone = redactors[record.chain_id]
        context = MemoryContext(before=[cut.get(m) or redact(m) for m in record.context.before if m not in gone],
                                after=[cut.get(m) or redact(m) for m in record.context.after if m not in gone])
        new = record.model_copy(update={"content": redact(record.content), "context": context})
        if new != record:
            changed.append(new)
    if not changed:
        return 0
    rewriting(instance)
    return wb.index.add(changed)

