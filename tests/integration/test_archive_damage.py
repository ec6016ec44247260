"""An archive damaged late in a member, through the real `workbench import` (a process of its own, on the
session's servers).

Found: a line of chains.jsonl that is not JSON, its CRC valid (so `testzip` passed), stopped the restore at
that line: the memories and the chains before it stayed in the instance, and the message ("truncated or
damaged … export the instance again") did not say so. Now every line is read before anything is written,
so such an archive restores nothing, and says so. A line that is JSON but not what an export writes is only
found when it is restored: the message then says what was written, what was not, and how to complete it,
which restoring the undamaged archive into the same instance does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from core import usecases as uc

CHATS = 30
LATE = 28  # the damaged line of chains.jsonl


def workbench_cli(data_dir: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "core.cli", *args], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "DATA_DIR": str(data_dir)}, check=False)


def one_line_refusal(done: subprocess.CompletedProcess, *words: str) -> str:
    line = done.stderr.strip()
    assert done.returncode == 2, done.stderr[-2000:]
    assert len(line.splitlines()) == 1 and "Traceback" not in line and "Unexpected" not in line, line
    assert all(w in line for w in words), line
    return line


@pytest.fixture(scope="module")
def good(settings, workbench, tmp_path_factory) -> tuple[Path, str]:
    """An archive of an instance of 30 imported conversations (4 messages each), and that instance."""
    folder = tmp_path_factory.mktemp("archive")
    chats = folder / "chats.jsonl"
    chats.write_text("".join(json.dumps({"id": f"c{c}", "title": f"Chat {c}", "messages": [
        {"role": "user" if m % 2 == 0 else "assistant", "content": f"Message {m} of chat {c} about the garden.",
         "timestamp": 1_700_000_000 + c * 86_400 + m * 60} for m in range(4)]}) + "\n" for c in range(CHATS)))
    source = f"src-{os.getpid()}-{id(folder) % 10_000}"
    assert workbench_cli(settings.data_dir, "--instance", source, "import", str(chats)).returncode == 0
    archive = folder / "good.zip"
    uc.export_archive(workbench, uc.ExportArchive(instance=source, out=archive))
    return archive, source


def altered(archive: Path, out: Path, change) -> Path:
    """A copy of the archive whose chains.jsonl line LATE is `change(line)`: every member's CRC valid."""
    with zipfile.ZipFile(archive) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            body = src.read(info)
            if info.filename == "chains.jsonl":
                lines = body.split(b"\n")
                lines[LATE - 1] = change(lines[LATE - 1])
                body = b"\n".join(lines)
            dst.writestr(info, body)
    return out


def holds(workbench, instance: str) -> tuple[int, int]:
    return workbench.thoughts.chain_count(instance), workbench.index.count(instance)


@pytest.mark.parametrize(("change", "what"), [
    (lambda line: line[: len(line) // 2], f"chains.jsonl line {LATE} is not JSON"),
    (lambda line: b"[" + line + b"]", f"chains.jsonl line {LATE} is not a JSON object"),
])
def test_an_archive_damaged_late_restores_nothing(settings, workbench, instance, good, tmp_path, change, what):
    damaged = altered(good[0], tmp_path / "damaged.zip", change)
    assert zipfile.ZipFile(damaged).testzip() is None  # what the restore checked before: it passes
    for dry in ((), ("--dry-run",)):
        done = workbench_cli(settings.data_dir, "--instance", instance, "import", *dry, str(damaged))
        one_line_refusal(done, what, "nothing was restored from it", "export the instance again")
    assert holds(workbench, instance) == (0, 0)


def test_a_restore_stopped_part_way_says_what_it_wrote_and_the_same_archive_completes_it(
        settings, workbench, instance, good, tmp_path):
    def without_thoughts(line: bytes) -> bytes:
        row = json.loads(line)
        del row["thoughts"]
        return json.dumps(row).encode()

    archive, source = good
    shape = altered(archive, tmp_path / "shape.zip", without_thoughts)
    done = workbench_cli(settings.data_dir, "--instance", instance, "import", str(shape))
    memories = workbench.index.count(source)
    line = one_line_refusal(done, "stopped in its chains (a line lacks what an export writes: KeyError 'thoughts')",
                            f"Written: {memories} memories, {LATE - 1} chains, {(LATE - 1) * 4} thoughts",
                            f"Not written: the chains from its line {LATE} on, then the relevance marks",
                            f"restore an undamaged copy of this same file into {instance!r}")
    assert "nothing was restored" not in line
    assert holds(workbench, instance) == (LATE - 1, memories)  # what the message says it wrote
    # The advice holds: the undamaged archive, into the same instance, writes the rest.
    done = workbench_cli(settings.data_dir, "--instance", instance, "import", str(archive))
    assert done.returncode == 0, done.stderr[-2000:]
    assert holds(workbench, instance) == holds(workbench, source) == (CHATS, memories)
