"""Hybrid retrieval on real Postgres with the keyword embedder: exact order and scores."""

from datetime import UTC, datetime, timedelta
from math import exp, sqrt

import pytest

from core.models import PRESET_PROFILES, FusionProfile, MemoryRecord
from core.retrieval.hybrid import SearchRequest, hybrid_search

NOW = datetime(2026, 6, 1, 12, tzinfo=UTC)


@pytest.fixture
def memories(keyword_workbench, instance):
    def rec(id_, content, age_s, **kw):
        return MemoryRecord(instance=instance, id=id_, kind="user", content=content,
                            created_at=NOW - timedelta(seconds=age_s), **kw)

    keyword_workbench.index.add([
        rec("a", "paris museum", 0),
        rec("b", "paris", 86400),
        rec("c", "dog", 3600, tags=["pets"]),
        rec("d", "france budget", 2 * 86400),
    ])
    return instance


def search(wb, instance, query, **kw):
    return hybrid_search(wb.pool(), wb.embedder, SearchRequest(query=query, instance=instance, **kw), now=NOW)


def test_exact_scores_follow_the_formula(keyword_workbench, memories):
    res = search(keyword_workbench, memories, "paris museum", top_k=10)
    by_id = {r.memory.id: r.score for r in res.results}
    # cosines with the query vector (paris + museum)/√2: a = 1, b = 1/√2, c = d = 0.
    # text: a matches both words and b one, so after normalising by the best, a = 1 and 0 < b < 1.
    assert by_id["a"].semantic == pytest.approx(1.0, abs=1e-6)
    assert by_id["a"].combined == pytest.approx(0.6 * 1.0 + 0.25 * 1.0 + 0.15 * exp(0), abs=1e-6)
    b = by_id["b"]
    assert b.semantic == pytest.approx(1 / sqrt(2), abs=1e-6)
    assert 0 < b.text < 1
    assert b.combined == pytest.approx(0.6 / sqrt(2) + 0.25 * b.text + 0.15 * exp(-1), abs=1e-6)
    assert by_id["c"].combined == pytest.approx(0.15 * exp(-3600 / 86400), abs=1e-6)
    assert [r.memory.id for r in res.results] == ["a", "b", "c", "d"]


def test_profiles_change_the_order(keyword_workbench, memories):
    recent = FusionProfile(name="only-recency", w_sem=0.0, w_text=0.0, w_rec=1.0)
    res = search(keyword_workbench, memories, "paris museum", top_k=4, profile=recent)
    assert [r.memory.id for r in res.results] == ["a", "c", "b", "d"]
    rrf = search(keyword_workbench, memories, "paris museum", top_k=4,
                 profile=PRESET_PROFILES["balanced-default"].model_copy(update={"method": "rrf"}))
    assert rrf.results[0].memory.id == "a" and rrf.results[0].score.combined == pytest.approx(1.0)


def test_threshold_filters_and_search_types(keyword_workbench, memories):
    res = search(keyword_workbench, memories, "paris museum", top_k=10, similarity_threshold=0.5)
    assert {r.memory.id for r in res.results} == {"a", "b"}
    text_only = search(keyword_workbench, memories, "budget", top_k=10, search_type="text")
    assert [r.memory.id for r in text_only.results] == ["d"]
    assert text_only.results[0].score.vector_rank is None


def test_filters_exclusion_and_isolation(keyword_workbench, memories):
    assert [r.memory.id for r in search(keyword_workbench, memories, "dog", tags=["pets"]).results] == ["c"]
    excluded = search(keyword_workbench, memories, "paris museum", exclude_ids=["a"], top_k=10)
    assert "a" not in {r.memory.id for r in excluded.results}
    keyword_workbench.index.add([MemoryRecord(instance="t-other-instance", id="x", kind="user",
                                              content="paris museum", created_at=NOW)])
    ids = {r.memory.id for r in search(keyword_workbench, memories, "paris museum", top_k=50).results}
    assert "x" not in ids


def test_identical_texts_count_once_and_the_best_copy_stands(keyword_workbench, instance):
    keyword_workbench.index.add([
        MemoryRecord(instance=instance, id="old", kind="user", content="Paris  museum",
                     created_at=NOW - timedelta(days=30)),
        MemoryRecord(instance=instance, id="new", kind="user", content="paris museum", created_at=NOW),
        MemoryRecord(instance=instance, id="other", kind="user", content="paris", created_at=NOW),
    ])
    ids = [r.memory.id for r in search(keyword_workbench, instance, "paris museum", top_k=10).results]
    assert ids == ["new", "other"]


def test_near_duplicates_give_way_to_the_memory_that_answers(workbench, instance):
    """With the real offline embedder: rephrasings of one question do not take every slot."""
    questions = ["What did I plant on the balcony?", "Got it. What did I plant on the balcony?",
                 "Thanks, that works. What did I plant on the balcony?",
                 "Perfect, thank you. What did I plant on the balcony?"]
    fact = "The balcony gets sun from noon until five, so I planted tomatoes and basil there."
    workbench.index.add([MemoryRecord(instance=instance, id=f"q{i}", kind="user", content=q, created_at=NOW)
                         for i, q in enumerate(questions)]
                        + [MemoryRecord(instance=instance, id="fact", kind="user", content=fact, created_at=NOW)])

    def top(**kw):
        return [r.memory.id for r in search(workbench, instance, "What did I plant on the balcony?", top_k=3,
                                            **kw).results]

    assert "fact" not in top(near_duplicate=1.0)
    assert "fact" in top()
