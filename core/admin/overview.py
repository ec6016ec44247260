"""Counts for the overview page: what is stored for an instance."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel

from core.bank import count_entries as bank_entries

if TYPE_CHECKING:
    from core.runtime import Workbench


class Overview(BaseModel):
    instance: str
    tiles: dict[str, int]


# Each feature may add a counter: name -> function(wb, instance) -> int.
COUNTERS: dict[str, object] = {
    "Indexed memories": lambda wb, inst: wb.index.count(inst),
    "Instances": lambda wb, inst: len(wb.index.instances()),
    "Memory-bank entries": bank_entries,
    "Past tasks": lambda wb, inst: wb.past_tasks.count(inst),
    "Answers with feedback": lambda wb, inst: wb.thoughts.feedback_count(inst),
}


def overview(wb: Workbench, instance: str) -> Overview:
    return Overview(instance=instance, tiles={name: fn(wb, instance) for name, fn in COUNTERS.items()})
