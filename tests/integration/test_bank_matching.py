"""A memory bank's queries and deletions as an agent developer meets them over a week of tasks, on the real
embedded Postgres: letter case whatever the database's locale, a compressed step still found through its
summary, a date alone meaning its whole day, and a deleted step gone from the summary that quoted it."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta

import psycopg
import pytest

from core.admin.deletion import delete_memory
from core.bank import SUMMARY_SKILL, MemoryBank, MemoryEntry, MemoryQuery
from core.runtime import Workbench
from tests.integration.conftest import scratch_database
from tests.support.cli import in_process_cli

T0 = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)  # step i is made i days later


def day_step(i: int, **kw) -> MemoryEntry:
    kw.setdefault("command", f"make build-{i}")
    kw.setdefault("result", f"built {i}")
    return MemoryEntry(skill_name="CommandSkill", timestamp=T0 + timedelta(days=i), **kw)


def found(bank: MemoryBank, **kw) -> list[tuple[str, int]]:
    return [(e.skill_name, e.step_number) for e in bank.get_relevant_memories(MemoryQuery(**kw))]


def index_rows_holding(wb: Workbench, instance: str, words: str) -> list[str]:
    with wb.pool().connection() as conn:
        return [r[0] for r in conn.execute("SELECT id FROM memory WHERE instance = %s AND content LIKE %s",
                                           (instance, f"%{words}%"))]


@pytest.fixture
def c_locale_settings(workbench, settings):
    """Settings pointing at a database of the test server made with the C locale, where Postgres's
    `lower()` lowers ASCII only (as in a cluster made where LANG is unset)."""
    with scratch_database(workbench, "clocale", "LOCALE 'C' TEMPLATE template0") as url:
        with psycopg.connect(url, autocommit=True) as db:
            assert db.execute("SELECT lower('CAFÉ')").fetchone()[0] == "cafÉ"  # what the bank must not rely on
        yield settings.model_copy(update={"database_url": url})


def test_letter_case_is_ignored_whatever_the_database_locale(c_locale_settings, instance):
    wb = Workbench(c_locale_settings)
    try:
        bank = MemoryBank(wb, instance, "unicode")
        bank.add_entry(day_step(1, command="echo CAFÉ ΣΟΦΊΑ", result="(a+b)*c [x] 100%", tags=["ÉTÉ", "Größe"]))
        for word in ("café", "Café", "σοφία", "(A+B)*C", "[X]", "100%"):
            assert found(bank, keywords=[word]) == [("CommandSkill", 1)], word
        assert found(bank, keywords=["cafe", "a+b+"]) == []  # no accent folding; symbols are literal
        assert found(bank, tags=["été"]) == found(bank, tags=["GRÖẞE"]) == [("CommandSkill", 1)]
        assert found(bank, tags=["ét"]) == []  # a tag matches whole
        assert found(bank, tags=["GRÖSSE"]) == [("CommandSkill", 1)]  # "ß" in capitals is "SS"
    finally:
        wb.close()


def test_a_compressed_step_is_found_through_its_summary(workbench, instance):
    bank = MemoryBank(workbench, instance, "week")
    long_result = "Compiled 412 files. " * 8 + "Warning: the --legacy-openssl flag is deprecated"
    bank.add_entry(day_step(1, thinking="Day one. Then look at the zebra cache too."))
    bank.add_entry(day_step(2, result=long_result))
    for i in range(3, 7):
        bank.add_entry(day_step(i))
    [summary] = bank.get_summaries()
    # The rule summary keeps each step's first sentence and the start of its result only ...
    assert "legacy-openssl" not in summary.content and "zebra" not in summary.content
    # ... yet the steps it compressed are found through it, as they were before compression.
    assert found(bank, keywords=["LEGACY-OPENSSL"]) == [(SUMMARY_SKILL, 1)]
    assert found(bank, keywords=["zebra", "no-such-word"]) == [(SUMMARY_SKILL, 1)]
    assert found(bank, keywords=["build-5"]) == [("CommandSkill", 5)]  # a live step: itself


def test_a_date_alone_is_its_whole_day(workbench, instance):
    bank = MemoryBank(workbench, instance, "days", max_entries=100, compression_threshold=100)
    for i in range(1, 5):
        bank.add_entry(day_step(i))  # May 2, 3, 4, 5 at 09:00 UTC
    assert found(bank, date_to="2024-05-03") == [("CommandSkill", 2), ("CommandSkill", 1)]
    assert found(bank, date_to=date(2024, 5, 3)) == found(bank, date_to="2024-05-03")
    assert found(bank, date_from="2024-05-04", date_to="2024-05-04") == [("CommandSkill", 3)]
    # A time is that instant, in the zone it names (UTC without one): 10:59 at +02:00 is 08:59 UTC.
    assert found(bank, date_to="2024-05-03T10:59:00+02:00") == [("CommandSkill", 1)]
    assert found(bank, date_to="2024-05-03T09:00:00") == [("CommandSkill", 2), ("CommandSkill", 1)]


def test_deleting_a_compressed_step_tells_its_summary_again_without_it(workbench, instance):
    bank = MemoryBank(workbench, instance, "secrets")
    ids = [bank.add_entry(day_step(i, command=f"cat key{i}.pem", result=f"token-{i}-xyz", tags=[f"host{i}"],
                                   importance=i / 10)).entry.id for i in range(1, 7)]
    [before] = bank.get_summaries()
    assert "token-2-xyz" in before.content and index_rows_holding(workbench, instance, "token-2-xyz")

    report = delete_memory(workbench, instance, ids[1])
    assert report.bank_rows == 1 and any("written again by rule" in n for n in report.notes)
    [after] = bank.get_summaries()
    assert after.id == before.id and after.source_entries == [ids[0], ids[2]]
    assert (after.title, after.tags, after.importance) == ("Summary of 2 steps (steps 1–3)", ["host1", "host3"], 0.3)
    assert "token-2-xyz" not in after.content and "token-1-xyz" in after.content
    assert (after.period_start, after.period_end) == (T0 + timedelta(days=1), T0 + timedelta(days=3))
    assert found(bank, keywords=["token-2-xyz"]) == found(bank, tags=["host2"]) == []
    assert index_rows_holding(workbench, instance, "token-2-xyz") == []  # the summary's row was written again
    assert f"bs-{after.id}" in index_rows_holding(workbench, instance, "token-1-xyz")
    assert bank.stats().pending_index == 0

    for gone in (ids[0], ids[2]):  # the last step it stood for takes the summary with it
        report = delete_memory(workbench, instance, gone)
    assert report.bank_rows == 2 and any("stood for it alone" in n for n in report.notes)
    assert bank.get_summaries() == [] and bank.get_compression_events()[0].summary_id is None
    assert index_rows_holding(workbench, instance, "Summary of") == []
    assert [e.step_number for e in bank.get_all_memories()] == [4, 5, 6]


def test_deleting_a_step_of_an_llm_summary_leaves_a_rule_summary(llm_settings, fake_llm, instance):
    wb = Workbench(llm_settings)
    try:
        bank = MemoryBank(wb, instance, "llm-del")
        fake_llm.reply(json.dumps({"title": "Rotated the keys", "content": "Read key2.pem, got token-2-xyz."}))
        ids = [bank.add_entry(day_step(i, command=f"cat key{i}.pem")).entry.id for i in range(1, 7)]
        assert bank.get_summaries()[0].method == "llm"
        delete_memory(wb, instance, ids[1])
        [summary] = bank.get_summaries()
        # The LLM's own words cannot be told apart per step: the summary is made again by rule.
        assert summary.method == "rule" and "token-2-xyz" not in summary.content and "key2" not in summary.content
        assert index_rows_holding(wb, instance, "token-2-xyz") == []
    finally:
        wb.close()


def test_the_cli_reads_query_dates_as_iso_8601(settings, workbench, instance, monkeypatch):
    """`workbench bank query` takes what HTTP and MCP take: a zone, and a date alone as its whole day
    (click's DateTime refused "+02:00" and made "--date-to 2024-05-03" its midnight)."""
    bank = MemoryBank(workbench, instance, "cli-days", max_entries=100, compression_threshold=100)
    for i in range(1, 4):
        bank.add_entry(day_step(i))  # May 2, 3, 4 at 09:00 UTC
    run = in_process_cli(settings, workbench, monkeypatch)

    def steps(*args: str) -> list[int]:
        code, out, err = run("--instance", instance, "bank", "query", "--bank", "cli-days", *args)
        assert code == 0, err
        return [e["step_number"] for e in json.loads(out)]

    assert steps("--date-to", "2024-05-03") == [2, 1]
    assert steps("--date-from", "2024-05-03T10:30:00+02:00", "--date-to", "2024-05-03") == [2]
    code, _, err = run("--instance", instance, "bank", "query", "--bank", "cli-days", "--date-to", "next week")
    assert code == 2 and err.count("\n") == 1 and "--date-to" in err  # the option typed


def test_the_cli_adds_a_step_with_its_own_time_and_id_as_http_and_mcp_do(settings, workbench, instance,
                                                                          monkeypatch):
    """An agent's earlier steps keep their times: HTTP and MCP took `timestamp` and `id`, the CLI did not."""
    run = in_process_cli(settings, workbench, monkeypatch)
    add = ("--instance", instance, "bank", "add", "--bank", "cli-times", "--thinking", "ran the tests")
    code, out, err = run(*add, "--timestamp", "2024-05-03T09:00:00+02:00", "--id", "step-may")
    assert code == 0, err
    entry = json.loads(out)["entry"]
    assert (entry["id"], datetime.fromisoformat(entry["timestamp"])) == (
        "step-may", datetime(2024, 5, 3, 7, tzinfo=UTC))
    code, _, err = run(*add, "--timestamp", "yesterday")
    assert code == 2 and err.count("\n") == 1 and "--timestamp" in err, err
    # The same step under its id again is a retry, answered with the stored one; another step under it is not
    code, out, err = run(*add, "--id", "step-may")
    assert code == 0 and json.loads(out)["entry"]["timestamp"].startswith("2024-05-03"), err
    code, _, err = run("--instance", instance, "bank", "add", "--bank", "cli-times", "--thinking", "other",
                       "--id", "step-may")
    assert code == 2 and err.count("\n") == 1 and "step-may" in err, err
