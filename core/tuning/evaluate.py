"""Evaluate a fusion profile over a labelled query set: the one function the Tune page, the CLI and
the benchmarks share.

Evaluation instances are loaded once and found again by their content hash (it is part of the
instance id), so evaluating again does not re-ingest; rows embedded by another model are re-embedded.

Queries run a batch at a time (`each_query`): between batches the run reports its progress and asks its
caller's `stop` whether to go on, so a cancelled run, or a page whose tab was closed, stops within a batch
instead of searching the rest of the set.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from itertools import groupby
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
from pydantic import BaseModel, Field

from core.errors import Cancelled
from core.models import FusionProfile, ScoredMemory
from core.retrieval.hybrid import SearchRequest, default_pool, hybrid_search
from core.retrieval.memoryscope.params import ScopeParams
from core.retrieval.ranking import above_floor
from core.tuning.datasets import EvalDataset, EvalQuery
from core.tuning.measures import RANKING, SCOPE_LABEL, SCOPE_RANKING, handed_label
from core.tuning.metrics import MetricsTable, compute_metrics, metric_names

if TYPE_CHECKING:
    from core.runtime import Workbench

Progress = Callable[[int, int, str], None]  # (done, total, what is being done)
Stop = Callable[[], bool]  # asked between batches: True stops the run (`Cancelled`)
# retrieve_memory as its use case runs it (the one MCP `retrieve_memory`, HTTP /retrieve and `workbench
# retrieve` call): the ids of the memories it returns for the query, best first.
Retrieve = Callable[[EvalQuery, ScopeParams], list[str]]
BATCH = 25  # queries searched between two progress reports and stop checks
# One leg alone, beside a profile: what hybrid retrieval buys on the set (`search_type`).
LEG_LABELS = {"text": "text leg alone (BM25)", "vector": "dense leg alone (cosine)"}
T = TypeVar("T")
# The deepest cut-off: the most memories one search returns.
MAX_K = next(m.le for m in SearchRequest.model_fields["top_k"].metadata if hasattr(m, "le"))


class LoadSummary(BaseModel):
    loaded: list[str] = []
    reused: list[str] = []
    reembedded: list[str] = []
    memories: int = 0
    seconds: float = 0.0


class EvalReport(BaseModel):
    dataset: str
    kind: str
    profile: FusionProfile
    ks: list[int]
    pool_size: int
    table: MetricsTable
    queries: int
    skipped: dict[str, int]
    load: LoadSummary
    search_ms_p50: float
    search_ms_p95: float
    seconds: float
    rankings: dict[str, list[str]] = {}
    search_type: str = "hybrid"
    ranking: str = Field(RANKING, description="what the figures score, in words")
    relevance_floor: float = Field(0.0, description="RELEVANCE_FLOOR when evaluated: what `handed` applies")
    handed: MetricsTable | None = Field(None, description="recall@k of what a chat turn asking for k memories "
                                        "hands over: the top k without those under the relevance floor")
    handed_counts: dict[int, float] = Field({}, description="k: how many memories that turn hands over, "
                                            "on average over the queries")
    scope_params: dict[str, Any] | None = Field(None, description="search_type memoryscope: the op parameters "
                                                "retrieve_memory ran with, under their flat names")

    @property
    def label(self) -> str:
        """What was evaluated: the profile, one leg alone (its weights then play no part), or retrieve_memory's
        output with the profile."""
        if self.search_type == "memoryscope":
            return f"{self.profile.name}: {SCOPE_LABEL}"
        return LEG_LABELS.get(self.search_type, self.profile.name)

    @property
    def depth_note(self) -> str | None:
        """Which cut-offs are deeper than any ranking went, and why, so recall@300 over 10 candidates is not
        read as a top 300; None when every cut-off was reached."""
        deepest = max(map(len, self.rankings.values()), default=0)
        over = [k for k in self.ks if k > deepest]
        if not over:
            return None
        cutoffs = ", ".join(map(str, over))
        why = (f"the pool size {self.pool_size} (candidates from each leg) limits them: raise it (--pool-size) "
               "to rank deeper" if self.pool_size < over[-1] else "the instance holds no more matches")
        if self.search_type == "memoryscope":
            why = ("retrieve_memory returned no more: fuse_rerank's fuse_score_threshold (or retrieve_memory_op's "
                   "threshold_score) left the rest out, or the instance holds no more matches")
        return (f"{'Cut-off' if len(over) == 1 else 'Cut-offs'} {cutoffs} {'goes' if len(over) == 1 else 'go'} "
                f"deeper than any ranking: the longest held {deepest} memories, so @{over[-1]} counts no more "
                f"than those; {why}.")

    @property
    def pool_label(self) -> str:
        """The candidates its ranking drew: "50 candidates per leg, a chat turn's for 25 memories"; for
        retrieve_memory's output, its own op parameter's."""
        if self.search_type == "memoryscope":
            return f"{self.pool_size} candidates per leg (retrieve_memory_op's pool_size)"
        return pool_label(self.pool_size, max(self.ks))

    @property
    def handed_label(self) -> str:
        """"handed to chat: floor 0.33 applied"."""
        return handed_label(self.relevance_floor)

    def value(self, metric: str, category: str = "overall") -> float:
        return self.table.value(metric, category)


def pool_label(pool: int, deepest: int) -> str:
    """"50 candidates per leg, a chat turn's for 25 memories" when `pool` is what a chat turn asking for the
    `deepest` memories draws (`default_pool`), so the ranking is that turn's; else "40 candidates per leg"."""
    chat = default_pool(deepest) == pool
    return f"{pool} candidates per leg" + (f", a chat turn's for {deepest} memor{'y' if deepest == 1 else 'ies'}"
                                           if chat else "")


