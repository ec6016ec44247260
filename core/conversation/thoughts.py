"""The thought store on Redis: conversations (chains of thoughts) and the feedback on each answer.

Its keys, and what each holds, are in `core.conversation.keys`.

A turn's user and assistant thoughts are written by one script (`_TURN`) with their chain index (one
slot), numbered by the store and idempotent by the turn's request id; on a standalone server the
instance-wide keys and the previous answer's follow-up feedback join the same script, so a turn is all or
nothing. On a cluster a script cannot span slots: the chain's part goes first, so a crash between the two
steps can leave a complete turn without its listing and feedback entries, never half a turn.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

import redis
from pydantic import BaseModel

from core.conversation import provenance
from core.conversation.feedback import ABANDON_AFTER_S, Feedback
from core.conversation.keys import (
    INSTANCES,
    OUTBOX,
    chain_feedback_key,
    chain_key,
    chain_keys_key,
    chain_meta_key,
    chain_retrieved_key,
    chain_title_pattern,
    chain_tombstone,
    chains_key,
    feedback_changes_key,
    feedback_index_key,
    feedback_key,
    feedback_pending_key,
    new_instance_claim_key,
    request_key,
    thought_key,
    turn_finishing_key,
)
from core.conversation.metrics import TurnMetrics
from core.errors import NotFound, OutcomeUnknown, ServiceUnavailable
from core.ids import validate_id
from core.services.holders import holder_dead, holder_token

CATEGORY_USER = "ui_remember:user"
CATEGORY_ASSISTANT = "ui_remember:assistant"
CATEGORY_METRICS = "ui_remember:metrics"
REQUEST_TTL_S = 86400  # how long a served request's result answers its repeats
CHANGES_KEPT_S = 86400  # how long an answer stays in the feedback change log (`feedback_changed_since`)
TITLE_SCAN_BATCH = 2000  # chains whose titles one pipeline reads (`ThoughtStore.chains_titled`)
TURN_ATTEMPTS = 100  # each retry means another turn of the chain was stored first: progress is certain
TITLE_CHARS = 120  # a chain's title is its first message cut here (an import's: stripped first)
# How long the first write to a new instance holds its claim (`claim_new_instance`): longer than a turn takes
# to store (an LLM's answer and retries included), so the writes racing it find the claim. A first write
# that fails gives the claim up at once; one whose process died leaves it to lapse after this.
NEW_INSTANCE_CLAIM_S = 120
# How long the repeat finishing a turn whose first call stopped holds its claim (`claim_finishing`): longer
# than the finishing takes (the outbox lock's wait, the LLM's reading of the message, an ended chain's summary).
FINISH_CLAIM_S = 180


def chain_title(message: str) -> str:
    """The title a chain takes from its first user message."""
    return message[:TITLE_CHARS]


def title_after_redaction(title: str, rewritten: dict[str, str], redact: Callable[[str], str]) -> str:
    """A chain's title once some of its messages were redacted (`rewritten`: each message's text before
    and after). A title cut from a message is cut again from the redacted message: the cut may fall
    inside the redacted words, and a head of them would stay where a whole-text replacement finds none.
    Any other title (an import's own) has its whole copies replaced by `redact`."""
    for old, new in rewritten.items():
        if title == chain_title(old):
            return chain_title(new)
        if title == old.strip()[:TITLE_CHARS]:
            return new.strip()[:TITLE_CHARS]
    return redact(title)


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
                   timestamp=datetime.fromisoformat(h["timestamp"]),
                   category=h["category"], thought_number=int(h.get("thought_number", 1)),
                   total_thoughts=int(h.get("total_thoughts", 1)),
                   next_thought_needed=h.get("next_thought_needed", "1") == "1",
                   importance=float(h.get("importance", 0.5)), tags=json.loads(h.get("tags", "[]")),
                   seq=int(h.get("seq", 0)), extra=extra)


def chain_order(t: Thought) -> tuple[datetime, int]:
    """A chain's order: by time, then by the order the store gave the turn's thoughts."""
    return t.timestamp, t.seq


class ChainSummary(BaseModel):
    instance: str
    chain_id: str
    title: str
    created_at: datetime
    last_at: datetime
    turns: int  # the user turns it holds (deleted ones not counted)

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
    # "imported" for an answer imported from another system (`core.conversation.imported`): it holds no
    # feedback, and `final` says whether the conversation ended there (else a user message followed it).
    origin: str = ""
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
                   final=h.get("final", "0") == "1", origin=h.get("origin", ""),
                   rating=None if rating is None else "up" if rating > 0 else "down",
                   rating_comment=h.get("rating_comment", ""),
                   rated_at=None if rated_at is None else datetime.fromtimestamp(rated_at, UTC))


