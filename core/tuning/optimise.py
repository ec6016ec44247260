"""Search fusion profiles for the one that scores best on a labelled query set.

The grid: the weight simplex (w_sem, w_text, w_rec ≥ 0 summing to 1, step 0.05: 231 points) × a few
tau values for the linear method, and the simplex × a few rrf_k for reciprocal-rank fusion.

Each query's candidate pool (both legs, before fusion) is fetched from Postgres once (`fetch_pool`, as
chat's search does), with what the passes after fusion need: a content group per candidate and the
pool's near-duplicate matrix (`core.retrieval.ranking`). Every grid point then re-fuses all pools at
once with the functions `core.retrieval.fusion.fuse` scores a pool with (`fuse_scores`) and the same
tie-break, and applies the identical-text and near-duplicate passes of `ranking.rank` to all queries at
once (`kept_hits`), so a point's figure equals what `evaluate` reports for it.

The best point is only a proposal: `core.tuning.verdict` compares it with the current profile query by
query and recommends it only when it is better beyond noise. Among equal figures the point nearest the
current profile's weights wins, so a tie never proposes a far-off corner of the simplex.

It maximises the ranking's figure, not the recall of what chat hands over once the relevance floor is
applied (`EvalReport.handed`, which the evaluation shows beside it). A profile's weights move each
memory's relevance as well as its rank, and a labelled set holds only queries that have an answer: on it,
letting more memories over the floor is never penalised, so an optimiser of the handed figure would drift
towards weights that defeat the floor, whose work is to hand nothing over when nothing matches (it is set
on unanswerable questions, benchmarks/abstention.py). Compare the handed figures of the best profile and
the current one by evaluating the best.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Literal

import numpy as np
from pydantic import BaseModel

from core.errors import InvalidInput
from core.models import FusionProfile
from core.retrieval.fusion import chain_groups, chain_scores, fusion_columns, own_scores
from core.retrieval.hybrid import fetch_pool
from core.retrieval.ranking import content_groups, near_duplicate_matrix, retrievable_pool
from core.tuning.datasets import EvalDataset
from core.tuning.evaluate import Progress, Stop, check_stop, each_query, ensure_loaded, search_request
from core.tuning.metrics import metric_from_hits, parse_metric
from core.tuning.verdict import Spread, paired_spread, verdict

if TYPE_CHECKING:
    from core.runtime import Workbench

DEFAULT_TAUS = (3600.0, 86400.0, 7 * 86400.0, 30 * 86400.0, 365 * 86400.0)
DEFAULT_RRF_KS = (60,)


class CandidatePools(BaseModel):
    """Every query's candidates as padded (queries × candidates) arrays; `valid` marks real entries."""

    model_config = {"arbitrary_types_allowed": True}

    qids: list[str]
    categories: list[str]
    semantic: np.ndarray
    text: np.ndarray
    age_s: np.ndarray
    vector_rank: np.ndarray   # 0 where the vector leg did not find the candidate
    text_rank: np.ndarray     # 0 where the text leg did not find it
    age_rank: np.ndarray      # 1 = youngest, ties in the database's order as in `fuse`
    created_ts: np.ndarray
    id_order: np.ndarray      # position of the id in sorted order (the last tie-break)
    valid: np.ndarray
    relevant: np.ndarray      # candidate is one of the query's relevant ids
    n_relevant: np.ndarray
    tie_order: np.ndarray     # positions newer first, then by id: `fuse`'s tie-break, fixed per pool
    group: np.ndarray         # content group (`ranking.content_groups`): identical texts share one
    speaker: np.ndarray       # 1 where the query names the candidate's speaker (`Candidate.speaker_named`)
    chain: np.ndarray         # chain group: the position of the first candidate of the same chain
    # `ranking.near_duplicate_matrix` of every pool, sparse (pairs are few; dense it would take queries ×
    # candidates² bytes, 16 GB at 1000 queries and pool_size 2000): candidate i of query q is a
    # near-duplicate of candidates close_idx[close_ptr[f]:close_ptr[f + 1]], f = q * width + i.
    close_ptr: np.ndarray
    close_idx: np.ndarray
    duplicates: np.ndarray    # the query's pool has identical texts or near-duplicates


class SurfacePoint(BaseModel):
    method: Literal["linear", "rrf"]
    w_sem: float
    w_text: float
    w_rec: float
    tau_s: float
    rrf_k: int
    value: float


