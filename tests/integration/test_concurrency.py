"""Many writers at once: 8 writers × 200 turns, half on one shared chain and half on a chain of their own;
8 writers × 100 turns on one chain, scored and numbered in the chain's order; then 8 writers of full
ui_remember turns; and two dashboard sessions saving the same profile.

Each turn of the first two tests makes the thought store's writes of a ui_remember turn, in its order
(the turn with the previous answer's feedback in one script, then the metrics thought): the part where
concurrent writers could lose, duplicate or misattribute something. Retrieval and synthesis are
read-only and left out there so the turns run in seconds; the third test runs the whole flow.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

from core.conversation.feedback import feedback_score
from core.conversation import indexing
from core.conversation.indexing import sync_index
from core.conversation.keys import OUTBOX_LOCK, chain_key
from core.conversation.thoughts import (
    CATEGORY_ASSISTANT,
    CATEGORY_METRICS,
    CATEGORY_USER,
    Thought,
    ThoughtStore,
    TurnWrite,
)
from core.conversation.turn import Remember, UiRememberParams
from core.formation.observations import Formation
from core.models import FusionProfile
from core.retrieval.profiles import ProfileStore

WRITERS, TURNS = 8, 200
SHARED = "shared"


def store_turn(store: ThoughtStore, instance: str, chain: str, writer: int, n: int) -> TurnWrite:
    """The thought store's part of one ui_remember turn; returns what its write did."""
    now = datetime.now(UTC)
    common = dict(instance=instance, chain_id=chain, total_thoughts=TURNS)
    user = Thought(id=str(uuid.uuid4()), thought=f"writer {writer} turn {n}", timestamp=now,
                   category=CATEGORY_USER, **common)
    answer = Thought(id=str(uuid.uuid4()), thought=f"answer {writer}.{n}", timestamp=now,
                     category=CATEGORY_ASSISTANT, **common)
    metrics_id = str(uuid.uuid4())
    text = "thanks, that works" if n % 2 else "actually, that's wrong"
    written = store.append_turn(user, answer, request_id=f"r-{user.id}", result_json="{}",
                                score=lambda elapsed: feedback_score(elapsed, text), metrics_id=metrics_id,
                                index_answer=False)
    store.append(Thought(id=metrics_id, thought="metrics", timestamp=now, category=CATEGORY_METRICS,
                         seq=written.seq + 2, thought_number=written.number, extra={"answer_id": answer.id},
                         **common))
    return written


def assert_numbered_in_order(thoughts: list[Thought], turns: int) -> None:
    """Sequence numbers without duplicate or gap, each turn's three consecutive; thought numbers 1..turns,
    one per turn, in the order of the sequence numbers."""
    by_seq = sorted(thoughts, key=lambda t: t.seq)
    assert [t.seq for t in by_seq] == list(range(1, 3 * turns + 1))
    assert [t.thought_number for t in by_seq] == [n for n in range(1, turns + 1) for _ in range(3)]
    assert [t.category for t in by_seq[:3]] == [CATEGORY_USER, CATEGORY_ASSISTANT, CATEGORY_METRICS]


def followed_in_order(thoughts: list[Thought]) -> list[str]:
    """The answers that a later turn followed, in the chain's order: every answer but the last."""
    return [t.id for t in sorted(thoughts, key=lambda t: t.seq) if t.category == CATEGORY_ASSISTANT][:-1]