# Sets follow-up feedback only if the answer has none yet: concurrent follow-ups never overwrite the
# first, and an answer already marked abandoned keeps that mark (the user came back too late). A follow-up
# that came ABANDON_AFTER_S or more later (`late`) marks the answer abandoned itself, whether or not a sweep
# ran first, unless the answer ended the conversation (final: "ended", never abandoned). Shared by the
# turn's script and the follow-up's own (a cluster's turn, whose feedback lives in another slot).
_FOLLOWUP_FN = """
local function followup(key, time_to_next, corrected, score, late)
  if redis.call('EXISTS', key) == 0 then return -1 end
  if redis.call('HGET', key, 'continued') == '1' then return 0 end
  redis.call('HSET', key, 'continued', '1', 'time_to_next', time_to_next, 'corrected', corrected,
             'feedback_score', score, 'synthesis_quality', score)
  if late == '1' and redis.call('HGET', key, 'final') ~= '1' then redis.call('HSET', key, 'abandoned', '1') end
  return 1
end
"""
_FOLLOWUP = _FOLLOWUP_FN + "return followup(KEYS[1], ARGV[1], ARGV[2], ARGV[3], ARGV[4])"
# One turn, atomically, on its chain's keys (KEYS[1..8]: tombstone, request, chain meta, chain, user
# thought, answer thought, the chain's `chainkeys` and `retrieved` sets) and, on a standalone server, the instance's keys after them (declared, so a
# script never touches an undeclared key). It refuses a deleted chain; answers a request already served
# with its result, writing nothing (so a re-sent call is a no-op: when the copy that ran was this
# very call's, re-sent by redis-py after a timeout, it answers with that copy's numbers); writes the turn
# only if the chain's last answer is still the one the caller scored (ARGV's `expected`), else returns
# the one that is, to be scored instead. The store numbers the turn: `seq` (3 per turn) and `turns` count
# in the chain's meta.
_TURN = _FOLLOWUP_FN + """
if redis.call('EXISTS', KEYS[1]) == 1 then return {'deleted'} end
local served = redis.call('GET', KEYS[2])
if served then
  local mine = redis.call('HMGET', KEYS[5], 'seq', 'thought_number')
  if mine[1] then return {'mine', mine[1], mine[2]} end
  return {'served', served}
end
local a = cjson.decode(ARGV[1])
local last = redis.call('HMGET', KEYS[3], 'last_answer_id', 'last_at')
local previous, previous_at = last[1] or '', last[2] or ''
if previous ~= a.expected[1] or previous_at ~= a.expected[2] then return {'moved', previous, previous_at} end
local seq = redis.call('HINCRBY', KEYS[3], 'seq', 3) - 2
local number = redis.call('HINCRBY', KEYS[3], 'turns', 1)
for i, t in ipairs({a.user, a.answer}) do
  local flat = {}
  for k, v in pairs(t.fields) do flat[#flat + 1] = k; flat[#flat + 1] = v end
  redis.call('HSET', KEYS[4 + i], unpack(flat))
  redis.call('HSET', KEYS[4 + i], 'seq', seq + i - 1, 'thought_number', number)
  redis.call('ZADD', KEYS[4], t.at, t.fields.id)
end
redis.call('HSETNX', KEYS[3], 'title', a.title)
redis.call('HSETNX', KEYS[3], 'created_at', a.user.at)
redis.call('HSET', KEYS[3], 'last_at', a.answer.at, 'last_answer_id', a.answer.fields.id)
redis.call('SET', KEYS[2], a.result, 'EX', a.ttl)
redis.call('SADD', KEYS[7], KEYS[2])
if #a.retrieved > 0 then redis.call('SADD', KEYS[8], unpack(a.retrieved)) end
if #KEYS > 8 then
  for _, command in ipairs(a.after) do redis.call(unpack(command)) end
  if a.followup then followup(unpack(a.followup)) end
end
return {'stored', seq, number, previous, previous_at}
"""
# Rates an answer only if its feedback record exists and belongs to the instance asking (ARGV[1]), so a
# rating can neither recreate a deleted answer's record nor reach another instance's.
_RATE = """
if redis.call('HGET', KEYS[1], 'instance') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'rating', ARGV[2], 'rating_comment', ARGV[3], 'rated_at', ARGV[4])
return 1
"""
# Writes a thought that comes after its turn (a metrics thought) unless the chain was deleted meanwhile:
# a turn that committed just before a deletion must not bring the chain back with its metrics thought.
# KEYS: tombstone, thought, chain, the chain's `retrieved` set, then (on a standalone server) the
# `retrievedby` sets of the ARGV[4] ids the thought names; ARGV: time, id, chain id, the ids, the fields.
_APPEND = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local n = tonumber(ARGV[4])
redis.call('HSET', KEYS[2], unpack(ARGV, 5 + n))
redis.call('ZADD', KEYS[3], ARGV[1], ARGV[2])
if n > 0 then redis.call('SADD', KEYS[4], unpack(ARGV, 5, 4 + n)) end
for i = 5, #KEYS do redis.call('SADD', KEYS[i], ARGV[3]) end
return 1
"""
# Marks an answer abandoned unless it was followed, ended the conversation, or is marked already: two
# sweeps at once (two API replicas, the dashboard and `workbench sweep`) read the same pending answers, and
# only the one that marks an answer counts it.
_ABANDON = """
local fields = redis.call('HMGET', KEYS[1], 'continued', 'final', 'abandoned')
if fields[1] == '0' and fields[2] ~= '1' and fields[3] ~= '1' then
  redis.call('HSET', KEYS[1], 'abandoned', '1')
  return 1
