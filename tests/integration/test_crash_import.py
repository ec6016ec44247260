"""`workbench import` interrupted (Ctrl-C) or killed (SIGKILL) part-way, then run again as a user would.

The child is the real command in a subprocess on the session's servers; it is interrupted once its
checkpoint says a share of the file is stored. Ctrl-C says what was stored and how to go on (it said
nothing before: Click turned it into a bare "Aborted"); the same import run again continues, and in the
end every message is stored once in Redis and indexed once in Postgres, whatever the kill.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchmarks.import_speed import write_export
from core import usecases as uc
from core.conversation.keys import chains_key, import_checkpoint_key
from core.importing.source import file_hash

ROOT = Path(__file__).resolve().parents[2]
MESSAGES = 3000  # about 370 conversations: two checkpoints of 200, a few seconds' import


@pytest.fixture(scope="module")
def export(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("crash-import") / "conversations.jsonl"
    write_export(path, MESSAGES)
    return path


def _interrupted(wb, export: Path, instance: str, sig: signal.Signals) -> subprocess.CompletedProcess:
    """The import in a child, sent `sig` once its checkpoint counts its first batch stored."""
    env = {**os.environ, "DATA_DIR": str(wb.settings.data_dir), "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen([sys.executable, "-m", "core.cli", "--instance", instance, "import", str(export)],
                             cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    checkpoint = import_checkpoint_key(instance, file_hash(export))
    deadline = time.monotonic() + 60
    while child.poll() is None and time.monotonic() < deadline:
        if int(wb.redis().hget(checkpoint, "done") or 0) >= 200:
            child.send_signal(sig)
            break
        time.sleep(0.02)
    out, err = child.communicate(timeout=60)
    return subprocess.CompletedProcess(child.args, child.returncode, out, err)


def _stored(wb, instance: str) -> tuple[int, int, int]:
    """Thoughts in Redis, index rows and distinct index ids in Postgres."""
    r = wb.redis()
    thoughts = sum(1 for _ in r.scan_iter(f"thought:{instance}:*", count=5000))
    with wb.pool().connection() as conn:
        rows, ids = conn.execute("SELECT count(*), count(DISTINCT id) FROM memory WHERE instance = %s",
                                 (instance,)).fetchone()
    return thoughts, rows, ids


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "sigkill"])
def test_an_interrupted_import_says_what_it_stored_and_a_rerun_completes_it_once(workbench, export, instance,
                                                                                    sig):
    done = _interrupted(workbench, export, instance, sig)

    if sig == signal.SIGINT:
        assert done.returncode == 130, done.stderr
        said = done.stderr.strip().splitlines()[-1]
        assert said.startswith(f"aborted: the import of {export.name} stopped after "), said
        assert "conversations were stored" in said and "run the same import again" in said
        stored = int(said.split("stopped after ")[1].split(" of ")[0].replace(",", ""))
        assert 200 <= stored <= workbench.redis().zcard(chains_key(instance))  # the message is true
    else:
        assert done.returncode == -signal.SIGKILL
    assert 0 < workbench.redis().zcard(chains_key(instance))  # part of the file was stored

    again = uc.import_file(workbench, uc.ImportFile(path=export, instance=instance))

    assert again.outcome.resumed_after >= 200
    assert _stored(workbench, instance) == (MESSAGES, MESSAGES, MESSAGES)
    assert any("continued" in note for note in again.notes), again.notes
    third = uc.import_file(workbench, uc.ImportFile(path=export, instance=instance))
    assert third.outcome.created.messages == 0
    assert _stored(workbench, instance) == (MESSAGES, MESSAGES, MESSAGES)
