"""Keeps the memory index in step with the thought store, through the Redis outbox.

A turn's thoughts are queued in the outbox in the same transaction that stores them, so none can be
missed: if Postgres is down they stay queued and are indexed by the next sync once it is back.
Indexing is an idempotent upsert. Each user message is formed on the way (`core.formation`): its kind
recorded, its statements added as observations, its corrections applied.

One process drains the outbox at a time (a lock in Redis, shared by every process and replica): with
concurrent turns, each sync would otherwise index every thought queued by the others too, and their
upserts of the same rows would wait on each other (at 16 concurrent turns, ~0.6 s a turn). A sync that
finds the lock taken waits for it and then drains what is left, so when a turn's sync returns, its own
thoughts are indexed — usually by the holder, in the same batch as the others'.

A search of the memory index first indexes what the outbox has held for a while (`sync_before_search`), so
a client that only reads (an MCP server, the HTTP API) finds what was said while Postgres was down once it
is back, not only after the next write. The thoughts of a turn being written are left to that turn's own
sync, so searches under concurrent turns do no one else's work. It takes the same lock, and it is bounded:
a few hundred thoughts, a second's wait.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from collections import defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

import psycopg
from psycopg_pool import PoolTimeout
from pydantic import BaseModel

from core.errors import ServiceTimeout, ServiceUnavailable, describe
from core.models import MemoryContext, MemoryRecord
from core.index.memory_index import MemoryIndex
from core.index.records import event_time_of
from core.index.text import conversation_context
from core.conversation.keys import OUTBOX_LOCK, thought_key
from core.conversation.thoughts import CATEGORY_ASSISTANT, CATEGORY_USER, Thought, ThoughtStore, chain_order, outbox_peek
from core.formation.kinds import says_nothing
from core.formation.observations import Formation
from core.formation.supersede import supersede

if TYPE_CHECKING:
    from core.runtime import Workbench

log = logging.getLogger(__name__)
KIND_OF = {CATEGORY_USER: "user", CATEGORY_ASSISTANT: "assistant"}
CONTEXT_SPAN = 3      # messages before a thought searched with it (see core.index.text)
CONTEXT_WINDOW = 40   # how far back in the chain those are looked for
CONTEXT_PAGE = 12     # read first: a live turn's thoughts and the three turns before (see `_thread`)
LOCK_TTL_MS = 30_000  # a holder that dies mid-drain frees the outbox after this
LOCK_WAIT_S = 10.0    # past this, sync without the lock (idempotent, only slower)
SEARCH_MOST = 200     # queued thoughts a search indexes first, at most; the rest wait for the next call
# A thought queued this long ago was not indexed by the turn that wrote it (Postgres was down, the process
# died): a search indexes it. A younger one is a live turn's, whose own sync follows within milliseconds
# (a second under 16 concurrent turns).
SEARCH_STALE_S = 2.0
SEARCH_WAIT_S = 1.0   # how long a search waits for another process's drain before it searches without it
# A waiting search looks this often whether its thoughts are indexed yet: a drain of a long backlog holds
# the lock long after its first batch indexed them.
SEARCH_RECHECK_S = 0.05
# Compare-and-delete: a holder whose lock expired never frees the next holder's.
_RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0"
# The tokens of this process's holds whose release failed (Redis was down at that moment). A restarted
# Redis still holds such a lock until its TTL; without this, every sync of the process would wait
# LOCK_WAIT_S for its own lock meanwhile (10 s a turn after a Redis crash).
_UNRELEASED: set[str] = set()
_UNRELEASED_GUARD = threading.Lock()
MEMORIZED = "memorized"  # thought field, "1" once the thought is in the memory index (read_message skips it)
# One chain's thoughts (one hash slot) at a time. A thought deleted meanwhile stays deleted: the flag never
# makes a hash of its own.
_MARK = """for _, key in ipairs(KEYS) do
  if redis.call('exists', key) == 1 then redis.call('hset', key, ARGV[1], '1') end
