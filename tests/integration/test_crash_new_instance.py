"""A first write to a new instance whose process is SIGKILLed before it stores: the next write is told.

Of first writes at once, the one that claims the instance in Redis is told "instance … is new"
(`ThoughtStore.claim_new_instance`). A write that fails gives the claim up; one whose process was killed
kept it for NEW_INSTANCE_CLAIM_S (120 s), and the write that then stored the instance's first memory was
not told. The claim's token now names its process (`core.services.holders`): a later write of this host
that finds it held by a dead process takes it over, and is told. A live holder's claim is still respected.
The child is a process writing the turn through the use case, as an API replica does, stopped right
before its turn is stored.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from core import usecases as uc
from core.conversation.keys import new_instance_claim_key
from core.conversation.thoughts import NEW_INSTANCE_CLAIM_S

ROOT = Path(__file__).resolve().parents[2]
# A process writing the first turn of a new instance as an API replica does (the use case, the instance not
# the configured one), stopped where its turn would be stored (the claim taken, nothing stored), saying so.
BEFORE_STORING = """
import sys, time
from pathlib import Path
import core.conversation.thoughts as thoughts
from core import usecases as uc
from core.config import load_settings
from core.runtime import Workbench

def storing(self, *args, **kwargs):
    print("about to store", flush=True)
    time.sleep(120)

thoughts.ThoughtStore.append_turn = storing
wb = Workbench(load_settings(data_dir=Path(sys.argv[1])))
uc.remember(wb, uc.UiRememberParams(thought="My locker code at the harbour gym is 4417.", chain_id="first",
                                    instance=sys.argv[2]))
"""


@contextmanager
def first_write_stopped(wb, instance: str) -> Iterator[subprocess.Popen]:
    """A first turn in the new `instance`, stopped before it stores (its claim held); killed after."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen([sys.executable, "-c", BEFORE_STORING, str(wb.settings.data_dir), instance],
                             cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = child.stdout.readline()
        assert line.strip() == "about to store", (line, child.stderr.read() if child.poll() else "")
        assert wb.redis().get(new_instance_claim_key(instance))  # its claim on the instance
        yield child
    finally:
        child.kill()
        child.wait(timeout=30)


def _told(reply) -> bool:
    return any("is new" in note for note in reply.notes)


def test_the_write_after_a_first_write_killed_before_storing_is_told(workbench, instance):
    with first_write_stopped(workbench, instance) as child:
        child.send_signal(signal.SIGKILL)
        assert child.wait(timeout=30) == -signal.SIGKILL
    claim = new_instance_claim_key(instance)
    assert workbench.redis().ttl(claim) > NEW_INSTANCE_CLAIM_S - 30  # the dead write's claim, kept

    reply = uc.remember(workbench, uc.UiRememberParams(thought="Book a table for two on Friday.",
                                                       chain_id="second", instance=instance))

    assert _told(reply), reply.notes  # before: not told, for the claim's 120 s
    again = uc.remember(workbench, uc.UiRememberParams(thought="And remind me on Thursday.",
                                                       chain_id="second", instance=instance))
    assert not _told(again)


def test_a_live_first_writes_claim_is_respected(workbench, instance):
    with first_write_stopped(workbench, instance):
        reply = uc.remember(workbench, uc.UiRememberParams(thought="Book a table for two on Friday.",
                                                           chain_id="second", instance=instance))
        assert not _told(reply), reply.notes  # the first write, still running, is the one told


def test_an_older_claim_naming_no_process_is_respected(workbench, instance):
    """A claim an older version took (a bare token) cannot be told dead: it lapses as before."""
    workbench.redis().set(new_instance_claim_key(instance), "0123456789abcdef", ex=NEW_INSTANCE_CLAIM_S)
    reply = uc.remember(workbench, uc.UiRememberParams(thought="Book a table for two on Friday.",
                                                       chain_id="second", instance=instance))
    assert not _told(reply), reply.notes
