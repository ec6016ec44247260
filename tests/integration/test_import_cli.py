"""`workbench import` through the real entry point: JSON per file, a dry run that writes nothing, the
invalid records' report next to FILE and 0600, and bad files refused with exit status 2 and one line (no
traceback)."""

from __future__ import annotations

import codecs
import json
import os
from pathlib import Path

import pytest

from tests.support.chatgpt_export import conversation, write_export
from tests.support.cli import in_process_cli, mode, usual_umask

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
    assert code == 2, err  # the import would refuse (see the next test)
    preview = json.loads(out)["preview"]
    assert preview["counts"]["memories"] == 1 and preview["invalid"] == 1
    assert preview["errors"] == [{"where": "line 2", "problem": "content: must contain some text"}]
    assert workbench.index.count(instance) == 0


def test_a_dry_run_says_what_the_import_would_do_with_invalid_records(cli, workbench, instance, tmp_path):
    """The dry run exits as the import would: 2 when it would refuse, 0 when --on-error skip imports the
    valid records; the invalid ones are said on standard error either way. It exited 0 in silence, with
    "invalid": 68 only inside the JSON, and the import then refused."""
    notes = tmp_path / "notes.jsonl"
    notes.write_text('{"content": "fine", "created_at": "2024-01-01"}\n{"content": ""}\n'
                     '{"content": "also fine", "created_at": "2024-01-02"}\n')
    found = "notes.jsonl: 1 of 3 records are invalid (first: line 2: content: must contain some text)"
    code, out, err = cli("import", str(notes), "--instance", instance, "--dry-run")
    assert code == 2 and json.loads(out)["preview"]["invalid"] == 1
    assert err.strip() == (f"error: {found}: an import with --on-error stop would write nothing; "
                           "--on-error skip imports the 2 valid ones")
    code, out, err = cli("import", str(notes), "--instance", instance, "--dry-run", "--on-error", "skip")
    assert code == 0 and err.strip().splitlines() == [
        "notes.jsonl: Adds 2 new memories.",
        (f"{found}: the import (--on-error skip) would import the 2 valid ones and list the others in "
         f"{tmp_path / 'notes.jsonl.invalid.jsonl'}")]
    notes.write_text('{"content": ""}\n')
    code, _, err = cli("import", str(notes), "--instance", instance, "--dry-run", "--on-error", "skip")
    assert code == 2 and "notes.jsonl: every record is invalid" in err
    good = tmp_path / "good.jsonl"
    good.write_text('{"content": "fine", "created_at": "2024-01-01"}\n')
    code, _, err = cli("import", str(good), "--instance", instance, "--dry-run")
    assert code == 0 and err == "good.jsonl: Adds 1 new memory.\n"
    assert workbench.index.count(instance) == 0 and not (tmp_path / "notes.jsonl.invalid.jsonl").exists()


