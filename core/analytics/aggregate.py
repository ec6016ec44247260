"""Pure aggregates over the feedback frame (`core.analytics.load.build_frame`).

Definitions (every rate is a share of the answers given here in the group, so the three add up with the
rest; imported answers, when counted, are in `answers` and the ratings but in no rate: they carry no
follow-up data of their own, being neither continued, abandoned nor ended here):
    continue_rate   = answers with a follow-up / answers given here
    abandon_rate    = answers marked abandoned (no follow-up for 10 min) / answers given here
    correction_rate = answers whose follow-up read as a correction / answers given here
    *_rate_excl_ended = the same three over the answers given here that were not "ended" (given with
                      next_thought_needed = false: no follow-up was expected, so one is never abandoned);
                      None when every answer ended
    mean_score      = mean feedback_score over answers that have one (a follow-up scored them)
    ci_low, ci_high = mean_score ∓ t(0.975, n−1) · s / √n, Student's t 95% interval (n ≥ 2),
                      clipped to [0, 1] where scores live
    percentiles     = linear interpolation between order statistics (numpy's default)
    tokens_total    = sum of provider-reported tokens; tokens_per_answer = their mean over LLM answers
    rated_up, rated_down = answers the user rated explicitly (thumbs up / down; a signal of its own, not
                      part of the score); rated = their sum; rated_up_share = rated_up / rated (None if 0)
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, field_validator, model_validator

from core.analytics.load import IMPORTED, STAGES, answered_between
from core.retrieval.timeparse import PERIOD_END

Grouping = Literal["day", "week", "model", "profile", "chain", "tag", "source", "key"]
GROUPINGS: tuple[str, ...] = ("day", "week", "model", "profile", "chain", "tag", "source", "key")
_KEY = {"day": "day", "week": "week", "model": "model", "profile": "profile", "chain": "chain_id", "tag": "tag",
        "source": "source", "key": "key"}
NO_TAG = "(no tag)"
NO_KEY = "(no key)"  # the group of turns that came with no API key (the frame's key is "")
TTN_QUANTILES = {"p50": 0.50, "p75": 0.75, "p90": 0.90}
LATENCY_QUANTILES = {"p50": 0.50, "p95": 0.95, "p99": 0.99}
CONFIDENCE = 0.95

SUMMARY_COLUMNS = ["answers", "scored", "imported", "mean_score", "ci_low", "ci_high", "continued", "abandoned",
                   "corrected", "pending", "final", "continue_rate", "abandon_rate", "correction_rate",
                   "continue_rate_excl_ended", "abandon_rate_excl_ended", "correction_rate_excl_ended",
                   *(f"ttn_{k}" for k in TTN_QUANTILES), "rated", "rated_up", "rated_down", "rated_up_share",
                   "llm_answers", "tokens_total", "tokens_per_answer",
                   *(f"{s}_{k}" for s in STAGES for k in LATENCY_QUANTILES)]


class TimeWindow(BaseModel):
    """Answers given in [since, until]; an open end means from the first answer, or up to now. A time
    without a zone is UTC."""

    model_config = ConfigDict(extra="forbid")

    since: datetime | None = None
    until: datetime | None = None

    @field_validator("since", "until")
    @classmethod
    def _aware(cls, v: datetime | None) -> datetime | None:
        return v.replace(tzinfo=UTC) if v is not None and v.tzinfo is None else v

    @model_validator(mode="after")
    def _ordered(self) -> TimeWindow:
        if self.since and self.until and self.since > self.until:
            raise ValueError("since must not be after until")
        return self


Rating = Literal["up", "down", "none"]


class FeedbackFilter(TimeWindow):
    """Which answers to look at. Empty lists mean "all"; a turn matches `tags` if it has any of them.
    `sources` are front ends as the frame names them ("unknown": turns stored before sources were
    recorded); `keys` are API key names ("" : turns that came with no key); `ratings` the user's explicit
    rating ("none": not rated)."""

    models: list[str] = []
    profiles: list[str] = []
    chains: list[str] = []
    tags: list[str] = []
    sources: list[str] = []
    keys: list[str] = []
    ratings: list[Rating] = []


class FeedbackSummary(BaseModel):
    """The headline figures for a set of answers (see the module docstring for each definition)."""

    answers: int
    scored: int
    imported: int = 0  # answers imported from another system (no feedback of their own), when counted in
    mean_score: float | None
    ci_low: float | None
    ci_high: float | None
    continued: int
    abandoned: int
    corrected: int
    pending: int
    final: int
    continue_rate: float | None
    abandon_rate: float | None
    correction_rate: float | None
    continue_rate_excl_ended: float | None = None
    abandon_rate_excl_ended: float | None = None
    correction_rate_excl_ended: float | None = None
    time_to_next_s: dict[str, float | None]
    rated: int = 0
    rated_up: int = 0
    rated_down: int = 0
    rated_up_share: float | None = None
    llm_answers: int
    tokens_total: float | None
    tokens_per_answer: float | None
    latency_ms: dict[str, dict[str, float | None]]


def apply_filter(frame: pd.DataFrame, f: FeedbackFilter) -> pd.DataFrame:
    frame = answered_between(frame, f.since, f.until)
    keep = pd.Series(True, index=frame.index)
    for column, wanted in (("model", f.models), ("profile", f.profiles), ("chain_id", f.chains),
                           ("source", f.sources), ("key", f.keys)):
        if wanted:
            keep &= frame[column].isin(wanted)
    if f.tags:
        wanted_tags = set(f.tags)
        keep &= frame["tags"].map(lambda tags: not wanted_tags.isdisjoint(tags))
    if f.ratings:
        rated = {"up": frame["rating"] > 0, "down": frame["rating"] < 0, "none": frame["rating"].isna()}
        keep &= np.logical_or.reduce([rated[r].to_numpy(dtype=bool) for r in set(f.ratings)])
    return frame if keep.all() else frame[keep]


def previous_window(since: datetime, until: datetime) -> tuple[datetime, datetime]:
    """The period of the same length just before [since, until], for "change against last period".

    Both are closed to the microsecond, so the previous one ends the instant before `since`: 1–14 December
    (to 23:59:59.999999) is compared with 17–30 November whole, not with a window starting a microsecond
    after midnight and ending on the first instant of the 1st."""
    length = until - since + PERIOD_END
    return since - length, since - PERIOD_END


# The frame's columns the figures are made of, and those summed as counts per group.
_COUNTED = ("continued", "abandoned", "corrected", "pending", "final", "rated_up", "rated_down",
            "llm_answers", "continued_open", "abandoned_open", "corrected_open", "imported")
_USED = ("feedback_score", "continued", "abandoned", "corrected", "pending", "final", "synthesis", "tokens",
         "time_to_next", *STAGES)


def summarize_by(frame: pd.DataFrame, by: Grouping | None = None) -> pd.DataFrame:
    """One row of SUMMARY_COLUMNS per group (sorted by the group key), the key as the first column.

    `by="tag"` counts a turn once under each of its tags, and untagged turns under "(no tag)";
    `by="week"` groups by the UTC week from Monday (ISO), keyed by its Monday; `by=None` gives one row for
    everything, with the key "all"."""
    if by is not None and by not in _KEY:
        raise ValueError(f"by must be one of {', '.join(GROUPINGS)}; got {by!r}")
    key = _KEY[by] if by else "group"
    if frame.empty:
        return pd.DataFrame(columns=[key, *SUMMARY_COLUMNS])
    data = _figure_columns(frame)
    if by == "tag":
        data["tag"] = frame["tags"]
        data = data.explode("tag")
        data["tag"] = data["tag"].fillna(NO_TAG)
    elif by == "key":
        data["key"] = frame["key"].replace("", NO_KEY)
    elif by == "week":
        data["week"] = week_of(frame["day"])
    elif by is None:
        data["group"] = "all"
    else:
        data[key] = frame[key]
    return _figures(data, key)


def week_of(days: pd.Series) -> pd.Series:
    """The Monday (00:00 UTC) of each day's ISO week."""
    return days - pd.to_timedelta(days.dt.weekday, unit="D")


