"""Metrics on a hand-computed example and against trec_eval, the LoCoMo and JSONL loaders."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from core.errors import InvalidInput
from core.tuning.datasets import load_dataset, normalise_dia_id, parse_session_date
from core.tuning.metrics import compute_metrics, metric_from_hits, metric_names
from core.tuning.optimise import weight_simplex


def test_metrics_by_hand():
    relevant = {"q1": ["a", "b"], "q2": ["c"], "q3": ["z"]}
    ranked = {"q1": ["a", "x", "b"], "q2": ["y", "c"], "q3": ["p", "q"]}
    cats = {"q1": "1", "q2": "1", "q3": "2"}
    t = compute_metrics(relevant, ranked, cats, ["recall@1", "recall@3", "ndcg@3", "mrr@3"])
    q1_ndcg = (1 + 1 / math.log2(4)) / (1 + 1 / math.log2(3))
    q2_ndcg = (1 / math.log2(3)) / 1
    assert t.per_query["q1"] == pytest.approx({"recall@1": 0.5, "recall@3": 1.0, "ndcg@3": q1_ndcg,
                                               "mrr@3": 1.0})
    assert t.per_query["q2"] == pytest.approx({"recall@1": 0.0, "recall@3": 1.0, "ndcg@3": q2_ndcg,
                                               "mrr@3": 0.5})
    assert t.per_query["q3"] == pytest.approx({"recall@1": 0.0, "recall@3": 0.0, "ndcg@3": 0.0, "mrr@3": 0.0})
    assert [r.category for r in t.rows] == ["1", "2", "overall"]
    assert t.value("recall@1", "1") == pytest.approx(0.25)
    assert t.value("mrr@3") == pytest.approx((1 + 0.5 + 0) / 3)
    assert t.value("ndcg@3", "1") == pytest.approx((q1_ndcg + q2_ndcg) / 2)
    assert metric_names((10, 1, 5)) == ["recall@1", "recall@5", "recall@10", "ndcg@1", "ndcg@5", "ndcg@10",
                                        "mrr@10"]


def test_the_metrics_agree_with_trec_eval():
    """Our formulas against trec_eval's on random rankings: cut-offs shorter and longer than the rankings,
    empty rankings, ids ranked twice, MRR cut and uncut."""
    pytrec_eval = pytest.importorskip("pytrec_eval", reason="trec_eval has no wheel for this machine")
    rng = np.random.default_rng(7)
    relevant, ranked = {}, {}
    for q in range(300):
        relevant[f"q{q}"] = [f"d{i}" for i in rng.choice(60, size=rng.integers(1, 6), replace=False)]
        ranked[f"q{q}"] = [f"d{i}" for i in rng.permutation(60)[: rng.integers(0, 40)]]
    ranked["q0"] = [relevant["q0"][0], "dx", relevant["q0"][0]]  # an id ranked twice
    metrics = ["recall@1", "recall@5", "recall@25", "ndcg@1", "ndcg@5", "ndcg@10", "ndcg@25", "mrr@10", "mrr"]
    ours = compute_metrics(relevant, ranked, {q: "1" for q in relevant}, metrics).per_query

    qrels = {q: {d: 1 for d in ids} for q, ids in relevant.items()}

    def trec(cut: int | None, measures: set[str]) -> dict[str, dict[str, float]]:
        """trec_eval's values; a query it leaves out (no ranking) is 0 on every measure."""
        run = {q: {d: float(100 - i) for i, d in enumerate(list(dict.fromkeys(ids))[:cut])}
               for q, ids in ranked.items() if ids}
        found = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
        return {q: found.get(q, dict.fromkeys(next(iter(found.values())), 0.0)) for q in relevant}

    # trec_eval's reciprocal rank has no cut-off: MRR@10 is its reciprocal rank over the top 10.
    theirs = trec(None, {"recall.1,5,25", "ndcg_cut.1,5,10,25", "recip_rank"})
    theirs_top10 = trec(10, {"recip_rank"})
    names = {f"{name}@{k}": f"{measure}_{k}" for name, measure in (("recall", "recall"), ("ndcg", "ndcg_cut"))
             for k in (1, 5, 10, 25)} | {"mrr": "recip_rank"}
    for q in relevant:
        want = {m: theirs[q][names[m]] for m in metrics if m in names}
        want["mrr@10"] = theirs_top10[q]["recip_rank"]
        assert ours[q] == pytest.approx(want), q


def test_metric_names_are_checked():
    with pytest.raises(InvalidInput, match="recall@k"):
        metric_from_hits(np.zeros((1, 1), bool), np.ones(1), "precision@3")