end
return 0"""


def _searchable(t: Thought) -> bool:
    """User thoughts and LLM answers; an extractive answer only quotes other memories, and an empty text
    says nothing (an LLM's empty answer, stored before 2026-12-06: as a row it failed the index's sync,
    and with it every later turn of the instance)."""
    return t.category in KIND_OF and t.extra.get("synthesis") != "extractive" and bool(t.thought.strip())


def empty_reply(t: Thought) -> bool:
    """Whether the thought is an assistant's reply that says nothing ("Got it.", "Thanks for the update!",
    `core.formation.kinds.says_nothing`). Its row is an acknowledgement, as a user's "Thanks!" is once formed:
    kept in the transcript and the index, not retrieved by default (`retrieve_kinds`). Unmarked, such rows
    were retrieved through their neighbours' words (the context they are searched with) at relevance
    0.40-0.64 and handed to synthesis in place of memories."""
    return t.category == CATEGORY_ASSISTANT and says_nothing(t.thought)


def thought_record(t: Thought, context: MemoryContext | None = None) -> MemoryRecord:
    """A thought's row of the memory index, searched with its `context` (the messages before it)."""
    metadata: dict = {"thought_number": t.thought_number}
    if empty_reply(t):
        metadata["message_kind"] = "acknowledgement"
    return MemoryRecord(instance=t.instance, id=t.id, kind=KIND_OF[t.category], content=t.thought,
                        created_at=t.timestamp, chain_id=t.chain_id, event_time=event_time_of(t.timestamp),
                        tags=t.tags, metadata=metadata, context=context or MemoryContext())


def thought_records(thread: list[Thought], wanted: set[str]) -> list[MemoryRecord]:
    """The rows of the `wanted` thoughts of a chain's `thread` (in order), each searched with the
    CONTEXT_SPAN searchable thoughts before it: a live turn and an imported one are indexed alike."""
    thread = [t for t in thread if _searchable(t)]
    texts = [t.thought for t in thread]
    return [thought_record(t, conversation_context(texts, i, CONTEXT_SPAN, after=False))
            for i, t in enumerate(thread) if t.id in wanted]


def _thread(store: ThoughtStore, instance: str, chain: str, wanted: set[str]) -> list[Thought]:
    """The chain's last thoughts, as many as hold the `wanted` ones and the CONTEXT_SPAN searchable thoughts
    before the first of them (so also the turn before it, which formation reads), within CONTEXT_WINDOW."""
    def enough(read: list[Thought]) -> bool:
        ordered = sorted(read, key=chain_order)
        ids = [t.id for t in ordered]
        if not wanted <= set(ids):
            return False
        first = min(ids.index(i) for i in wanted)
        return sum(map(_searchable, ordered[:first])) >= CONTEXT_SPAN
    return store.chain_tail(instance, chain, enough, first=CONTEXT_PAGE, most=CONTEXT_WINDOW)


def mark_memorized(store: ThoughtStore, records: list[MemoryRecord]) -> None:
    """Flag the indexed thoughts `memorized`, as MemoryScope's read_message expects of its messages."""
    chains: dict[tuple[str, str], list[str]] = defaultdict(list)
    for r in records:
        chains[(r.instance, r.chain_id)].append(thought_key(r.instance, r.chain_id, r.id))
    if store.cluster:  # each chain's keys share a slot; a script's keys must
        for keys in chains.values():
            store.r.eval(_MARK, len(keys), *keys, MEMORIZED)
        return
    # One round trip for every chain of the batch (an import marks thousands: one each took 5.8 s of
    # 100,000 messages' import).
    p = store.r.pipeline(transaction=False)
    for keys in chains.values():
        p.eval(_MARK, len(keys), *keys, MEMORIZED)
    p.execute()


class IndexSync(BaseModel):
    indexed: int
    pending: int
    error: str | None = None


class Queued(NamedTuple):
    """The thought an outbox entry queues: enough to look up whether it is indexed (`_memorized`)."""

    instance: str
    chain_id: str
    id: str


def sync_before_search(wb: Workbench, *, turn: bool = False) -> IndexSync | None:
    """Before a search of the memory index: index the thoughts the outbox holds when its oldest was queued
    SEARCH_STALE_S ago or more (stored while Postgres was down, or by a process that died before its
    sync), so that the search finds them. None when the outbox is empty or only a live turn's thoughts wait
    in it (that turn's sync indexes them), which costs one Redis round trip.

    Bounded, so a search never waits for a long backlog: it indexes at most SEARCH_MOST thoughts, the oldest
    (the rest wait for the next search, write or `workbench sweep`), and waits at most SEARCH_WAIT_S for
    another process's drain (the lock of `sync_index`, so no thought is indexed twice), returning as soon
    as that drain indexed the thoughts queued when the search began. The outbox is looked at through the
    Redis client for glances (`Services.redis_glance`): when Redis does not answer within GLANCE_TIMEOUT_S
    (hung), the check is skipped, so a search that needs only Postgres does not wait REDIS_TIMEOUT_S for it.

    A search (not a `turn`) is refused when Postgres is why the backlog cannot be indexed (down, hung, or
    still reconnecting): it would fail as well or, should Postgres answer by then, answer without what the
    backlog holds. A turn goes on, degraded, and indexes the backlog with its own thoughts. Otherwise never raises: a failure here (Redis down, a data directory
    that cannot be made) leaves the search to succeed or fail on its own, with its own message, so only a
    failure of the code itself is logged as a warning: a CLI prints one line for a setting to change or a
    server down, not that line twice."""
    entries = _stale_outbox(wb)
    if not entries:
        return None
    try:
        index = wb.index
        # Postgres first: while it is down a drain would embed a batch only to fail at its write (an
        # embedding API's calls, at every search).
        _answers(index.pool)
    except Exception as e:
        if not turn and _postgres_failed(e):
            raise
        return _not_synced(e, entries, "queued thoughts not indexed before a search")
    own = [Queued(e["instance"], e["chain_id"], e["id"]) for e in map(json.loads, entries)]
    try:
        return sync_index(wb.thoughts, index, batch=SEARCH_MOST, own=own, most=SEARCH_MOST, wait_s=SEARCH_WAIT_S)
    except Exception as e:  # noqa: BLE001 - a search must not fail for the index's catching up
        return _not_synced(e, entries, "queued thoughts not indexed before a search")


