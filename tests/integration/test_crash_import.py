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
from core.conversation.indexing import MEMORIZED, _noted, _noted_rows
from core.conversation.keys import IMPORTS_UNINDEXED, chains_key, import_checkpoint_key
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


def _memorized(wb, instance: str) -> int:
    """Thoughts of the instance flagged `memorized` (in the index, as read_message takes it)."""
    r = wb.redis()
    keys = list(r.scan_iter(f"thought:{instance}:*", count=5000))
    p = r.pipeline(transaction=False)
    for key in keys:
        p.hget(key, MEMORIZED)
    return sum(flag == "1" for flag in p.execute())


def _notes(wb, instance: str) -> list[str]:
    return [key for key in wb.redis().hkeys(IMPORTS_UNINDEXED) if key.startswith(f"unindexed:{instance}:")]


def test_a_killed_import_not_run_again_is_indexed_by_the_next_search_and_sweep(workbench, export, instance):
    """The new instance's bulk load commits only at its end: killed before, its messages were stored in
    Redis, flagged indexed and absent from the index, and nothing but the same import run again indexed
    them. Now nothing is flagged before the commit, a search indexes a bounded part and a sweep the rest."""
    done = _interrupted(workbench, export, instance, signal.SIGKILL)
    assert done.returncode == -signal.SIGKILL
    thoughts, rows, _ = _stored(workbench, instance)
    assert rows < thoughts and _memorized(workbench, instance) == rows  # nothing flagged the index lacks
    assert _notes(workbench, instance)

    uc.retrieve_memory(workbench, uc.RetrieveRequest(instance=instance, query="tomatoes"))
    searched = _stored(workbench, instance)
    assert rows < searched[1] < thoughts, searched  # some, not the whole backlog, before one search
    assert _memorized(workbench, instance) == searched[1]

    uc.sweep(workbench)
    assert _stored(workbench, instance) == (thoughts, thoughts, thoughts)
    assert _memorized(workbench, instance) == thoughts and not _notes(workbench, instance)
    again = uc.import_file(workbench, uc.ImportFile(path=export, instance=instance))  # still completes it
    assert _stored(workbench, instance) == (MESSAGES, MESSAGES, MESSAGES)
    assert again.outcome.created.messages == MESSAGES - thoughts


def test_a_search_leaves_a_live_import_alone(workbench, export, instance):
    """An import paused (SIGSTOP) mid-load is alive: a search does not index what it noted (it would race
    its bulk load), and the import, continued, completes with every message indexed once and flagged."""
    env = {**os.environ, "DATA_DIR": str(workbench.settings.data_dir), "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen([sys.executable, "-m", "core.cli", "--instance", instance, "import", str(export)],
                             cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    checkpoint = import_checkpoint_key(instance, file_hash(export))
    deadline = time.monotonic() + 60
    while child.poll() is None and time.monotonic() < deadline:
        if int(workbench.redis().hget(checkpoint, "done") or 0) >= 200:
            child.send_signal(signal.SIGSTOP)
            break
        time.sleep(0.02)
    try:
        assert _notes(workbench, instance)
        uc.retrieve_memory(workbench, uc.RetrieveRequest(instance=instance, query="tomatoes"))
        assert _stored(workbench, instance)[1] == 0 and _memorized(workbench, instance) == 0
    finally:
        child.send_signal(signal.SIGCONT)
    _, err = child.communicate(timeout=60)
    assert child.returncode == 0, err
    assert _stored(workbench, instance) == (MESSAGES, MESSAGES, MESSAGES)
    assert _memorized(workbench, instance) == MESSAGES and not _notes(workbench, instance)


def test_an_import_stopped_in_a_long_lived_process_is_indexed_by_its_next_sweep(workbench, export, instance):
    """The Import page and the API import in a process that lives on: an import stopped there (Ctrl-C, a
    server lost) leaves its note to any process, this one included, whose next sweep indexes it."""
    def stop(done: int, total: int, what: str) -> None:
        if what == "importing" and done >= 200:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        uc.import_file(workbench, uc.ImportFile(path=export, instance=instance), progress=stop)
    thoughts, rows, _ = _stored(workbench, instance)
    assert rows < thoughts and _memorized(workbench, instance) == rows and _notes(workbench, instance)

    uc.sweep(workbench)
    assert _stored(workbench, instance) == (thoughts, thoughts, thoughts)
    assert _memorized(workbench, instance) == thoughts and not _notes(workbench, instance)


def test_a_rerun_meeting_rows_a_sweep_wrote_meanwhile_completes_the_first_time(workbench, export, instance):
    """A sweep indexing a killed import's note stops within one chunk once the import is run again, and
    that chunk may commit after the rerun looked at the index (here: after its first batch was read, before
    its load wrote it; the chunk made the instance's partition). The rerun's COPY then met those rows and
    failed with a duplicate key; running the import once more succeeded. Now it completes the first time."""
    done = _interrupted(workbench, export, instance, signal.SIGKILL)
    assert done.returncode == -signal.SIGKILL
    assert _stored(workbench, instance)[1] == 0
    [note] = _notes(workbench, instance)
    swept: list[int] = []

    def sweep_chunk_commits(done: int, total: int, what: str) -> None:
        """The sweep's chunk in flight when the rerun took the note over, as the sweep writes it."""
        if what == "importing" and done and not swept:
            chains = next(_noted(workbench.thoughts, note, count=20))
            swept.append(workbench.index.add(_noted_rows(workbench.thoughts, instance, chains)))

    again = uc.import_file(workbench, uc.ImportFile(path=export, instance=instance), progress=sweep_chunk_commits)

    assert swept and swept[0] > 0
    assert _stored(workbench, instance) == (MESSAGES, MESSAGES, MESSAGES)
    assert _memorized(workbench, instance) == MESSAGES and not _notes(workbench, instance)
    assert again.outcome.resumed_after >= 200
