"""A deletion killed midway (SIGKILL: power lost, the OOM killer) is finished by the next one.

The child is the real `workbench` command, SIGKILLed at one chosen point: right before the copies of what
it removed are redacted (`core.admin.deletion.redact_copies`), after the chain's keys and index rows went.
Before the deletion kept a note of what it must still erase, the command run again said "no chain …" and
the other chain's answer, its stored prompt and its served result still quoted the deleted words.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from core import usecases as uc
from core.conversation.keys import deletion_journal_key

ROOT = Path(__file__).resolve().parents[2]
SECRET = "Zanzibar-4417"
# The command, killed (a real SIGKILL of its own process) when it reaches the redaction of the copies.
KILLED_BEFORE_REDACTION = """
import os, signal, sys
import core.admin.deletion as deletion

def killed(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)

deletion.redact_copies = killed
sys.argv = ["workbench", *sys.argv[1:]]
from core.cli import main
main()
"""


def _killed_command(data_dir: Path, *args: str) -> int:
    env = {**os.environ, "DATA_DIR": str(data_dir), "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", KILLED_BEFORE_REDACTION, *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60, check=False)
    return done.returncode


def _quoting(wb, instance: str) -> list[str]:
    """The Redis keys and index rows of the instance still holding the secret."""
    r = wb.redis()
    keys = [k for k in r.scan_iter(f"*:{instance}:*", count=1000)
            if r.type(k) == "hash" and SECRET in str(r.hgetall(k))
            or r.type(k) == "string" and SECRET in (r.get(k) or "")]
    with wb.pool().connection() as conn:
        rows = [row[0] for row in conn.execute(
            "SELECT id FROM memory WHERE instance = %s AND (content LIKE %s OR context::text LIKE %s)",
            (instance, f"%{SECRET}%", f"%{SECRET}%"))]
    return keys + rows


def _said_and_retrieved(wb, instance: str) -> None:
    uc.remember(wb, uc.UiRememberParams(thought=f"My locker combination is {SECRET} at the Harbor gym.",
                                        chain_id="secret", instance=instance))
    answer = uc.remember(wb, uc.UiRememberParams(thought="What is my locker combination at the Harbor gym?",
                                                 chain_id="other", instance=instance))
    assert SECRET in answer.answer  # the other chain quotes it: a copy the deletion must redact


def test_a_chain_deletion_killed_before_redaction_is_finished_by_running_it_again(workbench, instance):
    _said_and_retrieved(workbench, instance)

    code = _killed_command(workbench.settings.data_dir, "--instance", instance, "chains", "delete", "secret",
                           "--yes")

    assert code == -signal.SIGKILL
    assert _quoting(workbench, instance)  # the copies outlived the kill
    report = uc.chain_delete(workbench, uc.ChainRef(chain_id="secret", instance=instance))
    assert report.copies >= 1
    assert any("interrupted" in note for note in report.notes), report.notes
    assert _quoting(workbench, instance) == []
    assert workbench.redis().hlen(deletion_journal_key(instance)) == 0


def test_a_forget_killed_before_redaction_is_finished_by_the_next_deletion(workbench, instance):
    _said_and_retrieved(workbench, instance)
    message = next(t for t in workbench.thoughts.chain_thoughts(instance, "secret") if SECRET in t.thought)

    code = _killed_command(workbench.settings.data_dir, "--instance", instance, "memory", "delete", message.id,
                           "--yes")

    assert code == -signal.SIGKILL
    assert _quoting(workbench, instance)
    uc.forget(workbench, uc.Forget(target="memory", id=message.id, instance=instance))  # the same, again
    assert _quoting(workbench, instance) == []


def test_a_live_deletion_is_not_taken_over(workbench, instance):
    """A note whose process still runs (this one) is left to it: only a dead deletion's is finished."""
    from core.admin.deletion import Deletion

    running = Deletion(workbench, instance)
    running.texts.add("words being deleted")
    running._save()
    try:
        assert Deletion(workbench, instance).resume() == 0
    finally:
        workbench.redis().delete(deletion_journal_key(instance))
