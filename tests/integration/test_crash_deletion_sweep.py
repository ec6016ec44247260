"""A deletion killed midway (SIGKILL) is finished by the sweep, not only by the next deletion.

A deletion writes down what it must still erase (`deleting:<instance>`) before it removes anything; the next
deletion in the instance took over the note of a dead one (`Deletion.resume`), and nothing else did: until
the user deleted something again, the other chains' answers quoted the deleted words, and a deletion killed
while it deleted the chain's index rows left them (the message, its important copy, the chain's summary)
searchable. Upkeep (`workbench sweep`, the dashboard's start, the API's sweep) now finishes such notes
through the same `resume`, which also removes again what the kill left of the chain being deleted.

Everything runs as a user would from a fresh data directory: turns stored, then the real `workbench chains
delete` command SIGKILLed at a chosen point, then the real `workbench sweep` command.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from core import usecases as uc
from core.config import load_settings
from core.conversation import provenance
from core.conversation.keys import chain_tombstone, deletion_journal_key
from core.runtime import Workbench
from core.services import EmbeddedPostgres, EmbeddedRedis
from tests.integration.test_deletion_complete import postgres_hits, redis_values

ROOT = Path(__file__).resolve().parents[2]
SECRET = "Zanzibar-4417"
# The command, killed (a real SIGKILL of its own process) at one point of the deletion.
KILLED_AT = {
    # after the chain's keys and index rows went, right before the copies of its text are redacted
    "before the redaction": ("core.admin.deletion", "redact_copies"),
    # after the chain's keys went, holding the outbox lock, before its index rows are deleted
    "holding the outbox lock": ("core.conversation.thoughts", "ThoughtStore.outbox_drop"),
}
KILLED = """
import importlib, os, signal, sys

def killed(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)

module, name = sys.argv[1], sys.argv[2]
owner = importlib.import_module(module)
*path, attribute = name.split(".")
for part in path:
    owner = getattr(owner, part)
setattr(owner, attribute, killed)
sys.argv = ["workbench", *sys.argv[3:]]
from core.cli import main
main()
"""


@pytest.fixture(scope="module")
def fresh():
    """A data directory of its own (its own embedded Redis and Postgres), and a Workbench on it."""
    path = Path(tempfile.mkdtemp(prefix="wb-sweep-"))
    wb = Workbench(load_settings(data_dir=path))
    yield wb
    wb.close()
    EmbeddedRedis(path).stop()
    EmbeddedPostgres(path).stop()
    shutil.rmtree(path, ignore_errors=True)


def workbench_command(data_dir: Path, *args: str, killed_at: tuple[str, str] | None = None
                      ) -> subprocess.CompletedProcess:
    env = {**os.environ, "DATA_DIR": str(data_dir), "PYTHONPATH": str(ROOT)}
    command = ([sys.executable, "-c", KILLED, *killed_at, *args] if killed_at else
               [str(Path(sys.executable).parent / "workbench"), *args])  # the installed command
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)


def said_and_copied(wb, instance: str) -> None:
    """The secret said in chain "secret" (marked important: an important copy), the chain ended (its
    summary), and quoted by another chain's answer."""
    uc.remember(wb, uc.UiRememberParams(thought=f"My locker combination is {SECRET} at the Harbor gym.",
                                        chain_id="secret", instance=instance, tags=["important"]))
    uc.remember(wb, uc.UiRememberParams(thought="I also keep my spare bike key in locker 12 of the Harbor gym.",
                                        chain_id="secret", instance=instance, next_thought_needed=False))
    answer = uc.remember(wb, uc.UiRememberParams(thought="What is my locker combination at the Harbor gym?",
                                                 chain_id="other", instance=instance))
    assert SECRET in answer.answer  # the other chain quotes it: a copy the deletion must redact
    with wb.pool().connection() as conn:
        kinds = {k for (k,) in conn.execute("SELECT DISTINCT kind FROM memory WHERE instance = %s AND "
                                            "content LIKE %s", (instance, f"%{SECRET}%"))}
    assert {"user", "important", "session_summary"} <= kinds, kinds