class OptimiseReport(BaseModel):
    metric: str
    category: str | None
    best: FusionProfile
    best_value: float
    baseline: FusionProfile
    baseline_value: float
    spread: Spread  # per query, best − baseline
    recommended: bool  # the best is better than the baseline beyond noise (`core.tuning.verdict`)
    verdict: str  # the sentence every front end shows
    surface: list[SurfacePoint]
    queries: int  # what the figures rest on
    pool_size: int
    seconds: float


def weight_simplex(step: float = 0.05) -> list[tuple[float, float, float]]:
    """All (w_sem, w_text, w_rec) on the grid of `step` with w ≥ 0 and w_sem + w_text + w_rec = 1."""
    n = round(1 / step)
    return [(round(i / n, 4), round(j / n, 4), round((n - i - j) / n, 4))
            for i in range(n + 1) for j in range(n + 1 - i)]


def fetch_pools(wb: Workbench, dataset: EvalDataset, pool_size: int = 50,
                progress: Progress | None = None, stop: Stop | None = None) -> CandidatePools:
    """Both legs' candidates of every query, fetched once (loading the dataset first if needed), with
    each pool's content groups and near-duplicate pairs at the threshold `evaluate` searches with."""
    ensure_loaded(wb, dataset, progress, stop)
    queries = dataset.queries
    wb.embedder.embed_batch([q.query for q in queries])
    probe = FusionProfile()

    def one(q):
        req = search_request(q, dataset, probe, 1, pool_size)
        pool = retrievable_pool(fetch_pool(wb.search_pool(), wb.embedder, req), probe)  # as `rank` sees it
        return pool, np.nonzero(near_duplicate_matrix(pool, req.near_duplicate))  # pairs, row by row

    fetched = each_query(one, queries, "fetching candidate pools", progress, stop)
    found = [pool.candidates for pool, _ in fetched]
    near = [pairs for _, pairs in fetched]
    width = max((len(c) for c in found), default=0) or 1
    shape = (len(queries), width)
    arrays = {name: np.zeros(shape) for name in ("semantic", "text", "age_s", "vector_rank", "text_rank",
                                                 "age_rank", "created_ts", "id_order", "speaker")}
    valid, relevant = np.zeros(shape, dtype=bool), np.zeros(shape, dtype=bool)
    group = np.tile(np.arange(width), (len(queries), 1))
    chain = group.copy()  # padding, and a candidate without a chain, is a chain of its own
    for qi, (q, cands) in enumerate(zip(queries, found, strict=True)):
        if not cands:
            continue
        n = len(cands)
        group[qi, :n] = content_groups([c.memory.content for c in cands])
        chain[qi, :n] = chain_groups([c.memory.chain_id for c in cands])
        for name, column in fusion_columns(cands, q.now or datetime.now(UTC)).items():
            arrays[name][qi, :n] = column
        arrays["created_ts"][qi, :n] = [c.memory.created_at.timestamp() for c in cands]
        ids = [c.memory.id for c in cands]
        order = np.empty(n)
        order[np.argsort(np.array(ids), kind="stable")] = np.arange(n)
        arrays["id_order"][qi, :n] = order
        valid[qi, :n] = True
        wanted = set(q.relevant)
        relevant[qi, :n] = [i in wanted for i in ids]
    rows = np.concatenate([qi * width + i for qi, (i, _) in enumerate(near)] or [np.zeros(0, dtype=int)])
    close_ptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=len(queries) * width))])
    close_idx = np.concatenate([j for _, j in near] or [np.zeros(0, dtype=int)])
    duplicates = (group != np.arange(width)).any(axis=1) | (np.diff(close_ptr[::width]) > 0)
    tie_order = np.lexsort((arrays["id_order"], -arrays["created_ts"]), axis=-1)
    return CandidatePools(qids=[q.qid for q in queries], categories=[q.category for q in queries],
                          valid=valid, relevant=relevant, tie_order=tie_order, group=group, chain=chain,
                          close_ptr=close_ptr, close_idx=close_idx, duplicates=duplicates,
                          n_relevant=np.array([len(set(q.relevant)) for q in queries]), **arrays)


