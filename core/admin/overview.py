"""Counts for the overview page: what is stored for an instance, in terms that add up (its conversations,
and the indexed memories by kind: their messages, what formation made of them, memory-bank items), and which
embedding model made the memories' vectors (a memory of another model is missing from the vector leg until
re-embedded)."""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from core.bank.index_ids import BANK_KINDS
from core.formation.important import IMPORTANT_KIND
from core.formation.summaries import SUMMARY_KIND
from core.ids import SHARED_INSTANCE

if TYPE_CHECKING:
    from core.runtime import Workbench

NO_VECTOR = "(no vector)"
MESSAGE_KINDS = ("user", "assistant")
# What formation makes of a conversation's messages (`core.formation`), and what is added or imported as
# one: facts and session summaries.
FORMED_KINDS = ("observation", SUMMARY_KIND)
# What each kind of memory is, as the Overview's table says it (a kind not named here shows as itself).
KIND_MEANINGS = {
    "user": "a message a user wrote",
    "assistant": "an answer (an extractive answer only restates memories: kept in its conversation, not indexed)",
    "observation": "a fact formed from a user's statement, or a memory added or imported as one",
    SUMMARY_KIND: "a conversation's facts restated in a few sentences",
    IMPORTANT_KIND: "a user's message marked important, copied word for word",
    "bank_entry": "a step an agent recorded in a memory bank",
    "bank_summary": "a memory bank's earlier steps, compressed",
    "turn": "a turn of a labelled evaluation conversation",
    "conversation": "a MemoryScope conversation memory (imported or demo)",
    "obs_customized": "a MemoryScope customized observation",
    "insight": "a MemoryScope insight: what observations say together",
    "federation": "a memory shared with every instance",
}


class Overview(BaseModel):
    instance: str
    tiles: dict[str, int]
    active_model: str = Field(description="the embedder whose vectors the vector leg searches")
    memories_by_model: dict[str, int] = Field(description="indexed memories per embedding model, most first")
    memories_by_kind: dict[str, int] = Field(description="indexed memories per kind, most first")
    first_at: datetime | None = Field(None, description="when the instance's oldest indexed memory was stored "
                                      "(an import keeps the original times): with `last_at`, the time its "
                                      "memory spans; None while nothing is indexed")
    last_at: datetime | None = None

    @property
    def not_in_vector_leg(self) -> int:
        return not_in_vector_leg(self.memories_by_model, self.active_model)

    def index_parts(self) -> dict[str, int]:
        """`index_parts` of this instance's memories."""
        return index_parts(self.memories_by_kind)

    def kinds_explained(self) -> list[tuple[str, int, str]]:
        """(kind, memories, what a memory of that kind is), most first."""
        return [(kind, n, KIND_MEANINGS.get(kind, kind)) for kind, n in self.memories_by_kind.items()]


def not_in_vector_leg(by_model: dict[str, int], active_model: str) -> int:
    """Memories of another model (or none): found by the text leg only, until re-embedded."""
    return sum(n for model, n in by_model.items() if model != active_model)


def index_parts(by_kind: dict[str, int]) -> dict[str, int]:
    """The indexed memories in four parts that add up to them: the conversations' messages, observations and
    session summaries (formed from them, or added), memory-bank items, and every other kind."""
    def total(kinds: tuple[str, ...]) -> int:
        return sum(by_kind.get(k, 0) for k in kinds)

    parts = {"messages": total(MESSAGE_KINDS), "formed": total(FORMED_KINDS), "bank": total(BANK_KINDS)}
    return parts | {"other": sum(by_kind.values()) - sum(parts.values())}


def instance_names(wb: Workbench) -> list[str]:
    """The instances a user can work on: with indexed memory or conversations not indexed yet (the shared
    instance, searched beside every other, is not one of them: the Overview counted it, the instance picker
    did not)."""
    known = set(wb.index.instances()) | set(wb.thoughts.instances())
    known.discard(SHARED_INSTANCE)
    return sorted(known)


# Each feature may add a counter beside the index's: name -> function(wb, instance) -> int.
COUNTERS: dict[str, object] = {
    "Past tasks": lambda wb, inst: wb.past_tasks.count(inst),
    "Answers": lambda wb, inst: wb.thoughts.feedback_count(inst),
    "Instances": lambda wb, inst: len(instance_names(wb)),
}


def memories_by_model(wb: Workbench, instance: str) -> dict[str, int]:
    """One index-only scan of (instance, embedding_model): as cheap as counting the instance's memories."""
    with wb.pool().connection() as conn:
        rows = conn.execute("SELECT coalesce(embedding_model, %s), count(*) FROM memory WHERE instance = %s "
                            "GROUP BY 1 ORDER BY 2 DESC, 1", (NO_VECTOR, instance), prepare=False).fetchall()
    return dict(rows)


def memory_counts(wb: Workbench, instance: str) -> tuple[dict[str, int], dict[str, int]]:
    """The instance's memories per embedding model and per kind, most first, from one scan of (instance,
    embedding_model, kind): index-only where an index holds those three columns (at 500,000 memories 130 ms
    on a loaded machine, against 380 ms for reading the partition, which it does without one)."""
    with wb.pool().connection() as conn:
        rows = conn.execute("SELECT coalesce(embedding_model, %s), kind, count(*) FROM memory WHERE instance = %s "
                            "GROUP BY 1, 2", (NO_VECTOR, instance), prepare=False).fetchall()
    by_model: Counter[str] = Counter()
    by_kind: Counter[str] = Counter()
    for model, kind, n in rows:
        by_model[model] += n
        by_kind[kind] += n
    return most_first(by_model), most_first(by_kind)


def time_span(wb: Workbench, instance: str) -> tuple[datetime | None, datetime | None]:
    """The oldest and newest stored time of the instance's memories: two probes of `memory_created`."""
    with wb.pool().connection() as conn:
        return tuple(conn.execute("SELECT min(created_at), max(created_at) FROM memory WHERE instance = %s",
                                  (instance,), prepare=False).fetchone())


def most_first(counts: Counter[str]) -> dict[str, int]:
    """The counts, most first, then by name (as `memories_by_model` orders them)."""
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))


def overview(wb: Workbench, instance: str) -> Overview:
    """The conversations (a count Redis keeps), the indexed memories and their messages, then the other
    counters; per kind and per embedding model, the indexed memories the tiles sum."""
    by_model, by_kind = memory_counts(wb, instance)
    tiles = {"Conversations": wb.thoughts.chain_count(instance),
             "Messages": index_parts(by_kind)["messages"],
             "Indexed memories": sum(by_model.values())} | {name: fn(wb, instance) for name, fn in COUNTERS.items()}
    first_at, last_at = time_span(wb, instance) if by_model else (None, None)
    return Overview(instance=instance, tiles=tiles, active_model=wb.embedder.name, memories_by_model=by_model,
                    memories_by_kind=by_kind, first_at=first_at, last_at=last_at)
