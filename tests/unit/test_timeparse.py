"""The offline time parser on a table of expressions, relative to Wednesday 15 May 2024, 10:00 UTC."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from core.retrieval.timeparse import has_time_keyword, parse_time_hint, range_of_parts

NOW = datetime(2024, 5, 15, 10, 0, tzinfo=UTC)  # a Wednesday


def d(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


@pytest.mark.parametrize(("text", "parts", "start", "end"), [
    ("What did I eat today?", {"year": 2024, "month": 5, "day": 15}, d(2024, 5, 15), d(2024, 5, 16)),
    ("what happened yesterday", {"year": 2024, "month": 5, "day": 14}, d(2024, 5, 14), d(2024, 5, 15)),
    ("anything from last week?", {"year": 2024, "week": 19}, d(2024, 5, 6), d(2024, 5, 13)),
    ("what did I do on Monday", {"weekday": 0}, d(2024, 5, 13), d(2024, 5, 14)),
    ("last Friday's dinner", {"year": 2024, "month": 5, "day": 10}, d(2024, 5, 10), d(2024, 5, 11)),
    ("the trip in March", {"month": 3}, d(2024, 3, 1), d(2024, 4, 1)),
    ("we met on 3 March 2024", {"year": 2024, "month": 3, "day": 3}, d(2024, 3, 3), d(2024, 3, 4)),
    ("March 3rd, 2024 was fun", {"year": 2024, "month": 3, "day": 3}, d(2024, 3, 3), d(2024, 3, 4)),
    ("the 8th of May, 2023", {"year": 2023, "month": 5, "day": 8}, d(2023, 5, 8), d(2023, 5, 9)),
    ("meeting on 2024-03-03", {"year": 2024, "month": 3, "day": 3}, d(2024, 3, 3), d(2024, 3, 4)),
    ("two days ago I ran", {"year": 2024, "month": 5, "day": 13}, d(2024, 5, 13), d(2024, 5, 14)),
    ("3 weeks ago", {"year": 2024, "week": 17}, d(2024, 4, 22), d(2024, 4, 29)),
    ("coffee this morning", {"year": 2024, "month": 5, "day": 15}, d(2024, 5, 15, 5), d(2024, 5, 15, 12)),
    ("what did I say last night", {"year": 2024, "month": 5, "day": 14}, d(2024, 5, 14, 18),
     d(2024, 5, 15, 6)),
    ("yesterday at 3pm", {"year": 2024, "month": 5, "day": 14, "hour": 15}, d(2024, 5, 14, 15),
     d(2024, 5, 14, 16)),
    ("last month", {"year": 2024, "month": 4}, d(2024, 4, 1), d(2024, 5, 1)),
    ("photos from 2023", {"year": 2023}, d(2023, 1, 1), d(2024, 1, 1)),
])
def test_expressions(text, parts, start, end):
    hint = parse_time_hint(text, NOW)
    assert hint is not None, text
    assert (hint.parts, hint.start, hint.end) == (parts, start, end)
    assert hint.source == "rules"


@pytest.mark.parametrize("text", ["May I ask you something?", "Can you march on?", "hello world",
                                  "What is my favourite food?"])
def test_no_time(text):
    assert parse_time_hint(text, NOW) is None


def test_the_gate_is_whole_words():
    assert not has_time_keyword("May I ask about someday-ish holidays")  # 'day' only inside words
    assert not has_time_keyword("the agonist")  # 'ago' inside a word
    assert has_time_keyword("two days ago")
    assert has_time_keyword("in May")


def test_month_without_year_prefers_the_past():
    hint = parse_time_hint("in June", NOW)  # June 2024 is still ahead: the past one is June 2023
    assert hint.parts == {"month": 6} and hint.start == d(2023, 6, 1)


def test_naive_now_is_utc_and_contains():
    hint = parse_time_hint("yesterday", datetime(2024, 5, 15, 10, 0))
    assert hint.start == d(2024, 5, 14) and hint.contains(d(2024, 5, 14, 23, 59))
    assert not hint.contains(d(2024, 5, 15))


def test_range_of_llm_parts():
    assert range_of_parts({"year": 2024, "month": 8, "day": 19}, NOW) == (d(2024, 8, 19), d(2024, 8, 20))
    assert range_of_parts({"year": 2024, "week": 33}, NOW) == (d(2024, 8, 12), d(2024, 8, 19))
    assert range_of_parts({"year": 2023, "month": 12}, NOW) == (d(2023, 12, 1), d(2024, 1, 1))
    assert range_of_parts({"weekday": 0}, NOW) is None
    assert range_of_parts({"year": 2024, "month": 2, "day": 30}, NOW) is None
