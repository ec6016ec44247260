"""What a new user met with `workbench import` and `workbench export`, through the real entry point: a report
that replaced the file being imported (or any file) without a word, one bad file among several that stopped
the rest with an untrue message, a ChatGPT zip refused as "NUL bytes", paths that cannot be read said as
"Unexpected OSError" or "no such file", a stale report left behind, internal wordings; an export to a full
disk that left its partial file; two imports into a new instance at once that crashed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import uuid
import zipfile
from datetime import UTC, datetime
from pathlib import Path

import pytest

from core import usecases as uc
from core.index.bulk_load import BulkLoader
from core.index.records import embedding_text
from core.models import MemoryRecord
from tests.support.chatgpt_export import conversation, write_export
from tests.support.cli import in_process_cli, mode, usual_umask

ROOT = Path(__file__).resolve().parents[2]
ONE_BAD = '{"content": "ok one"}\n{"kind": "insight"}\n{"content": "ok two"}\n'
GOOD = '{"content": "fine"}\n{"content": "also fine"}\n'


@pytest.fixture
def cli(settings, workbench, monkeypatch):
    return in_process_cli(settings, workbench, monkeypatch)


def results(out: str) -> list[dict]:
    """The JSON results a command printed one after the other."""
    found, at, decoder = [], 0, json.JSONDecoder()
    while at < len(out.rstrip()):
        value, at = decoder.raw_decode(out, at)
        found.append(value)
        at += len(out[at:]) - len(out[at:].lstrip())
    return found


def one_line(code: int, err: str) -> str:
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error: "), err
    return lines[0].removeprefix("error: ")


def test_the_report_never_replaces_the_file_being_imported(cli, workbench, instance, tmp_path):
    """`--report t.jsonl` for t.jsonl replaced the user's data with the report (0600), a dry run too."""
    data = tmp_path / "t.jsonl"
    data.write_text(ONE_BAD)
    with usual_umask():
        os.chmod(data, 0o644)
        for extra in ([], ["--dry-run"], ["--force"], ["--dry-run", "--force"]):
            code, out, err = cli("import", str(data), "--instance", instance, "--on-error", "skip",
                                 "--report", str(data), *extra)
            assert one_line(code, err) == (f"--report: '{data}' is the file being imported: give another path "
                                           "for its invalid records") and out == ""
        (tmp_path / "link.jsonl").symlink_to(data)  # the same file by another name
        code, _, err = cli("import", str(data), "--instance", instance, "--on-error", "skip", "--report",
                           str(tmp_path / "link.jsonl"), "--force")
        assert "is the file being imported" in one_line(code, err)
    assert data.read_text() == ONE_BAD and mode(data) == "0o644"
    assert workbench.index.count(instance) == 0


def test_the_report_replaces_an_existing_file_only_with_force_and_only_when_it_lists_something(
        cli, instance, tmp_path):
    data, precious = tmp_path / "notes.jsonl", tmp_path / "precious.txt"
    data.write_text(ONE_BAD)
    good = tmp_path / "good.jsonl"
    good.write_text(GOOD)
    with usual_umask():
        precious.write_text("precious\n")
        for extra in ([], ["--dry-run"]):
            code, _, err = cli("import", str(data), "--instance", instance, "--on-error", "skip", "--report",
                               str(precious), *extra)
            assert one_line(code, err) == (f"--report: '{precious}' exists: choose another name, or pass --force "
                                           "to replace it")
        assert precious.read_text() == "precious\n" and mode(precious) == "0o644"
        # Nothing to list: the file is left as it was, its mode too (it was made 0600 though nothing was written).
        code, out, err = cli("import", str(good), "--instance", instance, "--on-error", "skip", "--report",
                             str(precious), "--force")
        assert code == 0 and json.loads(out)["report"] is None, err
        assert precious.read_text() == "precious\n" and mode(precious) == "0o644"
        code, out, err = cli("import", str(data), "--instance", instance, "--on-error", "skip", "--report",
                             str(precious), "--force")
    assert code == 0 and json.loads(out)["outcome"]["created"]["memories"] == 2, err
    assert [json.loads(line)["where"] for line in precious.read_text().splitlines()] == ["line 2"]
    assert mode(precious) == "0o600"