def check_stop(stop: Stop | None, what: str, done: int, total: int) -> None:
    if stop is not None and stop():
        raise Cancelled(f"{what} cancelled after {done:,} of {total:,}")


def each_query(fn: Callable[[EvalQuery], T], queries: Sequence[EvalQuery], what: str,
               progress: Progress | None = None, stop: Stop | None = None) -> list[T]:
    """`fn` of every query, in order, on 4 threads (the pool has 8 connections; the rest are the app's).

    A batch at a time, so nothing is left running when `stop` says so or `progress` raises (Streamlit
    raises there when the user reruns the page or closes it)."""
    out: list[T] = []
    with ThreadPoolExecutor(max_workers=4) as ex:
        for start in range(0, len(queries), BATCH):
            check_stop(stop, what, start, len(queries))
            out += ex.map(fn, queries[start:start + BATCH])
            if progress:
                progress(len(out), len(queries), what)
    return out


def ensure_loaded(wb: Workbench, dataset: EvalDataset, progress: Progress | None = None,
                  stop: Stop | None = None) -> LoadSummary:
    """Load each corpus of the dataset into its instance unless it is already there (same content
    hash, same row count); re-embed rows made by another embedding model."""
    t0 = time.perf_counter()
    index = wb.index
    summary = LoadSummary()
    total = sum(len(c.records) for c in dataset.corpora)
    done = 0
    for corpus in dataset.corpora:
        check_stop(stop, "loading the corpora", done, total)
        have = index.count(corpus.instance)
        if have == len(corpus.records):
            if index.count(corpus.instance, model=wb.embedder.name) < have:
                index.reembed(corpus.instance)
                summary.reembedded.append(corpus.instance)
            else:
                summary.reused.append(corpus.instance)
        else:
            if have:
                index.delete_instance(corpus.instance)
            index.bulk_load(corpus.records)
            summary.loaded.append(corpus.instance)
            summary.memories += len(corpus.records)
        done += len(corpus.records)
        if progress:
            progress(done, total, f"loading {corpus.instance}")
    summary.seconds = time.perf_counter() - t0
    return summary


def handed_ranking(found: list[ScoredMemory], floor: float, search_type: str) -> list[str | None]:
    """A chat turn's top k, `found`, with None in the place of each memory it leaves out (`above_floor`, the
    check ui_remember makes over its top k): what it hands to synthesis. The places are kept because chat
    cuts at k before the floor, so a memory at rank k + 1 never moves up."""
    kept = {m.memory.id for m in above_floor(found, floor, search_type)[0]}
    return [m.memory.id if m.memory.id in kept else None for m in found]


# A query's searches as chat makes them, best first: a function of (top_k, pool_size) giving the results.
ChatSearch = Callable[[int, int | None], list[ScoredMemory]]