def with_empty_periods(table: pd.DataFrame, by: Grouping | None, start: datetime | None,
                       end: datetime | None) -> pd.DataFrame:
    """`summarize_by(…, "day" | "week")`'s rows with a row for every day or week from the one holding
    `start` to the one holding `end` that had no answers: its counts 0 (answers, scored, continued, …,
    rated), every rate, score, time and token figure None. A period without answers has no group of its
    own, so a weekly table went from Feb 02 to Feb 16 without a word of the week between. Other groupings,
    or an open end, are returned as they are."""
    if by not in ("day", "week") or start is None or end is None:
        return table
    first, last = (_period_of(pd.Timestamp(t), by) for t in (start, end))
    every = pd.date_range(first, last, freq="7D" if by == "week" else "D")
    have = pd.DatetimeIndex(table[by]) if len(table) else pd.DatetimeIndex([], tz=UTC)
    every = every.union(have)  # a row outside [start, end] (not asked for) is kept, not dropped
    if len(every) == len(have):
        return table
    full = table.set_index(by).reindex(every).rename_axis(by).reset_index()
    counts = [c for c in SUMMARY_COLUMNS if c in ("answers", "scored", "rated", *_COUNTED)]
    full[counts] = full[counts].fillna(0).astype("int64")
    return full


