"""The Feedback page's daily charts: a spec Altair made and validated once, with each run's rows in it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import altair as alt
import pandas as pd

from dashboard import feedback_charts as charts

DAYS = [datetime(2025, 3, 1, tzinfo=UTC) + timedelta(days=i) for i in range(3)]


def daily(scale: float) -> pd.DataFrame:
    return pd.DataFrame({"day": DAYS, "answers": [10, 20, 30], "scored": [8, 15, 28],
                         "mean_score": [0.5 * scale, 0.6, 0.7], "ci_low": [0.4, 0.5, 0.6],
                         "ci_high": [0.6, 0.7, 0.8], "tokens_total": [100.0, 200.0, 300.0],
                         "tokens_per_answer": [10.0, 10.0, 10.0], "other": [1, 2, 3]})


def test_each_run_gets_its_own_rows_in_a_valid_spec():
    first, second = charts.score_over_time(daily(1.0)), charts.score_over_time(daily(0.5))
    for spec, columns in ((first, charts.DAILY_SCORE_COLUMNS),
                          (charts.tokens_over_time(daily(1.0)), charts.DAILY_TOKEN_COLUMNS)):
        rows = spec["datasets"][charts.ROWS]
        assert list(spec["datasets"]) == [charts.ROWS] and spec["data"] == {"name": charts.ROWS}
        assert list(rows.columns) == columns  # only what the marks read is sent
        # Every layer reads the named rows (none brings a dataset of its own) and the spec is valid.
        assert "data" not in str(spec["layer"])
        alt.LayerChart.from_dict({k: v for k, v in spec.items() if k != "datasets"})
    assert first["datasets"][charts.ROWS]["mean_score"].iloc[0] == 0.5
    assert second["datasets"][charts.ROWS]["mean_score"].iloc[0] == 0.25  # not the first run's rows
    assert first["layer"] == second["layer"] and first["layer"] is not second["layer"]  # copies


def test_a_day_bar_spans_its_day_under_its_points():
    """Bars given bandPosition 0 were drawn centred on their date's tick, half a day before the points at
    bandPosition 0.5: each day's score sat over the gap between its bar and the next day's."""
    for spec in (charts.score_over_time(daily(1.0)), charts.tokens_over_time(daily(1.0))):
        marks = []
        stack = list(spec["layer"])
        while stack:
            layer = stack.pop()
            stack.extend(layer.get("layer", []))
            if "mark" in layer:
                mark = layer["mark"]["type"] if isinstance(layer["mark"], dict) else layer["mark"]
                marks.append((mark, layer["encoding"]["x"].get("bandPosition")))
        assert ("bar", None) in marks
        assert all(position == 0.5 for mark, position in marks if mark != "bar"), marks


def _marks(spec: dict) -> list[dict]:
    found, stack = [], list(spec["layer"])
    while stack:
        layer = stack.pop()
        stack.extend(layer.get("layer", []))
        if "mark" in layer:
            found.append(layer["mark"] if isinstance(layer["mark"], dict) else {"type": layer["mark"]})
    return found


def test_a_week_without_answers_breaks_the_lines_instead_of_bridging_them():
    """Six months by week with one week of no answers at all: that week had no row, and the score line
    and its band were drawn straight from the week before to the week after, as if it had been scored."""
    mondays = [pd.Timestamp("2026-02-02", tz=UTC), pd.Timestamp("2026-02-16", tz=UTC)]  # 9 Feb: none
    weekly = pd.DataFrame({"week": mondays, "answers": [80, 80], "scored": [49, 53], "mean_score": [0.64, 0.65],
                           "ci_low": [0.59, 0.60], "ci_high": [0.69, 0.70], "tokens_total": [1200.0, 1200.0],
                           "tokens_per_answer": [15.0, 15.0]})
    for spec in (charts.score_over_time(weekly, "week"), charts.tokens_over_time(weekly, "week")):
        rows = spec["datasets"][charts.ROWS]
        assert list(rows["day"]) == [mondays[0], pd.Timestamp("2026-02-09", tz=UTC), mondays[1]]
        if "answers" in rows:  # the score chart's volume bars
            assert rows["answers"].tolist() == [80, 0, 80]
        assert rows.drop(columns=["day", "answers"], errors="ignore").iloc[1].isna().all()  # no figure
        lines = [m for m in _marks(spec) if m["type"] in ("line", "area")]
        assert lines and all(m.get("invalid") == charts.BREAK for m in lines)
        alt.LayerChart.from_dict({k: v for k, v in spec.items() if k != "datasets"})  # a valid spec
    days = daily(1.0).drop(index=1)  # 1 and 3 March: the 2nd gets its row
    assert len(charts.score_over_time(days)["datasets"][charts.ROWS]) == 3


def test_chart_titles_fit_a_half_width_column():
    """"Tokens by week (UTC, from Monday), as the provider reported them" was cut to "…reported t…" in its
    half of the page: the provider's word is a subtitle."""
    for unit in ("day", "week"):
        title = charts.tokens_over_time(daily(1.0), unit)["title"]
        assert len(title["text"]) <= 40 and title["subtitle"] == "as the LLM provider reported them"
