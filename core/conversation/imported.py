"""Conversations imported from elsewhere, stored as chains like live ones (`workbench import`).

An imported chain holds the same user and assistant thoughts as a live chain, at the times the source
gave them, and its thoughts are indexed with their conversation context by the same function as a live
turn's (`indexing.thought_records`). What differs, on purpose:
- No metrics thought: nothing of the turn was measured here (latency, tokens, retrieved context).
- Each answer carries `source = imported` (the `Origin` of a turn) and gets a feedback record marked
  `origin = imported` that holds no feedback: no score, never pending, never abandoned, and analytics
  leave it out unless asked (and then count it in no rate). Ratings can still be given to it. It is
  `final` only when no user message follows it in the conversation (the thought's `next_thought_needed`
  says whether one does): the conversation ended there; the others were followed up, outside the workbench.
- The chain's `last_answer_id` is not set, so a live follow-up on an imported chain never scores an
  imported answer by the months between them.
- Writes are batched: many chains in one pipeline (one transaction on a standalone server), and the
  index is fed by the caller in bulk, not through the outbox.
Ids are derived from the source, so writing the same conversation again writes nothing new: the caller
asks `missing` first and passes only the thoughts that are not stored yet.
"""

from __future__ import annotations

import redis

from core.conversation import provenance
from core.conversation.keys import (
    INSTANCES,
    chain_feedback_key,
    chain_key,
    chain_meta_key,
    chain_tombstone,
    chains_key,
    feedback_index_key,
    feedback_key,
    thought_key,
)
from core.conversation.thoughts import CATEGORY_ASSISTANT, CATEGORY_USER, Thought, ThoughtStore
from core.errors import ServiceUnavailable

IMPORTED = "imported"  # the Origin source and the feedback record's `origin` of an imported answer


def missing(store: ThoughtStore, instance: str, thoughts: list[Thought]) -> list[Thought]:
    """Those of `thoughts` not stored yet: one ZMSCORE per chain, in one round trip."""
    if not thoughts:
        return []
    by_chain: dict[str, list[str]] = {}
    for t in thoughts:
        by_chain.setdefault(t.chain_id, []).append(t.id)
    p = store.r.pipeline(transaction=False)
    for chain, ids in by_chain.items():
        p.zmscore(chain_key(instance, chain), ids)
    stored = {(chain, i) for (chain, ids), scores in zip(by_chain.items(), p.execute(), strict=True)
              for i, score in zip(ids, scores, strict=True) if score is not None}
    return [t for t in thoughts if (t.chain_id, t.id) not in stored]


def store_chains(store: ThoughtStore, instance: str, chains: list[tuple[str, list[Thought]]]) -> None:
    """Write each (title, new thoughts of one chain, in order) with the chains' listings and the answers'
    feedback records. Raises ServiceUnavailable when Redis refuses (nothing of the batch is written on a
    standalone server)."""
    chains = [(title, thoughts) for title, thoughts in chains if thoughts]
    if not chains:
        return
    try:
        spans = _spans(store, instance, [thoughts[0].chain_id for _, thoughts in chains])
        p = store.r.pipeline(transaction=not store.cluster)
        answers: dict[str, float] = {}
        for (title, thoughts), span in zip(chains, spans, strict=True):
            answers |= _write_chain(p, instance, title, thoughts, span)
            if store.cluster:  # a transaction may only touch one slot: the chains go one by one
                p.execute()
        if answers:
            p.zadd(feedback_index_key(instance), answers)
            store.feedback_changed(instance, list(answers), client=p)
        last = {thoughts[-1].chain_id: thoughts[-1].timestamp.timestamp() for _, thoughts in chains}
        p.zadd(chains_key(instance), last, gt=True)
        p.sadd(INSTANCES, instance)
        p.execute()
    except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError) as e:
        raise ServiceUnavailable("Redis", "the import's write did not reach Redis. Check that Redis is "
                                 "running, then import again: it continues where it stopped.") from e


