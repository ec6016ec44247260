"""Crafted import files, through the real `workbench import` in a process whose memory is capped: each is
refused with exit status 2 and one line, in bounded memory and time, writing nothing into the instance and
nothing outside the data directory.

Found: 100,000 nested lists in a 200 KB file took 24 GB (the process was killed by the OOM killer); a
200 MB JSON string took 4 minutes to detect and a 2 GB one never ended; an archive whose member expands
1,000 times ended in "Unexpected MemoryError" at the cap, or imported after reading 2 GB into memory; a
line nested too deeply ended in "Unexpected RecursionError"."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from core import usecases as uc

MEMORY_CAP = 4 << 30  # address space: far above what an import needs, far below what the bombs took
DEPTH = 100_000
MIME = b"application/vnd.memory-workbench.archive"
MEMBERS = ("profiles", "banks", "past_tasks", "tool_executions", "memories", "chains")


def capped_import(data_dir: Path, *args: str) -> tuple[subprocess.CompletedProcess, float]:
    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))

    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "core.cli", "import", *args], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "DATA_DIR": str(data_dir)}, preexec_fn=cap, check=False)
    return done, time.monotonic() - start


def refused(done: subprocess.CompletedProcess, *words: str) -> str:
    line = done.stderr.strip()
    assert done.returncode == 2, done.stderr[-2000:]
    assert len(line.splitlines()) == 1 and "Traceback" not in line and "Unexpected" not in line, line
    assert all(w in line for w in words), line
    return line


def nothing_in(workbench, instance: str) -> None:
    assert workbench.thoughts.chain_count(instance) == 0 and workbench.index.count(instance) == 0


@pytest.mark.parametrize(("name", "text"), [
    ("deep.jsonl", '{"messages": ' + "[" * DEPTH + "]" * DEPTH + "}\n"),
    ("deep.json", '[{"messages": ' + "[" * DEPTH + "]" * DEPTH + "}]"),
    ("deep_metadata.jsonl", '{"text": "a", "metadata": ' + '{"a": ' * DEPTH + "1" + "}" * DEPTH + "}\n"),
    ("deep_list.json", "[" * DEPTH + "]" * DEPTH),
])
def test_a_deeply_nested_file_is_refused_in_bounded_memory(settings, workbench, instance, tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    done, took = capped_import(settings.data_dir, str(path), "--instance", instance)
    refused(done, "nested more than 512 levels")
    assert took < 60
    nothing_in(workbench, instance)


@pytest.mark.parametrize(("name", "start", "end"), [("long.jsonl", b'{"text": "', b'"}\n'),
                                                   ("long.json", b'[{"text": "', b'"}]')])
def test_an_overlong_value_is_refused_without_reading_it_whole(settings, workbench, instance, tmp_path,
                                                               name, start, end):
    path = tmp_path / name
    with path.open("wb") as f:  # 40 MB of one string: 8 s to gather before, a 2 GB one never ended
        f.write(start)
        for _ in range(40):
            f.write(b"a" * (1 << 20))
        f.write(end)
    done, took = capped_import(settings.data_dir, str(path), "--instance", instance)
    refused(done, "longer than 16 MB")
    assert took < 30
    nothing_in(workbench, instance)


def _archive(path: Path, members: dict[str, bytes], manifest: bytes | None = None) -> Path:
    meta = {"format": "memory-workbench-archive", "version": 1, "product_version": "x", "archive_id": path.stem,
            "instance": "x", "created_at": "2026-01-01T00:00:00Z", "with_vectors": False, "embedder": "e",
            "counts": {}}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        z.writestr(zipfile.ZipInfo("mimetype"), MIME, compress_type=zipfile.ZIP_STORED)
        for name, data in {**{f"{k}.jsonl": b"" for k in MEMBERS}, **members}.items():
            z.writestr(name, data)
        z.writestr("manifest.json", manifest or json.dumps(meta).encode())
    return path


@pytest.mark.parametrize("member", ["memories.jsonl", "manifest.json"])
def test_a_zip_bomb_archive_is_refused_before_anything_is_read(settings, workbench, instance, tmp_path, member):
    bomb = b'{"id": "' + b"a" * (300 << 20) + b'"}\n'  # 300 MB in 300 KB
    path = _archive(tmp_path / "bomb.wbarchive", {} if member == "manifest.json" else {member: bomb},
                    manifest=bomb if member == "manifest.json" else None)
    assert path.stat().st_size < 1 << 20
    done, took = capped_import(settings.data_dir, str(path), "--instance", instance)
    refused(done, "zip bomb", member)
    assert took < 30
    nothing_in(workbench, instance)


def test_archive_entries_named_outside_the_folder_write_nothing_there(settings, workbench, instance, tmp_path):
    """The archive's members are read by their known names, never extracted: a member named
    "../x", "/abs" or a symbolic link is never written anywhere."""
    target = tmp_path / "outside"
    target.mkdir()
    link = zipfile.ZipInfo("link.jsonl")
    link.external_attr = 0o120777 << 16
    path = tmp_path / "traversal.wbarchive"
    _archive(path, {f"../../../..{target}/dotdot.txt": b"x", f"{target}/absolute.txt": b"x",
                    "..\\..\\windows.txt": b"x"})
    with zipfile.ZipFile(path, "a") as z:
        z.writestr(link, str(target / "linked.txt"))
    before = set(Path(settings.data_dir).rglob("*"))
    done, _ = capped_import(settings.data_dir, str(path), "--instance", instance)
    assert done.returncode == 0, done.stderr
    assert list(target.iterdir()) == [] and not (tmp_path / "windows.txt").exists()
    assert not {p for p in set(Path(settings.data_dir).rglob("*")) - before if p.suffix == ".txt"}


def test_a_link_out_of_a_past_task_folder_is_not_read(settings, workbench, instance, tmp_path):
    folder = tmp_path / "tasks"
    folder.mkdir()
    (folder / "notes.md").write_text("# Notes\nmy own notes")
    secret = tmp_path / "secret.md"
    secret.write_text("the private key is hunter2")
    (folder / "leak.md").symlink_to(secret)
    done, _ = capped_import(settings.data_dir, str(folder), "--instance", instance, "--user", "u1")
    refused(done, "leak.md: a link to a file outside the folder")
    done, _ = capped_import(settings.data_dir, str(folder), "--instance", instance, "--user", "u1",
                            "--on-error", "skip")
    assert done.returncode == 0, done.stderr
    texts = uc.list_texts(workbench, uc.ListTexts(instance=instance, user_id="u1", with_text=True))
    assert [t.title for t in texts] == ["Notes"]
    assert "hunter2" not in json.dumps([t.model_dump(mode="json") for t in texts])
