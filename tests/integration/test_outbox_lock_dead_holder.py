"""The outbox lock held by a process that died: a sync of this host takes it over at once.

A retry finishing the turn of a replica killed mid-formation waited up to LOCK_WAIT_S (10 s) for the dead
replica's hold to expire. The holder here is a real child process that takes the lock as a sync does
(`core.services.holders.holder_token`) and is then SIGKILLed, or left alive, whose hold is still waited for.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from core.conversation import indexing
from core.conversation.indexing import sync_index
from core.conversation.keys import OUTBOX_LOCK
from core.conversation.thoughts import CATEGORY_USER
from tests.integration.test_concurrency import store_turn

ROOT = Path(__file__).resolve().parents[2]
# The child takes the outbox lock as a sync does, says so, and holds it until killed.
HOLDER = """
import sys, time
from pathlib import Path
from core.config import load_settings
from core.runtime import Workbench
from core.conversation import indexing
from core.conversation.keys import OUTBOX_LOCK
from core.services.holders import holder_token
r = Workbench(load_settings(data_dir=Path(sys.argv[1]))).redis()
token = holder_token()
assert r.set(OUTBOX_LOCK, token, nx=True, px=indexing.LOCK_TTL_MS)
print(token, flush=True)
time.sleep(120)
"""


def _holder(wb) -> tuple[subprocess.Popen, str]:
    """A child process holding the outbox lock, and its token."""
    child = subprocess.Popen([sys.executable, "-c", HOLDER, str(wb.settings.data_dir)], cwd=ROOT,
                             env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE, text=True)
    token = child.stdout.readline().strip()
    assert token and wb.redis().get(OUTBOX_LOCK) == token, token
    return child, token


def _own_turn(wb, instance: str, chain: str):
    store_turn(wb.thoughts, instance, chain, 0, 1)
    return [t for t in wb.thoughts.chain_thoughts(instance, chain) if t.category == CATEGORY_USER]


def test_a_sync_takes_the_lock_of_a_process_killed_holding_it_at_once(workbench, instance, caplog):
    caplog.set_level(logging.INFO, logger="core.conversation.indexing")
    child, token = _holder(workbench)
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=10)
    assert workbench.redis().get(OUTBOX_LOCK) == token  # the dead process's hold, for LOCK_TTL_MS
    own = _own_turn(workbench, instance, "after-a-death")

    started = time.monotonic()
    synced = sync_index(workbench.thoughts, workbench.index, own=own)
    waited = time.monotonic() - started

    assert synced.error is None and synced.indexed >= 1
    # Taken over, not waited out: a time bound alone failed once on a loaded machine (5.7 s of drain).
    assert any("took over the outbox lock" in r.getMessage() for r in caplog.records)
    assert waited < indexing.LOCK_WAIT_S, waited
    assert [m.id for m in workbench.index.get(instance, [own[0].id])] == [own[0].id]
    assert workbench.redis().get(OUTBOX_LOCK) is None  # released by the sync that took it over


def test_a_live_holders_lock_is_still_waited_for(workbench, instance):
    child, token = _holder(workbench)
    try:
        own = _own_turn(workbench, instance, "beside-a-live-holder")
        synced = sync_index(workbench.thoughts, workbench.index, own=own, wait_s=0.5)
        assert synced.indexed == 0 and workbench.redis().get(OUTBOX_LOCK) == token
        assert not workbench.index.get(instance, [own[0].id])
    finally:
        child.kill()
        child.wait(timeout=10)
    synced = sync_index(workbench.thoughts, workbench.index, own=own)  # dead now: taken over at once
    assert [m.id for m in workbench.index.get(instance, [own[0].id])] == [own[0].id]