def handed_by_k(search: ChatSearch, ranked: list[ScoredMemory], ks: tuple[int, ...], pool_size: int,
                floor: float, search_type: str) -> dict[int, list[str | None]]:
    """k: what a chat turn asking for k memories hands to synthesis (`handed_ranking` of its top k). Chat
    names no pool size, so each leg gives it `default_pool(k)` candidates, fewer than the evaluation's for a
    small k, and they may rank otherwise: a relevant memory the evaluated ranking holds at 3 was left out of
    a top 5 drawn from 10 candidates a leg. So each k is searched as chat searches, one search for the
    ks sharing a pool (the first k of a longer top k of the same candidates are the same), `ranked` reused
    where the evaluation's request is chat's."""
    out: dict[int, list[str | None]] = {}
    for pool, group in groupby(sorted(ks), key=default_pool):
        group = list(group)
        found = ranked if pool == pool_size and group[-1] <= len(ranked) else search(group[-1], None)
        # Whether a turn hands anything depends on its own top k's best, so each k is held to the floor apart.
        out |= {k: handed_ranking(found[:k], floor, search_type) for k in group}
    return out


def handed_table(relevant: dict[str, list[str]], handed: dict[str, dict[int, list[str | None]]],
                 categories: dict[str, str], ks: tuple[int, ...]) -> MetricsTable:
    """recall@k of what chat hands over, each k from its own searches (`handed_by_k`), in one table."""
    tables = [compute_metrics(relevant, {q: by_k[k] for q, by_k in handed.items()}, categories, [f"recall@{k}"])
              for k in ks]
    rows = [row.model_copy(update={"values": {m: v for t in tables for m, v in t.rows[i].values.items()}})
            for i, row in enumerate(tables[0].rows)]
    per_query = {q: {m: v for t in tables for m, v in t.per_query[q].items()} for q in tables[0].per_query}
    return MetricsTable(metrics=[f"recall@{k}" for k in ks], rows=rows, per_query=per_query)


def handed_counts(handed: dict[str, dict[int, list[str | None]]], ks: tuple[int, ...]) -> dict[int, float]:
    """k: the mean number of memories handed over when chat asks for k."""
    counts = [[sum(d is not None for d in by_k[k]) for by_k in handed.values()] for k in ks]
    return {k: float(np.mean(c)) if c else 0.0 for k, c in zip(ks, counts, strict=True)}


def search_request(q: EvalQuery, dataset: EvalDataset, profile: FusionProfile, top_k: int,
                   pool_size: int | None, search_type: str = "hybrid") -> SearchRequest:
    return SearchRequest(query=q.query, instance=q.instance, top_k=top_k, pool_size=pool_size,
                         profile=profile, search_type=search_type,
                         include_shared=dataset.include_shared)


def evaluate(wb: Workbench, dataset: EvalDataset, profile: FusionProfile,
             ks: tuple[int, ...] = (1, 5, 10, 25), *,
             pool_size: int = 50, progress: Progress | None = None, stop: Stop | None = None,
             search_type: str = "hybrid") -> EvalReport:
    """Retrieve the top max(ks) for every query with `profile` and score them against the labels: the
    ranking `hybrid_search` returns, which ui_remember uses, not MemoryScope's after fuse_rerank (`RANKING`).
    Beside it, `handed`: the recall of what chat hands over from that ranking, the relevance floor applied
    (`handed_ranking`), since a relevant memory under the floor never reaches the prompt.

    `search_type` "vector" or "text" runs one leg alone (the benchmarks' dense baseline)."""
    t0 = time.perf_counter()
    ks = tuple(sorted(set(ks)))
    load = ensure_loaded(wb, dataset, progress, stop)
    wb.embedder.embed_batch([q.query for q in dataset.queries])  # one batch; the searches hit the cache
    n = len(dataset.queries)
    floor = wb.settings.relevance_floor

    def search(q: EvalQuery, top_k: int, pool: int | None) -> list[ScoredMemory]:
        return hybrid_search(wb.search_pool(), wb.embedder, search_request(q, dataset, profile, top_k, pool,
                                                                           search_type), now=q.now).results

    def one(q: EvalQuery) -> tuple[list[ScoredMemory], float, dict[int, list[str | None]]]:
        t = time.perf_counter()
        results = search(q, ks[-1], pool_size)
        ms = (time.perf_counter() - t) * 1000
        return results, ms, handed_by_k(lambda k, pool: search(q, k, pool), results, ks, pool_size, floor,
                                        search_type)

    answers = each_query(one, dataset.queries, "retrieving", progress, stop)
    ranked = {q.qid: [s.memory.id for s in results] for q, (results, _, _) in zip(dataset.queries, answers,
                                                                                   strict=True)}
    handed = {q.qid: by_k for q, (_, _, by_k) in zip(dataset.queries, answers, strict=True)}
    timings = [ms for _, ms, _ in answers]
    relevant, categories = {q.qid: q.relevant for q in dataset.queries}, {q.qid: q.category for q in dataset.queries}
    table = compute_metrics(relevant, ranked, categories, metric_names(ks))
    return EvalReport(dataset=dataset.name, kind=dataset.kind, profile=profile, ks=list(ks),
                      pool_size=pool_size, relevance_floor=floor,
                      handed=handed_table(relevant, handed, categories, ks),
                      handed_counts=handed_counts(handed, ks),
                      table=table, queries=n, skipped=dataset.skipped, load=load,
                      search_ms_p50=float(np.percentile(timings, 50)) if timings else 0.0,
                      search_ms_p95=float(np.percentile(timings, 95)) if timings else 0.0,
                      seconds=time.perf_counter() - t0, rankings=ranked, search_type=search_type)


