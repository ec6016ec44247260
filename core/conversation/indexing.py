"""Keeps the memory index in step with the thought store, through the Redis outbox.

A turn's thoughts are queued in the outbox in the same transaction that stores them, so none can be
missed: if Postgres is down they stay queued and are indexed by the next sync once it is back.
Indexing is an idempotent upsert. Each user message is formed on the way (`core.formation`): its kind
recorded, its statements added as observations, its corrections applied.

One process drains the outbox at a time (a lock in Redis, shared by every process and replica): with
concurrent turns, each sync would otherwise index every thought queued by the others too, and their
upserts of the same rows would wait on each other (at 16 concurrent turns, ~0.6 s a turn). A sync that
finds the lock taken waits for it and then drains what is left, so when a turn's sync returns, its own
thoughts are indexed — usually by the holder, in the same batch as the others'. A lock held by a process of
this host that died (killed mid-drain) is taken over at once; another host's expires after LOCK_TTL_MS.

A search of the memory index first indexes what the outbox has held for a while (`sync_before_search`), so
a client that only reads (an MCP server, the HTTP API) finds what was said while Postgres was down once it
is back, not only after the next write. The thoughts of a turn being written are left to that turn's own
sync, so searches under concurrent turns do no one else's work. It takes the same lock, and it is bounded:
a few hundred thoughts, a second's wait.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
from collections import defaultdict
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, NamedTuple

import psycopg
from psycopg_pool import PoolTimeout
from pydantic import BaseModel

from core.errors import ServiceTimeout, ServiceUnavailable, describe
from core.models import MemoryContext, MemoryRecord
from core.index.memory_index import MemoryIndex
from core.index.records import event_time_of
from core.index.text import conversation_context
from core.conversation.keys import IMPORTS_UNINDEXED, OUTBOX_LOCK, import_unindexed_key, thought_key
from core.conversation.thoughts import CATEGORY_ASSISTANT, CATEGORY_USER, Thought, ThoughtStore, chain_order, outbox_peek
from core.formation.kinds import says_nothing
from core.formation.observations import Formation
from core.formation.supersede import supersede
from core.services.holders import holder_dead, holder_token
from core.services.leases import process_alive, start_time

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
# Compare-and-set: of the syncs finding a dead process's hold (`holder_dead`), one takes it over.
_TAKE_OVER = """if redis.call('get', KEYS[1]) == ARGV[1] then
  redis.call('set', KEYS[1], ARGV[2], 'PX', ARGV[3]) return 1 end
