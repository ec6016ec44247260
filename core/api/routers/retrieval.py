"""MemoryScope's personal memory retrieval over HTTP."""

from __future__ import annotations

from fastapi import APIRouter

from core import usecases as uc
from core.api.deps import WB, ReadInstance, on_path
from core.api.problems import documented

router = APIRouter(prefix="/v1/instances/{instance}", tags=["retrieval"])


@router.post("/retrieve", response_model=uc.RetrievalReport, responses={404: documented(
    "no fusion profile of that name")})
def retrieve(instance: ReadInstance, body: uc.RetrieveReportRequest, wb: WB) -> uc.RetrievalReport:
    """The instance's memories for a query, best first, each with its score parts (`trace` adds every
    op's input, output and time)."""
    return uc.retrieval_report(wb, on_path(body, instance=instance))
