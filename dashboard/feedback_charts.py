"""Vega-Lite charts (Altair) for the Feedback page. Each takes frames from `core.analytics` and returns a
chart (an Altair chart, or for the daily ones its Vega-Lite spec with the rows in it); the page decides
what to show when there is nothing to plot (these never get empty input).

Vega-Lite rather than Plotly: the browser draws one of these in about 0.25 s in a new tab, a Plotly
figure in about 0.9 s (most of it loading Plotly's code), and this page opens on a chart
(benchmarks/README.md, "The dashboard at scale")."""

from __future__ import annotations

import copy
import math
from functools import cache
from typing import Literal

import altair as alt
import numpy as np
import pandas as pd

from core import usecases as uc

SCORE = "#4C78A8"
VOLUME = "#BFC9D9"
ACCENT = "#F58518"
HEIGHT = 300
SCORE_AXIS = alt.Scale(domain=[0, 1.05], nice=False)
# A period with no figure (no answers, `_keyed`) breaks a line or band there instead of being skipped over.
BREAK = "break-paths-show-domains"
DAY_TIP = alt.Tooltip("day:T", timeUnit="utcyearmonthdate", title="day (UTC)")


def _day(*, centred: bool = False) -> alt.X:
    """Whole UTC days on the time axis, one tick a day at most: a bar spans its day (from the tick of its
    date to the next), and `centred` puts a point in the middle of its day, over its day's bar. A bar
    given `bandPosition` 0 was drawn centred on its date's tick instead, half a day before its points
    (each day's score sat on the line between its bar and the next day's), and over 90 days as a hairline."""
    return alt.X("day:T", timeUnit="utcyearmonthdate", title=None, **({"bandPosition": 0.5} if centred else {}),
                 axis=alt.Axis(format="%b %d", tickCount={"interval": "day", "step": 1}, labelAngle=0))


# Past this many days a period's charts show weeks (from Monday, UTC), not days: a year's 365 daily points
# made a line too jagged to read a trend from, its bars hairlines.
WEEKLY_AFTER_DAYS = 92
_WEEK_MS = 7 * 86_400_000
Unit = Literal["day", "week"]


def unit_for(days: float) -> Unit:
    """The time unit the charts of a period of `days` days use."""
    return "week" if days > WEEKLY_AFTER_DAYS else "day"


def _week(*, centred: bool = False) -> alt.X:
    """A week's bar from its Monday to the next (`day` to `day_end`), or its point in the middle (`mid`)."""
    return alt.X("mid:T" if centred else "day:T", title=None, scale=alt.Scale(type="utc"),
                 axis=alt.Axis(format="%b %d", labelAngle=0))


def _x(unit: Unit, *, centred: bool = False) -> alt.X:
    return _week(centred=centred) if unit == "week" else _day(centred=centred)


def _rows_of(unit: Unit) -> alt.Chart:
    """The chart over the named rows; a week's also computes where its bar ends and its middle."""
    base = alt.Chart(alt.NamedData(name=ROWS))
    if unit == "week":
        base = base.transform_calculate(day_end=f"time(datum.day) + {_WEEK_MS}",
                                        mid=f"time(datum.day) + {_WEEK_MS // 2}")
    return base


def _span(unit: Unit) -> dict:
    """A week's bar: from its Monday to the next, and up from 0 (a bar given x2 alone is a horizontal one, a
    dash at its height). A day's bar spans its day by its time unit."""
    return {"x2": "day_end:T", "y2": alt.datum(0)} if unit == "week" else {}


def _tip(unit: Unit) -> alt.Tooltip:
    return alt.Tooltip("day:T", timeUnit="utcyearmonthdate", title="week from (UTC)") if unit == "week" else DAY_TIP


