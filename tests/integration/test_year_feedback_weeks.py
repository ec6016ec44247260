"""A long period on the Feedback page is charted by week: a year's 365 daily points made a line too jagged to
read a trend from, and bars a hairline wide. Answers are made by real turns (with a clock, as the demo
replays days), read back by `uc.feedback_answers`, grouped by `summarize_by(…, "week")` and charted."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import altair as alt
import pandas as pd

from core import usecases as uc
from dashboard import feedback_charts as charts

FIRST = datetime(2026, 6, 3, 9, 0, tzinfo=UTC)  # a Wednesday


def turns(wb, instance: str, days: list[int], follow_up_s: float) -> None:
    """One answer on each of `days` (days after FIRST), followed up after `follow_up_s` seconds."""
    for day in days:
        at = [FIRST + timedelta(days=day)]
        first = uc.remember(wb, uc.UiRememberParams(thought=f"I walked {day} km today.", instance=instance),
                            clock=lambda at=at: at[0])
        at[0] += timedelta(seconds=follow_up_s)
        uc.remember(wb, uc.UiRememberParams(thought="Thanks, got it.", instance=instance,
                                            chain_id=first.chain_id, next_thought_needed=False),
                    clock=lambda at=at: at[0])


def test_a_long_period_is_grouped_by_the_week_from_monday(workbench, instance):
    turns(workbench, instance, [0, 4, 5, 120], follow_up_s=10)  # Wed 3, Sun 7, Mon 8 June; 1 October
    frame = uc.feedback_answers(workbench, uc.FeedbackWindow(
        instance=instance, since=FIRST - timedelta(days=1), until=FIRST + timedelta(days=130)))
    weeks = uc.summarize_by(frame, "week")
    mondays = [pd.Timestamp(d) for d in ("2026-06-01", "2026-06-08", "2026-09-28")]
    assert list(weeks["week"]) == [m.tz_localize(UTC) for m in mondays]
    assert list(weeks["answers"]) == [4, 2, 2]  # two answers a day: Wed and Sun; Mon; Thu 1 October
    assert weeks["answers"].sum() == len(frame)
    assert charts.unit_for(130) == "week" and charts.unit_for(90) == "day"


def test_a_week_bar_spans_its_week_from_zero(workbench, instance):
    turns(workbench, instance, [0, 9], follow_up_s=10)
    frame = uc.feedback_answers(workbench, uc.FeedbackWindow(
        instance=instance, since=FIRST - timedelta(days=1), until=FIRST + timedelta(days=20)))
    for spec in (charts.score_over_time(uc.summarize_by(frame, "week"), "week"),
                 charts.tokens_over_time(uc.summarize_by(frame, "week"), "week")):
        assert list(spec["datasets"][charts.ROWS]["day"]) == [pd.Timestamp("2026-06-01", tz=UTC),
                                                               pd.Timestamp("2026-06-08", tz=UTC)]
        alt.LayerChart.from_dict({k: v for k, v in spec.items() if k != "datasets"})  # a valid spec
        layers, bars = list(spec["layer"]), []
        while layers:
            layer = layers.pop()
            layers.extend(layer.get("layer", []))
            mark = layer.get("mark")
            if (mark.get("type") if isinstance(mark, dict) else mark) == "bar":
                bars.append(layer["encoding"])
        # From its Monday to the next, and from 0 up: a bar given x2 alone is drawn as a dash.
        assert bars and all(e["x2"]["field"] == "day_end" and e["y2"] == {"datum": 0} for e in bars)
        assert "week" in str(spec["title"])
