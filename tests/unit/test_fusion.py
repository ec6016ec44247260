from datetime import UTC, datetime, timedelta
from math import exp

import numpy as np
import pytest
from pydantic import ValidationError

from core.models import PRESET_PROFILES, FusionProfile, MemoryRow
from core.retrieval.fusion import (
    Candidate,
    chain_scores,
    fuse,
    fusion_columns,
    own_scores,
    recency,
    relevance_weights,
    unit,
)

NOW = datetime(2026, 1, 2, tzinfo=UTC)


def row(id_, age_s):
    return MemoryRow(instance="i", id=id_, kind="user", content=id_, created_at=NOW - timedelta(seconds=age_s))


def test_linear_fusion_is_the_design_formula():
    c = Candidate(row("a", 86400), cosine=0.8, text_raw=2.0, vector_rank=1, text_rank=2)
    d = Candidate(row("b", 0), cosine=-0.3, text_raw=4.0, vector_rank=2, text_rank=1)
    scored = {s.memory.id: s.score for s in fuse([c, d], PRESET_PROFILES["balanced-default"], NOW)}
    assert scored["a"].combined == pytest.approx(0.6 * 0.8 + 0.25 * 0.5 + 0.15 * exp(-1))
    assert scored["b"].combined == pytest.approx(0.6 * 0.0 + 0.25 * 1.0 + 0.15 * 1.0)


def test_relevance_is_the_score_without_recency_and_similarity_the_query_own_cosine():
    c = Candidate(row("a", 86400), cosine=0.8, text_raw=2.0, vector_rank=1, text_rank=2, query_cosine=0.5)
    d = Candidate(row("b", 0), cosine=-0.3, text_raw=4.0, vector_rank=2, text_rank=1)
    scored = {s.memory.id: s.score for s in fuse([c, d], PRESET_PROFILES["balanced-default"], NOW)}
    assert scored["a"].relevance == pytest.approx((0.6 * 0.8 + 0.25 * 0.5) / 0.85)
    assert scored["b"].relevance == pytest.approx(0.25 * 1.0 / 0.85)  # fresh, but its relevance is low
    assert scored["a"].semantic == 0.8 and scored["a"].similarity == 0.5  # the expanded and the own cosine
    assert scored["b"].similarity == 0.0  # no expansion: the cosine itself, clipped
    # Relevance is one judgement whatever the profile ranks by: rrf's ranks do not enter it.
    rrf = PRESET_PROFILES["balanced-default"].model_copy(update={"method": "rrf"})
    parts = {s.memory.id: s.score for s in fuse([c, d], rrf, NOW)}
    assert parts["a"].relevance == pytest.approx(scored["a"].relevance)
    assert parts["a"].combined == pytest.approx((0.6 / 61 + 0.25 / 62 + 0.15 / 62) * 61)
    assert relevance_weights(FusionProfile(name="r", w_sem=0.0, w_text=0.0, w_rec=1.0)) == (0.5, 0.5)


def test_relevance_reads_the_share_of_the_query_a_memory_matches_and_ranking_the_best_match():
    """With the text leg's ideal match (the query's every word once), the text part of relevance is the
    memory's share of it: a weak match stays weak when it is the pool's best, while ranking still reads
    the text score relative to the best."""
    weak = Candidate(row("weak", 0), cosine=0.3, text_raw=1.5, vector_rank=1, text_rank=1)
    none = Candidate(row("none", 0), cosine=0.2, text_raw=0.0, vector_rank=2, text_rank=None)
    profile = PRESET_PROFILES["balanced-default"]
    parts = {s.memory.id: s.score for s in fuse([weak, none], profile, NOW, text_ideal=10.0)}
    assert parts["weak"].text == 1.0 and parts["weak"].coverage == pytest.approx(0.15)
    assert parts["weak"].relevance == pytest.approx((0.6 * 0.3 + 0.25 * 0.15) / 0.85)
    assert parts["weak"].combined == pytest.approx(0.6 * 0.3 + 0.25 * 1.0 + 0.15)
    assert parts["none"].coverage == 0.0
    # A match above the ideal (a word repeated, a short memory) counts as whole, not more.
    full = next(fuse([weak], profile, NOW, text_ideal=1.0)).score
    assert full.coverage == 1.0 and full.relevance == pytest.approx((0.6 * 0.3 + 0.25) / 0.85)
    # Without an ideal (a pool that does not carry one) relevance reads the relative text score.
    assert next(fuse([weak], profile, NOW)).score.coverage == 1.0


