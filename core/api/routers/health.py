"""Liveness and readiness, for a process manager or a load balancer (no key needed)."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.concurrency import run_in_threadpool
from pydantic import BaseModel

from core import usecases as uc
from core.api.deps import WB
from core.api.problems import RETRY_AFTER_UNAVAILABLE_S, documented, problem

router = APIRouter(tags=["health"])


class Service(BaseModel):
    name: str
    reachable: bool


class Readiness(BaseModel):
    status: str
    services: list[Service]


@router.get("/healthz")
async def healthz() -> dict[str, str]:
    """The process is up and serving."""
    return {"status": "ok"}


@router.get("/readyz", response_model=Readiness, responses={503: documented(
    "a service is down; `services` lists each with whether it is reachable (Retry-After)")})
async def readyz(wb: WB):
    """Redis and Postgres reachable (503 otherwise). Only names and states: no address is shown, since
    this endpoint needs no key."""
    statuses = await run_in_threadpool(uc.service_statuses, wb)
    services = [Service(name=s.name, reachable=s.reachable) for s in statuses]
    if all(s.reachable for s in services):
        return Readiness(status="ready", services=services)
    down = ", ".join(s.name for s in services if not s.reachable)
    return problem(503, "service_unavailable", f"{down} unreachable; see `workbench services` on the server",
                   retryable=True, headers={"Retry-After": str(RETRY_AFTER_UNAVAILABLE_S)},
                   services=[s.model_dump() for s in services])
