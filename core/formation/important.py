"""Important items: seed 003's important index (`idx:{instance}:important`).

A user's message is marked important by an explicit tag (`important` among its turn's tags), by the LLM
(the messages the session summary picks, `core.formation.summaries`), or by its thought's `importance`
reaching `IMPORTANT_AT`. Marking writes a copy of the message as a memory of kind `important`, whose id
comes from the message's, so marking again replaces it (and deleting the message deletes it, as every
memory naming it as `source_thought`): searching with `kinds=["important"]` is the
seed's important index, and a search over every kind finds the copy and the message once (identical
texts count once).
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Iterable
from typing import TYPE_CHECKING, Literal

from core.conversation.thoughts import CATEGORY_USER, Thought
from core.formation.supersede import supersession_of
from core.ids import ID_PATTERN
from core.index.records import event_time_of
from core.models import MemoryRecord

if TYPE_CHECKING:
    from core.runtime import Workbench

IMPORTANT_KIND = "important"
IMPORTANT_TAG = "important"
Reason = Literal["tag", "llm", "importance"]


def derived_id(prefix: str, source: str) -> str:
    """The id of a memory derived from `source` (a thought or chain id): `prefix-source`, or the prefix and
    a digest of it when that would not be a valid id (too long)."""
    plain = f"{prefix}-{source}"
    return plain if ID_PATTERN.fullmatch(plain) else f"{prefix}-{hashlib.sha256(source.encode()).hexdigest()[:32]}"


def importance_reason(thought: Thought, important_at: float, picked: Collection[str] = ()) -> Reason | None:
    """Why a user's message is important (its tag first, then the LLM's pick, then its importance), or None."""
    if thought.category != CATEGORY_USER:
        return None
    if IMPORTANT_TAG in thought.tags:
        return "tag"
    if thought.id in picked:
        return "llm"
    return "importance" if thought.importance >= important_at else None


def important_record(thought: Thought, reason: Reason) -> MemoryRecord:
    return MemoryRecord(instance=thought.instance, id=derived_id("important", thought.id), kind=IMPORTANT_KIND,
                        content=thought.thought, created_at=thought.timestamp, chain_id=thought.chain_id,
                        event_time=event_time_of(thought.timestamp), tags=thought.tags,
                        metadata={"source_thought": thought.id, "reason": reason, "importance": thought.importance})


def mark_important(wb: Workbench, thoughts: Iterable[Thought], picked: Collection[str] = ()) -> int:
    """Write the important copies of those `thoughts` that are important (`importance_reason`, with the
    LLM's `picked` thought ids); returns how many."""
    records = [important_record(t, reason) for t in thoughts
               if (reason := importance_reason(t, wb.settings.important_at, picked))]
    # The copy of a message whose fact a correction superseded states the old fact too.
    records = [r.model_copy(update={"metadata": {**r.metadata, **mark}})
               if (mark := supersession_of(wb.index, r.instance, [r.metadata["source_thought"]])) else r
               for r in records]
    return wb.index.add(records)
