"""What a chat turn asking for k memories hands over is searched as chat searches: its own pool of
candidates (max(10, 2k) a leg), not the evaluation's. A returning user's "Where do I live now?" had the move
first in a top 25 drawn from 50 candidates a leg, and nowhere in chat's top 5 drawn from 10: the handed
figure, cut from the evaluated ranking, said 0.25 where chat handed 0."""

from __future__ import annotations

from datetime import UTC, datetime

from core.models import MemoryRow, ScoredMemory, ScoreParts
from core.tuning.evaluate import handed_by_k

NOW = datetime(2026, 12, 6, tzinfo=UTC)


def scored(ids: str, relevance: float = 0.9) -> list[ScoredMemory]:
    parts = ScoreParts(semantic=relevance, text=0, recency=0, combined=relevance, similarity=0, relevance=relevance)
    return [ScoredMemory(memory=MemoryRow(instance="i", id=i, kind="user", content=i, created_at=NOW), score=parts)
            for i in ids]


def test_each_k_is_searched_with_chat_s_pool_and_the_evaluated_ranking_reused_where_it_is_chat_s():
    asked = []

    def search(top_k: int, pool: int | None) -> list[ScoredMemory]:
        asked.append((top_k, pool))
        return scored("xyzwv"[:top_k] if top_k <= 5 else "pqrstuvwxyzabcdefghijk"[:top_k])

    evaluated = scored("abcdefghijklmnopqrstuvwxy")  # a top 25 from 50 candidates a leg
    handed = handed_by_k(search, evaluated, (1, 5, 10, 25), 50, 0.33, "hybrid")
    # k 1 and 5 share chat's pool of 10 (one search, for 5); k 10 has 20; k 25's pool of 50 is the evaluation's.
    assert asked == [(5, None), (10, None)]
    assert handed[1] == ["x"] and handed[5] == list("xyzwv")
    assert handed[10] == list("pqrstuvwxy") and handed[25] == list("abcdefghijklmnopqrstuvwxy")


def test_a_memory_under_the_floor_keeps_its_place_empty():
    evaluated = scored("ab") + scored("c", relevance=0.1) + scored("defghijklmnopqrstuvwxyz"[:22])
    handed = handed_by_k(lambda k, pool: evaluated[:k], evaluated, (5,), 10, 0.33, "hybrid")
    assert handed[5] == ["a", "b", None, "d", "e"]
