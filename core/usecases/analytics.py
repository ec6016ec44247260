"""Feedback analytics: how users reacted to answers, per period, model, profile, chain or tag (by model,
the answers quoted from the memories with no LLM call are their own group, EXTRACTIVE_MODEL).

The answers come as a pandas frame (one row per answer) because the Feedback page filters and charts
it interactively; the pure functions over that frame are re-exported here for the front ends.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Annotated, Any

import pandas as pd
from pydantic import BaseModel, BeforeValidator, Field, ValidationInfo, WithJsonSchema, field_validator

from core.analytics import (FeedbackFilter, FeedbackSummary, apply_filter, latency_table,
                            lowest_scored, previous_window, questions_for, summarize, summarize_by,
                            summarize_split, turn_transcript)
from core.analytics.aggregate import Grouping, Rating, TimeWindow, periods_between, with_empty_periods
from core.analytics.export import to_csv
from core.analytics.load import EXTRACTIVE as EXTRACTIVE_MODEL
from core.analytics.load import IMPORTED, Transcript, answer_span
from core.errors import InvalidInput
from core.ids import Id
from core.retrieval.timeparse import WINDOW_HELP, read_bound
from core.usecases.base import InstanceRequest
from core.usecases.windows import future_start

if TYPE_CHECKING:
    from core.runtime import Workbench

__all__ = ["EXTRACTIVE_MODEL", "FeedbackFilter", "FeedbackSummary", "apply_filter", "latency_table",
           "lowest_scored", "previous_window", "summarize", "summarize_by", "summarize_split", "with_empty_periods"]


class FeedbackWindow(InstanceRequest, TimeWindow):
    """The instance's answers given in [since, until]; imported answers (no feedback of their own) only
    when `include_imported`; only those of `models` (as the frame and `by="model"` name them) and with one
    of `ratings` ("up", "down", "none": not rated) when given, as the Feedback page's filters keep them."""

    include_imported: bool = Field(False, description="count answers imported from another system too (they "
                                                      "carry no feedback of their own)")
    models: list[str] = Field(default_factory=list, description="only answers of these models, as by=model "
                                                               "names them; empty: every model")
    ratings: list[Rating] = Field(default_factory=list, description="only answers the user rated so: up, down "
                                                                   "or none (not rated); empty: all")

    @field_validator("since")
    @classmethod
    def _not_in_future(cls, v: datetime | None) -> datetime | None:
        # A window of answers that starts after now holds none: a mistyped date, not a quiet period.
        if (why := future_start(v)) is not None:
            raise ValueError(why)
        return v


def feedback_answers(wb: Workbench, req: FeedbackWindow) -> pd.DataFrame:
    """One row per answer in the window, oldest first, after the abandonment sweep."""
    frame = wb.feedback_frames.load(req.instance_in(wb), req.since, req.until,
                                    include_imported=req.include_imported)
    if req.models or req.ratings:
        frame = apply_filter(frame, FeedbackFilter(models=req.models, ratings=req.ratings))
    return frame


# The Feedback page opens on the last 7 days beside the 7 before them; a day more keeps the rows read at
# start-up good for the page's default view through the day after.
WARM_DAYS = 15


def warm_feedback(wb: Workbench, instance: str | None = None) -> int:
    """Read the instance's answers of the last WARM_DAYS into the rows the process keeps
    (`core.analytics.frames`), so its first feedback view of them reads only what changed since: at
    100,000 answers, the first opening of the Feedback page spent seconds reading them. A front end runs
    it in the background when it starts. Returns how many answers were read."""
    since = datetime.now(UTC) - timedelta(days=WARM_DAYS)
    read = len(wb.feedback_frames.load(instance or wb.settings.instance, since, include_imported=True))
    # The summaries' confidence intervals import scipy when first computed (half a second): ahead, too.
    importlib.import_module("scipy.stats")
    return read


