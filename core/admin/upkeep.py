"""Upkeep run whenever the dashboard or a service process loads: mark abandoned answers, finish the
deletions killed midway, index thoughts still queued in the outbox (e.g. written while Postgres was down)
and summarise the chains that went quiet."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import psycopg
from pydantic import BaseModel

from core.admin.deletion import finish_interrupted
from core.conversation.indexing import sync_index
from core.errors import ServiceUnavailable
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
    deletions_finished: dict[str, int] = {}  # deletions killed midway finished, by instance (core.admin.deletion)


def upkeep(wb: Workbench, *, summarise: bool = True) -> Upkeep:
    """Every instance's answers with no follow-up marked abandoned, the deletions killed midway finished
    (`core.admin.deletion.finish_interrupted`), the outbox indexed, and (`summarise`)
    the quiet chains summarised: with an LLM configured, one call per summary, so the dashboard leaves that
    part to a thread of its own rather than hold its first page."""
    marked = {i: wb.thoughts.sweep_abandoned(i) for i in wb.thoughts.instances()}
    finished, failed = _finish_deletions(wb, list(marked))
    sync = sync_index(wb.thoughts, wb.index)
    summarised = {}
    if summarise and sync.error is None:  # summaries are written to Postgres too
        summarised = {i: n for i in marked if (n := summarise_quiet(wb, i))}
    return Upkeep(abandoned_marked=marked, indexed=sync.indexed, pending=sync.pending,
                  error=sync.error or failed, summarised=summarised, deletions_finished=finished)


def _finish_deletions(wb: Workbench, instances: list[str]) -> tuple[dict[str, int], str | None]:
    """The deletions killed midway finished (`finish_interrupted`, as the next deletion would), in every
    instance of Redis and of the memory index (a bank's instance may have no conversation); and what
    failed, when Postgres did (they are finished by a later sweep or deletion)."""
    try:
        known = sorted(set(instances) | set(wb.index.instances()))
        return finish_interrupted(wb, known), None
    except (psycopg.Error, ServiceUnavailable) as e:
        log.warning("upkeep: interrupted deletions deferred: %s", type(e).__name__)
        service = e.service if isinstance(e, ServiceUnavailable) else "Postgres"
        return {}, f"{service} unavailable: a deletion that was interrupted will be finished when it is back"
