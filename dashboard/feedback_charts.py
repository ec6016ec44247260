"""Plotly figures for the Feedback page. Each takes frames from `core.analytics` and returns a figure;
the page decides what to show when there is nothing to plot (these never get empty input)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from core import usecases as uc

SCORE = "#4C78A8"
VOLUME = "#BFC9D9"
ACCENT = "#F58518"


def _by_day(fig: go.Figure) -> go.Figure:
    """Whole days on the time axis: with one day of data Plotly would otherwise zoom into its bar and
    label fractions of a second."""
    fig.update_xaxes(type="date", dtick=86_400_000, tickformat="%b %d")
    return fig


def _layout(fig: go.Figure, title: str, height: int = 330) -> go.Figure:
    fig.update_layout(title=dict(text=title, x=0, font=dict(size=15)), height=height,
                      margin=dict(l=10, r=10, t=45, b=10), legend=dict(orientation="h", y=-0.18),
                      hovermode="x unified" if "time" in title.lower() or "day" in title.lower() else "closest")
    return fig


def score_over_time(daily: pd.DataFrame) -> go.Figure:
    """Daily mean score with its 95% interval (line, left axis) over the number of answers (bars, right)."""
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    fig.add_bar(x=daily["day"], y=daily["answers"], name="answers", marker_color=VOLUME, opacity=0.7,
                secondary_y=True)
    band = daily.dropna(subset=["ci_low", "ci_high"])
    fig.add_scatter(x=list(band["day"]) + list(band["day"][::-1]),
                    y=list(band["ci_high"]) + list(band["ci_low"][::-1]), fill="toself", mode="lines",
                    line=dict(width=0), fillcolor="rgba(76,120,168,0.15)", name="95% interval",
                    hoverinfo="skip", secondary_y=False)
    fig.add_scatter(x=daily["day"], y=daily["mean_score"], mode="lines+markers", name="mean score",
                    line=dict(color=SCORE, width=2.5), secondary_y=False,
                    customdata=daily[["scored"]], hovertemplate="%{y:.3f} (n=%{customdata[0]})")
    fig.update_yaxes(title_text="mean feedback score", range=[0, 1.05], secondary_y=False)
    fig.update_yaxes(title_text="answers", secondary_y=True, showgrid=False, rangemode="tozero",
                     dtick=_whole_step(daily["answers"].max()))
    return _layout(_by_day(fig), "Feedback score by day (UTC), with answer volume", 360)


def _whole_step(top: float) -> int:
    """A tick step of 1, 2 or 5 × 10^k giving about five ticks: counts never get fractional ticks."""
    rough = max(1.0, float(top) / 5)
    magnitude = 10 ** math.floor(math.log10(rough))
    return int(next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= rough))


def score_distribution(frame: pd.DataFrame) -> go.Figure:
    """Scores take a handful of values (0.3 … 1.0 in steps of 0.1), so one bar per value, not bins."""
    counts = frame["feedback_score"].dropna().round(2).value_counts().sort_index()
    fig = go.Figure(go.Bar(x=counts.index, y=counts.values, width=0.07, marker_color=SCORE,
                           hovertemplate="score %{x:.2f}: %{y} answers<extra></extra>"))
    fig.update_xaxes(title_text="feedback score", range=[-0.05, 1.05], dtick=0.1)
    fig.update_yaxes(title_text="answers")
    return _layout(fig, "Score distribution (answers with a follow-up)")


def compare(table: pd.DataFrame, key: str, title: str, labels: dict[str, str] | None = None) -> go.Figure:
    """Mean score per group with its 95% interval as error bars; n and continue/abandon in the hover."""
    names = [labels.get(v, v) if labels else v for v in table[key].astype(str)]
    err_hi = (table["ci_high"] - table["mean_score"]).fillna(0)
    err_lo = (table["mean_score"] - table["ci_low"]).fillna(0)
    fig = go.Figure(go.Bar(
        x=names, y=table["mean_score"], marker_color=SCORE,
        error_y=dict(type="data", array=err_hi, arrayminus=err_lo, color="#333"),
        text=[f"{m:.3f} · n={n}" if pd.notna(m) else f"n={n}" for m, n in zip(table["mean_score"], table["scored"],
                                                                            strict=True)],
        textposition="inside", insidetextanchor="start",
        customdata=table[["answers", "continue_rate", "abandon_rate", "correction_rate"]],
        hovertemplate=("%{x}<br>mean %{text}<br>%{customdata[0]} answers · continued "
                       "%{customdata[1]:.0%} · abandoned %{customdata[2]:.0%} · corrected "
                       "%{customdata[3]:.0%}<extra></extra>")))
    fig.update_yaxes(title_text="mean feedback score", range=[0, 1.05])
    return _layout(fig, title)


def time_to_next(frame: pd.DataFrame) -> go.Figure:
    """Seconds until the next user turn on a log scale (binned in log10 so bins look even), with the
    scorer's 30 s and 120 s steps and the 10-minute abandonment line marked."""
    exponents = np.log10(frame["time_to_next"].dropna().clip(lower=1).to_numpy())
    # Counted here rather than by the browser: a period's follow-ups (40,000 at 100,000 answers) would
    # all be sent to it.
    low = math.floor(exponents.min() * 10) / 10
    counts, edges = np.histogram(exponents, bins=np.arange(low, exponents.max() + 0.2, 0.1))
    fig = go.Figure(go.Bar(x=edges[:-1] + 0.05, y=counts, width=0.1, marker_color=SCORE,
                           hovertemplate="%{y} follow-ups<extra></extra>"))
    for at, label in ((30, "30 s"), (120, "120 s"), (uc.ABANDON_AFTER_S, "10 min")):
        fig.add_vline(x=math.log10(at), line_dash="dot", line_color=ACCENT, annotation_text=label,
                      annotation_position="top right", annotation_font_size=11)
    ticks = [1, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 10800]
    fig.update_xaxes(title_text="time to the next turn", tickvals=[math.log10(t) for t in ticks],
                     ticktext=[_duration(t) for t in ticks])
    fig.update_yaxes(title_text="follow-ups")
    return _layout(fig, "Time to next turn")


def _duration(seconds: float) -> str:
    return f"{seconds / 3600:g} h" if seconds >= 3600 else f"{seconds / 60:g} min" if seconds >= 60 else f"{seconds:g} s"


def latency(table: pd.DataFrame) -> go.Figure:
    fig = go.Figure()
    for q, color in (("p50", "#72B7B2"), ("p95", SCORE), ("p99", "#E45756")):
        fig.add_bar(x=table["stage"], y=table[q], name=q, marker_color=color,
                    hovertemplate="%{x} " + q + ": %{y:.1f} ms<extra></extra>")
    fig.update_layout(barmode="group")
    fig.update_yaxes(title_text="milliseconds")
    return _layout(fig, "Latency per stage (p50 / p95 / p99)")


def tokens_over_time(daily: pd.DataFrame) -> go.Figure:
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    fig.add_bar(x=daily["day"], y=daily["tokens_total"], name="tokens per day", marker_color=VOLUME,
                secondary_y=False)
    fig.add_scatter(x=daily["day"], y=daily["tokens_per_answer"], mode="lines+markers",
                    name="tokens per LLM answer", line=dict(color=ACCENT), secondary_y=True)
    fig.update_yaxes(title_text="tokens per day", secondary_y=False)
    fig.update_yaxes(title_text="per answer", secondary_y=True, showgrid=False, rangemode="tozero",
                     tickformat=",.0f")
    return _layout(_by_day(fig), "Tokens by day (UTC), as the provider reported them")
