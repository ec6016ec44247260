"""A long history asked about by time: the spans a person uses over a year ("the first week of August",
"since the summer", "in spring") restrict a turn's retrieval to that span, read against the question's time.

A small dated history is imported with its original times (OpenAI chat JSONL), formed, then asked about on
Monday 7 December 2026 through the turn's `temporal` hint, as the Chat page's "Time hint" and `workbench
remember --temporal` pass it. Before, "the first week of August" restricted to all of August, "since the
summer" and "in spring" restricted nothing (the note said they could not be read), and "since March" to
March alone."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta

import pytest

from core import usecases as uc

ASKED_AT = datetime(2026, 12, 7, 9, 0, tzinfo=UTC)  # a Monday
# (day, what was said that morning): runs through the summer and autumn, one statement a conversation.
RUNS = [(date(2026, 7, 27), 7.2), (date(2026, 7, 30), 5.5), (date(2026, 8, 2), 6.3), (date(2026, 8, 3), 8.1),
        (date(2026, 8, 5), 11.6), (date(2026, 8, 7), 6.1), (date(2026, 8, 9), 9.9), (date(2026, 8, 12), 10.4),
        (date(2026, 4, 14), 5.0), (date(2026, 10, 20), 12.0)]


def conversation(i: int, day: date, text: str) -> dict:
    at = datetime(day.year, day.month, day.day, 8, 30, tzinfo=UTC)
    return {"id": f"year-{i}", "title": text[:40], "messages": [
        {"role": "user", "content": text, "timestamp": at.isoformat()},
        {"role": "assistant", "content": "Noted.", "timestamp": (at + timedelta(seconds=5)).isoformat()}]}


@pytest.fixture
def year(workbench, instance, tmp_path):
    lines = [conversation(i, day, f"I ran {km} km along the harbourside this morning.")
             for i, (day, km) in enumerate(RUNS)]
    path = tmp_path / "year.jsonl"
    path.write_text("\n".join(json.dumps(c) for c in lines) + "\n")
    uc.import_file(workbench, uc.ImportFile(path=path, instance=instance))
    uc.formation_run(workbench, uc.FormationRun(instance=instance))
    return instance


def ask(wb, instance: str, question: str, temporal: str) -> uc.UiRememberResult:
    return uc.remember(wb, uc.UiRememberParams(thought=question, instance=instance, temporal=temporal, top_k=10),
                       clock=lambda: ASKED_AT)


def days_handed(result: uc.UiRememberResult) -> set[date]:
    return {c.created_at.astimezone(UTC).date() for c in result.context}


def test_the_first_week_of_a_month_is_that_week(workbench, year):
    result = ask(workbench, year, "How many km did I run along the harbourside?", "the first week of August")
    assert any("2026-08-01 00:00 – 2026-08-08 00:00" in n for n in result.notes), result.notes
    assert days_handed(result) == {date(2026, 8, 2), date(2026, 8, 3), date(2026, 8, 5), date(2026, 8, 7)}, result.notes


def test_since_a_season_runs_up_to_the_question(workbench, year):
    result = ask(workbench, year, "How many km did I run along the harbourside?", "since the summer")
    assert any("2026-06-01 00:00 – 2026-12-07 09:00" in n and "until now" in n for n in result.notes), result.notes
    handed = days_handed(result)
    assert date(2026, 10, 20) in handed and date(2026, 8, 12) in handed  # after the summer too
    assert date(2026, 4, 14) not in handed


def test_a_season_with_in_is_the_latest_one_begun(workbench, year):
    result = ask(workbench, year, "How many km did I run along the harbourside?", "in spring")
    assert not any("could not be read" in n for n in result.notes), result.notes
    assert days_handed(result) == {date(2026, 4, 14)}


def test_since_a_month_is_not_that_month_alone(workbench, year):
    result = ask(workbench, year, "How many km did I run along the harbourside?", "since August")
    assert date(2026, 10, 20) in days_handed(result) and date(2026, 7, 30) not in days_handed(result)


def test_the_overview_says_the_time_the_memory_spans(workbench, year, instance):
    """An import keeps the original times: the overview dates the instance's memory from them."""
    stats = uc.stored_counts(workbench, uc.InstanceRequest(instance=instance))
    assert stats.first_at.astimezone(UTC).date() == min(day for day, _ in RUNS)
    assert stats.last_at.astimezone(UTC).date() == max(day for day, _ in RUNS)


def test_an_empty_instance_spans_no_time(workbench, instance):
    stats = uc.stored_counts(workbench, uc.InstanceRequest(instance=instance))
    assert (stats.first_at, stats.last_at) == (None, None)