def test_a_report_that_is_no_regular_file_is_refused_before_importing(cli, workbench, instance, tmp_path):
    data, fifo = tmp_path / "notes.jsonl", tmp_path / "report.fifo"
    data.write_text(ONE_BAD)
    os.mkfifo(fifo)
    code, _, err = cli("import", str(data), "--instance", instance, "--on-error", "skip", "--report", str(fifo),
                       "--force")
    assert one_line(code, err) == (f"--report: '{fifo}' is not a regular file (a device, a FIFO or a socket); "
                                   "give a file name")
    os.mkfifo(tmp_path / "notes.jsonl.invalid.jsonl")  # in the way of the default report
    code, _, err = cli("import", str(data), "--instance", instance, "--on-error", "skip")
    assert "is not a regular file" in one_line(code, err) and "give --report PATH" in err
    assert workbench.index.count(instance) == 0


def test_feedback_export_replaces_an_existing_csv_only_with_force(cli, instance, tmp_path):
    out = tmp_path / "feedback.csv"
    out.write_text("keep me")
    code, _, err = cli("--instance", instance, "feedback", "export", "--csv", str(out))
    assert one_line(code, err) == f"--csv: '{out}' exists: choose another name, or pass --force to replace it"
    assert out.read_text() == "keep me"
    code, printed, err = cli("--instance", instance, "feedback", "export", "--csv", str(out), "--force")
    assert code == 0 and "wrote 0 answers" in printed, err
    assert out.read_text() != "keep me"


def test_every_file_is_checked_before_any_is_written(cli, workbench, instance, tmp_path):
    """`import a.json bad.jsonl c.json` imported a.json, then said of bad.jsonl "nothing was written", and
    never looked at c.json."""
    first, bad, empty, last = (tmp_path / name for name in ("a.jsonl", "bad.jsonl", "empty.jsonl", "c.jsonl"))
    first.write_text('{"content": "first file"}\n')
    bad.write_text(ONE_BAD)
    empty.write_text("")
    last.write_text('{"content": "last file"}\n')
    code, out, err = cli("import", str(first), str(bad), str(empty), str(last), "--instance", instance)
    said = one_line(code, err)
    assert out == "" and said.startswith("bad.jsonl: 1 of 3 records are invalid (first: line 2: ")
    assert "; empty.jsonl: the file is empty: nothing to import. " in said
    assert said.endswith("None of the 4 files was imported: each is checked before any is written")
    assert workbench.index.count(instance) == 0
    code, out, err = cli("import", str(first), str(last), "--instance", instance)
    assert code == 0, err
    assert [r["outcome"]["created"]["memories"] for r in results(out)] == [1, 1]


def test_a_stale_default_report_goes_once_the_file_imports_cleanly(cli, instance, tmp_path):
    data, report = tmp_path / "notes.jsonl", tmp_path / "notes.jsonl.invalid.jsonl"
    data.write_text(ONE_BAD)
    assert cli("import", str(data), "--instance", instance, "--on-error", "skip")[0] == 0
    assert "line 2" in report.read_text()
    data.write_text(GOOD)  # fixed
    assert cli("import", str(data), "--instance", instance, "--dry-run")[0] == 0
    assert report.exists()  # a dry run writes, and removes, nothing
    code, _, err = cli("import", str(data), "--instance", instance)
    assert code == 0 and not report.exists(), err
    assert (f"notes.jsonl: Removed {report}, where an earlier import listed invalid records: this file has none "
            "now.") in err.splitlines()
    # A file of that name that is no report is never removed.
    report.write_text("my own notes\n")
    assert cli("import", str(data), "--instance", instance)[0] == 0
    assert report.read_text() == "my own notes\n"


def test_paths_that_cannot_be_read_are_said_as_such(cli, instance, tmp_path):
    """An I/O error was "Unexpected OSError" (exit 1); a FIFO, a device and a loop of links "no such file"."""
    fifo, loop, dangling = tmp_path / "pipe.jsonl", tmp_path / "loop.jsonl", tmp_path / "dangling.jsonl"
    os.mkfifo(fifo)
    loop.symlink_to(tmp_path / "loop2.jsonl")
    (tmp_path / "loop2.jsonl").symlink_to(loop)
    dangling.symlink_to(tmp_path / "gone.jsonl")
    cases = [(fifo, (f"{fifo}: a FIFO (named pipe), not a file: give the path of the exported file (or of a "
                     "folder of past tasks)")),
             (loop, f"cannot read {loop}: Too many levels of symbolic links"),
             (dangling, f"{dangling}: a symbolic link to '{tmp_path / 'gone.jsonl'}', which does not exist"),
             (Path("/dev/null"), ("/dev/null: a device, not a file: give the path of the exported file (or of a "
                                  "folder of past tasks)"))]
    if Path("/proc/self/mem").is_file():  # a file even root cannot read: reading it fails with EIO
        cases.append((Path("/proc/self/mem"), "cannot read /proc/self/mem: Input/output error"))
    for path, says in cases:
        code, out, err = cli("import", str(path), "--instance", instance)
        assert one_line(code, err) == says and out == ""


