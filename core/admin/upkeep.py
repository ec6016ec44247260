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


def upkeep(wb: Workbench, *, summarise: bool = True) -> Upkeep:
    """Every instance's answers with no follow-up marked abandoned, the outbox indexed, and (`summarise`)
    the quiet chains summarised: with an LLM configured, one call per summary, so the dashboard leaves that
    part to a thread of its own rather than hold its first page."""
    marked = {i: wb.thoughts.sweep_abandoned(i) for i in wb.thoughts.instances()}
    sync = sync_index(wb.thoughts, wb.index)
    summarised = {}
    if summarise and sync.error is None:  # summaries are written to Postgres too
        summarised = {i: n for i in marked if (n := summarise_quiet(wb, i))}
    return Upkeep(abandoned_marked=marked, indexed=sync.indexed, pending=sync.pending, error=sync.error,
                  summarised=summarised)