end
return 0
"""


# Releases a claim (`ThoughtStore.claim`) only while it is still its claimer's: one that lapsed and was taken
# by another writer stays that writer's.
_RELEASE_CLAIM = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


class TurnState(BaseModel):
    """A chain as a turn finds it: its request's result if served already, and the chain's last answer (id
    and time as stored, "" for none)."""

    served: str | None
    last_answer: tuple[str, str]


class TurnWrite(BaseModel):
    """What `append_turn` did: stored the turn (its first sequence number, its thought number, the answer
    it followed, and the times its user thought and answer were stored with: `placed`), or found its
    request served already (that result, as JSON)."""

    seq: int = 0
    number: int = 0
    previous: str | None = None
    served: str | None = None
    placed: tuple[datetime, datetime] | None = None


def placed_after(user: Thought, answer: Thought, previous_at: str) -> tuple[Thought, Thought]:
    """The turn's thoughts, their times moved to just after the chain's last answer (`previous_at`, as stored)
    when they began before it: a turn that another turn of the chain (another API replica, another
    assistant) stored first comes after that turn in the chain, as in its numbers and its feedback, so
    its question never sits between the other turn's question and answer. Unchanged otherwise."""
    if not previous_at:
        return user, answer
    after = datetime.fromtimestamp(float(previous_at), UTC) + timedelta(microseconds=1)
    if user.timestamp >= after:
        return user, answer
    return (user.model_copy(update={"timestamp": after}),
            answer.model_copy(update={"timestamp": max(answer.timestamp, after)}))


class RatingRecord(BaseModel):
    """A user's explicit rating of an answer (up or down, with an optional comment)."""

    instance: str
    answer_id: str
    rating: Literal["up", "down"]
    comment: str = ""
    rated_at: datetime



def outbox_peek(r: redis.Redis, limit: int) -> list[str]:
    """The outbox's first `limit` entries, oldest first, through the client given (a search glances at it
    through one whose calls wait less: `Services.redis_glance`)."""
    return r.lrange(OUTBOX, 0, limit - 1)