def rrf(vector_rank, text_rank, age_rank, weights):
    ranks = {name: np.array([float(r)]) for name, r in
             (("vector_rank", vector_rank), ("text_rank", text_rank), ("age_rank", age_rank))}
    zero = np.zeros(1)
    return own_scores("rrf", *weights, 86400.0, 60, semantic=zero, text=zero, age_s=zero, speaker=zero,
                      **ranks)[0]


def test_rrf_is_normalised_to_one_at_rank_one_everywhere():
    assert rrf(1, 1, 1, (0.6, 0.25, 0.15)) == pytest.approx(1.0)
    assert rrf(2, 0, 1, (0.5, 0.3, 0.2)) == pytest.approx((0.5 / 62 + 0.2 / 61) * 61)  # 0: not found


def test_helpers_guard_zero_nan_and_future():
    unscored = [Candidate(row(id_, 0), cosine=float("nan"), text_raw=0.0, vector_rank=1, text_rank=None)
                for id_ in "ab"]
    columns = fusion_columns(unscored, NOW)
    assert columns["text"].tolist() == [0.0, 0.0]  # no text score anywhere: zeros, not a division by 0
    assert columns["semantic"].tolist() == [0.0, 0.0] and columns["text_rank"].tolist() == [0.0, 0.0]
    assert all(len(v) == 0 for v in fusion_columns([], NOW).values())
    assert recency(np.array([-50.0]), 100)[0] == 1.0
    assert unit(np.array([np.nan, -0.5, 0.25, 3.0])).tolist() == [0.0, 0.0, 0.25, 1.0]


def test_chains_lift_their_members_by_their_best_along_the_last_axis():
    own = np.array([[0.9, 0.1, 0.5, 0.3], [0.2, 0.4, 0.6, 0.8]])
    chain = np.array([[0, 0, 2, 0], [0, 1, 1, 3]])  # the position of each one's chain's first member
    best, combined = chain_scores(own, chain)
    assert best.tolist() == [[0.9, 0.9, 0.5, 0.9], [0.2, 0.6, 0.6, 0.8]]
    assert combined == pytest.approx((own + 0.3 * best) / 1.3)
    one_best, one_combined = chain_scores(own[1], chain[1])  # one pool alone: the same
    assert one_best.tolist() == best[1].tolist() and one_combined.tolist() == combined[1].tolist()


def test_profile_weights_must_sum_to_one_and_be_finite():
    with pytest.raises(ValidationError, match="sum to 1"):
        FusionProfile(name="x", w_sem=0.5, w_text=0.5, w_rec=0.5)
    with pytest.raises(ValidationError):
        FusionProfile(name="x", w_sem=float("nan"), w_text=0.5, w_rec=0.5)
    with pytest.raises(ValidationError):
        FusionProfile(name="bad name!", w_sem=0.6, w_text=0.25, w_rec=0.15)


def test_presets_are_the_four_of_the_design():
    assert {n: (p.w_sem, p.w_text, p.w_rec) for n, p in PRESET_PROFILES.items()} == {
        "balanced-default": (0.60, 0.25, 0.15), "fast-chat": (0.45, 0.40, 0.15),
        "deep-research": (0.75, 0.10, 0.15), "recall-recent": (0.45, 0.15, 0.40)}


def test_candidate_pools_grow_with_the_answer_list():
    from core.retrieval.hybrid import POOL_MIN, SearchRequest

    def pool(**kw):
        return SearchRequest(query="q", instance="i", **kw).pool

    assert pool() == pool(top_k=5) == POOL_MIN == 10  # each leg's candidates for a short answer
    assert pool(top_k=25) == 50  # two per result asked for
    assert pool(top_k=5, pool_size=7) == 7  # an explicit pool is kept
    with pytest.raises(ValidationError):
        pool(pool_size=0)


def test_equal_scores_rank_the_newer_memory_first_then_by_id():
    # No recency weight, the same cosine and text: every combined score is equal.
    profile = FusionProfile(name="flat", w_sem=0.5, w_text=0.5, w_rec=0.0)
    same = dict(cosine=0.5, text_raw=1.0, vector_rank=1, text_rank=1)
    pool = [Candidate(row("b", 60), **same), Candidate(row("c", 0), **same), Candidate(row("a", 60), **same)]
    ranked = fuse(pool, profile, NOW)
    assert next(ranked).memory.id == "c"  # each is made as it is asked for
    assert [s.memory.id for s in ranked] == ["a", "b"]
