"""The thought store on Redis: conversations (chains of thoughts) and the feedback on each answer.

Its keys, and what each holds, are in `core.conversation.keys`.

A turn's user and assistant thoughts are written in one MULTI/EXEC with their chain index (one slot);
on a standalone server the instance-wide keys join the same transaction, so a turn is all or nothing.
On a cluster a transaction cannot span slots: the chain's transaction goes first, so a crash between
the two steps can leave a complete turn without its listing and feedback entries, never half a turn.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any, Literal

import redis
from pydantic import BaseModel

from core.conversation.feedback import ABANDON_AFTER_S, Feedback
from core.conversation.keys import (INSTANCES, OUTBOX, chain_key, chain_meta_key, chains_key,
                                    feedback_index_key, feedback_key, feedback_pending_key, request_key,
                                    requests_pattern, thought_key)
from core.conversation.metrics import TurnMetrics
from core.errors import NotFound, ServiceUnavailable
from core.ids import validate_id

CATEGORY_USER = "ui_remember:user"
CATEGORY_ASSISTANT = "ui_remember:assistant"
CATEGORY_METRICS = "ui_remember:metrics"


class Thought(BaseModel):
    id: str
    instance: str
    chain_id: str
    thought: str
    timestamp: datetime
    category: str
    thought_number: int = 1
    total_thoughts: int = 1
    next_thought_needed: bool = True
    importance: float = 0.5
    tags: list[str] = []
    seq: int = 0
    extra: dict[str, Any] = {}  # what a category adds: model, tokens, latency for metrics thoughts

    def to_hash(self) -> dict[str, str]:
        base = {
            "id": self.id, "instance": self.instance, "chain_id": self.chain_id, "thought": self.thought,
            "timestamp": self.timestamp.astimezone(UTC).isoformat().replace("+00:00", "Z"),
            "category": self.category, "thought_number": str(self.thought_number),
            "total_thoughts": str(self.total_thoughts),
            "next_thought_needed": "1" if self.next_thought_needed else "0",
            "importance": str(self.importance), "tags": json.dumps(self.tags), "seq": str(self.seq),
        }
        base.update({k: v if isinstance(v, str) else json.dumps(v) for k, v in self.extra.items()})
        return base

    @classmethod
    def from_hash(cls, h: dict[str, str]) -> Thought:
        known = {"id", "instance", "chain_id", "thought", "timestamp", "category", "thought_number",
                 "total_thoughts", "next_thought_needed", "importance", "tags", "seq"}
        extra = {k: _maybe_json(v) for k, v in h.items() if k not in known}
        return cls(id=h["id"], instance=h["instance"], chain_id=h["chain_id"], thought=h["thought"],
                   timestamp=datetime.fromisoformat(h["timestamp"].replace("Z", "+00:00")),
                   category=h["category"], thought_number=int(h.get("thought_number", 1)),
                   total_thoughts=int(h.get("total_thoughts", 1)),
                   next_thought_needed=h.get("next_thought_needed", "1") == "1",
                   importance=float(h.get("importance", 0.5)), tags=json.loads(h.get("tags", "[]")),
                   seq=int(h.get("seq", 0)), extra=extra)


class ChainSummary(BaseModel):
    instance: str
    chain_id: str
    title: str
    created_at: datetime
    last_at: datetime
    turns: int

    @property
    def age_seconds(self) -> float:
        return max(0.0, (datetime.now(UTC) - self.last_at).total_seconds())


class FeedbackRecord(BaseModel):
    answer_id: str
    instance: str
    chain_id: str
    answered_at: datetime
    synthesis_quality: float | None
    feedback_score: float | None
    continued: int
    abandoned: int
    corrected: str
    time_to_next: float | None
    final: bool = False
    # The user's explicit rating (`record_rating`), a signal of its own beside the behavioural one above.
    rating: Literal["up", "down"] | None = None
    rating_comment: str = ""
    rated_at: datetime | None = None

    @classmethod
    def from_hash(cls, answer_id: str, h: dict[str, str]) -> FeedbackRecord:
        def num(key: str) -> float | None:
            return float(h[key]) if h.get(key) not in (None, "") else None

        rating = num("rating")
        rated_at = num("rated_at")
        return cls(answer_id=answer_id, instance=h.get("instance", ""), chain_id=h.get("chain_id", ""),
                   answered_at=datetime.fromtimestamp(float(h.get("at", 0)), UTC),
                   synthesis_quality=num("synthesis_quality"), feedback_score=num("feedback_score"),
                   continued=int(h.get("continued", 0)), abandoned=int(h.get("abandoned", 0)),
                   corrected=h.get("corrected", ""), time_to_next=num("time_to_next"),
                   final=h.get("final", "0") == "1",
                   rating=None if rating is None else "up" if rating > 0 else "down",
                   rating_comment=h.get("rating_comment", ""),
                   rated_at=None if rated_at is None else datetime.fromtimestamp(rated_at, UTC))


# Sets follow-up feedback only if the answer has none yet: concurrent follow-ups never overwrite the
# first, and an answer already marked abandoned keeps that mark (the user came back too late).
_FOLLOWUP = """
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
if redis.call('HGET', KEYS[1], 'continued') == '1' then return 0 end
redis.call('HSET', KEYS[1], 'continued', '1', 'time_to_next', ARGV[1], 'corrected', ARGV[2],
           'feedback_score', ARGV[3], 'synthesis_quality', ARGV[3])
