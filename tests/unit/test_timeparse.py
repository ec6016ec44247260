"""The offline time parser on a table of expressions, relative to Wednesday 15 May 2024, 10:00 UTC."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from core.retrieval.timeparse import has_time_keyword, parse_time_hint, range_of_parts, window_bound

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
    assert not has_time_keyword("May I ask about someday-ish plans")  # 'day' only inside words
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


@pytest.mark.parametrize(("text", "parts", "start", "end"), [
    # NOW is Wednesday 15 May 2024: the weekend just over is 11-12 May, this week's is 18-19 May.
    ("what did we do last weekend", {"year": 2024, "week": 19}, d(2024, 5, 11), d(2024, 5, 13)),
    ("plans for this weekend", {"year": 2024, "week": 20}, d(2024, 5, 18), d(2024, 5, 20)),
    ("this month", {"year": 2024, "month": 5}, d(2024, 5, 1), d(2024, 6, 1)),
    # Seasons are the meteorological ones; "last" is the latest one already over.
    ("where did we go last summer", {"year": 2023}, d(2023, 6, 1), d(2023, 9, 1)),
    ("this summer", {"year": 2024}, d(2024, 6, 1), d(2024, 9, 1)),
    ("this spring", {"year": 2024}, d(2024, 3, 1), d(2024, 6, 1)),
    ("last autumn", {"year": 2023}, d(2023, 9, 1), d(2023, 12, 1)),
    ("last fall", {"year": 2023}, d(2023, 9, 1), d(2023, 12, 1)),
    ("last winter", {}, d(2023, 12, 1), d(2024, 3, 1)),  # across two years: no single part
    ("what have I said recently", {}, d(2024, 4, 15, 10), NOW),
])
def test_periods_dateparser_does_not_read(text, parts, start, end):
    hint = parse_time_hint(text, NOW)
    assert hint is not None, text
    assert (hint.parts, hint.start, hint.end) == (parts, start, end)


def test_recently_says_how_it_was_read_and_winter_turns_the_year():
    assert parse_time_hint("recently", NOW).reading == "the last 30 days"
    january = d(2025, 1, 10)  # the winter under way began last December; "last winter" is the one before
    assert parse_time_hint("this winter", january).start == d(2024, 12, 1)
    assert parse_time_hint("last winter", january).start == d(2023, 12, 1)


def test_last_or_next_month_is_the_latest_one_over_or_the_next_one_to_begin():
    # Asked on 15 May 2024: last March is 2024's, last May (under way) and last June 2023's; next May 2025's.
    for text, start in (("What did I do last March?", d(2024, 3, 1)), ("last May", d(2023, 5, 1)),
                        ("since last June", d(2023, 6, 1)), ("next Sept.", d(2024, 9, 1)), ("next May", d(2025, 5, 1))):
        hint = parse_time_hint(text, NOW)
        assert hint is not None and hint.start == start, text
        assert hint.parts == {"year": start.year, "month": start.month} or text.startswith("since")
    assert parse_time_hint("last March", NOW).end == d(2024, 4, 1)


def test_time_words_that_do_not_parse_pass_the_gate_and_give_no_hint():
    assert has_time_keyword("over the holidays") and parse_time_hint("over the holidays", NOW) is None


@pytest.mark.parametrize(("text", "since", "until"), [
    # A period counts whole: "today" as --since was this very moment, and "2026-03" the 15th of March.
    ("today", d(2024, 5, 15), d(2024, 5, 16)),
    ("yesterday", d(2024, 5, 14), d(2024, 5, 15)),
    ("this morning", d(2024, 5, 15, 5), d(2024, 5, 15, 12)),
    ("2024-03", d(2024, 3, 1), d(2024, 4, 1)),
    ("March 2024", d(2024, 3, 1), d(2024, 4, 1)),
    ("March", d(2024, 3, 1), d(2024, 4, 1)),
    ("in March", d(2024, 3, 1), d(2024, 4, 1)),
    ("2023", d(2023, 1, 1), d(2024, 1, 1)),
    ("2024-05-01", d(2024, 5, 1), d(2024, 5, 2)),
    ("2024/05/01", d(2024, 5, 1), d(2024, 5, 2)),
    ("last week", d(2024, 5, 6), d(2024, 5, 13)),
    # A moment stays one.
    ("2024-05-01T10:00:00+02:00", d(2024, 5, 1, 8), d(2024, 5, 1, 8)),
    ("2 hours ago", d(2024, 5, 15, 8), d(2024, 5, 15, 8)),
])
def test_window_bounds(text, since, until):
    assert (window_bound(text, NOW), window_bound(text, NOW, end=True)) == (since, until)


@pytest.mark.parametrize("text", ["2024-13-01", "2024-02-30", "2024-00", "garbage"])
def test_window_bounds_refuse_what_is_no_time(text):
    """An impossible ISO date was read another way ("2024-13-01" as 13 January)."""
    assert window_bound(text, NOW) is None


# A year of history, asked about on Monday 7 December 2026: the spans a person uses over a long history.
YEAR_END = datetime(2026, 12, 7, 10, 0, tzinfo=UTC)


@pytest.mark.parametrize(("text", "parts", "start", "end"), [
    # A week of a month is that week, not the month ("of August" alone read all of August; "the last week
    # of November" read as last week, 30 Nov - 6 Dec).
    ("How far did I run in the first week of August?", {"month": 8}, d(2026, 8, 1), d(2026, 8, 8)),
    ("the second week of October", {"month": 10}, d(2026, 10, 8), d(2026, 10, 15)),
    ("in the last week of November", {"month": 11}, d(2026, 11, 24), d(2026, 12, 1)),
    ("the 4th week of May 2025", {"year": 2025, "month": 5}, d(2025, 5, 22), d(2025, 5, 29)),
    # A part of a month: thirds of it.
    ("early October", {"month": 10}, d(2026, 10, 1), d(2026, 10, 11)),
    ("what did I do in mid-May", {"month": 5}, d(2026, 5, 11), d(2026, 5, 21)),
    ("late September", {"month": 9}, d(2026, 9, 21), d(2026, 10, 1)),
    ("at the end of February", {"month": 2}, d(2026, 2, 21), d(2026, 3, 1)),
    # Seasons with a preposition: the latest one begun (the one under way included), or the year's given.
    ("What did we talk about in spring?", {"year": 2026}, d(2026, 3, 1), d(2026, 6, 1)),
    ("what happened over the summer", {"year": 2026}, d(2026, 6, 1), d(2026, 9, 1)),
    ("during the fall", {"year": 2026}, d(2026, 9, 1), d(2026, 12, 1)),
    ("in summer 2025", {"year": 2025}, d(2025, 6, 1), d(2025, 9, 1)),
    ("in winter", {}, d(2026, 12, 1), d(2027, 3, 1)),
    # "since": from the start of the period up to now, with the start's parts ("since March" read March
    # alone, and "since last week" last week alone).
    ("What changed since the summer?", {"year": 2026}, d(2026, 6, 1), YEAR_END),
    ("what happened since March", {"month": 3}, d(2026, 3, 1), YEAR_END),
    ("anything new since last week?", {"year": 2026, "week": 49}, d(2026, 11, 30), YEAR_END),
    ("since 2025", {"year": 2025}, d(2025, 1, 1), YEAR_END),
    # A range: from the first point's start to the second's end ("from March to May" read March alone).
    ("what did I do from March to May", {"month": 3}, d(2026, 3, 1), d(2026, 6, 1)),
    ("between the spring and August", {"year": 2026}, d(2026, 3, 1), d(2026, 9, 1)),
    ("from November to February", {"month": 11}, d(2025, 11, 1), d(2026, 3, 1)),  # across the new year
    ("from 3 to 9 August", {"year": 2026, "month": 8, "day": 3}, d(2026, 8, 3), d(2026, 8, 10)),
    # A length of time up to now: not calendar periods ("last week" still is one).
    ("in the last two weeks", {}, d(2026, 11, 23, 10), YEAR_END),
    ("over the past 3 months", {}, d(2026, 9, 7, 10), YEAR_END),
    ("the past year", {}, d(2025, 12, 7, 10), YEAR_END),
    ("the last few days", {}, d(2026, 12, 4, 10), YEAR_END),
])
def test_spans_of_a_long_history(text, parts, start, end):
    hint = parse_time_hint(text, YEAR_END)
    assert hint is not None, text
    assert (hint.parts, hint.start, hint.end) == (parts, start, end)
    assert hint.reading  # the turn's note says how the span was read


def test_calendar_periods_stay_calendar_periods():
    assert parse_time_hint("last week", YEAR_END).start == d(2026, 11, 30)  # not the last 7 days
    assert parse_time_hint("the past week", YEAR_END).start == d(2026, 11, 30, 10)  # the last 7 days
    assert parse_time_hint("last summer", YEAR_END).start == d(2026, 6, 1)  # the latest one already over


@pytest.mark.parametrize("text", ["a letter from the summer house", "since tomorrow", "between the lines",
                                  "the first week", "from the spring onwards we"])
def test_what_is_no_span_is_not_read_as_one(text):
    """A "since" ahead of now is no time up to now (it was read as tomorrow); a season after "from" is the
    start of a range only ("from the summer house")."""
    assert parse_time_hint(text, YEAR_END) is None


def test_a_month_end_is_the_months_last_day_when_counting_back():
    assert parse_time_hint("the past month", datetime(2026, 3, 31, tzinfo=UTC)).start == d(2026, 2, 28)


def test_since_and_a_range_are_window_bounds_too():
    """`window_bound` (the CLI's --since/--until) reads a whole expression as the retrieval does."""
    assert window_bound("since the summer", YEAR_END) == d(2026, 6, 1)
    assert window_bound("the first week of August", YEAR_END, end=True) == d(2026, 8, 8)
