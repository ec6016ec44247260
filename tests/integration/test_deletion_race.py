"""Deletion wins a race with writers: a chain deleted while turns are written to it ends empty (the late
turns are refused), and a chain with any key left can always be deleted."""

from __future__ import annotations

import random
import threading
import time

import pytest

from core.admin.deletion import delete_chain
from core.conversation.keys import (chain_keys_pattern, chain_tombstone, feedback_index_key, feedback_key,
                                    thought_key)
from core.conversation.turn import Remember, UiRememberParams
from core.errors import NotFound, WorkbenchError

CHAINS = 40
WRITERS = 4


def keys_left(r, instance: str, chain: str) -> list[str]:
    """Every key of the chain but its tombstone (which holds only the time of the deletion)."""
    return [k for k in r.scan_iter(match=chain_keys_pattern(instance, chain), count=1000)
            if k != chain_tombstone(instance, chain)]


def feedback_left(r, instance: str, chains: set[str]) -> list[str]:
    return [k for k in r.scan_iter(match="voice:feedback:*", count=1000)
            if r.hget(k, "instance") == instance and r.hget(k, "chain_id") in chains]


def test_forty_deletes_during_a_write_loop_leave_nothing(workbench, instance):
    chains = [f"race-{i}" for i in range(CHAINS)]
    stop = threading.Event()
    written, refused, failed = [0], [0], []

    def writer(seed: int) -> None:
        rng, remember = random.Random(seed), Remember(workbench)
        while not stop.is_set():
            # The chain being deleted, the one before (deleted a moment ago) and the next ones.
            chain = chains[min(CHAINS - 1, max(0, len(deleted) + rng.randint(-1, 2)))]
            try:
                remember.run(UiRememberParams(thought=f"Note {rng.random():.6f} for {chain}", chain_id=chain),
                             instance=instance)
                written[0] += 1
            except NotFound:
                refused[0] += 1  # the chain was deleted: the turn is refused, nothing stored
            except WorkbenchError as e:
                failed.append(repr(e))

    deleted: list[str] = []
    took: list[float] = []
    threads = [threading.Thread(target=writer, args=(s,)) for s in range(WRITERS)]
    for t in threads:
        t.start()
    try:
        for chain in chains:
            deadline = time.monotonic() + 30
            while not workbench.thoughts.chain_meta(instance, chain) and time.monotonic() < deadline:
                time.sleep(0.01)  # delete it once writers have reached it, while they still write to it
            started = time.perf_counter()
            delete_chain(workbench, instance, chain)
            took.append(time.perf_counter() - started)
            deleted.append(chain)
    finally:
        time.sleep(0.3)  # writers keep going on deleted chains a moment longer
        stop.set()
        for t in threads:
            t.join(60)

    r = workbench.redis()
    print(f"\n{len(deleted)} deletes during {written[0]} turns, {sum(took) / len(took):.2f} s each "
          f"(max {max(took):.2f} s); {refused[0]} turns refused on deleted chains")
    assert failed == []
    assert len(deleted) == CHAINS and refused[0] > 0
    left = {c: keys_left(r, instance, c) for c in chains if keys_left(r, instance, c)}
    assert left == {}
    assert feedback_left(r, instance, set(chains)) == []
    assert r.zrangebyscore(feedback_index_key(instance), "-inf", "+inf") == []
    assert workbench.index.count(instance) == 0


def test_a_chain_with_only_stray_keys_can_be_deleted(workbench, instance):
    r = workbench.redis()
    # A thought hash without its chain listing, and a feedback hash whose answer is gone: what a writer
    # that raced an older deletion could leave.
    r.hset(thought_key(instance, "stray", "t-1"), mapping={"id": "t-1", "thought": "left behind",
                                                            "category": "ui_remember:user"})
    r.hset(feedback_key("a-9"), mapping={"instance": instance, "chain_id": "stray", "continued": "0"})
    r.zadd(feedback_index_key(instance), {"a-9": 1.0})

    report = delete_chain(workbench, instance, "stray")

    assert (report.thoughts, report.feedback) == (1, 1)
    assert keys_left(r, instance, "stray") == [] and not r.exists(feedback_key("a-9"))
    with pytest.raises(NotFound):
        delete_chain(workbench, instance, "stray")
    with pytest.raises(NotFound):  # a turn on the deleted chain is refused while its tombstone lasts
        Remember(workbench).run(UiRememberParams(thought="Back again?", chain_id="stray"), instance=instance)
