"""Past tasks (internal memory): a user's nearest produced texts, with key points."""

from __future__ import annotations

from fastapi import APIRouter

from core import usecases as uc
from core.api.deps import WB, ReadInstance, on_path

router = APIRouter(prefix="/v1/instances/{instance}/past-tasks", tags=["past tasks"])


class PastTaskSearch(uc.PastTaskQuery):
    """One query of the internal memory tool (the path names the instance)."""

    instance: str | None = None


@router.post("/search", response_model=uc.InternalMemoryResult)
def search(instance: ReadInstance, body: PastTaskSearch, wb: WB) -> uc.InternalMemoryResult:
    """The user's texts strictly nearer than `max_distance`, at most `n_max`, with key points; the query
    is recorded as one tool execution (a read: a read-only key may search)."""
    return uc.internal_memory(wb, uc.PastTaskQuery(**on_path(body, instance=instance).model_dump()))
