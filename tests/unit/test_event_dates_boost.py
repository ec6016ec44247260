"""The question's own time as a boost (`core.retrieval.fusion.time_boosted`, `core.retrieval.ranking.in_time`,
`boosted_by_time`; applied by `core.retrieval.hybrid.hybrid_search`): score_i = combined_i + TIME_BOOST * inside_i
among the best BOOSTED_AMONG; relevance, which the floor reads, unchanged."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from core.models import EventTime, MemoryRow, ScoredMemory, ScoreParts
from core.retrieval.fusion import BOOSTED_AMONG, TIME_BOOST, time_boosted
from core.retrieval.hybrid import SearchRequest
from core.retrieval.ranking import boosted_by_time, in_time, time_boost_note
from core.retrieval.timeparse import TimeHint

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


def scored(created: datetime, combined: float) -> ScoredMemory:
    return ScoredMemory(memory=row(created, EventTime()), score=ScoreParts(
        semantic=combined, text=0.0, recency=0.0, combined=combined, similarity=combined, relevance=combined))


AUGUST_WEEK = TimeHint(parts={}, start=AUG_1, end=AUG_8, expression="the first week of August")


def test_only_the_best_few_are_re_sorted_so_a_shorter_top_k_is_a_prefix_of_a_longer_one():
    inside, outside = datetime(2026, 8, 3, tzinfo=UTC), datetime(2026, 9, 3, tzinfo=UTC)
    ranked = [scored(outside + timedelta(hours=i), 0.9 - i * 0.01) for i in range(4)] + [
        scored(inside, 0.84), scored(inside + timedelta(hours=1), 0.83)]
    boosted = boosted_by_time(ranked, AUGUST_WEEK, among=5)
    # 0.84 + 0.1 passes 0.90; the sixth, of August too, lies past the best 5 and keeps its place
    assert [m.score.combined for m in boosted] == [0.84, 0.9, 0.89, 0.88, 0.87, 0.83]
    assert boosted[0].score.combined == 0.84  # scores unchanged: the boost ranks, never rescores
    for k in range(1, 6):  # a search for k memories returns the first k of the boosted best
        assert boosted_by_time(ranked[: max(k, 5)], AUGUST_WEEK, among=5)[:k] == boosted[:k]


def test_the_reason_line_says_the_time_read_the_boost_and_how_many_found_are_of_then():
    found = [scored(datetime(2026, 8, 3, tzinfo=UTC), 0.8), scored(datetime(2026, 9, 3, tzinfo=UTC), 0.7)]
    note = time_boost_note(AUGUST_WEEK, found, "question")
    assert note == ("the question's time 'the first week of August' (2026-08-01 00:00 – 2026-08-08 00:00) ranks "
                    f"the memories of then higher (+{TIME_BOOST:g} among the best {BOOSTED_AMONG}): 1 of the 2 "
                    "found is of then; none is left out for it")


def test_a_hybrid_search_without_a_window_boosts_the_time_its_query_names():
    req = SearchRequest(query="What did I do last March?", instance="i")
    assert req.boosts_time
    assert not req.model_copy(update={"time_boost": False}).boosts_time
    assert not req.model_copy(update={"since": AUG_1}).boosts_time  # a window holds the time asked already
    assert not req.model_copy(update={"until": AUG_8}).boosts_time
    assert not req.model_copy(update={"search_type": "vector"}).boosts_time  # one leg shows what it finds alone