class ThoughtStore:
    def __init__(self, client: redis.Redis, *, cluster: bool = False):
        self.r = client
        self.cluster = cluster
        self._followup = client.register_script(_FOLLOWUP)
        self._turn = client.register_script(_TURN)
        self._abandon = client.register_script(_ABANDON)
        self._rate = client.register_script(_RATE)
        self._append = client.register_script(_APPEND)
        self._release_claim = client.register_script(_RELEASE_CLAIM)

    # -- writes -----------------------------------------------------------------------------

    def turn_state(self, instance: str, chain_id: str, request_id: str) -> TurnState:
        """Before a turn does any work: the request's result if it was served already, and the chain's last
        answer (what `append_turn` expects). Raises NotFound for a deleted chain."""
        p = self.r.pipeline(transaction=False)
        p.exists(chain_tombstone(instance, chain_id))
        p.get(request_key(instance, chain_id, request_id))
        p.hmget(chain_meta_key(instance, chain_id), ["last_answer_id", "last_at"])
        deleted, served, (last, last_at) = p.execute()
        if deleted:
            raise _deleted(instance, chain_id)
        return TurnState(served=served, last_answer=(last or "", last_at or ""))

    def served(self, instance: str, chain_id: str, request_id: str) -> str | None:
        """The result a repeat of the request gets now (None: never served, expired, or its chain deleted)."""
        return self.r.get(request_key(instance, chain_id, request_id))

    def serve(self, instance: str, chain_id: str, request_id: str, result_json: str) -> None:
        """Replace the result a repeat of the request gets (kept a day, like the first copy). It names the
        memories the first copy named, so the provenance sets `append_turn` wrote stay true."""
        self._commit([lambda p: p.set(request_key(instance, chain_id, request_id), result_json, ex=REQUEST_TTL_S,
                                      xx=True)])

    def append_turn(self, user: Thought, answer: Thought, *, request_id: str, result_json: str,
                    score: Callable[[float], Feedback], expected: tuple[str, str] = ("", ""),
                    final: bool = False, index_answer: bool = True, metrics_id: str | None = None) -> TurnWrite:
        """Write a user thought and its answer as one turn (`_TURN`), numbered by the store, with the chain's
        indexes, a fresh feedback hash for the answer, and the follow-up feedback of the answer that
        preceded it in the chain: `score(seconds since that answer)` gives it. `expected`: that answer's id
        and time as last read (`turn_state`); when another turn came first, one more round trip.

        Idempotent by `request_id`: a repeat (or a call redis-py re-sent after a timeout) writes nothing and
        returns the first one's result. Raises NotFound for a deleted chain, OutcomeUnknown when Redis
        did not answer the write (it may have been applied).

        The feedback hash also names the turn's user thought and (when given) its metrics thought, so
        analytics read a turn by key instead of searching its chain."""
        instance, chain = validate_id(user.instance, "instance"), validate_id(user.chain_id, "chain_id")
        chain_keys = [chain_tombstone(instance, chain), request_key(instance, chain, request_id),
                      chain_meta_key(instance, chain), chain_key(instance, chain),
                      thought_key(instance, chain, user.id), thought_key(instance, chain, answer.id),
                      chain_keys_key(instance, chain), chain_retrieved_key(instance, chain)]
        retrieved = list(dict.fromkeys(provenance.names(result_json) + [
            i for t in (user, answer) for i in provenance.names(t.to_hash().get(provenance.CONTEXT_FIELD))]))
        asked, answered = user, answer
        for _ in range(TURN_ATTEMPTS):
            previous, previous_at = expected
            user, answer = placed_after(asked, answered, previous_at)
            turn = {"user": {"fields": user.to_hash(), "at": f"{user.timestamp.timestamp()}"},
                    "answer": {"fields": answer.to_hash(), "at": f"{answer.timestamp.timestamp()}"},
                    "title": chain_title(user.thought), "result": result_json, "ttl": REQUEST_TTL_S,
                    "retrieved": retrieved}
            writes = _instance_writes(user, answer, final=final, index_answer=index_answer, metrics_id=metrics_id,
                                      retrieved=retrieved)
            followup = []  # the previous answer's feedback key, then _FOLLOWUP's arguments
            if previous:
                elapsed = max(0.0, asked.timestamp.timestamp() - float(previous_at))
                fb = score(elapsed)
                followup = [feedback_key(previous), f"{elapsed:.3f}", user.thought if fb.corrected else "",
                            f"{fb.feedback_score}", "1" if elapsed >= ABANDON_AFTER_S else "0"]
            after = writes + ([["ZREM", feedback_pending_key(instance), previous],
                               _changed(instance, [previous])] if previous else [])
            payload = {**turn, "expected": [previous, previous_at], "after": after,
                       **({"followup": followup} if followup and not self.cluster else {})}
            inline = [] if self.cluster else [c[1] for c in after] + followup[:1]
            try:
                reply = self._turn(keys=chain_keys + inline, args=[json.dumps(payload)])
                if reply[0] in ("stored", "mine") and self.cluster:  # a script may only touch one slot
                    p = self.r.pipeline(transaction=False)
                    for command in after:
                        p.execute_command(*command)
                    p.execute()
                    if followup:
                        self._followup(keys=followup[:1], args=followup[1:])
            except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError) as e:
                raise OutcomeUnknown("Redis", "this turn", request_id) from e
            if reply[0] == "deleted":
                raise _deleted(instance, chain)
            if reply[0] == "served":
                return TurnWrite(served=reply[1])
            if reply[0] in ("stored", "mine"):
                return TurnWrite(seq=int(reply[1]), number=int(reply[2]), previous=previous or None,
                                 placed=(user.timestamp, answer.timestamp))
            expected = (reply[1], reply[2])  # "moved": another turn came first; score its answer instead
        raise ServiceUnavailable("Redis", f"chain {chain!r} changed {TURN_ATTEMPTS} times while this turn was "
                                 "stored; nothing of it was. Retry.")

    def append(self, thought: Thought, *, about: str | None = None) -> bool:
        """Write one more thought (a metrics thought) into its chain; False when the chain was deleted
        meanwhile (nothing written). `about`: the answer whose turn the thought describes, noted in the
        feedback change log once the thought is written."""
        instance, chain, h = thought.instance, thought.chain_id, thought.to_hash()
        retrieved = provenance.names(h.get(provenance.CONTEXT_FIELD))
        noted = provenance.retrieved_by(instance, chain, retrieved)
        try:
            written = bool(self._append(
                keys=[chain_tombstone(instance, chain), thought_key(instance, chain, thought.id),
                      chain_key(instance, chain), chain_retrieved_key(instance, chain),
                      *([] if self.cluster else [c[1] for c in noted])],
                args=[thought.timestamp.timestamp(), thought.id, chain, len(retrieved), *retrieved,
                      *(x for kv in h.items() for x in kv)]))
            if written and self.cluster and noted:  # a script may only touch one slot
                p = self.r.pipeline(transaction=False)
                for command in noted:
                    p.execute_command(*command)
                p.execute()
            if written and about:
                self.feedback_changed(thought.instance, [about])
            return written
        except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError) as e:
            raise ServiceUnavailable("Redis", "the metrics thought may not have been stored") from e

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
        self.feedback_changed(instance, [answer_id])
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
            self.feedback_changed(instance, ids)
            self.r.zrem(pending, *ids)
        self.r.zremrangebyscore(feedback_changes_key(instance), "-inf", time.time() - CHANGES_KEPT_S)
        return marked

    def delete_chain(self, instance: str, chain_id: str) -> int:
        """Remove a chain's thoughts, served results, indexes and feedback. Returns the number of thoughts
        removed."""
        provenance.ensure(self, instance)
        ids = self.r.zrange(chain_key(instance, chain_id), 0, -1)
        answers = list(dict.fromkeys(self.answers_with_feedback(ids)
                                     + provenance.chain_feedback(self, instance, chain_id)))
        others = self.r.smembers(chain_keys_key(instance, chain_id))

        def chain_part(p: redis.client.Pipeline) -> None:
            for i in ids:
                p.delete(thought_key(instance, chain_id, i))
            p.delete(chain_key(instance, chain_id), chain_meta_key(instance, chain_id), *others,
                     chain_keys_key(instance, chain_id), chain_retrieved_key(instance, chain_id),
                     chain_feedback_key(instance, chain_id))

        def instance_part(p: redis.client.Pipeline) -> None:
            provenance.forget(p, self.r, instance, chain_id)
            p.zrem(chains_key(instance), chain_id)
            for a in answers:
                p.delete(feedback_key(a))
            if answers:
                p.zrem(feedback_index_key(instance), *answers)
                p.zrem(feedback_pending_key(instance), *answers)
                self.feedback_changed(instance, answers, client=p)

        self._commit([chain_part, instance_part])
        return len(ids)

    def _commit(self, parts: Sequence) -> None:
        """Run `parts` in one MULTI/EXEC (one per part on a cluster). redis-py re-sends a transaction whose
        reply was lost, so only writes that may safely run twice come here (a turn's own is `_TURN`)."""
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
            raise ServiceUnavailable("Redis", "the write failed (connection lost or timed out), so it may be "
                                     "incomplete; it is safe to repeat. Check that Redis is running, then "
                                     "retry.") from e

    # -- reads ------------------------------------------------------------------------------

    def chain_meta(self, instance: str, chain_id: str) -> dict[str, str]:
        return self.r.hgetall(chain_meta_key(instance, chain_id))

    def chain_thoughts(self, instance: str, chain_id: str, *, last: int | None = None) -> list[Thought]:
        """The chain's thoughts in order (only the last `last` ones if given)."""
        start = -last if last else 0
        ids = self.r.zrange(chain_key(instance, chain_id), start, -1)
        return self.get_many(instance, chain_id, ids)

    def chain_tail(self, instance: str, chain_id: str, enough: Callable[[list[Thought]], bool], *,
                   first: int, most: int) -> list[Thought]:
        """The chain's last thoughts in order: its last `first`, then twice as many, and so on, until
        `enough(the thoughts read)` or its last `most` are read. Each thought is read once."""
        ids = self.r.zrange(chain_key(instance, chain_id), -most, -1)
        read: list[Thought] = []
        end, size = len(ids), first
        while end > 0:
            start = max(0, len(ids) - size)
            read += self.get_many(instance, chain_id, ids[start:end])
            if enough(read):
                break
            end, size = start, size * 2
        return sorted(read, key=chain_order)

    def recent_messages(self, instance: str, chain_id: str, enough: Callable[[list[Thought]], bool], *,
                        page: int = 60) -> tuple[list[Thought], int]:
        """The chain's user and assistant thoughts in order, read a page of the chain at a time from the
        newest until `enough(the messages read so far)`; and how many older messages were left unread
        (counted by their category alone: their texts are never read)."""
        key = chain_key(instance, chain_id)
        end = int(self.r.zcard(key))
        read: list[Thought] = []
        while end > 0 and not enough(read):
            start = max(0, end - page)
            read = self.get_many(instance, chain_id, self._messages(instance, chain_id, start, end)) + read
            end = start
        return read, len(self._messages(instance, chain_id, 0, end)) if end else 0

    def _messages(self, instance: str, chain_id: str, start: int, end: int) -> list[str]:
        """The ids of the user and assistant thoughts among the chain's thoughts ranked [start, end)."""
        ids = self.r.zrange(chain_key(instance, chain_id), start, end - 1)
        categories = self.thought_fields(instance, [(chain_id, i) for i in ids], ["category"])
        return [i for i, (category,) in zip(ids, categories, strict=True)
                if category in (CATEGORY_USER, CATEGORY_ASSISTANT)]

    def get_many(self, instance: str, chain_id: str, ids: Iterable[str]) -> list[Thought]:
        p = self.r.pipeline(transaction=False)
        for i in ids:
            p.hgetall(thought_key(instance, chain_id, i))
        thoughts = [Thought.from_hash(h) for h in p.execute() if h]
        return sorted(thoughts, key=chain_order)

    def chains(self, instance: str, *, offset: int = 0, limit: int = 20) -> list[ChainSummary]:
        """Chains by last activity, newest first, one page at a time (no SCAN)."""
        return self._summaries(instance, self.r.zrevrange(chains_key(instance), offset, offset + limit - 1))

    def chains_titled(self, instance: str, contains: str, *, offset: int = 0, limit: int = 20,
                      oldest_first: bool = False) -> tuple[int, list[ChainSummary]]:
        """How many chains have a title containing `contains` (case-insensitive), and one page of them by last
        activity (newest first, or oldest).

        A substring has no index to use, so every chain's title is read: in one SORT … GET on a standalone
        server (10–30 ms at 10,000 chains, 0.1–0.3 s at 100,000 on the 2-core machine), else by a pipeline of
        HGETs per `TITLE_SCAN_BATCH` chains (50–100 ms and 0.5–1.1 s): on a cluster SORT may not read other
        slots' keys, and an ACL may deny it (@dangerous)."""
        needle = contains.casefold()
        matched = [c for c, title in self._titles(instance, oldest_first=oldest_first)
                   if title is not None and needle in title.casefold()]
        return len(matched), self._summaries(instance, matched[offset:offset + limit])

    def _titles(self, instance: str, *, oldest_first: bool) -> list[tuple[str, str | None]]:
        """(chain id, title) of every chain of the instance, in the order of `chains_key` (None: no meta)."""
        key = chains_key(instance)
        if not self.cluster:
            try:
                out = self.r.sort(key, by="nosort", desc=not oldest_first, get=["#", chain_title_pattern(instance)])
                return list(zip(out[0::2], out[1::2], strict=True))
            except redis.exceptions.ResponseError:  # SORT denied: read them one by one below
                pass
        ids = self.r.zrange(key, 0, -1, desc=not oldest_first)
        out = []
        for start in range(0, len(ids), TITLE_SCAN_BATCH):
            batch = ids[start:start + TITLE_SCAN_BATCH]
            p = self.r.pipeline(transaction=False)
            for c in batch:
                p.hget(chain_meta_key(instance, c), "title")
            out += zip(batch, p.execute(), strict=True)
        return out

    def _summaries(self, instance: str, ids: list[str]) -> list[ChainSummary]:
        """The listing of each chain of `ids`, in that order (a chain gone since it was listed is left out)."""
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
                turns=int(meta.get("turns", 0)) - int(meta.get("turns_deleted", 0))))
        return out

    def chain_count(self, instance: str) -> int:
        return int(self.r.zcard(chains_key(instance)))

    def instances(self) -> list[str]:
        return sorted(self.r.smembers(INSTANCES))

    def has_instance(self, instance: str) -> bool:
        """Whether `instances` lists `instance` (SISMEMBER, where the list is read whole)."""
        return bool(self.r.sismember(INSTANCES, instance))

    def claim(self, key: str, ttl_s: int) -> str | None:
        """Claim `key` for at most `ttl_s` seconds (one atomic SET NX EX): the claim's token, or None when
        another writer holds it. Of writers racing to do one thing once (two API replicas, two sweeps), the
        one with the token does it, and may give it up (`release`) when it could not."""
        token = uuid.uuid4().hex
        return token if self.r.set(key, token, nx=True, ex=ttl_s) else None

    def release(self, key: str, token: str) -> None:
        """Give up a claim while it is still this token's (one that lapsed meanwhile is left to its holder)."""
        self._release_claim(keys=[key], args=[token])

    def claim_new_instance(self, instance: str) -> str | None:
        """Whether this write is the first to find `instance` unknown (its claim's token; None: another
        write's claim): of two API replicas' first writes at once only one is told the instance is new. The
        claim lapses after NEW_INSTANCE_CLAIM_S, when the instance is known; a first write that fails gives
        it up (`release_new_instance`), so the next write is told. The claim's token names its process
        (`holder_token`): one whose process of this host died before storing anything (SIGKILL, the OOM
        killer) is taken over at once (`_claim_of_the_dead`) rather than silencing every write for
        NEW_INSTANCE_CLAIM_S."""
        key, token = new_instance_claim_key(instance), holder_token()
        if self.r.set(key, token, nx=True, ex=NEW_INSTANCE_CLAIM_S) or self._claim_of_the_dead(key, token):
            return token
        return None

    def _claim_of_the_dead(self, key: str, token: str) -> bool:
        """Take the claim `key` for `token` if a process of this host that died holds it (or none does any
        more): the dead holder's claim given up (compare-and-delete), then taken as a first claim is, so of
        writers doing so at once one takes it."""
        holder = self.r.get(key)
        if holder is not None:  # None: given up since (its write failed), free to take
            if not holder_dead(holder):
                return False
            self.release(key, holder)
        return bool(self.r.set(key, token, nx=True, ex=NEW_INSTANCE_CLAIM_S))

    def release_new_instance(self, instance: str, token: str) -> None:
        self.release(new_instance_claim_key(instance), token)

    def claim_finishing(self, instance: str, chain_id: str, request_id: str) -> str | None:
        """The claim of the one repeat of a request that finishes its stored turn (`Remember._finished`)."""
        return self.claim(turn_finishing_key(instance, chain_id, request_id), FINISH_CLAIM_S)

    def release_finishing(self, instance: str, chain_id: str, request_id: str, token: str) -> None:
        self.release(turn_finishing_key(instance, chain_id, request_id), token)

    def feedback(self, answer_ids: Sequence[str]) -> dict[str, FeedbackRecord]:
        p = self.r.pipeline(transaction=False)
        for a in answer_ids:
            p.hgetall(feedback_key(a))
        return {a: FeedbackRecord.from_hash(a, h) for a, h in zip(answer_ids, p.execute(), strict=True) if h}

    def feedback_ids(self, instance: str, since: float = float("-inf"), until: float = float("inf")) -> list[str]:
        return self.r.zrangebyscore(feedback_index_key(instance), since, until)

    def feedback_changed(self, instance: str, answer_ids: Sequence[str], *, client=None) -> None:
        """Note in the change log that these answers' feedback (or metrics) was written or deleted; with
        `client` (a pipeline or transaction), among its commands."""
        if answer_ids:
            (client or self.r).execute_command(*_changed(instance, answer_ids))

    def feedback_changed_since(self, instance: str, since: float) -> list[str]:
        """The answers whose feedback or metrics were written or deleted at `since` or later (wall clock,
        seconds), as far back as the change log keeps (CHANGES_KEPT_S)."""
        return self.r.zrangebyscore(feedback_changes_key(instance), since, "+inf")

    def feedback_count(self, instance: str, since: float = float("-inf")) -> int:
        """How many answers of the instance, given at `since` or later, have feedback (the answers
        analytics read)."""
        return int(self.r.zcount(feedback_index_key(instance), since, "+inf"))

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
        return outbox_peek(self.r, limit)

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

    def delete_thought(self, instance: str, chain_id: str, thought_id: str) -> list[str]:
        """Remove one thought with its feedback and the metrics thought about it; returns the ids removed.
        The chain's served-request results, which may quote it, stay for the caller to redact
        (`core.admin.redaction`): a retry of a turn must find its result, or it would be stored again.

        The chain's title is re-made from the thoughts left when it quoted a thought removed (the first user
        thought); an import's own title ("Trip planning") stays, as the chain's name, not a copy of the
        message (`core.admin.redaction` replaces a copy of the message's words in it); a chain with no user
        or assistant thought left is removed whole.
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
            return [t.id for t in thoughts]
        has_feedback = bool(self.answers_with_feedback([thought_id]))
        users_gone = sum(t.id in gone and t.category == CATEGORY_USER for t in thoughts)
        meta = chain_meta_key(instance, chain_id)
        last_answer = self.r.hget(meta, "last_answer_id")
        title = self.r.hget(meta, "title")
        if not title or any(title in (chain_title(t.thought), t.thought.strip()[:TITLE_CHARS])
                            for t in thoughts if t.id in gone):
            title = next((chain_title(t.thought) for t in left if t.category == CATEGORY_USER), "")

        def chain_part(p: redis.client.Pipeline) -> None:
            for i in gone:
                p.delete(thought_key(instance, chain_id, i))
            p.zrem(chain_key(instance, chain_id), *gone)
            p.hset(meta, "title", title)
            if users_gone:  # `turns` numbers the turns (it never goes back); the chain's count is less these
                p.hincrby(meta, "turns_deleted", users_gone)
            if last_answer == thought_id:
                p.hdel(meta, "last_answer_id")

        def instance_part(p: redis.client.Pipeline) -> None:
            if has_feedback:
                p.delete(feedback_key(thought_id))
                p.srem(chain_feedback_key(instance, chain_id), thought_id)
                p.zrem(feedback_index_key(instance), thought_id)
                p.zrem(feedback_pending_key(instance), thought_id)
                self.feedback_changed(instance, [thought_id], client=p)

        self._commit([chain_part, instance_part])
        self.outbox_drop(instance, chain_id, gone)
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


def _changed(instance: str, answer_ids: Sequence[str]) -> list[str]:
    """The command noting in the feedback change log that these answers' feedback changed now."""
    now = f"{time.time():.6f}"
    return ["ZADD", feedback_changes_key(instance), *(x for a in answer_ids for x in (now, a))]