return 1
"""
# Rates an answer only if its feedback record exists and belongs to the instance asking (ARGV[1]), so a
# rating can neither recreate a deleted answer's record nor reach another instance's.
_RATE = """
if redis.call('HGET', KEYS[1], 'instance') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'rating', ARGV[2], 'rating_comment', ARGV[3], 'rated_at', ARGV[4])
return 1
"""
_ABANDON = """
if redis.call('HGET', KEYS[1], 'continued') == '0' and redis.call('HGET', KEYS[1], 'final') ~= '1' then
  redis.call('HSET', KEYS[1], 'abandoned', '1')
  return 1
end
return 0
"""


class RatingRecord(BaseModel):
    """A user's explicit rating of an answer (up or down, with an optional comment)."""

    instance: str
    answer_id: str
    rating: Literal["up", "down"]
    comment: str = ""
    rated_at: datetime


class ThoughtStore:
    def __init__(self, client: redis.Redis, *, cluster: bool = False):
        self.r = client
        self.cluster = cluster
        self._followup = client.register_script(_FOLLOWUP)
        self._abandon = client.register_script(_ABANDON)
        self._rate = client.register_script(_RATE)

    # -- writes -----------------------------------------------------------------------------

    def next_seq(self, instance: str, chain_id: str, n: int = 3) -> int:
        """Reserve n consecutive sequence numbers in the chain; returns the first."""
        return int(self.r.hincrby(chain_meta_key(instance, chain_id), "seq", n)) - n + 1

    def served(self, instance: str, chain_id: str, request_id: str) -> str | None:
        return self.r.get(request_key(instance, chain_id, request_id))

    def serve(self, instance: str, chain_id: str, request_id: str, result_json: str) -> None:
        """Keep (or replace) the result a repeat of the request gets, for a day like the first copy."""
        self._commit([lambda p: p.set(request_key(instance, chain_id, request_id), result_json, ex=86400)])

    def append_turn(self, user: Thought, answer: Thought, *, request_id: str | None = None,
                    result_json: str | None = None, final: bool = False, index_answer: bool = True,
                    metrics_id: str | None = None) -> None:
        """Write a user thought and its answer atomically, with the chain's indexes and a fresh
        feedback hash for the answer. Raises ServiceUnavailable if Redis refuses.

        The feedback hash also names the turn's user thought and (when given) its metrics thought, so
        analytics read a turn by key instead of searching its chain."""
        instance, chain = user.instance, user.chain_id
        validate_id(instance, "instance")
        validate_id(chain, "chain_id")
        at = answer.timestamp.timestamp()

        def chain_part(p: redis.client.Pipeline) -> None:
            for t in (user, answer):
                p.hset(thought_key(instance, chain, t.id), mapping=t.to_hash())
                p.zadd(chain_key(instance, chain), {t.id: t.timestamp.timestamp()})
            meta = chain_meta_key(instance, chain)
            p.hsetnx(meta, "title", user.thought[:120])
            p.hsetnx(meta, "created_at", str(user.timestamp.timestamp()))
            p.hset(meta, mapping={"last_at": str(at), "last_answer_id": answer.id})
            p.hincrby(meta, "turns", 1)
            if request_id and result_json:
                p.set(request_key(instance, chain, request_id), result_json, ex=86400)

        def instance_part(p: redis.client.Pipeline) -> None:
            p.zadd(chains_key(instance), {chain: at}, gt=True)  # GT still adds a new chain
            p.sadd(INSTANCES, instance)
            p.hset(feedback_key(answer.id), mapping={
                "synthesis_quality": "", "continued": "0", "abandoned": "0", "corrected": "",
                "time_to_next": "", "feedback_score": "", "instance": instance, "chain_id": chain,
                "at": str(at), "final": "1" if final else "0", "user_id": user.id,
                **({"metrics_id": metrics_id} if metrics_id else {})})
            p.zadd(feedback_index_key(instance), {answer.id: at})
            if not final:
                p.zadd(feedback_pending_key(instance), {answer.id: at})
            to_index = (user, answer) if index_answer else (user,)
            p.rpush(OUTBOX, *(json.dumps({"instance": instance, "chain_id": chain, "id": t.id}) for t in to_index))

        self._commit([chain_part, instance_part])

    def append(self, thought: Thought) -> None:
        """Write one more thought (a metrics thought) into its chain."""
        def part(p: redis.client.Pipeline) -> None:
            p.hset(thought_key(thought.instance, thought.chain_id, thought.id), mapping=thought.to_hash())
            p.zadd(chain_key(thought.instance, thought.chain_id), {thought.id: thought.timestamp.timestamp()})

        self._commit([part])

    def record_followup(self, answer_id: str, time_to_next_s: float, fb: Feedback, text: str) -> bool:
        """Store the feedback a follow-up gives the previous answer. False if it already had some."""
        instance = self.r.hget(feedback_key(answer_id), "instance")
        done = self._followup(keys=[feedback_key(answer_id)],
                              args=[f"{time_to_next_s:.3f}", text if fb.corrected else "", f"{fb.feedback_score}"])
        if instance:
            self.r.zrem(feedback_pending_key(instance), answer_id)
        return done == 1

    def record_rating(self, instance: str, answer_id: str, rating: Literal["up", "down"], comment: str,
                      at: datetime) -> RatingRecord:
        """Store an explicit rating on the answer's feedback record (+1 up, -1 down), replacing an earlier
        one; NotFound when the instance has no such answer."""
        done = self._rate(keys=[feedback_key(answer_id)],
                          args=[validate_id(instance, "instance"), 1 if rating == "up" else -1, comment,
                                f"{at.timestamp():.3f}"])
        if done != 1:
            raise NotFound(f"no answer {answer_id!r} in instance {instance!r}: give thought2_id of a "
                           "ui_remember result")
        return RatingRecord(instance=instance, answer_id=answer_id, rating=rating, comment=comment,
                            rated_at=at)

    def sweep_abandoned(self, instance: str, now: float | None = None) -> int:
        """Mark answers with no follow-up for ABANDON_AFTER_S or more as abandoned."""
        cutoff = (now or time.time()) - ABANDON_AFTER_S
        pending = feedback_pending_key(instance)
        marked = 0
        while ids := self.r.zrangebyscore(pending, "-inf", cutoff, start=0, num=500):
            if self.cluster:  # redis-py refuses scripts in a cluster pipeline: one call per answer
                marked += sum(int(self._abandon(keys=[feedback_key(a)]) or 0) for a in ids)
            else:
                # One round trip per batch: each answer is its own key, so the check-and-set scripts
                # go through a non-transactional pipeline.
                p = self.r.pipeline(transaction=False)
                for answer_id in ids:
                    self._abandon(keys=[feedback_key(answer_id)], client=p)
                marked += sum(int(r or 0) for r in p.execute())
            self.r.zrem(pending, *ids)
        return marked

    def delete_chain(self, instance: str, chain_id: str) -> int:
        """Remove a chain's thoughts, indexes and feedback. Returns the number of thoughts removed."""
        ids = self.r.zrange(chain_key(instance, chain_id), 0, -1)
        answers = self.answers_with_feedback(ids)

        def chain_part(p: redis.client.Pipeline) -> None:
            for i in ids:
                p.delete(thought_key(instance, chain_id, i))
            p.delete(chain_key(instance, chain_id), chain_meta_key(instance, chain_id))

        def instance_part(p: redis.client.Pipeline) -> None:
            p.zrem(chains_key(instance), chain_id)
            for a in answers:
                p.delete(feedback_key(a))
            if answers:
                p.zrem(feedback_index_key(instance), *answers)
                p.zrem(feedback_pending_key(instance), *answers)

        self._commit([chain_part, instance_part])
        return len(ids)

    def _commit(self, parts: Sequence) -> None:
        try:
            if self.cluster:  # a transaction may only touch one slot: one per part
                for part in parts:
                    p = self.r.pipeline(transaction=part is parts[0])
                    part(p)
                    p.execute()
            else:
                p = self.r.pipeline(transaction=True)
                for part in parts:
                    part(p)
                p.execute()
        except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError) as e:
            raise ServiceUnavailable("Redis", "the write did not reach Redis; nothing of this turn was stored. "
                                     "Check that Redis is running, then retry.") from e

    # -- reads ------------------------------------------------------------------------------

    def chain_meta(self, instance: str, chain_id: str) -> dict[str, str]:
        return self.r.hgetall(chain_meta_key(instance, chain_id))

    def chain_thoughts(self, instance: str, chain_id: str, *, last: int | None = None) -> list[Thought]:
        """The chain's thoughts in order (only the last `last` ones if given)."""
        start = -last if last else 0
        ids = self.r.zrange(chain_key(instance, chain_id), start, -1)
        return self.get_many(instance, chain_id, ids)

    def get_many(self, instance: str, chain_id: str, ids: Iterable[str]) -> list[Thought]:
        p = self.r.pipeline(transaction=False)
        for i in ids:
            p.hgetall(thought_key(instance, chain_id, i))
        thoughts = [Thought.from_hash(h) for h in p.execute() if h]
        return sorted(thoughts, key=lambda t: (t.timestamp, t.seq))

    def chains(self, instance: str, *, offset: int = 0, limit: int = 20) -> list[ChainSummary]:
        """Chains by last activity, newest first, one page at a time (no SCAN)."""
        ids = self.r.zrevrange(chains_key(instance), offset, offset + limit - 1)
        p = self.r.pipeline(transaction=False)
        for c in ids:
            p.hgetall(chain_meta_key(instance, c))
        out = []
        for c, meta in zip(ids, p.execute(), strict=True):
            if not meta:
                continue
            out.append(ChainSummary(
                instance=instance, chain_id=c, title=meta.get("title", ""),
                created_at=datetime.fromtimestamp(float(meta.get("created_at", 0)), UTC),
                last_at=datetime.fromtimestamp(float(meta.get("last_at", 0)), UTC),
                turns=int(meta.get("turns", 0))))
        return out

    def chain_count(self, instance: str) -> int:
        return int(self.r.zcard(chains_key(instance)))

    def instances(self) -> list[str]:
        return sorted(self.r.smembers(INSTANCES))

    def feedback(self, answer_ids: Sequence[str]) -> dict[str, FeedbackRecord]:
        p = self.r.pipeline(transaction=False)
        for a in answer_ids:
            p.hgetall(feedback_key(a))
        return {a: FeedbackRecord.from_hash(a, h) for a, h in zip(answer_ids, p.execute(), strict=True) if h}

    def feedback_ids(self, instance: str, since: float = float("-inf"), until: float = float("inf")) -> list[str]:
        return self.r.zrangebyscore(feedback_index_key(instance), since, until)

    def feedback_count(self, instance: str) -> int:
        """How many answers of the instance have feedback (the answers analytics read)."""
        return int(self.r.zcard(feedback_index_key(instance)))

    def answers_with_feedback(self, ids: Iterable[str]) -> list[str]:
        """Those of `ids` that are answers with a feedback hash, in their order (one round trip)."""
        ids = list(ids)
        if not ids:
            return []
        p = self.r.pipeline(transaction=False)
        for i in ids:
            p.exists(feedback_key(i))
        return [i for i, found in zip(ids, p.execute(), strict=True) if found]

    # -- the memory-index outbox --------------------------------------------------------------

    def outbox_peek(self, limit: int = 500) -> list[str]:
        return self.r.lrange(OUTBOX, 0, limit - 1)

    def outbox_ack(self, entries: Iterable[str]) -> None:
        p = self.r.pipeline(transaction=False)
        for e in entries:
            p.lrem(OUTBOX, 1, e)
        p.execute()

    def outbox_len(self) -> int:
        return int(self.r.llen(OUTBOX))

    # -- what a deleted chain or thought leaves behind (memory explorer) -----------------------

    def outbox_drop(self, instance: str, chain_id: str, thought_ids: Iterable[str] | None = None) -> int:
        """Remove queued outbox entries of a chain (or of some of its thoughts), so a deleted thought is
        never indexed afterwards by a sync that runs later. Returns how many were removed."""
        wanted = None if thought_ids is None else set(thought_ids)
        dropped = 0
        for e in self.r.lrange(OUTBOX, 0, -1):
            item = _maybe_json(e)
            if (isinstance(item, dict) and item.get("instance") == instance
                    and item.get("chain_id") == chain_id and (wanted is None or item.get("id") in wanted)):
                dropped += int(self.r.lrem(OUTBOX, 0, e))
        return dropped

    def delete_requests(self, instance: str, chain_id: str) -> int:
        """Remove the chain's served-request results: they hold its answers and retrieved context."""
        keys = list(self.r.scan_iter(match=requests_pattern(instance, chain_id), count=1000))
        return int(self.r.delete(*keys)) if keys else 0

    def delete_thought(self, instance: str, chain_id: str, thought_id: str) -> list[str]:
        """Remove one thought with its feedback and the metrics thought about it; returns the ids removed.

        The chain's title is re-made from the thoughts left (it quoted the first user thought); a chain
        with no user or assistant thought left is removed whole.
        """
        thoughts = self.chain_thoughts(instance, chain_id)
        if not any(t.id == thought_id for t in thoughts):
            return []
        gone = [thought_id] + [t.id for t in thoughts if t.category == CATEGORY_METRICS
                               and TurnMetrics.from_fields(t.to_hash()).answer_id == thought_id]
        left = [t for t in thoughts if t.id not in gone and t.category in (CATEGORY_USER, CATEGORY_ASSISTANT)]
        if not left:
            self.delete_chain(instance, chain_id)
            self.outbox_drop(instance, chain_id)
            self.delete_requests(instance, chain_id)
            return [t.id for t in thoughts]
        has_feedback = bool(self.answers_with_feedback([thought_id]))
        meta = chain_meta_key(instance, chain_id)
        last_answer = self.r.hget(meta, "last_answer_id")
        title = next((t.thought[:120] for t in left if t.category == CATEGORY_USER), "")

        def chain_part(p: redis.client.Pipeline) -> None:
            for i in gone:
                p.delete(thought_key(instance, chain_id, i))
            p.zrem(chain_key(instance, chain_id), *gone)
            p.hset(meta, "title", title)
            if last_answer == thought_id:
                p.hdel(meta, "last_answer_id")

        def instance_part(p: redis.client.Pipeline) -> None:
            if has_feedback:
                p.delete(feedback_key(thought_id))
                p.zrem(feedback_index_key(instance), thought_id)
                p.zrem(feedback_pending_key(instance), thought_id)

        self._commit([chain_part, instance_part])
        self.outbox_drop(instance, chain_id, gone)
        self.delete_requests(instance, chain_id)
        return gone

    # -- a few fields of many hashes at once (the feedback analytics) ---------------------------

    # HMGET over many keys in one call, the replies packed as one JSON text: with 10,000 keys, redis-py's
    # per-command cost and its pure-Python reply parser dominate, not Redis. A missing field (Lua's false)
    # is packed as null, so the reply needs no pass in Python. The keys are declared, so this stays
    # correct on a cluster, where keys in different slots go through a pipeline instead.
    _HMGET_MANY = """
local out = {}
for i, key in ipairs(KEYS) do
  local values = redis.call('HMGET', key, unpack(ARGV))
  for j = 1, #ARGV do if not values[j] then values[j] = cjson.null end end
  out[i] = values
end
return cjson.encode(out)
"""
    _HMGET_BATCH = 1000

    def feedback_fields(self, answer_ids: Sequence[str], fields: Sequence[str]) -> list[list[str | None]]:
        """`fields` of each answer's feedback hash, in order; a missing field (or hash) reads as None."""
        return self._hmget_many([feedback_key(a) for a in answer_ids], fields)

    def thought_fields(self, instance: str, thoughts: Sequence[tuple[str, str]], fields: Sequence[str]
                       ) -> list[list[str | None]]:
        """`fields` of each thought, given as (chain id, thought id), in order; a missing field (or
        thought) reads as None."""
        return self._hmget_many([thought_key(instance, chain, t) for chain, t in thoughts], fields)

    def thought_ids_at(self, instance: str, chain_times: Sequence[tuple[str, float | str]]
                       ) -> list[list[str]]:
        """The ids of each chain's thoughts stored at exactly that time (a turn's answer and metrics
        thoughts share the answer's time), for each (chain id, time), in one round trip."""
        p = self.r.pipeline(transaction=False)
        for chain, at in chain_times:
            p.zrangebyscore(chain_key(instance, chain), at, at)
        return p.execute()

    def thoughts_around(self, instance: str, chain_id: str, thought_id: str, *, before: int, after: int
                        ) -> list[Thought]:
        """The thought with up to `before` and `after` of its chain's thoughts on each side, in order;
        [] if it is not in the chain. Reads a window of the chain's sorted set, not the whole chain."""
        rank = self.r.zrank(chain_key(instance, chain_id), thought_id)
        if rank is None:
            return []
        ids = self.r.zrange(chain_key(instance, chain_id), max(0, rank - before), rank + after)
        return self.get_many(instance, chain_id, ids)

    def _hmget_many(self, keys: Sequence[str], fields: Sequence[str]) -> list[list[str | None]]:
        if not keys:
            return []
        if self.cluster:
            p = self.r.pipeline(transaction=False)
            for key in keys:
                p.hmget(key, fields)
            return p.execute()
        script = self.r.register_script(self._HMGET_MANY)
        out: list[list[str | None]] = []
        for i in range(0, len(keys), self._HMGET_BATCH):
            out.extend(json.loads(script(keys=keys[i:i + self._HMGET_BATCH], args=fields)))
        return out


def _maybe_json(v: str) -> Any:
    try:
        return json.loads(v)
    except (ValueError, TypeError):
        return v
