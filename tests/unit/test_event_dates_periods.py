"""The period a statement's event time holds (`core.formation.observations.event_time`): the narrowest one an
`EventTime` names that holds the time said. A week, a weekend, a season or "recently" was its whole year
("this week" → 2026), so a year's weekly plans and work notes (343 of 1,255 observations) matched every window of
their year (/tmp/yearlong/REPORT.md, 1c)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from core.formation.observations import event_time


def when(text: str, said: datetime) -> tuple[int, int, int, int]:
    moment, stated = event_time(text, said)
    assert stated, text
    return moment.year, moment.month, moment.day, moment.hour


MONDAY_3_AUGUST = datetime(2026, 8, 3, 9, 15, tzinfo=UTC)
MONDAY_31_AUGUST = datetime(2026, 8, 31, 9, 15, tzinfo=UTC)


@pytest.mark.parametrize("text, said, period", [
    # a week or a weekend within a month: that month
    ("My running plan for this week is 41 km in total.", MONDAY_3_AUGUST, (2026, 8, -1, -1)),
    ("Last weekend I went hiking in the Mendip Hills.", MONDAY_3_AUGUST, (2026, 8, -1, -1)),  # 1-2 August
    ("At Acme Logistics I'm working on the fuel cost forecast this week.", datetime(2026, 3, 18, 10, tzinfo=UTC),
     (2026, 3, -1, -1)),
    # across two months: the moment it was said
    ("My running plan for this week is 44 km in total.", MONDAY_31_AUGUST, (2026, 8, 31, 9)),
    # a season, "recently", a rolling span: no month holds them
    ("I went to Spain over the summer.", datetime(2026, 9, 2, 9, tzinfo=UTC), (2026, 9, 2, 9)),
    ("I've been sleeping badly recently.", datetime(2026, 9, 2, 9, tzinfo=UTC), (2026, 9, 2, 9)),
    ("I cooked a lot in the last two weeks.", datetime(2026, 9, 20, 9, tzinfo=UTC), (2026, 9, -1, -1)),  # 6-20 Sep
])
def test_a_period_that_is_no_date_is_held_by_its_month_or_said_when(text, said, period):
    assert when(text, said) == period


@pytest.mark.parametrize("text, said, period", [
    ("My goal is to run a half marathon next year.", datetime(2025, 12, 1, 9, tzinfo=UTC), (2026, -1, -1, -1)),
    ("We went to Lyon in 2024.", MONDAY_3_AUGUST, (2024, -1, -1, -1)),
    ("I've lived in Lisbon since 2019.", MONDAY_3_AUGUST, (2019, -1, -1, -1)),  # when the state began
    ("I've been vegan since the summer.", MONDAY_3_AUGUST, (2026, 6, -1, -1)),
    ("I'm vegan since January.", MONDAY_3_AUGUST, (2026, 1, -1, -1)),
    ("We planned the trip last month.", MONDAY_3_AUGUST, (2026, 7, -1, -1)),
    ("In the first week of July I ran every day.", MONDAY_3_AUGUST, (2026, 7, -1, -1)),
    ("I ran 10 km yesterday.", MONDAY_3_AUGUST, (2026, 8, 2, -1)),
])
def test_a_year_a_month_or_a_day_said_is_that_period(text, said, period):
    assert when(text, said) == period


def test_a_weekday_said_on_that_weekday_is_that_day():
    """The parser reads "Sunday" said on a Sunday as the Sunday before (it prefers the past), so "On Sunday I
    baked cinnamon buns" said on Sunday evening was dated a week back, out of "last weekend" asked the next day."""
    sunday_evening = datetime(2026, 12, 6, 18, tzinfo=UTC)
    assert when("On Sunday I baked cinnamon buns and watched the football.", sunday_evening) == (2026, 12, 6, -1)
    assert when("The party was on Saturday.", sunday_evening) == (2026, 12, 5, -1)
