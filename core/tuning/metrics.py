"""Retrieval metrics: Recall@k, nDCG@k and MRR, per category and overall.

One implementation, in numpy (`metric_from_hits`), for the reported figures and for the optimiser, which
scores hundreds of profiles over the same candidate pools: an evaluation and the optimiser's figure for
the same profile agree by construction. Tests check it against trec_eval, the reference implementation of
these measures (its binding `pytrec_eval`, a test dependency), and against hand-computed values. Relevance
is binary. LoCoMo's own recall (the fraction of a question's evidence found in the top k) is `recall@k`.

Why not a library at run time: ranx, used before, builds numba typed dictionaries in every process, which
numba cannot cache (6 s of CPU a process, about a minute for the first evaluation after an install, 200 MB
resident); pytrec_eval has no wheel for Linux on ARM, and its source build downloads trec_eval from GitHub.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel

from core.errors import InvalidInput

OVERALL = "overall"
# The category of a query its set gives none: a set without categories is scored overall only.
UNCATEGORISED = "(none)"
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


def compute_metrics(relevant: dict[str, list[str]], ranked: dict[str, list[str | None]],
                    categories: dict[str, str], metrics: list[str]) -> MetricsTable:
    """Score ranked ids against the relevant ids; means per category and over all queries. A query of no
    category (missing from `categories`, or `UNCATEGORISED`) counts overall, and under a row of its own only
    beside queries of a category: a set without categories has the overall row alone.

    A query with relevant ids and no ranking scores 0 on every metric; a query with no relevant ids is left
    out. An id ranked twice counts at its first place only. A None holds a place and is never relevant:
    the place of a memory a chat turn leaves out (`core.tuning.evaluate.handed_ranking`).
    """
    for m in metrics:
        parse_metric(m)
    qids = [q for q in relevant if relevant[q]]
    rankings = [first_places(ranked.get(q) or ()) for q in qids]
    hits = np.zeros((len(qids), max(map(len, rankings), default=0)), dtype=bool)
    for row, q, ids in zip(hits, qids, rankings, strict=True):
        wanted = set(relevant[q])
        row[: len(ids)] = [d in wanted for d in ids]
    n_relevant = np.array([len(set(relevant[q])) for q in qids])
    values = {m: metric_from_hits(hits, n_relevant, m) for m in metrics}
    per_query = {q: {m: float(values[m][i]) for m in metrics} for i, q in enumerate(qids)}
    groups: dict[str, list[str]] = {}
    for q in qids:
        groups.setdefault(categories.get(q, UNCATEGORISED), []).append(q)
    if set(groups) == {UNCATEGORISED}:
        groups = {}
    rows = [_row(cat, groups[cat], per_query, metrics) for cat in sorted(groups, key=_cat_key)]
    rows.append(_row(OVERALL, qids, per_query, metrics))
    return MetricsTable(metrics=metrics, rows=rows, per_query=per_query)


def first_places(ids: Sequence[str | None]) -> list[str | None]:
    """Each id at its first place; every None kept where it stands."""
    seen: set[str] = set()
    out: list[str | None] = []
    for d in ids:
        if d is None:
            out.append(d)
        elif d not in seen:
            out.append(d)
            seen.add(d)
    return out


def _cat_key(cat: str) -> tuple[int, str]:
    """Numbered categories in their order, then named ones, then the queries of none."""
    return (int(cat), "") if cat.isdigit() else (10**9 + (cat == UNCATEGORISED), cat)


def _row(category: str, qids: list[str], per_query: dict[str, dict[str, float]],
         metrics: list[str]) -> MetricRow:
    values = {m: float(np.mean([per_query[q][m] for q in qids])) if qids else 0.0 for m in metrics}
    return MetricRow(category=category, queries=len(qids), values=values)


# -- the formulas -----------------------------------------------------------------------------

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
