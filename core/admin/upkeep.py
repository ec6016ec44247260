"""Upkeep run whenever the dashboard or a service process loads: mark abandoned answers, index
thoughts still queued in the outbox (e.g. written while Postgres was down) and summarise the chains
that went quiet."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from pydantic import BaseModel

from core.conversation.indexing import sync_index
from core.formation.summaries import summarise_quiet

if TYPE_CHECKING:
    from core.runtime import Workbench

log = logging.getLogger(__name__)


class Upkeep(BaseModel):
    abandoned_marked: dict[str, int]
    indexed: int
    pending: int
    error: str | None = None
    summarised: dict[str, int] = {}  # session summaries written, by instance (core.formation.summaries)


def upkeep(wb: Workbench) -> Upkeep:
    marked = {i: wb.thoughts.sweep_abandoned(i) for i in wb.thoughts.instances()}
    sync = sync_index(wb.thoughts, wb.index)
    summarised = {}
    if sync.error is None:  # summaries are written to Postgres too
        summarised = {i: n for i in marked if (n := summarise_quiet(wb, i))}
    return Upkeep(abandoned_marked=marked, indexed=sync.indexed, pending=sync.pending, error=sync.error,
                  summarised=summarised)
