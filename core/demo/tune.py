"""Demo part for the Tune page: MemoryScope-typed memories (observation, insight, obs_customized,
conversation) with event times, in the default instance, so rankings, type ratios and the time
boost have something to act on."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from core.admin.deletion import Deletion
from core.demo import marks
from core.index.records import event_time_of
from core.models import MemoryRecord

if TYPE_CHECKING:
    from core.runtime import Workbench

PREFIX = "demo-tune-"

# (id suffix, type, days ago, hour, content, when_to_use)
_MEMORIES = [
    ("obs-1", "observation", 1, 19,
     "The user had sushi for dinner with a colleague after the budget meeting.", ""),
    ("obs-2", "observation", 2, 8, "The user walks the dog every morning before work, usually around 7.", ""),
    ("obs-3", "observation", 6, 14,
     "The user visited the Louvre museum in Paris and loved the Egyptian wing.", ""),
    ("obs-4", "observation", 9, 11, "The user's team moved the Postgres database to a new server.", ""),
    ("obs-5", "observation", 30, 20, "The user is learning to play jazz piano on weekends.", ""),
    ("obs-6", "observation", 3, 12, "The user said the weather in Paris was rainy all week.", ""),
    ("ins-1", "insight", 4, 9, "The user prefers Japanese food, especially sushi and ramen.",
     "when suggesting restaurants or food"),
    ("ins-2", "insight", 20, 9, "The user enjoys travel to France and plans trips around museums.",
     "when planning travel"),
    ("ins-3", "insight", 12, 9, "The user works as a backend engineer with Python, Redis and Postgres.",
     "when answering technical questions"),
    ("cus-1", "obs_customized", 5, 18, "The user wants budget reports every Friday afternoon.",
     "when scheduling reports"),
    ("cus-2", "obs_customized", 15, 10, "The user asked to be reminded about the dog's vet visit each month.",
     "when the user mentions the dog"),
    ("con-1", "conversation", 1, 21, "user: I had sushi yesterday, it was the best meal of the week!", ""),
    ("con-2", "conversation", 7, 16, "user: Any ideas for a museum to visit in Paris next month?", ""),
    ("con-3", "conversation", 0, 9, "user: The meeting about the budget went well this morning.", ""),
    ("con-4", "conversation", 8, 22, "user: My cat knocked the coffee over my keyboard again.", ""),
]


def records(instance: str, now: datetime | None = None) -> list[MemoryRecord]:
    now = (now or datetime.now(UTC)).replace(minute=0, second=0, microsecond=0)
    out = []
    for suffix, kind, days, hour, content, when in _MEMORIES:
        at = (now - timedelta(days=days)).replace(hour=hour)
        if at > now:
            at -= timedelta(days=1)
        out.append(MemoryRecord(instance=instance, id=PREFIX + suffix, kind=kind, content=content,
                                created_at=at,
                                event_time=event_time_of(at), tags=["demo", "memoryscope"],
                                metadata={"when_to_use": when} if when else {}))
    return out


MARK = "memory"


def load(wb: Workbench, say) -> None:
    reset(wb)  # loading twice gives the same memories
    instance = wb.settings.instance
    recs = records(instance)
    taken = {r.id for r in wb.index.records(instance, ids=[r.id for r in recs])}  # the user's own
    recs = [r for r in recs if r.id not in taken]
    marks.mark(wb, MARK, [r.id for r in recs])
    wb.index.add(recs)
    say(f"demo: {len(recs)} MemoryScope memories (observation, insight, obs_customized, conversation)"
        + (f"; {len(taken)} ids taken by memories that are not the demo's, left as they are" if taken else ""))


def reset(wb: Workbench) -> None:
    marks.remove(wb, MARK, Deletion.memory)