def _stale_outbox(wb: Workbench) -> list[str]:
    """The outbox's first SEARCH_MOST entries when the oldest waited SEARCH_STALE_S or more, else none;
    none either when Redis does not answer a glance (logged at debug: the search goes on without)."""
    try:  # the client too: a process's first reach of Redis connects to it
        entries = outbox_peek(wb.services.redis_glance(), SEARCH_MOST)
    except Exception as e:  # noqa: BLE001 - Redis down or hung: no catching up this time
        _not_synced(e, [], "the outbox was not looked at before a search")
        return []
    if not entries or time.time() - _queued_at(entries[0]) < SEARCH_STALE_S:
        return []
    return entries


def _postgres_failed(exc: BaseException) -> bool:
    """Whether reaching the memory index failed for Postgres (down, hung, reconnecting), not for our code."""
    return isinstance(exc, psycopg.OperationalError) or (isinstance(exc, ServiceUnavailable)
                                                         and exc.service == "Postgres")


def _not_synced(exc: BaseException, entries: list[str], what: str) -> IndexSync:
    """Logged at debug when a service is why (the search says so itself if it needs that service), as a
    warning with the traceback when our code is."""
    info = describe(exc)
    log.log(logging.WARNING if info.code == "internal" else logging.DEBUG, "memory index: %s: %s", what,
            info.message, exc_info=info.code == "internal")
    return IndexSync(indexed=0, pending=len(entries), error=info.message)


def _queued_at(entry: str) -> float:
    """When an outbox entry was queued (epoch seconds); 0 for an entry queued before entries said so."""
    return float(json.loads(entry).get("queued", 0))


def _answers(pool) -> None:
    """Raise unless Postgres answers a statement. Tried twice: right after Postgres restarted, the pooled
    connection handed out first may be one to the old server, which fails and is discarded."""
    try:
        with pool.connection() as conn:
            conn.execute("SELECT 1")
    except (PoolTimeout, ServiceTimeout):  # down or hung: known now, not worth a second wait
        raise
    except psycopg.OperationalError:
        with pool.connection() as conn:
            conn.execute("SELECT 1")


def sync_index(store: ThoughtStore, index: MemoryIndex, *, batch: int = 500,
               formation: Formation | None = None, own: Sequence[Thought | Queued] = (),
               most: int | None = None, wait_s: float | None = None) -> IndexSync:
    """Index every queued thought, one process at a time (see the module docstring), each user message
    formed into its kind and observations (`core.formation`; by the rules unless `formation` says).
    `own`: the thoughts the caller queued. Once another sync has indexed them, a sync waiting for the lock
    returns (`indexed` 0) rather than drain what was queued after them: under concurrent turns each turn
    otherwise waited for one drain and then made the next, for others' thoughts.
    `most`: stop after that many queued thoughts, the rest left queued. `wait_s`: wait that long at most
    for the lock, then return without syncing (a search's sync); None waits LOCK_WAIT_S and then syncs
    without the lock (a write's thoughts must be indexed)."""
    if _UNRELEASED:
        _release_leftovers(store)
    token, pause, seen = uuid.uuid4().hex, 0.001, None
    deadline = looked = time.monotonic()
    deadline += LOCK_WAIT_S if wait_s is None else wait_s
    while (holder := _take_lock(store, token)) != token:
        if holder is None:  # released between the two commands: try again at once
            continue
        if holder in _UNRELEASED:  # a hold of this process that ended while Redis was down
            _release_leftovers(store)
        now = time.monotonic()
        # Looked at once a hold, not at every poll; by a search also every SEARCH_RECHECK_S, since its
        # wait is short.
        if own and (holder != seen or (wait_s is not None and now - looked >= SEARCH_RECHECK_S)):
            looked = now
            if _memorized(store, own):
                return IndexSync(indexed=0, pending=store.outbox_len())
        seen = holder
        if now > deadline:
            if wait_s is not None:
                return IndexSync(indexed=0, pending=store.outbox_len())
            log.warning("memory index sync: the outbox lock is held too long; syncing without it")
            break
        time.sleep(pause)
        pause = min(pause * 2, 0.008)
    try:
        if own and seen is not None and _memorized(store, own):  # by the sync that held the lock before
            return IndexSync(indexed=0, pending=store.outbox_len())
        return _drain(store, index, batch, formation or Formation(index), most)
    finally:
        try:
            store.r.eval(_RELEASE, 1, OUTBOX_LOCK, token)
        except Exception:  # noqa: BLE001 - released at the process's next sync, or expires by itself
            _leave_unreleased(token)
            log.warning("memory index sync: could not release the outbox lock; the next sync releases it")


