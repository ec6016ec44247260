"""`with_empty_periods`: `summarize_by(…, "day" | "week")` has no row for a period without answers, so a
weekly table went from one week to the one after next without a word; the summary's groups list it with
its counts 0 and no figures."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pandas as pd

from core.analytics import build_frame, summarize_by
from core.analytics.aggregate import SUMMARY_COLUMNS, periods_between, with_empty_periods
from tests.unit.test_feedback_analytics import rec

TUESDAY = datetime(2026, 2, 3, 10, 0, tzinfo=UTC)  # the week from Monday 2 February 2026


def two_answers_two_weeks_apart() -> pd.DataFrame:
    return build_frame([rec(1, TUESDAY, score=0.9, ttn=10, continued=1, tokens=10, rating=-1),
                        rec(2, TUESDAY + timedelta(days=14), tokens=5)])


def test_a_week_without_answers_is_a_row_of_zero_counts_and_no_figures():
    table = summarize_by(two_answers_two_weeks_apart(), "week")
    full = with_empty_periods(table, "week", datetime(2026, 1, 28, tzinfo=UTC), datetime(2026, 2, 20, tzinfo=UTC))
    assert [w.strftime("%Y-%m-%d") for w in full["week"]] == ["2026-01-26", "2026-02-02", "2026-02-09", "2026-02-16"]
    assert list(full["answers"]) == [0, 1, 0, 1] and list(full.columns) == ["week", *SUMMARY_COLUMNS]
    empty = full.iloc[2]
    counts = ("answers", "scored", "continued", "abandoned", "corrected", "pending", "final", "rated", "rated_up",
              "rated_down", "llm_answers", "imported")
    assert all(empty[c] == 0 for c in counts)
    assert all(math.isnan(empty[c]) for c in SUMMARY_COLUMNS if c not in counts)
    # The weeks with answers keep their own figures.
    pd.testing.assert_frame_equal(full.iloc[[1, 3]].reset_index(drop=True), table, check_dtype=False,
                                  check_index_type=False)


def test_days_are_filled_like_weeks_and_the_bounds_count_whole_periods():
    table = summarize_by(two_answers_two_weeks_apart(), "day")
    # From the day holding the start (any time of it) to the day holding the end.
    full = with_empty_periods(table, "day", TUESDAY - timedelta(hours=9), TUESDAY + timedelta(days=14, hours=13))
    assert len(full) == 15 and list(full["answers"]) == [1, *[0] * 13, 1]


def test_other_groupings_and_open_ends_are_left_as_they_are():
    frame = two_answers_two_weeks_apart()
    by_model = summarize_by(frame, "model")
    assert with_empty_periods(by_model, "model", TUESDAY, TUESDAY + timedelta(days=30)) is by_model
    weeks = summarize_by(frame, "week")
    assert with_empty_periods(weeks, "week", None, TUESDAY) is weeks


def test_a_window_without_answers_lists_its_periods_at_zero():
    empty = summarize_by(two_answers_two_weeks_apart().iloc[0:0], "week")
    full = with_empty_periods(empty, "week", TUESDAY, TUESDAY + timedelta(days=7))
    assert list(full["answers"]) == [0, 0] and full["mean_score"].isna().all()


def test_periods_between_counts_the_days_or_weeks_listed_from_start_to_end():
    """What `feedback_summary` checks against MAX_PERIODS before listing a window by day or week."""
    assert periods_between(TUESDAY - timedelta(hours=9), TUESDAY + timedelta(days=14, hours=13), "day") == 15
    # 28 January (a Wednesday) to 20 February: the weeks from 26 January to 16 February.
    assert periods_between(datetime(2026, 1, 28, tzinfo=UTC), datetime(2026, 2, 20, tzinfo=UTC), "week") == 4
    assert periods_between(TUESDAY, TUESDAY, "week") == periods_between(TUESDAY, TUESDAY, "day") == 1
    assert periods_between(TUESDAY, TUESDAY - timedelta(days=3), "day") == 0
    full = with_empty_periods(summarize_by(two_answers_two_weeks_apart(), "week"), "week",
                              datetime(2026, 1, 28, tzinfo=UTC), datetime(2026, 2, 20, tzinfo=UTC))
    assert len(full) == 4