def fuse_scores(pools: CandidatePools, method: str, w_sem: float, w_text: float, w_rec: float,
                tau_s: float, rrf_k: int) -> np.ndarray:
    """The combined score of every candidate, with `core.retrieval.fusion.fuse`'s own functions
    (`own_scores`, `chain_scores`) over every pool at once. Padding gets -inf."""
    own = own_scores(method, w_sem, w_text, w_rec, tau_s, rrf_k, semantic=pools.semantic, text=pools.text,
                     age_s=pools.age_s, vector_rank=pools.vector_rank, text_rank=pools.text_rank,
                     age_rank=pools.age_rank, speaker=pools.speaker)
    return chain_scores(np.where(pools.valid, own, -np.inf), pools.chain)[1]


def kept_hits(pools: CandidatePools, scores: np.ndarray, depth: int) -> np.ndarray:
    """Relevant flags of the first `depth` results `core.retrieval.ranking.rank` keeps, every query at once
    (queries × depth; False past the end of a query's list).

    Order: by score, then newer first, then id, as `fuse` breaks ties. Then, walking the rank positions
    with all queries at once, the candidate at each position is
    - left out as an identical text when its content group came up at an earlier position (kept or not:
      `distinct_contents` runs before the near-duplicate pass),
    - moved to the end as a near-duplicate (`close_ptr`, `close_idx`) of a memory already kept,
    - else kept.
    The walk stops once every query has `depth` kept or has run out of candidates; both passes decide a
    position from the positions above it only, so this is the prefix of the whole pass. A query that ran
    out with fewer than `depth` kept is filled with its near-duplicates, in rank order. Pools without
    identical texts or near-duplicates (most: 825 of LoCoMo dev's 1033) keep their ranking as it is and
    skip the walk. No similarity threshold: `evaluate` searches without one.
    """
    queries, width = scores.shape
    # A stable sort by score of the candidates already in tie-break order is the three-key sort (lexsort)
    # in half the time (LoCoMo dev, 1033 × 99: 3.5 ms against 7.0 ms a grid point).
    by_tie = np.take_along_axis(scores, pools.tie_order, axis=1)
    order = np.take_along_axis(pools.tie_order, np.argsort(-by_tie, axis=1, kind="stable"), axis=1)
    hits = np.zeros((queries, depth), dtype=bool)
    top = min(depth, width)
    hits[:, :top] = np.take_along_axis(pools.relevant & pools.valid, order[:, :top], axis=1)
    rows = np.flatnonzero(pools.duplicates)
    hits[rows] = False
    n_valid = pools.valid.sum(axis=1)
    seen = np.zeros((queries, width), dtype=bool)      # by content group
    blocked = np.zeros((queries, width), dtype=bool)   # by pool position: close to a kept one
    kept = np.zeros(queries, dtype=np.int64)
    gave_way = np.zeros((queries, width), dtype=bool)  # by rank position: a near-duplicate moved to the end
    for r in range(width):
        live = rows[(kept[rows] < depth) & (r < n_valid[rows])]
        if not len(live):
            break
        pos = order[live, r]
        grp = pools.group[live, pos]
        keep = ~seen[live, grp] & ~blocked[live, pos]
        gave_way[live, r] = ~seen[live, grp] & blocked[live, pos]
        seen[live, grp] = True
        q, pos = live[keep], pos[keep]
        hits[q, kept[q]] = pools.relevant[q, pos]
        kept[q] += 1
        start = pools.close_ptr[q * width + pos]
        count = pools.close_ptr[q * width + pos + 1] - start
        if count.any():  # block the kept ones' near-duplicates
            offset = np.arange(count.sum()) - np.repeat(np.cumsum(count) - count, count)
            blocked[np.repeat(q, count), pools.close_idx[np.repeat(start, count) + offset]] = True
    for q in rows[kept[rows] < depth]:  # ran out of candidates: the near-duplicates fill the rest
        filler = order[q, np.flatnonzero(gave_way[q])][: depth - kept[q]]
        hits[q, kept[q]: kept[q] + len(filler)] = pools.relevant[q, filler]
    return hits


def point_values(pools: CandidatePools, metric: str, **point) -> np.ndarray:
    """`metric` of every query for one profile (`point`: fuse_scores' arguments)."""
    k = parse_metric(metric)[1]
    hits = kept_hits(pools, fuse_scores(pools, **point), k or pools.valid.shape[1])
    return metric_from_hits(hits, pools.n_relevant, metric)


def score_point(pools: CandidatePools, metric: str, mask: np.ndarray, **point) -> float:
    """The mean of `metric` over the queries in `mask` for one profile (`point`: fuse_scores' arguments)."""
    values = point_values(pools, metric, **point)
    return float(values[mask].mean()) if mask.any() else 0.0


