"""Feedback: the summary of how users reacted to answers, and an explicit rating of one answer."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from core import usecases as uc
from core.api.deps import WB, ReadInstance, WriteInstance, on_path
from core.api.problems import documented
from core.usecases.analytics import Grouping, Rating

router = APIRouter(prefix="/v1/instances/{instance}/feedback", tags=["feedback"])
# Read as `workbench feedback summary --since/--until` reads them (`uc.read_answer_window`): "2026-12-04" as an
# `until` is that whole day, not its first instant (which counted none of its answers).
Bound = Annotated[str | None, Query(description="a date, month, datetime or phrase: \"2026-12-04\", \"2026-12\", "
                                                "\"2026-12-04T10:00:00Z\", \"7 days ago\", \"last week\"; a "
                                                "period counts whole (from its start, to its end)")]
By = Annotated[Grouping | None, Query(description="the same per group too: by day, week, model, profile, chain, "
                                                 "tag, source or key; by day or week, every one from since "
                                                 "(none: the instance's first answer) to until (none: now; "
                                                 "neither: its last answer), one without answers with its "
                                                 "counts 0 and its figures null")]
Models = Annotated[list[str], Query(description="only answers of these models, as by=model names them (repeat the "
                                               "parameter for several); none: every model")]
Ratings = Annotated[list[Rating], Query(description="only answers the user rated so: up, down or none (not rated); "
                                                   "repeat for several")]
Imported = Annotated[bool, Query(description="count answers imported from another system too (they carry no "
                                             "feedback of their own)")]


@router.get("/summary", response_model=uc.FeedbackReport)
def summary(instance: ReadInstance, wb: WB, since: Bound = None, until: Bound = None, by: By = None,
            include_imported: Imported = False, model: Models = [], rating: Ratings = []  # noqa: B006
            ) -> uc.FeedbackReport:
    """Mean score with its 95% interval, continue, abandon and correction rates, time to next, tokens and
    latency of the answers given in [since, until]; with `by`, the same per group (`model`: the model that
    answered, answers quoted from the memories with no LLM call as "extractive (no model)"; `source`: the
    front end a turn came through, `key`: the API key's name). Answers imported from another system carry
    no feedback of their own: counted only with `include_imported`."""
    start, end = uc.read_answer_window(since, until)  # a start in the future is refused, said as written
    return uc.feedback_summary(wb, uc.SummaryRequest(instance=instance, since=start, until=end, by=by,
                                                     include_imported=include_imported, models=model,
                                                     ratings=rating))


@router.post("", response_model=uc.RatingRecord, responses={404: documented(
    "no answer with that id in the instance (`answer_id` is a ui_remember result's `thought2_id`)")})
def rate(instance: WriteInstance, body: uc.RateAnswer, wb: WB) -> uc.RatingRecord:
    """An explicit rating of an answer (`thought2_id` of its turn), beside the feedback the follow-up
    gives; rating again replaces it."""
    return uc.rate_answer(wb, on_path(body, instance=instance))
