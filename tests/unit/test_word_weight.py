"""The weight of a query word in the query's vector (`core.retrieval.hybrid_sql.word_weight`): BM25's idf
with a prior of PRIOR_MEMORIES memories, PRIOR_DF of which hold the word."""

from __future__ import annotations

import math

import pytest

from core.retrieval.hybrid_sql import PRIOR_DF, PRIOR_MEMORIES, word_weight


def bm25_idf(df: float, n: float) -> float:
    return math.log(1 + (n - df + 0.5) / (df + 0.5))


def test_the_weight_is_the_idf_over_the_instance_and_the_prior():
    for df, n in [(0, 0), (0, 4), (4, 4), (1, 600), (600, 600), (3, 100_000)]:
        n2, df2 = n + PRIOR_MEMORIES, df + PRIOR_DF
        assert word_weight(df, n) == math.log(1 + (n2 - df2 + 0.5) / (df2 + 0.5))


def test_a_young_instance_weighs_its_words_alike():
    """Four memories all holding "read" and "Kindle", none "still": BM25's idf weighs "still" 22 times as
    much as the others, the weight 1.6 times."""
    assert bm25_idf(0, 4) / bm25_idf(4, 4) == pytest.approx(21.9, abs=0.1)
    assert word_weight(0, 4) / word_weight(4, 4) == pytest.approx(1.56, abs=0.01)
    assert word_weight(0, 0) == word_weight(0, 0) > 0  # an empty instance: every word weighs the same


@pytest.mark.parametrize("share", [0.001, 0.01, 0.1, 0.5])
def test_the_prior_fades_as_the_instance_grows(share):
    """For a word held by a given share of the memories, the weight comes to the idf as the instance grows."""
    gaps = [abs(word_weight(share * n, n) / bm25_idf(share * n, n) - 1) for n in (1_000, 10_000, 100_000)]
    assert gaps[0] > gaps[1] > gaps[2] and gaps[2] < 0.01


def test_rarer_words_weigh_more():
    n = 600
    weights = [word_weight(df, n) for df in (0, 1, 10, 100, 600)]
    assert weights == sorted(weights, reverse=True)