def test_weight_simplex():
    grid = weight_simplex(0.05)
    assert len(grid) == 231 and all(math.isclose(sum(w), 1.0) for w in grid)
    assert (0.6, 0.25, 0.15) in grid and (0.0, 0.0, 1.0) in grid


# -- loaders ------------------------------------------------------------------------------------

def tiny_locomo() -> list[dict]:
    return [{
        "sample_id": "conv-x",
        "conversation": {
            "speaker_a": "Ann", "speaker_b": "Bob",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a dog named Rex."},
                {"speaker": "Bob", "dia_id": "D1:2", "text": "Look at this!", "img_url": ["http://x/y.jpg"],
                 "blip_caption": "a photo of a cat on a sofa", "query": "secret answer text"},
            ],
            "session_2_date_time": "10:00 am on 20 June, 2023",
            "session_2": [{"speaker": "Ann", "dia_id": "D2:1", "text": "Rex loves the park."}],
            "session_3_date_time": "9:00 am on 1 July, 2023",  # a date without a session
        },
        "qa": [
            {"question": "What is Ann's dog called?", "answer": "Rex", "evidence": ["D1:1"], "category": 4},
            {"question": "When?", "answer": 2023, "evidence": ["D1:1; D2:1", "D"], "category": 2},
            {"question": "Trap?", "adversarial_answer": "no", "evidence": ["D1:2"], "category": 5},
            {"question": "No evidence", "answer": "x", "evidence": [], "category": 1},
            {"question": "Bad ids", "answer": "x", "evidence": ["D:2:1", "D9:9"], "category": 1},
        ],
        "observation": {"ignored": True},
    }]


def test_locomo_loader_handles_the_pitfalls(tmp_path):
    path = tmp_path / "mini_locomo.json"
    path.write_text(json.dumps(tiny_locomo()))
    ds = load_dataset(path)
    (corpus,) = ds.corpora
    assert ds.kind == "locomo" and corpus.instance.startswith("eval-locomo-conv-x-")
    recs = {r.id: r for r in corpus.records}
    assert list(recs) == ["D1_1", "D1_2", "D2_1"]
    assert recs["D1_1"].content == "Ann: I adopted a dog named Rex." and recs["D1_1"].kind == "turn"
    assert "a photo of a cat" in recs["D1_2"].content and "secret" not in recs["D1_2"].content
    assert recs["D1_1"].created_at.isoformat() == "2023-05-08T13:56:00+00:00"
    assert recs["D1_1"].event_time.as_tuple() == (2023, 5, 8, 13, 0)
    assert {q.query: q.relevant for q in ds.queries} == {
        "What is Ann's dog called?": ["D1_1"], "When?": ["D1_1", "D2_1"], "Bad ids": ["D2_1"]}
    assert {q.category for q in ds.queries} == {"1", "2", "4"}
    assert ds.queries[0].now.isoformat() == "2023-06-20T10:00:00+00:00"  # the last session
    assert ds.skipped == {"category 5 (adversarial)": 1, "questions without usable evidence": 1,
                          "evidence ids malformed or not among the turns (dropped)": 2}
    assert load_dataset(path).corpora[0].instance == corpus.instance  # same content, same instance


def test_dia_ids_and_dates():
    assert normalise_dia_id("D:11:26") == "D11:26" and normalise_dia_id(" D8:6 ") == "D8:6"
    assert normalise_dia_id("D") is None and normalise_dia_id("X1:2") is None
    assert parse_session_date("12:28 am on 8 November, 2023").isoformat() == "2023-11-08T00:28:00+00:00"


def test_jsonl_loader_and_its_errors():
    ds = load_dataset(b'{"query": "dog?", "relevant": ["m1"], "category": 2}\n\n'
                      b'{"query": "cat", "relevant": ["m2"]}\n',
                      instance="inst")
    assert [(q.query, q.relevant, q.category, q.instance) for q in ds.queries] == [
        ("dog?", ["m1"], "2", "inst"), ("cat", ["m2"], "(none)", "inst")]
    with pytest.raises(InvalidInput, match="nothing to score: its one query has no relevant id"):
        load_dataset(b'{"query": "x", "relevant": []}', instance="inst")  # one left out: none to score
    with pytest.raises(InvalidInput, match="line 2: .*extra"):
        load_dataset(b'{"query": "x", "relevant": ["a"]}\n{"query": "x", "relevant": ["a"], "extra": 1}',
                     instance="inst")
    with pytest.raises(InvalidInput, match="existing instance"):
        load_dataset(b'{"query": "x", "relevant": ["a"]}')
    with pytest.raises(InvalidInput, match="Download LoCoMo"):
        load_dataset("/nowhere/locomo10.json")
