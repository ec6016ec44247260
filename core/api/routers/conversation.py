"""A ui_remember turn over HTTP."""

from __future__ import annotations

from fastapi import APIRouter

from core import usecases as uc
from core.api.deps import WB, Caller, WriteInstance, on_path
from core.api.problems import documented

router = APIRouter(prefix="/v1/instances/{instance}", tags=["conversation"])


@router.post("/remember", response_model=uc.UiRememberResult, responses={404: documented(
    "no fusion profile of that name, or the chain was deleted while the turn was being made (nothing of "
    "the turn was stored)")})
def remember(instance: WriteInstance, body: uc.UiRememberParams, wb: WB, who: Caller) -> uc.UiRememberResult:
    """One turn: retrieve, answer (extractively without an LLM), store the three thoughts, score the
    previous answer of the chain from this follow-up. A repeated `request_id` returns the first result."""
    return uc.remember(wb, on_path(body, instance=instance), origin=uc.Origin(source="http", key=who.name),
                       caller=who)