@pytest.mark.parametrize("content, message", [
    (b"", "the file is empty"),
    (codecs.BOM_UTF16_LE + "[]".encode("utf-16-le"), "the file is UTF-16, not UTF-8"),
    (b"lorem ipsum\n", "unknown format"),
    (b'[{"chat_messages": [], "uuid": "a"}, {"chat_mess', "conversation 1 ('a'): no user or assistant message"),
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
    """The report goes next to FILE, readable by its owner alone, wherever the command runs from (it
    went to the current folder: run from a checkout, a stray file there)."""
    elsewhere, data = tmp_path / "elsewhere", tmp_path / "data"
    elsewhere.mkdir()
    data.mkdir()
    monkeypatch.chdir(elsewhere)
    notes, report = data / "notes.jsonl", data / "notes.jsonl.invalid.jsonl"
    notes.write_text('{"content": "fine", "created_at": "2024-01-01"}\n{"content": ""}\n')
    code, _, err = cli("import", str(notes), "--instance", instance)
    assert code == 2 and "1 of 2 records are invalid" in err and workbench.index.count(instance) == 0
    code, out, err = cli("import", str(notes), "--instance", instance, "--on-error", "skip", "--dry-run")
    assert code == 0 and json.loads(out)["preview"]["errors"][0]["where"] == "line 2"
    assert not report.exists() and json.loads(out)["report"] is None  # a dry run writes nothing
    with usual_umask():
        code, out, err = cli("import", str(notes), "--instance", instance, "--on-error", "skip")
    assert code == 0 and json.loads(out)["outcome"]["created"]["memories"] == 1
    assert err.strip().splitlines() == [f"notes.jsonl: 1 invalid record listed in {report}"]
    assert [json.loads(line)["where"] for line in report.read_text().splitlines()] == ["line 2"]
    assert mode(report) == "0o600" and list(elsewhere.iterdir()) == []
    # A file with no invalid record leaves no report behind.
    good = data / "good.jsonl"
    good.write_text('{"content": "also fine", "created_at": "2024-01-01"}\n')
    code, out, err = cli("import", str(good), "--instance", instance, "--on-error", "skip")
    assert code == 0 and json.loads(out)["report"] is None
    assert not (data / "good.jsonl.invalid.jsonl").exists()


def test_a_report_given_or_replaced_is_readable_by_its_owner_alone(cli, instance, tmp_path):
    notes, given, folder = tmp_path / "notes.jsonl", tmp_path / "given.jsonl", mode(tmp_path)
    notes.write_text('{"content": "fine", "created_at": "2024-01-01"}\n{"content": ""}\n')
    with usual_umask():
        code, _, err = cli("import", str(notes), "--instance", instance, "--dry-run", "--report", str(given))
        assert code == 2 and mode(given) == "0o600", err  # written, though the import would refuse
        given.unlink()
        (tmp_path / "notes.jsonl.invalid.jsonl").write_text("an older report\n")
        os.chmod(tmp_path / "notes.jsonl.invalid.jsonl", 0o644)
        code, _, err = cli("import", str(notes), "--instance", instance, "--on-error", "skip")
    assert code == 0 and mode(tmp_path / "notes.jsonl.invalid.jsonl") == "0o600", err
    assert "older" not in (tmp_path / "notes.jsonl.invalid.jsonl").read_text()
    assert mode(tmp_path) == folder  # the folder is left as it was


def test_a_folder_that_cannot_hold_the_report_is_said_before_importing(cli, workbench, instance, tmp_path):
    """Where FILE's folder cannot be written, the report has no default place: give --report."""
    blocked = tmp_path / "notes.jsonl"
    blocked.write_text('{"content": "fine", "created_at": "2024-01-01"}\n')
    (tmp_path / "notes.jsonl.invalid.jsonl").mkdir()  # a folder in the way of the report
    cases = [(blocked, "Is a directory")]
    if os.geteuid() != 0:  # root writes anywhere, but not into /sys
        locked = tmp_path / "locked"
        locked.mkdir()
        (locked / "notes.jsonl").write_text('{"content": "fine", "created_at": "2024-01-01"}\n')
        locked.chmod(0o555)
        cases.append((locked / "notes.jsonl", "Permission denied"))
    elif Path("/sys/kernel/uevent_seqnum").is_file():
        cases.append((Path("/sys/kernel/uevent_seqnum"), "Permission denied"))
    for path, reason in cases:
        code, out, err = cli("import", str(path), "--instance", instance, "--on-error", "skip")
        assert code == 2 and out == "" and err.strip().splitlines() == [(
            f"error: {path.name}: its invalid records cannot be listed next to it in "
            f"'{path}.invalid.jsonl' ({reason}): give --report PATH")]
    assert workbench.index.count(instance) == 0
    code, out, err = cli("import", str(blocked), "--instance", instance, "--on-error", "skip", "--report",
                         str(tmp_path / "r.jsonl"))
    assert code == 0 and json.loads(out)["outcome"]["created"]["memories"] == 1, err


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


def test_import_names_each_conversation_by_its_title_and_says_what_it_assumed(cli, workbench, instance,
                                                                              tmp_path):
    """The chains came out as hex ids alone: 40 ChatGPT conversations were 40 ids. And a file without
    times was refused; NUL characters were replaced without a word."""
    export = write_export(tmp_path / "conversations.json", [
        conversation("Trip to Lisbon", "c-1", [("user", "Two days in Lisbon?", None),
                                               ("assistant", "Alfama, then Belém.", None)],
                     create_time=1714550400),
        conversation("Pasted log", "c-2", [("user", "log: a\x00b", 1714550500),
                                           ("assistant", "A NUL.", 1714550505)])])
    code, out, err = cli("import", str(export), "--instance", instance)
    assert code == 0, err
    result = json.loads(out)
    chains = result["outcome"]["chains"]
    assert [c["title"] for c in chains] == ["Trip to Lisbon", "Pasted log"]
    assert {c["chain_id"] for c in chains} == {c.chain_id for c in workbench.thoughts.chains(instance)}
    assert len(result["notes"]) == 2 and result["notes"][0].startswith("Times assumed: 1 conversation gives")
    assert "1 message held NUL characters" in result["notes"][1]
    assert err.strip().splitlines() == [f"conversations.json: {note}" for note in result["notes"]]


def test_a_dry_run_says_what_the_import_would_add_on_one_line(cli, workbench, instance, tmp_path):
    """A user importing each month's export could not tell next month's file from the same file imported
    again: the dry run said only what the file holds."""
    hotel = [("user", "We booked Hotel Granvia Kyoto.", 1.7e9), ("assistant", "By the station.", 1.7e9 + 5)]
    may = write_export(tmp_path / "may.json", [conversation("Hotel", "c-hotel", hotel)])
    june = write_export(tmp_path / "june.json", [
        conversation("Hotel", "c-hotel", [*hotel, ("user", "And the spa?", 1.7e9 + 60)]),
        conversation("Dog", "c-dog", [("user", "Our dog is Biscuit.", 1.7e9 + 90)])])
    code, out, err = cli("import", str(may), "--instance", instance, "--dry-run")
    assert code == 0, err
    assert err.strip() == "may.json: Adds 1 new conversation (2 messages)."
    assert json.loads(out)["adds"] == "Adds 1 new conversation (2 messages)."
    assert cli("import", str(may), "--instance", instance)[0] == 0
    code, out, err = cli("import", str(may), "--instance", instance, "--dry-run")
    assert code == 0 and err.strip() == ("may.json: Everything in this file is already here: importing it adds "
                                         "nothing.")
    code, out, err = cli("import", str(june), "--instance", instance, "--dry-run")
    assert code == 0 and err.strip() == ("june.json: Adds 1 new conversation (1 message) and 1 message to 1 "
                                         "conversation you already have.")
    adds = json.loads(out)["preview"]["adds"]
    assert (adds["new"]["conversations"], adds["continued"]["messages"], adds["already"]["messages"]) == (1, 1, 2)
    assert workbench.thoughts.chain_count(instance) == 1  # the dry runs wrote nothing