def _titled(chart: alt.Chart | alt.LayerChart, title: str, height: int = HEIGHT, subtitle: str | None = None
            ) -> alt.LayerChart:
    extra = {"subtitle": subtitle} if subtitle else {}
    return chart.properties(title=alt.Title(title, anchor="start", fontSize=15, **extra), height=height)


# The daily charts are the same but for their rows: Altair builds and validates each once a process (0.1 s,
# which each run of the Feedback page paid), and each run puts its rows in a copy of the spec, as the
# named dataset its marks read (`st.vega_lite_chart(spec=...)`).
ROWS = "rows"
DAILY_SCORE_COLUMNS = ["day", "answers", "scored", "mean_score", "ci_low", "ci_high"]
DAILY_TOKEN_COLUMNS = ["day", "tokens_total", "tokens_per_answer"]


def build_daily_specs() -> None:
    """Both daily specs built ahead (the dashboard's start-up thread calls this): 0.26 s of the first
    opening of the Feedback page in a process otherwise."""
    _score_over_time("day")
    _tokens_over_time("day")


def score_over_time(daily: pd.DataFrame, unit: Unit = "day") -> dict:
    """Mean score per day (or per week, `summarize_by(…, "week")`'s rows) with its 95% interval (line and
    band, left axis) over the number of answers (bars, right axis)."""
    return _filled(_score_over_time(unit), _keyed(daily, unit)[DAILY_SCORE_COLUMNS])


def _keyed(rows: pd.DataFrame, unit: Unit) -> pd.DataFrame:
    """A week's rows keyed as a day's (`day`: the week's Monday), which the marks read, with a row for every
    day or week between the first and the last: a period with no answers has none of its own, and the
    lines were drawn straight across it, as if it had been scored like its neighbours (a week without a
    single answer read as a steady score). Its row has 0 answers and no figures, where the lines break."""
    rows = rows.rename(columns={"week": "day"}) if unit == "week" else rows
    if len(rows) < 2:
        return rows
    every = pd.date_range(rows["day"].min(), rows["day"].max(), freq="7D" if unit == "week" else "D")
    if len(every) == len(rows):
        return rows
    full = rows.set_index("day").reindex(every).rename_axis("day").reset_index()
    full["answers"] = full["answers"].fillna(0).astype("int64")
    return full


def _filled(spec: dict, rows: pd.DataFrame) -> dict:
    return {**copy.deepcopy(spec), "datasets": {ROWS: rows}}


@cache
def _score_over_time(unit: Unit) -> dict:
    base = _rows_of(unit)
    volume = base.mark_bar(color=VOLUME, opacity=0.7).encode(
        x=_x(unit), **_span(unit),
        y=alt.Y("answers:Q", title="answers (bars)",
                axis=alt.Axis(orient="right", grid=False, tickMinStep=1, format="d")),
        tooltip=[_tip(unit), alt.Tooltip("answers:Q", title="answers")])
    band = base.mark_area(color=SCORE, opacity=0.15, invalid=BREAK).encode(
        x=_x(unit, centred=True),
        y=alt.Y("ci_low:Q", scale=SCORE_AXIS, title="mean feedback score (line, 95% band)"),
        y2="ci_high:Q")
    line = base.mark_line(color=SCORE, strokeWidth=2.5, point=alt.OverlayMarkDef(color=SCORE), invalid=BREAK).encode(
        x=_x(unit, centred=True),
        y=alt.Y("mean_score:Q", scale=SCORE_AXIS),
        tooltip=[_tip(unit), alt.Tooltip("mean_score:Q", title="mean score", format=".3f"),
                 alt.Tooltip("scored:Q", title="scored answers"),
                 alt.Tooltip("ci_low:Q", title="95% from", format=".3f"),
                 alt.Tooltip("ci_high:Q", title="95% to", format=".3f")])
    chart = alt.layer(volume, alt.layer(band, line)).resolve_scale(y="independent")
    return _titled(chart, f"Feedback score by {_unit_title(unit)}, with answer volume", 340).to_dict()


