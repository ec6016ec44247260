"""retrieve_memory's output is scored at the cut-offs it can fill, and a query asked at a known time is asked
then (`core.tuning.evaluate`)."""

from __future__ import annotations

from datetime import UTC, datetime

from core.retrieval.memoryscope.params import ScopeParams
from core.tuning.datasets import EvalQuery
from core.tuning.evaluate import query_params, scope_cutoffs


def test_the_cutoffs_stop_at_the_most_retrieve_memory_returns():
    assert scope_cutoffs((1, 5, 10, 25), ScopeParams()) == (1, 3)  # top_k 3 by default
    wide = ScopeParams.from_flat({"op.retrieve_memory_op.params.top_k": 25})
    assert scope_cutoffs((1, 5, 10, 25), wide) == (1, 5)  # fuse_rerank keeps 5
    assert scope_cutoffs((10,), wide) == (5,)


def test_a_query_asked_at_a_known_time_is_set_then():
    asked = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    params = ScopeParams()
    at = query_params(EvalQuery(qid="q", query="q", relevant=["a"], category="1", instance="i", now=asked), params)
    assert at.set_query_op.timestamp == int(asked.timestamp()) and params.set_query_op.timestamp is None
    unknown = EvalQuery(qid="q", query="q", relevant=["a"], category="1", instance="i")
    assert query_params(unknown, params) is params
