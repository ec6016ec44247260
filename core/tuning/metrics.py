"""Retrieval metrics: Recall@k, nDCG@k and MRR, per category and overall.

Reported figures are computed by trec_eval, the reference implementation of these measures, through its
Python binding `pytrec_eval`. The optimiser, which scores hundreds of profiles, uses the numpy twins below
(`metric_from_hits`); a test checks they agree. Relevance is binary. LoCoMo's own recall (the fraction of a
question's evidence found in the top k) is trec_eval's `recall.k`.

trec_eval is compiled C: nothing to warm up. (ranx, used before, compiled numba kernels in every process:
6 s each time, about a minute in a fresh install, and 200 MB more resident memory.)
"""

from __future__ import annotations

import re

import numpy as np
from pydantic import BaseModel

from core.errors import InvalidInput

OVERALL = "overall"
_METRIC_RE = re.compile(r"^(recall|ndcg|mrr)(?:@(\d+))?$")


def metric_names(ks: tuple[int, ...] | list[int]) -> list[str]:
    """recall@k and ndcg@k for every k, and mrr cut at the largest k."""
    ks = sorted(set(ks))
    return [f"recall@{k}" for k in ks] + [f"ndcg@{k}" for k in ks] + [f"mrr@{ks[-1]}"]


def parse_metric(name: str) -> tuple[str, int | None]:
    m = _METRIC_RE.match(name.strip().lower())
    if not m or (m.group(1) != "mrr" and m.group(2) is None) or (m.group(2) and int(m.group(2)) < 1):
        raise InvalidInput(f"metric {name!r} is not one of recall@k, ndcg@k, mrr or mrr@k (k ≥ 1)")
    return m.group(1), int(m.group(2)) if m.group(2) else None


class MetricRow(BaseModel):
    category: str
    queries: int
    values: dict[str, float]


class MetricsTable(BaseModel):
    metrics: list[str]
    rows: list[MetricRow]  # one per category (sorted), then "overall"
    per_query: dict[str, dict[str, float]] = {}

    def value(self, metric: str, category: str = OVERALL) -> float:
        for row in self.rows:
            if row.category == category:
                return row.values[metric]
        raise InvalidInput(f"no category {category!r}; known: {', '.join(r.category for r in self.rows)}")


def compute_metrics(relevant: dict[str, list[str]], ranked: dict[str, list[str]], categories: dict[str, str],
                    metrics: list[str]) -> MetricsTable:
    """Score ranked ids against the relevant ids with trec_eval; means per category and over all queries.

    The ranking is passed as scores n, n-1, ..., 1, so trec_eval keeps exactly our order. A query with
    relevant ids and no ranking scores 0 on every metric; a query with no relevant ids is left out.
    """
    parsed = {m: parse_metric(m) for m in metrics}
    qids = [q for q in relevant if relevant[q]]
    per_query: dict[str, dict[str, float]] = {q: {m: 0.0 for m in metrics} for q in qids}
    qrels = {q: {d: 1 for d in relevant[q]} for q in qids}
    ranked_ids = {q: ranked[q] for q in qids if ranked.get(q)}
    if ranked_ids:
        cut = {"recall": "recall", "ndcg": "ndcg_cut"}
        measures = {f"{cut[name]}.{k}" for name, k in parsed.values() if name != "mrr"}
        if measures:
            for q, values in _trec_eval(qrels, ranked_ids, measures).items():
                for m, (name, k) in parsed.items():
                    if name != "mrr":
                        per_query[q][m] = values[f"{cut[name]}_{k}"]
        for m, (name, k) in parsed.items():
            if name == "mrr":  # trec_eval's reciprocal rank has no cut-off: cut the rankings instead
                cut_ids = {q: ids[:k] for q, ids in ranked_ids.items()} if k else ranked_ids
                for q, values in _trec_eval(qrels, cut_ids, {"recip_rank"}).items():
                    per_query[q][m] = values["recip_rank"]
    groups: dict[str, list[str]] = {}
    for q in qids:
        groups.setdefault(categories.get(q, "all"), []).append(q)
    rows = [_row(cat, groups[cat], per_query, metrics) for cat in sorted(groups, key=_cat_key)]
    rows.append(_row(OVERALL, qids, per_query, metrics))
    return MetricsTable(metrics=metrics, rows=rows, per_query=per_query)


def _trec_eval(qrels: dict[str, dict[str, int]], ranked: dict[str, list[str]],
               measures: set[str]) -> dict[str, dict[str, float]]:
    import pytrec_eval

    run = {q: {d: float(len(ids) - i) for i, d in enumerate(ids)} for q, ids in ranked.items()}
    return pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)


def _cat_key(cat: str) -> tuple[int, str]:
    return (int(cat), "") if cat.isdigit() else (10**9, cat)


def _row(category: str, qids: list[str], per_query: dict[str, dict[str, float]],
         metrics: list[str]) -> MetricRow:
    values = {m: float(np.mean([per_query[q][m] for q in qids])) if qids else 0.0 for m in metrics}
    return MetricRow(category=category, queries=len(qids), values=values)


# -- numpy twins for the optimiser --------------------------------------------------------------

def metric_from_hits(hits: np.ndarray, n_relevant: np.ndarray, metric: str) -> np.ndarray:
    """Per-query values from a (queries × ranked candidates) boolean matrix of relevant hits.

    recall@k = hits in the top k / n_relevant
    ndcg@k   = Σ_{r≤k} hit_r / log2(r + 1)  /  Σ_{r≤min(n_relevant, k)} 1 / log2(r + 1)
    mrr@k    = 1 / (rank of the first hit) if it is within the top k, else 0 (mrr: no cut-off)
    """
    name, k = parse_metric(metric)
    q, c = hits.shape
    k = c if k is None else k
    top = hits[:, : min(k, c)].astype(np.float64)
    n_rel = np.maximum(n_relevant.astype(np.float64), 1.0)
    if name == "recall":
        return top.sum(axis=1) / n_rel
    if name == "mrr":
        first = np.argmax(top > 0, axis=1) if top.shape[1] else np.zeros(q, dtype=int)
        found = top.any(axis=1) if top.shape[1] else np.zeros(q, dtype=bool)
        return np.where(found, 1.0 / (first + 1), 0.0)
    discounts = 1.0 / np.log2(np.arange(2, k + 2))
    dcg = (top * discounts[: top.shape[1]]).sum(axis=1)
    ideal = np.cumsum(discounts)[np.minimum(n_relevant, k).astype(int).clip(min=1) - 1]
    return np.where(n_relevant > 0, dcg / ideal, 0.0)