return 0"""
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
    _mark(store, chains)


def _mark(store: ThoughtStore, chains: dict[tuple[str, str], list[str]]) -> None:
    """Flag the thoughts `memorized`: their keys, by (instance, chain)."""
    if not chains:
        return
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


# -- an import's messages until its bulk load commits ------------------------------------------------------
# An import stores a batch's messages in Redis, then hands their rows to the bulk load, which commits a new
# instance's rows only at its end (`core.index.bulk_load`); they never pass through the outbox. An import
# killed before that commit (SIGKILL, OOM, power lost) left messages no search finds and nothing would ever
# index, unless the user ran the same import again. So an import notes each batch's messages before it
# stores them (`UnindexedImport`), flags them `memorized` only once the load committed, and then drops the
# note. The note of a process that died is found by the next search (a few hundred messages at a time,
# `sync_before_search`) or sweep (all of it, `sync_index`), which indexes what the index lacks of it.
UNINDEXED_STALE_S = 1800  # a note written on another host, silent this long, is taken as its writer's death


def _owner(instance: str) -> dict:
    """Who writes (or indexes) a note: this process, told from a later one of the same pid."""
    return {"instance": instance, "host": socket.gethostname(), "pid": os.getpid(),
            "started": start_time(os.getpid()), "at": time.time()}


_ACTIVE: set[str] = set()  # the notes this process is writing or indexing now


def _abandoned(key: str, owner: dict) -> bool:
    """Whether the note's writer is gone: dead (this host), silent for UNINDEXED_STALE_S (another host), or
    this very process, which no longer works on it (its import failed)."""
    if owner.get("host") != socket.gethostname():
        return time.time() - float(owner.get("at", 0)) > UNINDEXED_STALE_S
    pid = int(owner.get("pid", 0))
    if not (pid and process_alive(pid) and start_time(pid) == owner.get("started")):
        return True
    return pid == os.getpid() and key not in _ACTIVE


class UnindexedImport:
    """An import's note of the messages it stored that the memory index has not committed yet (see above):
    `begin` before the first batch (it takes over the note an earlier, interrupted run of the same file left),
    `add` each batch's rows before the batch is stored in Redis, `committed` once the bulk load returned,
    `stopped` when the import ends otherwise (its note is then left to the next search or sweep)."""

    def __init__(self, store: ThoughtStore, instance: str, file_hash: str):
        self.store, self.instance = store, instance
        self.key = import_unindexed_key(instance, file_hash)
        self.owner = _owner(instance)

    def begin(self) -> None:
        _ACTIVE.add(self.key)
        self.store.r.hset(IMPORTS_UNINDEXED, self.key, json.dumps(self.owner))

    def add(self, rows: Sequence[MemoryRecord]) -> None:
        """Note the rows' thoughts (a chain's ids replace those an earlier run noted of it: the same file
        makes the same conversation) and renew the claim: one round trip a batch."""
        chains: dict[str, list[str]] = defaultdict(list)
        for r in rows:
            if r.kind in KIND_OF.values():
                chains[r.chain_id].append(r.id)
        if not chains:
            return
        self.owner["at"] = time.time()
        p = self.store.r.pipeline(transaction=False)
        p.hset(IMPORTS_UNINDEXED, self.key, json.dumps(self.owner))
        p.hset(self.key, mapping={chain: " ".join(ids) for chain, ids in chains.items()})
        p.execute()

    def committed(self) -> None:
        """The load committed: flag every noted thought `memorized`, then drop the note."""
        try:
            if self.key in _ACTIVE:
                for chains in _noted(self.store, self.key):
                    _mark(self.store, {(self.instance, chain): [thought_key(self.instance, chain, i) for i in ids]
                                       for chain, ids in chains.items()})
                _drop(self.store, self.key)
        finally:
            _ACTIVE.discard(self.key)

    def stopped(self) -> None:
        """The import ended without its load committing: its note is anyone's to index."""
        if self.key in _ACTIVE:
            _release(self.store, self.key, self.owner)


def _release(store: ThoughtStore, key: str, owner: dict) -> None:
    """Leave a note this process no longer works on to any process (a dead owner's pid, 0)."""
    _ACTIVE.discard(key)
    _swap(store, key, json.dumps(owner), json.dumps({**owner, "pid": 0}))


def _swap(store: ThoughtStore, key: str, held: str, then: str) -> None:
    """The note's owner `held` replaced by `then`; left alone when it is gone or another's meanwhile."""
    try:
        store.r.eval(_CLAIM, 1, IMPORTS_UNINDEXED, key, held, then)
    except Exception:  # Redis down: this process's own next search still takes it
        log.debug("memory index: an interrupted import's note was left claimed", exc_info=True)


def _noted(store: ThoughtStore, key: str, count: int = 200) -> Iterator[dict[str, list[str]]]:
    """The note's chains with their thought ids, a few hundred chains at a time."""
    cursor = 0
    while True:
        cursor, fields = store.r.hscan(key, cursor, count=count)
        if fields:
            yield {chain: ids.split() for chain, ids in fields.items()}
        if not cursor:
            return


def _drop(store: ThoughtStore, key: str) -> None:
    p = store.r.pipeline(transaction=False)
    p.delete(key)
    p.hdel(IMPORTS_UNINDEXED, key)
    p.execute()