def profile_point(profile: FusionProfile) -> dict:
    """A profile as `fuse_scores`' arguments."""
    return {"method": profile.method, "w_sem": profile.w_sem, "w_text": profile.w_text, "w_rec": profile.w_rec,
            "tau_s": profile.tau_s, "rrf_k": profile.rrf_k}


def _distance(point: SurfacePoint, profile: FusionProfile) -> float:
    """How far a grid point is from a profile: its weights' L1 distance, plus 3 for another method, plus a
    hundredth of the log ratio of τ (or rrf k), which only breaks ties between equal weights."""
    scale = abs(np.log(point.tau_s / profile.tau_s) if point.method == "linear" else
                np.log(point.rrf_k / profile.rrf_k))
    return (abs(point.w_sem - profile.w_sem) + abs(point.w_text - profile.w_text)
            + abs(point.w_rec - profile.w_rec) + 3 * (point.method != profile.method) + scale / 100)


def optimise(pools: CandidatePools, metric: str = "recall@10", *, baseline: FusionProfile,
             category: str | None = None,
             methods: Sequence[str] = ("linear", "rrf"), taus: Sequence[float] = DEFAULT_TAUS,
             rrf_ks: Sequence[int] = DEFAULT_RRF_KS, step: float = 0.05,
             name: str = "tuned", pool_size: int = 50,
             progress: Callable[[int, int, str], None] | None = None, stop: Stop | None = None
             ) -> OptimiseReport:
    """Score every grid point on `metric` (mean over the queries, or over one category) and return the
    best profile, whether it beats `baseline` beyond noise, and the whole surface. Equal figures go to the
    point nearest the baseline."""
    t0 = time.perf_counter()
    parse_metric(metric)
    mask = np.ones(len(pools.qids), dtype=bool) if category is None else \
        np.array([c == category for c in pools.categories])
    if not mask.any():
        raise InvalidInput(f"no query of category {category!r}; the set has "
                           f"{', '.join(sorted(set(pools.categories)))}")
    grid = [(m, w, tau, k) for m in methods
            for tau, k in ([(t, 60) for t in taus] if m == "linear" else [(86400.0, k) for k in rrf_ks])
            for w in weight_simplex(step)]
    surface = []
    for i, (method, (ws, wt, wr), tau, k) in enumerate(grid, start=1):
        if i % 20 == 1:
            check_stop(stop, "scoring profiles", i - 1, len(grid))
        point = {"method": method, "w_sem": ws, "w_text": wt, "w_rec": wr, "tau_s": tau, "rrf_k": k}
        surface.append(SurfacePoint(**point, value=score_point(pools, metric, mask, **point)))
        if progress and (i % 20 == 0 or i == len(grid)):
            progress(i, len(grid), "scoring profiles")
    top = max(surface, key=lambda p: (p.value, -_distance(p, baseline)))
    best = FusionProfile(name=name, method=top.method, w_sem=top.w_sem, w_text=top.w_text, w_rec=top.w_rec,
                         tau_s=top.tau_s, rrf_k=top.rrf_k)
    best_values = point_values(pools, metric, **profile_point(best))[mask]
    base_values = point_values(pools, metric, **profile_point(baseline))[mask]
    spread = paired_spread(best_values, base_values)
    base_value = float(base_values.mean())
    return OptimiseReport(metric=metric, category=category, best=best, best_value=top.value,
                          baseline=baseline, baseline_value=base_value, spread=spread,
                          recommended=spread.reliable,
                          verdict=verdict(spread, metric, best, top.value, baseline, base_value, category),
                          surface=surface, queries=int(mask.sum()),
                          pool_size=pool_size, seconds=time.perf_counter() - t0)


def save_best(wb: Workbench, report: OptimiseReport, name: str, *, activate_for: str | None = None
              ) -> FusionProfile:
    """Save the best profile under `name`; when an instance is given, make it that instance's active one.
    Refused when the best is not recommended: saving it would put a profile that is no better than the
    current one, as far as the labelled queries can tell, among the ones a user picks from."""
    if not report.recommended:
        raise InvalidInput(f"nothing to save: {report.verdict}")
    store = wb.profiles
    profile = store.save(report.best.model_copy(update={"name": FusionProfile(name=name).name}))
    if activate_for:
        store.activate(activate_for, profile.name)
    return profile