def _unit_title(unit: Unit) -> str:
    return "week (UTC, from Monday)" if unit == "week" else "day (UTC)"


def score_distribution(frame: pd.DataFrame) -> alt.Chart:
    """Scores take a handful of values (0.3 … 1.0 in steps of 0.1), so one bar per value, not bins."""
    counts = frame["feedback_score"].dropna().round(2).value_counts().sort_index()
    data = pd.DataFrame({"score": counts.index, "answers": counts.to_numpy()})
    chart = alt.Chart(data).mark_bar(color=SCORE, size=14).encode(
        x=alt.X("score:Q", title="feedback score", scale=alt.Scale(domain=[0, 1.05], nice=False),
                axis=alt.Axis(values=[i / 10 for i in range(11)], format=".1f")),
        y=alt.Y("answers:Q", title="answers", axis=alt.Axis(tickMinStep=1, format="d")),
        tooltip=[alt.Tooltip("score:Q", format=".2f"), "answers:Q"])
    return _titled(chart, "Score distribution (answers with a follow-up)")


def compare(table: pd.DataFrame, key: str, title: str,
            labels: dict[str, str] | None = None) -> alt.LayerChart:
    """Mean score per group with its 95% interval as error bars; n and continue/abandon in the tooltip."""
    data = pd.DataFrame({
        "group": [labels.get(v, v) if labels else v for v in table[key].astype(str)],
        "mean_score": table["mean_score"], "ci_low": table["ci_low"], "ci_high": table["ci_high"],
        "label": [f"{m:.3f} · n={n}" if pd.notna(m) else f"n={n}"
                  for m, n in zip(table["mean_score"], table["scored"], strict=True)],
        "answers": table["answers"], "continued": table["continue_rate"], "abandoned": table["abandon_rate"],
        "corrected": table["correction_rate"]})
    base = alt.Chart(data).encode(x=alt.X("group:N", sort=None, title=None,
                                          axis=alt.Axis(labelAngle=0, labelLimit=260)))  # whole model names
    bars = base.mark_bar(color=SCORE).encode(
        y=alt.Y("mean_score:Q", scale=SCORE_AXIS, title="mean feedback score"),
        tooltip=["group:N", alt.Tooltip("label:N", title="mean"), alt.Tooltip("answers:Q"),
                 alt.Tooltip("continued:Q", format=".0%"), alt.Tooltip("abandoned:Q", format=".0%"),
                 alt.Tooltip("corrected:Q", format=".0%")])
    errors = base.mark_rule(color="#333", strokeWidth=1.5).encode(y="ci_low:Q", y2="ci_high:Q")
    text = base.mark_text(baseline="bottom", dy=-4, color="white").encode(y=alt.datum(0), text="label:N")
    return _titled(alt.layer(bars, errors, text), title)


# Tick labels of a seconds axis: 90 → "1.5 min", 3600 → "1 h".
_DURATION = ("datum.value >= 3600 ? format(datum.value / 3600, '~g') + ' h' : datum.value >= 60 ? "
             "format(datum.value / 60, '~g') + ' min' : format(datum.value, '~g') + ' s'")