# Take a note over from the owner it was read with: of two processes finding it abandoned, one indexes it.
_CLAIM = """if redis.call('hget', KEYS[1], ARGV[1]) == ARGV[2] then
  redis.call('hset', KEYS[1], ARGV[1], ARGV[3]) return 1 end
return 0"""


def interrupted_imports(r) -> dict[str, str]:
    """The notes whose writer is gone (see above), by key, with the owner each was read with (as stored)."""
    return _abandoned_notes(r.hgetall(IMPORTS_UNINDEXED))


def _abandoned_notes(notes: dict[str, str]) -> dict[str, str]:
    return {key: owner for key, owner in notes.items() if _abandoned(key, json.loads(owner))}


def index_interrupted_imports(store: ThoughtStore, index: MemoryIndex, notes: dict[str, str] | None = None,
                              *, most: int | None = None) -> int:
    """Index what the index lacks of the interrupted imports' notes (`interrupted_imports`, unless given),
    each message with its conversation's context as the import gives it, and flag them `memorized`; a note
    goes once done. `most`: stop after about that many messages, the rest left noted. Returns how many
    rows were written."""
    notes = interrupted_imports(store.r) if notes is None else notes
    written = looked = 0
    for key, owner in notes.items():
        instance = json.loads(owner)["instance"]
        mine = json.dumps(_owner(instance))
        if not store.r.eval(_CLAIM, 1, IMPORTS_UNINDEXED, key, owner, mine):
            continue  # taken by another process meanwhile
        _ACTIVE.add(key)
        try:
            seen, wrote = _index_note(store, index, key, instance, mine, None if most is None else most - looked)
            looked, written = looked + seen, written + wrote
        finally:
            _ACTIVE.discard(key)
            _swap(store, key, mine, json.dumps({**json.loads(mine), "pid": 0}))  # unless dropped or taken
        if most is not None and looked >= most:
            break
    if written:
        log.info("memory index: indexed %d messages an interrupted import had stored", written)
    return written


def _index_note(store: ThoughtStore, index: MemoryIndex, key: str, instance: str, mine: str,
                most: int | None) -> tuple[int, int]:
    """One note's chains, 20 at a time, while this process holds it (the same import run again takes it
    over: its bulk load must not meet rows written here meanwhile); dropped once done. Returns (messages
    looked at, rows written)."""
    looked = written = 0
    for chains in _noted(store, key, count=20):
        if store.r.hget(IMPORTS_UNINDEXED, key) != mine:
            return looked, written
        rows = _noted_rows(store, instance, chains)
        missing = _not_in_index(index, instance, rows)
        if missing:
            index.add(missing)
        mark_memorized(store, rows)
        store.r.hdel(key, *chains)
        written += len(missing)
        looked += len(rows)
        if most is not None and looked >= most:
            return looked, written
    _drop(store, key)
    return looked, written


def _noted_rows(store: ThoughtStore, instance: str, chains: dict[str, list[str]]) -> list[MemoryRecord]:
    """The index rows of the noted thoughts still stored, as the import makes them (`thought_records`)."""
    rows = []
    for chain, ids in chains.items():
        rows += thought_records(store.chain_thoughts(instance, chain), set(ids))
    return rows