def scope_cutoffs(ks: tuple[int, ...], params: ScopeParams) -> tuple[int, ...]:
    """The cut-offs retrieve_memory's output is scored at: those of `ks` below the most memories it returns
    (retrieve_memory_op's top_k, then fuse_rerank's output_memory_max_count), and that most itself, so
    recall@25 is never read off 5 memories."""
    most = min(params.retrieve_memory_op.top_k, params.fuse_rerank_op.output_memory_max_count)
    return tuple(sorted({k for k in ks if k < most} | {most}))


def query_params(q: EvalQuery, params: ScopeParams) -> ScopeParams:
    """`params` for one query: a query asked at a known time (LoCoMo's) is set at that time through
    set_query_op's timestamp, as the ranking's evaluation measures recency from it."""
    if q.now is None:
        return params
    return params.model_copy(update={"set_query_op": params.set_query_op.model_copy(
        update={"timestamp": int(q.now.timestamp())})})


def evaluate_memoryscope(wb: Workbench, dataset: EvalDataset, profile: FusionProfile, retrieve: Retrieve,
                         ks: tuple[int, ...] = (1, 5, 10, 25), *, params: ScopeParams | None = None,
                         progress: Progress | None = None, stop: Stop | None = None) -> EvalReport:
    """Score what an agent gets: for every query, the memories `retrieve` (retrieve_memory's use case) returns
    with `profile` and the op parameters `params`: MemoryScope's output after fuse_rerank's type ratios, time
    ratio and threshold, not the fusion ranking `evaluate` scores. Cut at the most it returns
    (`scope_cutoffs`); MRR is that of its whole output."""
    t0 = time.perf_counter()
    params = params or ScopeParams()
    ks = scope_cutoffs(ks, params)
    load = ensure_loaded(wb, dataset, progress, stop)
    wb.embedder.embed_batch([q.query for q in dataset.queries])  # one batch; the searches hit the cache

    def one(q: EvalQuery) -> tuple[list[str], float]:
        t = time.perf_counter()
        return retrieve(q, query_params(q, params)), (time.perf_counter() - t) * 1000

    answers = each_query(one, dataset.queries, "retrieve_memory", progress, stop)
    ranked = {q.qid: ids for q, (ids, _) in zip(dataset.queries, answers, strict=True)}
    timings = [ms for _, ms in answers]
    relevant, categories = {q.qid: q.relevant for q in dataset.queries}, {q.qid: q.category for q in dataset.queries}
    return EvalReport(dataset=dataset.name, kind=dataset.kind, profile=profile, ks=list(ks),
                      pool_size=params.retrieve_memory_op.pool_size, ranking=SCOPE_RANKING,
                      table=compute_metrics(relevant, ranked, categories, metric_names(ks)),
                      queries=len(dataset.queries), skipped=dataset.skipped, load=load,
                      search_ms_p50=float(np.percentile(timings, 50)) if timings else 0.0,
                      search_ms_p95=float(np.percentile(timings, 95)) if timings else 0.0,
                      seconds=time.perf_counter() - t0, rankings=ranked, search_type="memoryscope",
                      scope_params=params.flat())