# An imported answer marked final that a user message turns out to follow (a later export continued the
# conversation; or an earlier import marked every imported answer final) is final no more. Only an
# imported answer's record, and only while it exists: a deleted answer's record is never made again.
_FOLLOWED_UP = """
if redis.call('HGET', KEYS[1], 'origin') == ARGV[1] and redis.call('HGET', KEYS[1], 'final') == '1' then
  redis.call('HSET', KEYS[1], 'final', '0')
  return 1
end
return 0
"""


def followed_up(store: ThoughtStore, instance: str, answer_ids: list[str]) -> int:
    """Mark those imported answers as followed by a user message (not final); returns how many changed.
    Read in one round trip first: after the first import that did it, there is nothing left to change."""
    if not answer_ids:
        return 0
    try:
        p = store.r.pipeline(transaction=False)
        for answer in answer_ids:
            p.hmget(feedback_key(answer), ["origin", "final"])
        final = [a for a, (origin, flag) in zip(answer_ids, p.execute(), strict=True)
                 if origin == IMPORTED and flag == "1"]
        if not final:
            return 0
        script = store.r.register_script(_FOLLOWED_UP)
        if store.cluster:  # each record in its own slot: a script a call
            changed = [script(keys=[feedback_key(a)], args=[IMPORTED]) for a in final]
        else:
            p = store.r.pipeline(transaction=False)
            for answer in final:
                script(keys=[feedback_key(answer)], args=[IMPORTED], client=p)
            changed = p.execute()
        store.feedback_changed(instance, [a for a, done in zip(final, changed, strict=True) if done])
        return sum(changed)
    except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError) as e:
        raise ServiceUnavailable("Redis", "the import's write did not reach Redis. Check that Redis is "
                                 "running, then import again: it continues where it stopped.") from e


def _spans(store: ThoughtStore, instance: str, chains: list[str]) -> list[list[float]]:
    """Each chain's first and last times as stored (none for a chain not stored yet), in one round trip."""
    p = store.r.pipeline(transaction=False)
    for chain in chains:
        p.hmget(chain_meta_key(instance, chain), ["created_at", "last_at"])
    return [[float(t) for t in times if t] for times in p.execute()]


def _write_chain(p: redis.client.Pipeline, instance: str, title: str, thoughts: list[Thought],
                 span: list[float]) -> dict[str, float]:
    """Queue one chain's writes; returns its answers by time, for the feedback index. `span`: the chain's
    first and last times as stored, if it is: a file imported again may add messages before or between
    those (its system messages kept this time), and the chain still starts and ends when they do."""
    chain = thoughts[0].chain_id
    meta = chain_meta_key(instance, chain)
    answers: dict[str, float] = {}
    question = ""  # the user thought each answer replies to
    # A chain deleted minutes ago is written only when the import was asked to include what was deleted
    # (`core.admin.deleted`): brought back on purpose, live turns on it are welcome again.
    p.delete(chain_tombstone(instance, chain))
    for t in thoughts:
        fields = t.to_hash()
        p.hset(thought_key(instance, chain, t.id), mapping=fields)
        provenance.note(p, instance, chain, fields)
        if t.category == CATEGORY_USER:
            question = t.id
        elif t.category == CATEGORY_ASSISTANT:
            answers[t.id] = at = t.timestamp.timestamp()
            p.hset(feedback_key(t.id), mapping={
                "synthesis_quality": "", "continued": "0", "abandoned": "0", "corrected": "",
                "time_to_next": "", "feedback_score": "", "instance": instance, "chain_id": chain,
                "at": str(at), "final": "0" if t.next_thought_needed else "1", "user_id": question,
                "origin": IMPORTED})
            p.sadd(chain_feedback_key(instance, chain), t.id)
    p.zadd(chain_key(instance, chain), {t.id: t.timestamp.timestamp() for t in thoughts})
    p.hsetnx(meta, "title", title[:120])
    times = [*span, *(t.timestamp.timestamp() for t in thoughts)]
    p.hset(meta, mapping={"created_at": str(min(times)), "last_at": str(max(times))})
    p.hincrby(meta, "turns", sum(t.category == CATEGORY_USER for t in thoughts))
    p.hincrby(meta, "seq", len(thoughts))
    return answers