@pytest.mark.parametrize("content, says", [
    ('{"content": "t", "tags": 5}\n',
     'line 1: "tags" must be a list of texts (["work", "travel"]) or one text ("work, travel"), not a number (5)'),
    ('{"content": 123}\n', ('line 1: "content" is a number (123), not text: each memory\'s text must be a JSON '
                            'string (in quotes)')),
])
def test_a_memory_of_the_wrong_type_is_said_truly(cli, instance, tmp_path, content, says):
    """"Value after * must be an iterable, not int"; "content is missing" of a content that was there."""
    data = tmp_path / "m.jsonl"
    data.write_text(content)
    code, _, err = cli("import", str(data), "--instance", instance, "--dry-run")
    assert says in one_line(code, err) and "iterable" not in err


def test_a_csv_separated_by_semicolons_is_read(cli, workbench, instance, tmp_path):
    """Every row was "content missing", with no word of the separator."""
    data = tmp_path / "semi.csv"
    data.write_text("content;tags\nhello;a\nworld;b, c\n")
    code, out, err = cli("import", str(data), "--instance", instance)
    assert code == 0 and json.loads(out)["outcome"]["created"]["memories"] == 2, err
    assert [(m["content"], m["tags"]) for m in json.loads(out)["preview"]["first"]] == [("hello", ["a"]),
                                                                                       ("world", ["b", "c"])]


def test_format_and_option_wordings(cli, instance, tmp_path):
    data = tmp_path / "m.jsonl"
    data.write_text(GOOD)
    code, _, err = cli("import", str(data), "--instance", instance, "--format", "bogus")
    assert one_line(code, err).startswith("--format: unknown format 'bogus': use one of auto, openai-jsonl, ")
    code, _, err = cli("import", str(data), "--instance", instance, "--format", "chatgpt")
    assert one_line(code, err) == ("m.jsonl: --format chatgpt reads a JSON list, and this is JSON lines (an object "
                                   "a line): leave --format out to tell the format from the file, or give one "
                                   "that reads it (openai-jsonl, memories-jsonl, past-tasks)")
    code, _, err = cli("import", str(tmp_path), "--instance", instance, "--format", "claude")
    assert f"{tmp_path.name}: --format claude reads a JSON list, and this is a folder" in one_line(code, err)
    code, _, err = cli("memory", "search", "x", "--top-k", "0", "--instance", instance)
    assert one_line(code, err) == "invalid input — --top-k: Input should be greater than or equal to 1"
    code, _, err = cli("tasks", "ingest", str(tmp_path), "--user", "maria", "--task", "meeting minutes")
    assert one_line(code, err) == (f"{tmp_path}: a folder; `tasks ingest` takes files: to bring in a folder of "
                                   f"past tasks, run `workbench import {tmp_path} --user maria --task 'meeting "
                                   "minutes'`")


def test_tasks_ingest_prints_no_progress_where_stderr_is_no_terminal(cli, instance, tmp_path):
    note = tmp_path / "note.md"
    note.write_text("Kickoff\n\nWe agreed on the plan.\n")
    code, out, err = cli("--instance", instance, "tasks", "ingest", str(note), "--user", "maria", "--task", "note")
    assert code == 0 and err == "" and json.loads(out)[0]["file"] == str(note)


