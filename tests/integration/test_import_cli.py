"""`workbench import` through the real entry point: JSON per file, a dry run that writes nothing, and
bad files refused with exit status 2 and one line (no traceback)."""

from __future__ import annotations

import codecs
import json
from pathlib import Path

import pytest

from tests.support.cli import in_process_cli

DATA = Path(__file__).resolve().parents[1] / "data" / "import"


@pytest.fixture
def cli(settings, workbench, monkeypatch):
    return in_process_cli(settings, workbench, monkeypatch)


def test_import_prints_what_it_created_and_a_repeat_creates_nothing(cli, workbench, instance):
    code, out, err = cli("import", str(DATA / "claude_conversations.json"), "--instance", instance)
    assert code == 0, err
    result = json.loads(out)
    assert result["preview"]["format"] == "claude" and result["outcome"]["created"]["conversations"] == 2
    code, out, _ = cli("import", str(DATA / "claude_conversations.json"), "--instance", instance)
    assert code == 0 and json.loads(out)["outcome"]["created"]["messages"] == 0
    assert workbench.thoughts.chain_count(instance) == 2


def test_dry_run_reports_counts_and_first_errors_and_writes_nothing(cli, workbench, instance, tmp_path):
    bad = tmp_path / "notes.jsonl"
    bad.write_text('{"content": "fine", "created_at": "2024-01-01"}\n{"content": ""}\n')
    code, out, err = cli("import", str(bad), "--instance", instance, "--dry-run", "--report",
                         str(tmp_path / "r.jsonl"))
    assert code == 0, err
    preview = json.loads(out)["preview"]
    assert preview["counts"]["memories"] == 1 and preview["invalid"] == 1
    assert preview["errors"] == [{"where": "line 2", "problem": "content: must contain some text"}]
    assert workbench.index.count(instance) == 0


@pytest.mark.parametrize("content, message", [
    (b"", "the file is empty"),
    (codecs.BOM_UTF16_LE + "[]".encode("utf-16-le"), "the file is UTF-16, not UTF-8"),
    (b"lorem ipsum\n", "unknown format"),
    (b'[{"chat_messages": [], "uuid": "a"}, {"chat_mess', "conversation 1: no user or assistant message"),
    (b'{"content": "x", "created_at": "2999-01-01T00:00:00Z"}\n',
     "line 1: created_at 2999-01-01 00:00 is in the future"),
])
def test_bad_files_exit_2_with_one_line(cli, instance, tmp_path, content, message):
    path = tmp_path / "export.json"
    path.write_bytes(content)
    code, out, err = cli("import", str(path), "--instance", instance, "--report", str(tmp_path / "r.jsonl"))
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("error: ") and message in err, err
    assert "Traceback" not in err


def test_skip_imports_the_valid_records_and_lists_the_others(cli, workbench, instance, tmp_path,
                                                             monkeypatch):
    monkeypatch.chdir(tmp_path)
    notes = tmp_path / "notes.jsonl"
    notes.write_text('{"content": "fine", "created_at": "2024-01-01"}\n{"content": ""}\n')
    code, _, err = cli("import", str(notes), "--instance", instance)
    assert code == 2 and "1 of 2 records are invalid" in err and workbench.index.count(instance) == 0
    code, out, err = cli("import", str(notes), "--instance", instance, "--on-error", "skip")
    assert code == 0 and json.loads(out)["outcome"]["created"]["memories"] == 1
    assert "1 invalid records listed in notes.jsonl.invalid.jsonl" in err
    listed = (tmp_path / "notes.jsonl.invalid.jsonl").read_text().splitlines()
    assert [json.loads(line)["where"] for line in listed] == ["line 2"]


def test_import_of_a_workbench_archive_restores_it(cli, workbench, instance, tmp_path):
    assert cli("import", str(DATA / "claude_conversations.json"), "--instance", instance)[0] == 0
    archive = tmp_path / "instance.zip"
    code, _, err = cli("export", str(archive), "--instance", instance)
    assert code == 0, err
    code, out, err = cli("import", str(archive), "--instance", f"{instance}-copy")
    assert code == 0, err
    result = json.loads(out)
    assert result["preview"]["format"] == "workbench-archive"
    assert result["restored"]["source_instance"] == instance
    assert workbench.thoughts.chain_count(f"{instance}-copy") == 2
