"""`workbench export` interrupted (Ctrl-C) or killed (SIGKILL) mid-write: no archive under the name asked for,
one line saying so (Ctrl-C printed nothing, or a traceback of a connection closed after the servers
stopped), the next export works, and the half-written file is refused whole on restore."""

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
from core.errors import InvalidInput

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def filled(workbench, tmp_path_factory) -> str:
    """An instance holding enough (2,000 messages) that its export takes a moment."""
    instance = "crash-export"
    export = tmp_path_factory.mktemp("crash-export") / "conversations.jsonl"
    write_export(export, 2000)
    uc.import_file(workbench, uc.ImportFile(path=export, instance=instance))
    return instance


def _export_sent(wb, instance: str, out: Path, sig: signal.Signals) -> subprocess.CompletedProcess:
    """`workbench export OUT` in a child, sent `sig` as soon as its partial file holds anything."""
    env = {**os.environ, "DATA_DIR": str(wb.settings.data_dir), "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen([sys.executable, "-m", "core.cli", "--instance", instance, "export", str(out)],
                             cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    partial = out.with_name(f".{out.name}.partial")
    deadline = time.monotonic() + 60
    while child.poll() is None and time.monotonic() < deadline:
        if partial.exists() and partial.stat().st_size > 0:
            child.send_signal(sig)
            break
        time.sleep(0.005)
    stdout, stderr = child.communicate(timeout=60)
    return subprocess.CompletedProcess(child.args, child.returncode, stdout, stderr)


def test_ctrl_c_mid_export_leaves_nothing_and_says_so_in_one_line(workbench, filled, tmp_path):
    out = tmp_path / "instance.wbz"

    done = _export_sent(workbench, filled, out, signal.SIGINT)

    if done.returncode == 0:
        pytest.skip("the export finished before the interrupt reached it")
    assert done.returncode == 130
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert lines == [(f"aborted: the export was interrupted: nothing was written to {out} (no partial archive "
                      "is left); run it again")], done.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_killed_export_leaves_no_archive_under_its_name_and_the_next_one_works(workbench, filled, tmp_path):
    out = tmp_path / "instance.wbz"

    done = _export_sent(workbench, filled, out, signal.SIGKILL)

    if done.returncode == 0:
        pytest.skip("the export finished before the kill reached it")
    assert not out.exists()
    partial = out.with_name(f".{out.name}.partial")
    with pytest.raises(InvalidInput, match="truncated or damaged"):
        uc.restore_archive(workbench, uc.RestoreArchive(path=partial, instance="crash-export-restored"))
    assert uc.stored_counts(workbench, uc.InstanceRequest(instance="crash-export-restored")).tiles[
        "Indexed memories"] == 0
    again = uc.export_archive(workbench, uc.ExportArchive(out=out, instance=filled))
    assert again.counts["thoughts"] == 2000 and out.exists()
