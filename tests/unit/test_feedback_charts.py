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