def _instance_writes(user: Thought, answer: Thought, *, final: bool, index_answer: bool,
                     metrics_id: str | None, retrieved: list[str]) -> list[list[str]]:
    """A turn's writes outside its chain's slot, as commands (each names its key second): the chain's
    listing, the answer's fresh feedback hash and indexes (its chain's `chainfeedback` set with them: a
    stray hash, written after a deletion on a cluster, is found by it), the thoughts queued for the
    memory index, the `retrievedby` sets of the memories the turn retrieved."""
    instance, chain, at = user.instance, user.chain_id, f"{answer.timestamp.timestamp()}"
    feedback = {"synthesis_quality": "", "continued": "0", "abandoned": "0", "corrected": "",
                "time_to_next": "", "feedback_score": "", "instance": instance, "chain_id": chain, "at": at,
                "final": "1" if final else "0", "user_id": user.id,
                **({"metrics_id": metrics_id} if metrics_id else {})}
    queued = (user, answer) if index_answer else (user,)
    queued_at = round(time.time(), 3)  # when, not the turn's time (a clock may be given): see `sync_before_search`
    return [["ZADD", chains_key(instance), "GT", at, chain],  # GT still adds a new chain
            ["SADD", INSTANCES, instance],
            ["HSET", feedback_key(answer.id), *(x for pair in feedback.items() for x in pair)],
            ["ZADD", feedback_index_key(instance), at, answer.id],
            ["SADD", chain_feedback_key(instance, chain), answer.id],
            _changed(instance, [answer.id]),
            *([] if final else [["ZADD", feedback_pending_key(instance), at, answer.id]]),
            ["RPUSH", OUTBOX, *(json.dumps({"instance": instance, "chain_id": chain, "id": t.id, "queued": queued_at})
                                for t in queued)],
            *provenance.retrieved_by(instance, chain, retrieved)]


def _deleted(instance: str, chain_id: str) -> NotFound:
    return NotFound(f"chain {chain_id!r} of instance {instance!r} was deleted: nothing of this turn was stored. "
                    "Start a new conversation (leave chain_id out) or use another chain id.")


def _maybe_json(v: str) -> Any:
    try:
        return json.loads(v)
    except (ValueError, TypeError):
        return v