def left_of_the_chain(wb, instance: str) -> dict[str, list[str]]:
    """What any store still holds of chain "secret" or of its words."""
    r = wb.redis()
    values = redis_values(r)
    with wb.pool().connection() as conn:
        rows = [f"{kind} {i}" for i, kind in conn.execute(
            "SELECT id, kind FROM memory WHERE instance = %s AND (chain_id = 'secret' OR "
            "metadata::text LIKE '%%\"secret\"%%')", (instance,))]
    return {
        "redis keys holding the words": sorted(k for k, v in values.items() if SECRET.lower() in v.lower()),
        # the tombstone (turns on the chain refused for 10 minutes) is all that may name it
        "redis keys of the chain": sorted(k for k in values if "{secret}" in k and not k.startswith("tombstone:")),
        "listed keys of the chain": provenance.chain_keys(wb.thoughts, instance, "secret"),
        "postgres columns holding the words": postgres_hits(wb, SECRET),
        "index rows of the chain or derived from it": rows,
        "deletion notes": list(r.hkeys(deletion_journal_key(instance))),
    }


@pytest.mark.parametrize("point", list(KILLED_AT))
def test_workbench_sweep_finishes_a_deletion_killed_midway(fresh, point):
    instance = f"sweep-{list(KILLED_AT).index(point)}"
    said_and_copied(fresh, instance)

    killed = workbench_command(fresh.settings.data_dir, "--instance", instance, "chains", "delete", "secret",
                               "--yes", killed_at=KILLED_AT[point])
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    left = left_of_the_chain(fresh, instance)
    assert left["redis keys holding the words"] and left["deletion notes"]  # the kill left copies and a note

    swept = workbench_command(fresh.settings.data_dir, "sweep")

    assert swept.returncode == 0, swept.stderr
    assert {what: found for what, found in left_of_the_chain(fresh, instance).items() if found} == {}
    assert json.loads(swept.stdout)["deletions_finished"] == {instance: 1}, swept.stdout
    assert "[deleted]" in fresh.thoughts.chain_thoughts(instance, "other")[1].thought  # the quote, redacted
    # For good: an import of an export still holding the chain leaves it out.
    assert "secret" in fresh.redis().smembers(f"deleted:chains:{instance}")


def test_a_chain_whose_tombstone_lapsed_keeps_only_what_is_not_of_the_deleted_messages(fresh, caplog):
    """Past its tombstone (10 minutes) a chain id may be in use again: the sweep removes the index rows of
    the messages the killed deletion noted and those made from them, redacts their copies, leaves a turn
    stored on the chain since, and says to delete the chain again."""
    instance = "sweep-lapsed"
    said_and_copied(fresh, instance)
    killed = workbench_command(fresh.settings.data_dir, "--instance", instance, "chains", "delete", "secret",
                               "--yes", killed_at=KILLED_AT["holding the outbox lock"])
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    fresh.redis().delete(chain_tombstone(instance, "secret"))  # as 10 minutes later
    later = uc.remember(fresh, uc.UiRememberParams(thought="The chain id is free again: a new conversation.",
                                                   chain_id="secret", instance=instance))

    swept = uc.sweep(fresh, summarise=False)

    assert swept.deletions_finished == {instance: 1}
    left = left_of_the_chain(fresh, instance)
    assert left["redis keys holding the words"] == left["postgres columns holding the words"] == []
    assert {row.split()[1] for row in left["index rows of the chain or derived from it"]} >= {later.thought1_id}
    assert all(t.id in {later.thought1_id, later.thought2_id, later.thought3_id}
               for t in fresh.thoughts.chain_thoughts(instance, "secret"))
    assert any("delete it again" in r.getMessage() for r in caplog.records)