def test_a_chatgpt_zip_is_imported_as_it_is_downloaded(cli, workbench, instance, tmp_path):
    """The export's zip said "the file holds NUL bytes, so it is not UTF-8 text": wrong advice."""
    export = write_export(tmp_path / "conversations.json", [
        conversation("Garden", "c-1", [("user", "When do I plant tulips?", 1714550400),
                                       ("assistant", "In autumn.", 1714550405)])])
    zipped = tmp_path / "chatgpt-export.zip"
    with zipfile.ZipFile(zipped, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.write(export, "conversations.json")
        z.writestr("chat.html", "<html></html>")
    code, out, err = cli("import", str(zipped), "--instance", instance)
    assert code == 0, err
    result = json.loads(out)
    assert result["preview"]["format"] == "chatgpt" and result["preview"]["file"] == str(zipped)
    assert [c["title"] for c in result["outcome"]["chains"]] == ["Garden"]
    # The same conversations as the file unzipped: importing that adds nothing.
    code, out, err = cli("import", str(export), "--instance", instance)
    assert code == 0 and json.loads(out)["outcome"]["created"]["messages"] == 0, err
    other = tmp_path / "photos.zip"
    with zipfile.ZipFile(other, "w") as z:
        z.writestr("photo.txt", "not an export")
    code, _, err = cli("import", str(other), "--instance", instance)
    assert one_line(code, err) == ("photos.zip: a zip archive holding no conversations.json (of a ChatGPT export), "
                                   "and not a Memory Workbench archive: unzip it and import the export file it "
                                   "holds")


EXPORT_LIMITED = """
import resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG, as on a full disk
resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit}))
sys.argv = ["workbench", *sys.argv[1:]]
from core.cli import main
main()
"""


@pytest.mark.parametrize("limit", [100, 64 * 1024])  # in the first buffered write, or after some were written
def test_an_export_that_cannot_be_written_says_so_and_leaves_no_partial_file(workbench, instance, tmp_path, limit):
    """A full disk gave "Unexpected OSError" and left `.OUT.partial` (0600, the users' words) behind."""
    words = tmp_path / "words.jsonl"
    words.write_text("".join(json.dumps({"content": f"note {i}: {os.urandom(300).hex()}"}) + "\n"
                             for i in range(300)))
    uc.import_file(workbench, uc.ImportFile(path=words, instance=instance))
    folder = tmp_path / "out"
    folder.mkdir()
    out = folder / "instance.zip"
    env = {**os.environ, "DATA_DIR": str(workbench.settings.data_dir), "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", EXPORT_LIMITED.format(limit=limit), "--instance", instance,
                           "export", str(out)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 1 and done.stdout == "", done.stderr
    assert done.stderr.strip().splitlines() == [f"error: could not write {out}: File too large; nothing was written"]
    assert list(folder.iterdir()) == []


def test_export_never_replaces_what_is_no_regular_file(cli, workbench, instance, tmp_path):
    """`export /dev/full --force` renamed the archive over the device."""
    (tmp_path / "a.jsonl").write_text('{"content": "something to export"}\n')
    assert cli("import", str(tmp_path / "a.jsonl"), "--instance", instance)[0] == 0
    fifo = tmp_path / "out.zip"
    os.mkfifo(fifo)
    for force in ([], ["--force"]):
        code, _, err = cli("--instance", instance, "export", str(fifo), *force)
        assert one_line(code, err) == (f"output: {fifo} is not a regular file (a device, a FIFO or a socket): it "
                                       "is never replaced; choose the path of a file")
    assert fifo.is_fifo() and sorted(p.name for p in tmp_path.iterdir()) == ["a.jsonl", "out.zip"]


def test_a_second_load_of_a_new_instance_waits_for_the_first_and_writes_into_its_partition(keyword_workbench):
    """Two imports into a new instance at once: the second failed with "Unexpected UniqueViolation" (both
    created the partition's table)."""
    wb = keyword_workbench
    inst = f"clifix-{uuid.uuid4().hex[:8]}"
    now = datetime(2026, 6, 1, tzinfo=UTC)

    def records(prefix: str) -> list[MemoryRecord]:
        return [MemoryRecord(instance=inst, id=f"{prefix}{i}", kind="turn", created_at=now,
                             content=f"memory {i} of load {prefix} about dogs") for i in range(5)]

    wb.index.ensure_vector_index()
    first, batch = BulkLoader(wb.index), records("a")
    first.write(batch, wb.index.embedder.uncached.embed_batch([embedding_text(r) for r in batch]))
    assert first.staged is not None  # its table made, not committed: the partition's lock held
    done: dict[str, object] = {}

    def second() -> None:
        try:
            done["written"] = wb.index.bulk_load(records("b"))
        except Exception as e:  # noqa: BLE001 - whatever it is, the assertion below shows it
            done["error"] = e

    thread = threading.Thread(target=second)
    thread.start()
    time.sleep(1.0)
    assert thread.is_alive()  # waiting for the first load
    first.finish()
    thread.join(60)
    assert done == {"written": 5}
    assert wb.index.count(inst) == 10
