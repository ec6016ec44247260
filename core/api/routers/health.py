"""Liveness and readiness, for a process manager or a load balancer (no key needed)."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.concurrency import run_in_threadpool
from pydantic import BaseModel

from core.api.deps import WB
from core.api.problems import RETRY_AFTER_UNAVAILABLE_S, documented, problem
from core.usecases.admin import READY_WITHIN_S, Readiness, ServiceReadiness, readiness

router = APIRouter(tags=["health"])


class Ready(BaseModel):
    status: str
    services: list[ServiceReadiness]


@router.get("/healthz")
async def healthz() -> dict[str, str]:
    """The process is up and serving."""
    return {"status": "ok"}


@router.get("/readyz", response_model=Ready, responses={503: documented(
    f"a service is down, or did not answer within {READY_WITHIN_S:g} s; `services` lists each with whether it "
    "is reachable (null: not known in time) (Retry-After)")})
async def readyz(wb: WB):
    """Redis and Postgres reachable (503 otherwise), answered within 3 s (READY_WITHIN_S) even while one
    hangs. Only names and states: no address is shown, since this endpoint needs no key."""
    found: Readiness = await run_in_threadpool(readiness, wb)
    if found.ready:
        return Ready(status="ready", services=found.services)
    return problem(503, "service_unavailable", found.detail, retryable=True,
                   headers={"Retry-After": str(RETRY_AFTER_UNAVAILABLE_S)},
                   services=[s.model_dump() for s in found.services])