def _take_lock(store: ThoughtStore, token: str) -> str | None:
    """Take the outbox lock for `token` if it is free. Returns the token of the sync that holds it (this
    one's when taken; None if it was released meanwhile), in one round trip."""
    p = store.r.pipeline(transaction=False)
    p.set(OUTBOX_LOCK, token, nx=True, px=LOCK_TTL_MS)
    p.get(OUTBOX_LOCK)
    try:
        return p.execute()[1]
    except Exception:
        # Redis may have stored the lock before the connection dropped (a crash between the write,
        # fsynced to the append-only file, and its reply): the restarted server holds it until its TTL.
        _leave_unreleased(token)
        raise


def _leave_unreleased(token: str) -> None:
    """Have the process's next sync release `token`'s hold (a no-op if it never held the lock)."""
    with _UNRELEASED_GUARD:
        _UNRELEASED.add(token)


def _memorized(store: ThoughtStore, thoughts: Sequence[Thought | Queued]) -> bool:
    """Whether every one of the thoughts is indexed (or gone: a deleted thought is never indexed)."""
    p = store.r.pipeline(transaction=False)
    for t in thoughts:
        p.hmget(thought_key(t.instance, t.chain_id, t.id), [MEMORIZED, "id"])
    return all(flag == "1" or thought is None for flag, thought in p.execute())


def _release_leftovers(store: ThoughtStore) -> None:
    """Release the holds of this process that could not be released when they ended."""
    with _UNRELEASED_GUARD:
        tokens = list(_UNRELEASED)
    for token in tokens:
        try:
            store.r.eval(_RELEASE, 1, OUTBOX_LOCK, token)
        except Exception:  # noqa: BLE001 - Redis still down: the sync below reports it
            return
        with _UNRELEASED_GUARD:
            _UNRELEASED.discard(token)


def _drain(store: ThoughtStore, index: MemoryIndex, batch: int, formation: Formation,
           most: int | None = None) -> IndexSync:
    indexed = taken = 0
    try:
        while entries := store.outbox_peek(batch):
            grouped: dict[tuple[str, str], list[str]] = defaultdict(list)
            for e in entries:
                item = json.loads(e)
                grouped[(item["instance"], item["chain_id"])].append(item["id"])
            records, threads = [], {}
            for (instance, chain), ids in grouped.items():
                wanted = set(ids)
                # The chain's recent thoughts give each new one its conversation context.
                thread = threads[(instance, chain)] = _thread(store, instance, chain, wanted)
                found = thought_records(thread, wanted)
                records += found
                # Thoughts older than the window (a long backlog) are indexed without context.
                left = wanted - {r.id for r in found}
                older = store.get_many(instance, chain, left)
                threads[(instance, chain)] = older + thread
                records += [thought_record(t) for t in older if _searchable(t)]
            records, corrections = formation.form(records, threads)
            index.add(records)
            supersede(index, corrections)
            mark_memorized(store, [r for r in records if r.kind in KIND_OF.values()])
            store.outbox_ack(entries)
            indexed += sum(r.kind in KIND_OF.values() for r in records)
            taken += len(entries)
            if len(entries) < batch or (most is not None and taken >= most):
                break
    except (psycopg.Error, ServiceUnavailable) as e:
        log.warning("memory index sync deferred: %s", type(e).__name__)
        return IndexSync(indexed=indexed, pending=store.outbox_len(),
                         error="Postgres unavailable: new thoughts will be indexed when it is back")
    return IndexSync(indexed=indexed, pending=store.outbox_len())