def _bound_reader(end: bool) -> Callable[[Any, ValidationInfo], Any]:
    """A bound sent as text is read as `workbench feedback summary --since/--until` and the HTTP API read
    it (`read_bound`: a period counts whole, so "2026-12-04" as `until` is that whole day, not its first
    instant); a datetime stays as it is."""
    def read(value: Any, info: ValidationInfo) -> Any:
        if not isinstance(value, str):
            return value
        try:
            when = read_bound(value, datetime.now(UTC), end=end, name=info.field_name or "date")
        except InvalidInput as e:
            raise ValueError(str(e).split(": ", 1)[1]) from None  # pydantic names the field itself
        if not end and (why := future_start(when, value)) is not None:
            raise ValueError(why)  # said with the text as written ("'in 3 days' (…) is in the future")
        return when
    return read


def _one_as_list(value: Any) -> Any:
    """A single name sent for a list of names (`"ratings": "down"`, as an assistant may well send it) is
    that name alone: the list's one meaning, where it was refused as "Input should be a valid list"; null,
    as an assistant sends a filter it leaves out (`since`, `until` and `by` take it), is no filter. A single
    value of another kind (`"ratings": 7`) is a list of one too, so it is refused for what it is ("ratings:
    Input should be 'up', 'down' or 'none', not 7"), not as a list it never was."""
    if value is None:
        return []
    return [value] if isinstance(value, str | int | float | bool) else value


# A single name is read as a list of one (`_one_as_list`), and the schema says so, so that an assistant
# reading the MCP tool's input schema may send either: it said "array" while a string was taken as well.
OneModelOrMore = Annotated[list[str], BeforeValidator(_one_as_list, json_schema_input_type=str | list[str] | None)]
OneRatingOrMore = Annotated[list[Rating], BeforeValidator(_one_as_list,
                                                          json_schema_input_type=Rating | list[Rating] | None)]

# Written as a person writes a period: the schema says text, not an ISO timestamp, so an assistant sends
# "last week" rather than working out the dates.
_PERIOD_TEXT = WithJsonSchema({"anyOf": [{"type": "string"}, {"type": "null"}]})


class SummaryRequest(FeedbackWindow):
    """`feedback_summary`'s request: the window's bounds may be written as a person writes them."""

    since: Annotated[datetime | None, _PERIOD_TEXT] = Field(
        None, description=f"only answers from this time on (a period: from its start; UTC): {WINDOW_HELP}; "
                          "none: from the first answer")
    until: Annotated[datetime | None, _PERIOD_TEXT] = Field(
        None, description="only answers up to this time (a period: to its end, so '2026-12-04' includes that "
                          "day; UTC); none: up to now")
    by: Grouping | None = Field(None, description="the same figures per group too: day, week (UTC, from Monday; "
                                                  "every day or week from since to until, one without answers "
                                                  "with 0 answers; since left out: from the first answer, "
                                                  "until left out: to now, both left out: the first answer's "
                                                  "to the last's), model, profile, chain, tag, source (the "
                                                  "front end) or key (the API key's name)")
    models: OneModelOrMore = Field(default_factory=list, description="only answers of these models, as by=model "
                                                                     "names them (one name, or a list); empty: "
                                                                     "every model")
    ratings: OneRatingOrMore = Field(default_factory=list, description="only answers the user rated so: up, down "
                                                                       "or none (not rated); one, or a list; "
                                                                       "empty: all")

    _read_since = field_validator("since", mode="before")(_bound_reader(end=False))
    _read_until = field_validator("until", mode="before")(_bound_reader(end=True))


class FeedbackReport(BaseModel):
    instance: str
    since: datetime | None
    until: datetime | None
    summary: FeedbackSummary
    by: Grouping | None = None
    groups: list[dict[str, Any]] | None = None
    imported_left_out: int = Field(0, description="imported answers in the period that are not counted "
                                                  "(include_imported counts them)")
    models: list[str] = Field([], description="only the answers of these models were counted (none: all)")
    ratings: list[Rating] = Field([], description="only the answers rated so were counted (none: all)")