def periods_between(start: datetime, end: datetime, by: Literal["day", "week"]) -> int:
    """How many days or weeks (UTC, from Monday) `with_empty_periods` lists from the one holding `start` to
    the one holding `end` (0 when `end` comes first)."""
    first, last = (_period_of(pd.Timestamp(t), by) for t in (start, end))
    return max(0, (last - first).days // (7 if by == "week" else 1) + 1)


def _period_of(t: pd.Timestamp, by: str) -> pd.Timestamp:
    """The first instant (UTC) of the day or ISO week holding `t`."""
    day = (t.tz_localize(UTC) if t.tzinfo is None else t.tz_convert(UTC)).floor("D")
    return day - pd.Timedelta(days=day.weekday()) if by == "week" else day


def summarize(frame: pd.DataFrame) -> FeedbackSummary:
    """The headline figures for all of `frame`."""
    table = summarize_by(frame)
    return _summary(table.iloc[0].to_dict() if len(table) else {})


def summarize_split(frame: pd.DataFrame, at: datetime) -> tuple[FeedbackSummary, FeedbackSummary]:
    """`summarize` of the answers given before `at` and of those from `at` on, in one pass over `frame`
    (a period and the one before it: the Feedback page's tiles)."""
    if frame.empty:
        return _summary({}), _summary({})
    data = _figure_columns(frame)
    data["from_at"] = frame["answered_at"] >= pd.Timestamp(at)
    rows = {r["from_at"]: r for r in _figures(data, "from_at").to_dict("records")}
    return _summary(rows.get(False, {})), _summary(rows.get(True, {}))


def _figure_columns(frame: pd.DataFrame) -> pd.DataFrame:
    """Only the columns the figures need (copying or exploding the whole frame costs more than the
    figures), with the counted flags as columns, so one groupby sum counts them all at once."""
    data = frame[list(_USED)].rename(columns={"synthesis": "llm_answers"})
    data["llm_answers"] = frame["synthesis"] == "llm"
    data["rated_up"], data["rated_down"] = frame["rating"] > 0, frame["rating"] < 0
    data["imported"] = frame["source"] == IMPORTED
    # An imported answer's `final` says whether its conversation ended there, not that the user said no
    # follow-up was due: an imported answer is ended or open in no rate.
    data["final"] = frame["final"] & ~data["imported"]
    for of in ("continued", "abandoned", "corrected"):  # among the answers not ended
        data[f"{of}_open"] = (frame[of] > 0) & ~frame["final"]
    return data


def _figures(data: pd.DataFrame, key: str) -> pd.DataFrame:
    """SUMMARY_COLUMNS per value of `data[key]` (`_figure_columns` and the key), the key first."""
    g = data.groupby(key, sort=True)
    # Every column is made first and the table built once: inserting its 40 columns one by one into a
    # frame (string-indexed) cost more than all the figures.
    cols: dict[str, pd.Series] = {"answers": g.size(), "scored": g["feedback_score"].count(),
                                  "mean_score": g["feedback_score"].mean()}
    counted = g[list(_COUNTED)].sum().astype("int64")
    cols.update({name: counted[name] for name in _COUNTED})
    cols["tokens_total"] = g["tokens"].sum(min_count=1)
    cols["tokens_per_answer"] = g["tokens"].mean()
    std = g["feedback_score"].std(ddof=1)
    n = cols["scored"].astype(float)
    from scipy import stats  # here, not at the top: scipy takes half a second to import, wanted only here

    with np.errstate(invalid="ignore", divide="ignore"):
        t = stats.t.ppf(0.5 + CONFIDENCE / 2, np.where(n >= 2, n - 1, np.nan))
        half = t * std / np.sqrt(n)
    # Scores live in [0, 1]; a small sample's t-interval may reach past that, which means nothing.
    cols["ci_low"] = (cols["mean_score"] - half).clip(lower=0.0)
    cols["ci_high"] = (cols["mean_score"] + half).clip(upper=1.0)
    cols["rated"] = cols["rated_up"] + cols["rated_down"]
    cols["rated_up_share"] = cols["rated_up"] / cols["rated"].where(cols["rated"] > 0)
    given = cols["answers"] - cols["imported"]
    not_ended = (given - cols["final"]).where(given > cols["final"])
    for name, of in (("continue", "continued"), ("abandon", "abandoned"), ("correction", "corrected")):
        cols[f"{name}_rate"] = cols[of] / given.where(given > 0)
        cols[f"{name}_rate_excl_ended"] = cols[f"{of}_open"] / not_ended
    # One quantile call per family (not one per stage and level): the groupby sorts each column once.
    ttn = g["time_to_next"].quantile(list(TTN_QUANTILES.values())).unstack()
    for label, q in TTN_QUANTILES.items():
        cols[f"ttn_{label}"] = ttn[q]
    lat = g[list(STAGES)].quantile(list(LATENCY_QUANTILES.values())).unstack()
    for stage in STAGES:
        for label, q in LATENCY_QUANTILES.items():
            cols[f"{stage}_{label}"] = lat[(stage, q)]
    out = pd.DataFrame({name: cols[name] for name in SUMMARY_COLUMNS}).reset_index()
    for col in ("answers", "scored"):
        out[col] = out[col].astype("int64")
    return out


def _summary(row: dict) -> FeedbackSummary:
    """A row of `_figures` as the headline figures (an empty row: no answers)."""

    def val(name: str) -> float | None:
        v = row.get(name)
        return None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)

    def count(name: str) -> int:
        return int(row.get(name) or 0)

    return FeedbackSummary(
        answers=count("answers"), scored=count("scored"), imported=count("imported"), mean_score=val("mean_score"),
        ci_low=val("ci_low"), ci_high=val("ci_high"), continued=count("continued"),
        abandoned=count("abandoned"), corrected=count("corrected"), pending=count("pending"),
        final=count("final"), continue_rate=val("continue_rate"), abandon_rate=val("abandon_rate"),
        correction_rate=val("correction_rate"), continue_rate_excl_ended=val("continue_rate_excl_ended"),
        abandon_rate_excl_ended=val("abandon_rate_excl_ended"),
        correction_rate_excl_ended=val("correction_rate_excl_ended"),
        time_to_next_s={k: val(f"ttn_{k}") for k in TTN_QUANTILES}, rated=count("rated"),
        rated_up=count("rated_up"), rated_down=count("rated_down"), rated_up_share=val("rated_up_share"),
        llm_answers=count("llm_answers"),
        tokens_total=val("tokens_total"), tokens_per_answer=val("tokens_per_answer"),
        latency_ms={s.removesuffix("_ms"): {k: val(f"{s}_{k}") for k in LATENCY_QUANTILES} for s in STAGES})


def latency_table(frame: pd.DataFrame, by: Grouping | None = None) -> pd.DataFrame:
    """Long form for charts: one row per (group, stage) with p50, p95 and p99 in milliseconds."""
    table = summarize_by(frame, by)
    key = table.columns[0]
    rows = [{key: r[key], "stage": s.removesuffix("_ms"), **{k: r[f"{s}_{k}"] for k in LATENCY_QUANTILES}}
            for _, r in table.iterrows() for s in STAGES]
    return pd.DataFrame(rows, columns=[key, "stage", *LATENCY_QUANTILES])


def lowest_scored(frame: pd.DataFrame, n: int = 50, *, corrected_only: bool = False,
                  rated_down_only: bool = False) -> pd.DataFrame:
    """The `n` scored answers with the lowest feedback score (newest first among equal scores).

    `rated_down_only`: the answers the user rated down instead, scored or not (a rating needs no
    follow-up), the scored ones first by score."""
    if rated_down_only:
        rows = frame[frame["rating"] < 0]
    else:
        rows = frame[frame["feedback_score"].notna()]
    if corrected_only:
        rows = rows[rows["corrected"]]
    return rows.sort_values(["feedback_score", "answered_at"], ascending=[True, False],
                            na_position="last").head(n)
