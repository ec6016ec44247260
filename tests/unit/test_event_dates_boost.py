"""The question's own time as a boost (`core.retrieval.fusion.time_boosted`, `core.retrieval.ranking.in_time`):
score_i = combined_i + TIME_BOOST * inside_i; relevance, which the floor reads, unchanged."""

from __future__ import annotations

from datetime import UTC, datetime

from core.models import EventTime, MemoryRow
from core.retrieval.fusion import TIME_BOOST, time_boosted
from core.retrieval.ranking import in_time

AUG_1, AUG_8 = datetime(2026, 8, 1, tzinfo=UTC), datetime(2026, 8, 8, tzinfo=UTC)


def row(created: datetime, event: EventTime) -> MemoryRow:
    return MemoryRow(instance="i", id=f"m{created:%m%d%H}", kind="observation", content="x", created_at=created,
                     event_time=event)


def test_the_boost_is_added_to_the_combined_score_of_memories_of_that_time():
    # 0.50 outside, 0.45 inside: 0.45 + 0.1 = 0.55 ranks first; 0.30 + 0.1 = 0.40 stays under 0.50
    assert time_boosted([0.50, 0.45, 0.30], [False, True, True]) == [1, 0, 2]
    assert TIME_BOOST == 0.1
    assert time_boosted([0.5, 0.5], [False, False]) == [0, 1]  # ties keep the list's order


def test_a_memory_is_of_a_time_by_its_event_else_when_it_was_stored():
    said_in = datetime(2026, 8, 3, 9, tzinfo=UTC)
    assert in_time(row(said_in, EventTime(year=2026, month=8, day=3, hour=9, weekday=0)), AUG_1, AUG_8)
    later = datetime(2026, 9, 2, 9, tzinfo=UTC)
    assert in_time(row(later, EventTime(year=2026, month=8, day=5)), AUG_1, AUG_8)  # an event of that week
    assert in_time(row(later, EventTime(year=2026, month=8)), AUG_1, AUG_8)  # of August: it overlaps
    assert not in_time(row(later, EventTime(year=2026, month=9, day=2, hour=9)), AUG_1, AUG_8)
    assert not in_time(row(later, EventTime()), AUG_1, AUG_8)  # no event time: stored in September
