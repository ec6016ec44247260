"""A deletion killed (SIGKILL) while it holds the index outbox's lock: the next turn does not wait for it.

A deletion holds the outbox lock while it drops the chain's queued index writes and deletes its index rows
(`Deletion._indexing_paused`). Its hold's token was redis-py's random one, which a sync cannot tell from a
live holder's: after the kill every turn waited LOCK_WAIT_S (10 s) before syncing without the lock, until
the hold expired (LOCK_TTL_MS). Its token now names its process as a sync's does
(`core.services.holders.holder_token`), so a sync of this host takes a dead deletion's hold over at once.
The child is the real `workbench chains delete` command, stopped where it holds the lock, then SIGKILLed.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from core import usecases as uc
from core.conversation import indexing
from core.conversation.keys import OUTBOX_LOCK, deletion_journal_key
from core.conversation.thoughts import CATEGORY_USER
from tests.integration.test_concurrency import store_turn

ROOT = Path(__file__).resolve().parents[2]
# The command, stopped once it holds the outbox lock (its first step under it: the chain's queued index
# writes dropped), saying so; the test kills it there.
HOLDING_THE_LOCK = """
import sys, time
import core.conversation.thoughts as thoughts

def holding(self, *args, **kwargs):
    print("holding the outbox lock", flush=True)
    time.sleep(120)

thoughts.ThoughtStore.outbox_drop = holding
sys.argv = ["workbench", *sys.argv[1:]]
from core.cli import main
main()
"""


def killed_holding_the_lock(wb, instance: str, chain: str) -> None:
    """Run `workbench chains delete` until it holds the outbox lock, then SIGKILL it."""
    r = wb.redis()
    assert r.get(OUTBOX_LOCK) is None  # else the child would wait for that hold, then go on without the lock
    env = {**os.environ, "DATA_DIR": str(wb.settings.data_dir), "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen([sys.executable, "-c", HOLDING_THE_LOCK, "--instance", instance, "chains", "delete",
                              chain, "--yes"], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
    try:
        line = child.stdout.readline()
        assert line.strip() == "holding the outbox lock", (line, child.stderr.read() if child.poll() else "")
        assert r.get(OUTBOX_LOCK) is not None
        child.send_signal(signal.SIGKILL)
        assert child.wait(timeout=30) == -signal.SIGKILL
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(timeout=30)


def test_a_turn_after_a_deletion_killed_holding_the_outbox_lock_does_not_wait(workbench, instance, caplog):
    caplog.set_level(logging.INFO, logger="core.conversation.indexing")
    uc.remember(workbench, uc.UiRememberParams(thought="My locker code at the harbour gym is 4417.",
                                               chain_id="doomed", instance=instance))
    killed_holding_the_lock(workbench, instance, "doomed")
    r = workbench.redis()
    token = r.get(OUTBOX_LOCK)
    assert token is not None  # the dead deletion's hold, for LOCK_TTL_MS (30 s)
    assert r.hlen(deletion_journal_key(instance)) == 1  # and its note of what it must still erase

    started = time.monotonic()
    reply = uc.remember(workbench, uc.UiRememberParams(thought="Book a table for two on Friday evening.",
                                                       chain_id="after", instance=instance))
    waited = time.monotonic() - started

    print(f"\nthe turn after the killed deletion took {waited:.2f} s (the dead hold: {token!r})")
    # Taken over, not waited out (before: 10.3 s); the time bound is loose for a loaded machine.
    assert any("took over the outbox lock" in r.getMessage() for r in caplog.records)
    assert waited < indexing.LOCK_WAIT_S, waited
    own = [t for t in workbench.thoughts.chain_thoughts(instance, "after") if t.category == CATEGORY_USER]
    assert [m.id for m in workbench.index.get(instance, [own[0].id])] == [reply.thought1_id]
    assert r.get(OUTBOX_LOCK) is None  # released by the sync that took it over


def test_a_search_after_a_deletion_killed_holding_the_outbox_lock_indexes_the_backlog(workbench, instance):
    """A search indexes what the outbox held for a while first (`sync_before_search`), waiting
    SEARCH_WAIT_S (1 s) at most for the lock: held by the dead deletion, it searched without the backlog."""
    uc.remember(workbench, uc.UiRememberParams(thought="The spare bike key is taped under the bench.",
                                               chain_id="doomed", instance=instance))
    killed_holding_the_lock(workbench, instance, "doomed")
    assert workbench.redis().get(OUTBOX_LOCK) is not None
    store_turn(workbench.thoughts, instance, "queued", 0, 1)  # stored, its index write left queued
    [queued] = [t for t in workbench.thoughts.chain_thoughts(instance, "queued") if t.category == CATEGORY_USER]
    time.sleep(indexing.SEARCH_STALE_S + 0.2)

    started = time.monotonic()
    uc.retrieve_memory(workbench, uc.RetrieveRequest(query="writer turn", instance=instance))
    waited = time.monotonic() - started

    print(f"\nthe search after the killed deletion took {waited:.2f} s")
    assert [m.id for m in workbench.index.get(instance, [queued.id])] == [queued.id]
    assert waited < indexing.LOCK_WAIT_S, waited


def test_a_deletion_takes_over_the_hold_of_a_deletion_killed_holding_it(workbench, instance, caplog):
    """The same command run again frees the dead hold at once too, and finishes the killed deletion."""
    caplog.set_level(logging.INFO, logger="core.admin.deletion")
    uc.remember(workbench, uc.UiRememberParams(thought="My passport number ends in 0915.", chain_id="doomed",
                                               instance=instance))
    killed_holding_the_lock(workbench, instance, "doomed")
    assert workbench.redis().get(OUTBOX_LOCK) is not None

    started = time.monotonic()
    report = uc.chain_delete(workbench, uc.ChainRef(chain_id="doomed", instance=instance))
    waited = time.monotonic() - started

    print(f"\nthe deletion run again took {waited:.2f} s")
    assert any("freed the outbox lock" in r.getMessage() for r in caplog.records)
    assert waited < indexing.LOCK_WAIT_S, waited
    assert any("interrupted" in note for note in report.notes), report.notes
    assert workbench.index.records(instance, chains=["doomed"]) == []
    assert workbench.redis().hlen(deletion_journal_key(instance)) == 0
