"""Counts for the overview page: what is stored for an instance, and which embedding model made the
indexed memories' vectors (a memory of another model is missing from the vector leg until re-embedded)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from core.bank import count_entries as bank_entries
from core.ids import SHARED_INSTANCE

if TYPE_CHECKING:
    from core.runtime import Workbench

NO_VECTOR = "(no vector)"


class Overview(BaseModel):
    instance: str
    tiles: dict[str, int]
    active_model: str = Field(description="the embedder whose vectors the vector leg searches")
    memories_by_model: dict[str, int] = Field(description="indexed memories per embedding model, most first")

    @property
    def not_in_vector_leg(self) -> int:
        return not_in_vector_leg(self.memories_by_model, self.active_model)


def not_in_vector_leg(by_model: dict[str, int], active_model: str) -> int:
    """Memories of another model (or none): found by the text leg only, until re-embedded."""
    return sum(n for model, n in by_model.items() if model != active_model)


def instance_names(wb: Workbench) -> list[str]:
    """The instances a user can work on: with indexed memory or conversations not indexed yet (the shared
    instance, searched beside every other, is not one of them: the Overview counted it, the instance picker
    did not)."""
    known = set(wb.index.instances()) | set(wb.thoughts.instances())
    known.discard(SHARED_INSTANCE)
    return sorted(known)


# Each feature may add a counter: name -> function(wb, instance) -> int.
COUNTERS: dict[str, object] = {
    "Instances": lambda wb, inst: len(instance_names(wb)),
    "Memory-bank entries": bank_entries,
    "Past tasks": lambda wb, inst: wb.past_tasks.count(inst),
    "Answers (live and imported)": lambda wb, inst: wb.thoughts.feedback_count(inst),
}


def memories_by_model(wb: Workbench, instance: str) -> dict[str, int]:
    """One index-only scan of (instance, embedding_model): as cheap as counting the instance's memories."""
    with wb.pool().connection() as conn:
        rows = conn.execute("SELECT coalesce(embedding_model, %s), count(*) FROM memory WHERE instance = %s "
                            "GROUP BY 1 ORDER BY 2 DESC, 1", (NO_VECTOR, instance)).fetchall()
    return dict(rows)


def overview(wb: Workbench, instance: str) -> Overview:
    by_model = memories_by_model(wb, instance)
    tiles = {"Indexed memories": sum(by_model.values())} | {name: fn(wb, instance) for name, fn in COUNTERS.items()}
    return Overview(instance=instance, tiles=tiles, active_model=wb.embedder.name, memories_by_model=by_model)
