"""Many writers at once: 8 writers × 200 turns, half on one shared chain and half on a chain of their own,
then 8 writers of full ui_remember turns; and two dashboard sessions saving the same profile.

Each turn of the first test makes the thought store's writes of a ui_remember turn, in its order
(reserve sequence numbers, the turn in one transaction, the previous answer's feedback, the metrics
thought): the part where concurrent writers could lose or duplicate something. Retrieval and synthesis
are read-only and left out there so the 1,600 turns run in seconds; the second test runs the whole flow.
"""

from __future__ import annotations

import threading
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

from core.conversation.indexing import sync_index
from core.models import FusionProfile
from core.conversation.turn import Remember, UiRememberParams
from core.conversation.feedback import feedback_score
from core.retrieval.profiles import ProfileStore
from core.conversation.keys import chain_key
from core.conversation.thoughts import (CATEGORY_ASSISTANT, CATEGORY_METRICS, CATEGORY_USER, Thought,
                                        ThoughtStore)

WRITERS, TURNS = 8, 200
SHARED = "shared"


def store_turn(store: ThoughtStore, instance: str, chain: str, writer: int,
               n: int) -> tuple[str, float] | None:
    """The thought store's part of one ui_remember turn; returns the feedback it recorded, if it won."""
    meta = store.chain_meta(instance, chain)
    now = datetime.now(UTC)
    seq = store.next_seq(instance, chain)
    common = dict(instance=instance, chain_id=chain, thought_number=n, total_thoughts=TURNS)
    user = Thought(id=str(uuid.uuid4()), thought=f"writer {writer} turn {n}", timestamp=now,
                   category=CATEGORY_USER, seq=seq, **common)
    answer = Thought(id=str(uuid.uuid4()), thought=f"answer {writer}.{n}", timestamp=now,
                     category=CATEGORY_ASSISTANT, seq=seq + 1, **common)
    metrics_id = str(uuid.uuid4())
    store.append_turn(user, answer, metrics_id=metrics_id, index_answer=False)
    won = None
    if previous := meta.get("last_answer_id"):
        elapsed = max(0.0, now.timestamp() - float(meta["last_at"]))
        text = "thanks, that works" if n % 2 else "actually, that's wrong"
        fb = feedback_score(elapsed, text)
        if store.record_followup(previous, elapsed, fb, text):
            won = (previous, fb.feedback_score)
    store.append(Thought(id=metrics_id, thought="metrics", timestamp=now, category=CATEGORY_METRICS,
                         seq=seq + 2, extra={"answer_id": answer.id}, **common))
    return won


def test_8_writers_200_turns_on_shared_and_own_chains(fault_wb, instance):
    store = fault_wb.thoughts
    won: list[tuple[str, float]] = []
    lock = threading.Lock()

    def writer(k: int) -> None:
        for n in range(1, TURNS + 1):
            chain = SHARED if n % 2 else f"own-{k}"  # alternate: both patterns run at the same time
            if (w := store_turn(store, instance, chain, k, n)) is not None:
                with lock:
                    won.append(w)

    with ThreadPoolExecutor(WRITERS) as pool:
        list(pool.map(writer, range(WRITERS)))

    per_chain = {SHARED: WRITERS * TURNS // 2, **{f"own-{k}": TURNS // 2 for k in range(WRITERS)}}
    all_answers = []
    for chain, turns in per_chain.items():
        thoughts = store.chain_thoughts(instance, chain)
        by_cat = Counter(t.category for t in thoughts)
        # Every thought stored once: 3 per turn, ids unique, the chain index holds exactly them.
        assert by_cat == {CATEGORY_USER: turns, CATEGORY_ASSISTANT: turns, CATEGORY_METRICS: turns}
        indexed = fault_wb.redis().zcard(chain_key(instance, chain))
        assert len({t.id for t in thoughts}) == 3 * turns == indexed
        # Sequence numbers: no duplicate and no gap; each turn's three are consecutive.
        assert sorted(t.seq for t in thoughts) == list(range(1, 3 * turns + 1))
        # Thought numbers: each writer's turns in this chain, in sequence order, are in its own order.
        for k in range(WRITERS):
            mine = [t.thought_number for t in sorted(thoughts, key=lambda t: t.seq)
                    if t.category == CATEGORY_USER and t.thought.startswith(f"writer {k} ")]
            assert mine == sorted(mine)
        meta = store.chain_meta(instance, chain)
        assert int(meta["turns"]) == turns and int(meta["seq"]) == 3 * turns
        all_answers += [t.id for t in thoughts if t.category == CATEGORY_ASSISTANT]

    # Every feedback update kept: exactly the follow-ups that won are recorded, with their scores.
    records = store.feedback(all_answers)
    assert len(records) == WRITERS * TURNS
    continued = {a: r.feedback_score for a, r in records.items() if r.continued}
    assert continued == dict(won)
    assert len(store.feedback_ids(instance)) == WRITERS * TURNS
    assert store.chain_count(instance) == len(per_chain)
    # Counts exact through to the index: each user thought indexed once.
    sync_index(store, fault_wb.index)
    assert fault_wb.index.count(instance) == WRITERS * TURNS


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
    store = fault_wb.thoughts
    for chain, n in {SHARED: 4 * turns, **{f"own-{k}": turns for k in range(0, WRITERS, 2)}}.items():
        thoughts = store.chain_thoughts(instance, chain)
        assert Counter(t.category for t in thoughts) == {CATEGORY_USER: n, CATEGORY_ASSISTANT: n,
                                                         CATEGORY_METRICS: n}
        assert sorted(t.seq for t in thoughts) == list(range(1, 3 * n + 1))
    sync_index(store, fault_wb.index)
    assert {m.id for m in fault_wb.index.get(instance, user_ids)} == set(user_ids)
    assert fault_wb.index.count(instance) == WRITERS * turns  # extractive answers are not indexed


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