def _not_in_index(index: MemoryIndex, instance: str, rows: list[MemoryRecord]) -> list[MemoryRecord]:
    """The rows whose id the instance's index does not hold."""
    there = index.held(instance, [r.id for r in rows])
    return [r for r in rows if r.id not in there]


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
    sync), so that the search finds them; and what an import that died before its bulk load committed had
    stored (`index_interrupted_imports`). None when neither waits, or only a live turn's thoughts in the
    outbox (that turn's sync indexes them), which costs one Redis round trip.

    Bounded, so a search never waits for a long backlog: it indexes at most SEARCH_MOST thoughts, the oldest,
    and about as many of an interrupted import's (the rest wait for the next search, write or `workbench
    sweep`), and waits at most SEARCH_WAIT_S for
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
    entries, notes = _glance(wb)
    if not entries and not notes:
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
    synced = IndexSync(indexed=0, pending=0)
    if entries:
        own = [Queued(e["instance"], e["chain_id"], e["id"]) for e in map(json.loads, entries)]
        try:
            synced = sync_index(wb.thoughts, index, batch=SEARCH_MOST, own=own, most=SEARCH_MOST,
                                wait_s=SEARCH_WAIT_S)
        except Exception as e:  # noqa: BLE001 - a search must not fail for the index's catching up
            return _not_synced(e, entries, "queued thoughts not indexed before a search")
    if notes:
        try:
            synced.indexed += index_interrupted_imports(wb.thoughts, index, notes, most=SEARCH_MOST)
        except Exception as e:  # noqa: BLE001 - likewise
            return _not_synced(e, entries, "an interrupted import's messages not indexed before a search")
    return synced


def _glance(wb: Workbench) -> tuple[list[str], dict[str, str]]:
    """In one round trip: the outbox's first SEARCH_MOST entries when the oldest waited SEARCH_STALE_S or
    more, else none; and the notes of interrupted imports (`interrupted_imports`). Neither when Redis does
    not answer a glance (logged at debug: the search goes on without)."""
    try:  # the client too: a process's first reach of Redis connects to it
        p = wb.redis_glance().pipeline(transaction=False)
        outbox_peek(p, SEARCH_MOST)
        p.hgetall(IMPORTS_UNINDEXED)
        entries, notes = p.execute()
    except Exception as e:  # noqa: BLE001 - Redis down or hung: no catching up this time
        _not_synced(e, [], "the outbox was not looked at before a search")
        return [], {}
    if entries and time.time() - _queued_at(entries[0]) < SEARCH_STALE_S:
        entries = []
    return entries, _abandoned_notes(notes)


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
    token, pause, seen = holder_token(), 0.001, None
    deadline = looked = time.monotonic()
    deadline += LOCK_WAIT_S if wait_s is None else wait_s
    while (holder := _take_lock(store, token)) != token:
        if holder is None:  # released between the two commands: try again at once
            continue
        if holder in _UNRELEASED:  # a hold of this process that ended while Redis was down
            _release_leftovers(store)
        # A process of this host that died holding the lock: taken at once, not after its TTL (checked at
        # every poll, so a holder that dies while this sync waits is noticed too; a few µs of /proc).
        if holder_dead(holder) and store.r.eval(_TAKE_OVER, 1, OUTBOX_LOCK, holder, token, LOCK_TTL_MS):
            log.info("memory index sync: took over the outbox lock of a process that died holding it")
            break
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
        synced = _drain(store, index, batch, formation or Formation(index), most)
        if own or most is not None or synced.error:
            return synced
        return _with_interrupted_imports(store, index, synced)
    finally:
        try:
            store.r.eval(_RELEASE, 1, OUTBOX_LOCK, token)
        except Exception:  # noqa: BLE001 - released at the process's next sync, or expires by itself
            _leave_unreleased(token)
            log.warning("memory index sync: could not release the outbox lock; the next sync releases it")


def _with_interrupted_imports(store: ThoughtStore, index: MemoryIndex, synced: IndexSync) -> IndexSync:
    """A full sync (a sweep, the upkeep of a process that starts) indexes the interrupted imports' notes
    whole, after the outbox."""
    try:
        indexed = index_interrupted_imports(store, index)
    except (psycopg.Error, ServiceUnavailable) as e:
        log.warning("memory index: an interrupted import's messages deferred: %s", type(e).__name__)
        return synced.model_copy(update={"error": "Postgres unavailable: an interrupted import's messages "
                                                  "will be indexed when it is back"})
    return synced.model_copy(update={"indexed": synced.indexed + indexed})


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