def time_to_next(frame: pd.DataFrame) -> alt.LayerChart:
    """Seconds until the next user turn on a log scale (binned in log10 so bins look even), with the
    scorer's 30 s and 120 s steps and the 10-minute abandonment line marked."""
    exponents = np.log10(frame["time_to_next"].dropna().clip(lower=1).to_numpy())
    # Counted here rather than by the browser: a period's follow-ups (40,000 at 100,000 answers) would
    # all be sent to it.
    low = math.floor(exponents.min() * 10) / 10
    counts, edges = np.histogram(exponents, bins=np.arange(low, exponents.max() + 0.2, 0.1))
    bins = pd.DataFrame({"from": 10 ** edges[:-1], "to": 10 ** edges[1:], "follow_ups": counts})
    ticks = [1, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 10800]
    seconds = alt.Scale(type="log", domain=[min(1, bins["from"].min()), max(10800, bins["to"].max())])
    bars = alt.Chart(bins).mark_bar(color=SCORE).encode(
        x=alt.X("from:Q", scale=seconds, title="time to the next turn",
                axis=alt.Axis(values=ticks, labelExpr=_DURATION)),
        x2="to:Q", y2=alt.datum(0),
        y=alt.Y("follow_ups:Q", title="follow-ups", axis=alt.Axis(tickMinStep=1, format="d")),
        tooltip=[alt.Tooltip("from:Q", title="from (s)", format=".0f"),
                 alt.Tooltip("to:Q", title="to (s)", format=".0f"),
                 alt.Tooltip("follow_ups:Q", title="follow-ups")])
    marks = pd.DataFrame({"at": [30, 120, uc.ABANDON_AFTER_S], "label": ["30 s", "120 s", "10 min"]})
    rules = alt.Chart(marks).mark_rule(color=ACCENT, strokeDash=[3, 3]).encode(x=alt.X("at:Q", scale=seconds))
    labels = alt.Chart(marks).mark_text(color=ACCENT, align="left", baseline="top", dx=3, y=2, fontSize=11
                                        ).encode(x=alt.X("at:Q", scale=seconds), text="label:N")
    return _titled(alt.layer(bars, rules, labels), "Time to next turn")


def latency(table: pd.DataFrame) -> alt.Chart:
    """p50, p95 and p99 of each stage side by side."""
    data = table.melt(id_vars=["stage"], value_vars=["p50", "p95", "p99"], var_name="quantile",
                      value_name="ms")
    chart = alt.Chart(data).mark_bar().encode(
        x=alt.X("stage:N", sort=None, title=None, axis=alt.Axis(labelAngle=0)),
        xOffset=alt.XOffset("quantile:N"),
        y=alt.Y("ms:Q", title="milliseconds"),
        color=alt.Color("quantile:N", title=None, legend=alt.Legend(orient="bottom"),
                        scale=alt.Scale(domain=["p50", "p95", "p99"], range=["#72B7B2", SCORE, "#E45756"])),
        tooltip=["stage:N", "quantile:N", alt.Tooltip("ms:Q", format=".1f")])
    return _titled(chart, "Latency per stage (p50 / p95 / p99)")


def tokens_over_time(daily: pd.DataFrame, unit: Unit = "day") -> dict:
    """Tokens per day or week (bars, left axis) and per LLM answer (line, right axis)."""
    return _filled(_tokens_over_time(unit), _keyed(daily, unit)[DAILY_TOKEN_COLUMNS])


@cache
def _tokens_over_time(unit: Unit) -> dict:
    base = _rows_of(unit)
    total = base.mark_bar(color=VOLUME).encode(
        x=_x(unit), **_span(unit),
        y=alt.Y("tokens_total:Q", title=f"tokens per {unit} (bars)", axis=alt.Axis(format=",.0f")),
        tooltip=[_tip(unit), alt.Tooltip("tokens_total:Q", title="tokens", format=",.0f")])
    per_answer = base.mark_line(color=ACCENT, point=alt.OverlayMarkDef(color=ACCENT), invalid=BREAK).encode(
        x=_x(unit, centred=True),
        y=alt.Y("tokens_per_answer:Q", title="per LLM answer (line)",
                axis=alt.Axis(orient="right", grid=False, format=",.0f")),
        tooltip=[_tip(unit), alt.Tooltip("tokens_per_answer:Q", title="per answer", format=",.0f")])
    # The provider's word in a subtitle: in one title it was cut ("…as the provider reported t…") in a
    # half-width column.
    return _titled(alt.layer(total, per_answer).resolve_scale(y="independent"),
                   f"Tokens by {_unit_title(unit)}", subtitle="as the LLM provider reported them").to_dict()