def feedback_summary(wb: Workbench, req: SummaryRequest) -> FeedbackReport:
    """Mean score with its 95% interval, continue, abandon and correction rates, time to next, tokens and
    latency; with `by`, the same per group. The imported answers left out are counted, so a front end can
    say so."""
    periods = _periods_to_list(wb, req)  # first: a window of too many periods is refused before any read
    every = feedback_answers(wb, req.model_copy(update={"include_imported": True}))
    imported = every["source"] == IMPORTED
    frame = every if req.include_imported else every[~imported]
    groups = None
    if req.by:
        table = with_empty_periods(summarize_by(frame, req.by), req.by, *periods)
        groups = json.loads(table.to_json(orient="records", date_format="iso"))
    return FeedbackReport(instance=req.instance_in(wb), since=req.since, until=req.until,
                          summary=summarize(frame), by=req.by, groups=groups, models=req.models,
                          ratings=req.ratings,
                          imported_left_out=0 if req.include_imported else int(imported.sum()))


# The most days or weeks `by="day"` or `"week"` lists (ten years of days): a window past it is refused, not
# answered with thousands of empty rows (`--since 2000 --by day`: 9,800 of them).
MAX_PERIODS = 3_660


def _periods_to_list(wb: Workbench, req: SummaryRequest) -> tuple[datetime | None, datetime | None]:
    """From where to where `by="day"` or `"week"` lists every period, empty ones too: the window as asked,
    since a user who asks for the last 14 days by day expects a row for each of them, answers or not (only
    the days from the instance's first answer to its last were listed). A bound left out reads as the
    window says: since, from the first answer; until, up to now (or to a later answer); neither, the
    instance's history, from its first answer to its last. (None, None): nothing to list."""
    if req.by not in ("day", "week"):
        return None, None
    start, end = req.since, req.until
    if start is None or end is None:
        _, first, last = answer_span(wb.thoughts, req.instance_in(wb))
        if start is None and first is None:
            return None, None  # from the first answer, and there is none
        if start is None and end is None:
            start, end = first, last
        elif start is None:
            start = min(first, end)
        else:  # to now, or to an answer given later (a clock set ahead)
            end = max(t for t in (datetime.now(UTC), start, last) if t is not None)
    if (n := periods_between(start, end, req.by)) > MAX_PERIODS:
        raise InvalidInput(f"by {req.by}: {start:%Y-%m-%d} to {end:%Y-%m-%d} is {n:,} {req.by}s, and at most "
                           f"{MAX_PERIODS:,} are listed: give a later since or an earlier until"
                           + (", or group by week" if req.by == "day" else ""))
    return start, end


class AnswerSpan(BaseModel):
    """When an instance's answers were given: how many, the first and the last (None: no answer yet)."""

    instance: str
    answers: int = Field(description="answers with feedback, imported ones included")
    first: datetime | None
    last: datetime | None


def feedback_span(wb: Workbench, req: InstanceRequest) -> AnswerSpan:
    """The instance's answers from first to last, so a view of a period with none can say where they are
    (a period of the last 7 days, when the answers ended months ago, only said "pick a longer period")."""
    instance = req.instance_in(wb)
    answers, first, last = answer_span(wb.thoughts, instance)
    return AnswerSpan(instance=instance, answers=answers, first=first, last=last)


class FeedbackExport(BaseModel):
    answers: int
    csv: bytes


def feedback_export(wb: Workbench, req: FeedbackWindow) -> FeedbackExport:
    """Every answer's feedback, model, profile, tags, tokens and latency as UTF-8 CSV."""
    frame = feedback_answers(wb, req)
    return FeedbackExport(answers=len(frame), csv=to_csv(frame))


def answers_csv(frame: pd.DataFrame) -> bytes:
    """A frame of answers (e.g. the page's current view) as the same CSV."""
    return to_csv(frame)


class TurnRef(InstanceRequest):
    chain_id: Id
    answer_id: Id


def transcript(wb: Workbench, req: TurnRef) -> Transcript | None:
    """The question, the answer with what was retrieved, and what the user said next; None if deleted."""
    return turn_transcript(wb.thoughts, req.instance_in(wb), req.chain_id, req.answer_id)


def questions(wb: Workbench, req: InstanceRequest, answers: pd.DataFrame) -> dict[str, str]:
    """The user text each answer of the frame replied to."""
    return questions_for(wb.thoughts, req.instance_in(wb), answers)