def test_8_writers_200_turns_on_shared_and_own_chains(fault_wb, instance):
    store = fault_wb.thoughts
    followed: list[str] = []
    lock = threading.Lock()

    def writer(k: int) -> None:
        for n in range(1, TURNS + 1):
            chain = SHARED if n % 2 else f"own-{k}"  # alternate: both patterns run at the same time
            if (previous := store_turn(store, instance, chain, k, n).previous) is not None:
                with lock:
                    followed.append(previous)

    with ThreadPoolExecutor(WRITERS) as pool:
        list(pool.map(writer, range(WRITERS)))

    per_chain = {SHARED: WRITERS * TURNS // 2, **{f"own-{k}": TURNS // 2 for k in range(WRITERS)}}
    all_answers: list[str] = []
    expected_followed: list[str] = []
    for chain, turns in per_chain.items():
        thoughts = store.chain_thoughts(instance, chain)
        by_cat = Counter(t.category for t in thoughts)
        # Every thought stored once: 3 per turn, ids unique, the chain index holds exactly them.
        assert by_cat == {CATEGORY_USER: turns, CATEGORY_ASSISTANT: turns, CATEGORY_METRICS: turns}
        indexed = fault_wb.redis().zcard(chain_key(instance, chain))
        assert len({t.id for t in thoughts}) == 3 * turns == indexed
        assert_numbered_in_order(thoughts, turns)
        meta = store.chain_meta(instance, chain)
        assert int(meta["turns"]) == turns and int(meta["seq"]) == 3 * turns
        all_answers += [t.id for t in thoughts if t.category == CATEGORY_ASSISTANT]
        expected_followed += followed_in_order(thoughts)

    # Each turn scored the answer just before it in its chain: every answer but each chain's last, once.
    assert sorted(followed) == sorted(expected_followed)
    records = store.feedback(all_answers)
    assert len(records) == WRITERS * TURNS
    assert {a for a, r in records.items() if r.continued} == set(followed)
    assert len(store.feedback_ids(instance)) == WRITERS * TURNS
    assert store.chain_count(instance) == len(per_chain)
    # Counts exact through to the index: each user thought indexed once.
    sync_index(store, fault_wb.index)
    assert fault_wb.index.count(instance, kind="user") == WRITERS * TURNS


def test_8_writers_on_one_chain_abandon_only_what_was_abandoned(fault_wb, instance):
    """Issue 16.8: with instant follow-ups, no answer but the chain's last may end up abandoned, and
    thought numbers are distinct and gap-free (4 sessions once gave 100 turns 60 distinct numbers)."""
    store, turns = fault_wb.thoughts, 100
    with ThreadPoolExecutor(WRITERS) as pool:
        writes = list(pool.map(lambda k: [store_turn(store, instance, SHARED, k, n) for n in range(turns)],
                               range(WRITERS)))
    thoughts = store.chain_thoughts(instance, SHARED)
    assert_numbered_in_order(thoughts, WRITERS * turns)
    assert sorted(w.number for ws in writes for w in ws) == list(range(1, WRITERS * turns + 1))
    marked = store.sweep_abandoned(instance, now=time.time() + 3600)  # an hour later: only the last is left
    records = store.feedback([t.id for t in thoughts if t.category == CATEGORY_ASSISTANT])
    abandoned = [a for a, r in records.items() if r.abandoned]
    print(f"\n{WRITERS} writers × {turns} turns on one chain: {len(abandoned)} abandoned, "
          f"{sum(r.continued for r in records.values())} continued")
    assert marked == len(abandoned) == 1
    answers = [t.id for t in sorted(thoughts, key=lambda t: t.seq) if t.category == CATEGORY_ASSISTANT]
    assert abandoned == answers[-1:]  # the chain's last answer, never followed
    assert sum(r.continued for r in records.values()) == WRITERS * turns - 1


def test_8_writers_of_whole_turns(fault_wb, instance):
    rm = Remember(fault_wb)
    turns = 25

    def writer(k: int) -> list[str]:
        chain = SHARED if k % 2 else f"own-{k}"
        params = [UiRememberParams(thought=f"writer {k} turn {n} about python and redis", chain_id=chain,
                                   thought_number=n, total_thoughts=turns) for n in range(1, turns + 1)]
        return [rm.run(p, instance=instance).thought1_id for p in params]

    with ThreadPoolExecutor(WRITERS) as pool:
        user_ids = [i for ids in pool.map(writer, range(WRITERS)) for i in ids]
    # Each turn returned with its message indexed, by its own sync or by the one that held the lock.
    assert {m.id for m in fault_wb.index.get(instance, user_ids)} == set(user_ids)
    store = fault_wb.thoughts
    for chain, n in {SHARED: 4 * turns, **{f"own-{k}": turns for k in range(0, WRITERS, 2)}}.items():
        thoughts = store.chain_thoughts(instance, chain)
        assert Counter(t.category for t in thoughts) == {CATEGORY_USER: n, CATEGORY_ASSISTANT: n,
                                                         CATEGORY_METRICS: n}
        assert_numbered_in_order(thoughts, n)
        assert {a for a, r in store.feedback(followed_in_order(thoughts)).items() if r.continued} == \
            set(followed_in_order(thoughts))
    sync_index(store, fault_wb.index)
    assert {m.id for m in fault_wb.index.get(instance, user_ids)} == set(user_ids)
    # Extractive answers are not indexed; statements add observation rows beside their thought's.
    assert fault_wb.index.count(instance, kind="user") == WRITERS * turns


def test_a_sync_waiting_for_the_lock_returns_once_another_indexed_its_thoughts(fault_wb, instance):
    """The holder of the outbox lock indexes what was queued when it looked; a turn whose thoughts were
    among them returns then, and does not go on to index what others queued meanwhile (the holder is
    another process here: the lock is not this sync's)."""
    store = fault_wb.thoughts
    store_turn(store, instance, "waits", 0, 1)
    [user] = [t for t in store.chain_thoughts(instance, "waits") if t.category == CATEGORY_USER]
    assert store.r.set(OUTBOX_LOCK, "another-process", nx=True, px=30_000)

    def holder() -> None:
        indexing._drain(store, fault_wb.index, 500, Formation(fault_wb.index))
        store_turn(store, instance, "later", 1, 1)  # queued after the holder looked
        store.r.delete(OUTBOX_LOCK)

    try:
        threading.Timer(0.3, holder).start()
        started = time.monotonic()
        synced = sync_index(store, fault_wb.index, own=[user])
        waited = time.monotonic() - started
    finally:
        store.r.delete(OUTBOX_LOCK)
    assert synced.indexed == 0 and synced.error is None and 0.3 <= waited < indexing.LOCK_WAIT_S
    assert [m.id for m in fault_wb.index.get(instance, [user.id])] == [user.id]
    [later] = [t.id for t in store.chain_thoughts(instance, "later") if t.category == CATEGORY_USER]
    assert not fault_wb.index.get(instance, [later])  # left to its own turn's sync
    assert sync_index(store, fault_wb.index).indexed >= 1
    assert fault_wb.index.get(instance, [later])


def test_two_sessions_saving_one_profile(fault_wb, instance):
    name = f"shared-{instance}"
    versions = {"a": FusionProfile(name=name, w_sem=0.6, w_text=0.25, w_rec=0.15, tau_s=3600),
                "b": FusionProfile(name=name, method="rrf", w_sem=0.45, w_text=0.4, w_rec=0.15, rrf_k=20)}
    seen: Counter[str] = Counter()
    stop = threading.Event()

    def session(tag: str) -> None:  # each dashboard session saves through its own store
        store = ProfileStore(fault_wb.pool())
        for _ in range(150):
            store.save(versions[tag])
            store.activate(instance, name)

    errors: list[BaseException] = []

    def reader() -> None:
        store = ProfileStore(fault_wb.pool())
        try:
            while not stop.is_set():
                got = store.get(name)  # every read is one whole version, never a mix
                seen[next(t for t, v in versions.items() if v == got)] += 1
                assert store.active(instance) in versions.values()
        except BaseException as e:  # re-raised in the test's thread below
            errors.append(e)

    readers = [threading.Thread(target=reader) for _ in range(2)]
    ProfileStore(fault_wb.pool()).save(versions["a"])
    ProfileStore(fault_wb.pool()).activate(instance, name)
    for t in readers:
        t.start()
    try:
        with ThreadPoolExecutor(2) as pool:
            list(pool.map(session, ["a", "b"]))
    finally:
        stop.set()
        for t in readers:
            t.join()
    assert not errors, errors
    assert seen["a"] and seen["b"]
    # The last write wins, and every session sees it at once.
    ProfileStore(fault_wb.pool()).save(versions["b"])
    assert ProfileStore(fault_wb.pool()).get(name) == versions["b"]
    assert ProfileStore(fault_wb.pool()).active(instance) == versions["b"]
    assert sum(p.name == name for p in ProfileStore(fault_wb.pool()).list()) == 1
