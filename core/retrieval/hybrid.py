"""Hybrid retrieval over the memory index: a vector leg and a text leg in one SQL statement.

The database does the heavy lifting: the vector leg is an HNSW scan of the instance's partition,
the text leg BM25 over the memory's words, its conversation neighbours' and its date's, read from
impact-ordered postings (`core.index.text`); their union comes back with each candidate's
cosine similarity, text score and per-leg ranks. Ranking is then the pure maths of
`core.retrieval.ranking` (fusion, identical and near-duplicate texts, top k).
"""

from __future__ import annotations

import math
import time
from datetime import UTC, datetime
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator

from core.embeddings import Embedder
from core.ids import Id, pg_json
from core.index.partitions import searched_partitions
from core.index.records import ROW_COLUMNS, row_from_tuple
from core.models import DEFAULT_PROFILE, PRESET_PROFILES, FusionProfile, ScoredMemory
from core.retrieval.fusion import Candidate
from core.retrieval.hybrid_sql import candidate_statement, searched_instances
from core.retrieval.ranking import NEAR_DUPLICATE, CandidatePool, LeftOut, Leg, cut_legs, legs, rank_pool
from core.retrieval.speakers import names_speaker, query_words, speaker_of

POOL_MIN = 10
# The most candidates a leg is fetched with to find `SearchRequest.pool` that the profile retrieves
# (`fetch_pool`); the HNSW beam's ceiling too.
POOL_MAX = 1000
# The HNSW search beam (`hnsw.ef_search`) when the vector pool is smaller. With the graph's shape
# (`core.index.vectors.HNSW_WITH`) a beam of 64 finds 97.1 % of the exact 20 nearest at 100,000 memories
# and 96.3 % at 500,000, against 97.3 % and 96.5 % for pgvector's default graph and beam (16 / 64, beam
# 40), in the same time; the whole search, asked in turn with mem0's, took 1.42 times mem0's time with
# either. A graph built before with the default shape finds 98.1 % with it.
HNSW_BEAM_MIN = 64


class SearchRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(max_length=100_000)
    instance: Id
    top_k: int = Field(5, ge=1, le=1000)
    pool_size: int | None = Field(None, ge=1, le=2000,
                                  description="candidates the profile retrieves taken from each leg before "
                                              "fusion; by default max(10, 2 * top_k), see `pool`")
    search_type: Literal["hybrid", "vector", "text"] = Field(
        "hybrid", description="which legs run; one leg alone ranks by that leg only, without the speaker and "
                              "chain parts, to show what the leg finds by itself")
    distinct: bool = Field(True, description="identical texts count once (the best-scored copy)")
    near_duplicate: float = Field(NEAR_DUPLICATE, gt=0, le=1, allow_inf_nan=False,
                                  description="a result whose cosine to a better one with the same numbers, "
                                              "names and negation reaches this gives way (1 keeps "
                                              "near-duplicates)")
    feedback: float = Field(0.25, ge=0, le=4, allow_inf_nan=False,
                            description="weight of the mean vector of the best text matches added to the "
                                        "query's vector (pseudo-relevance feedback): the vector leg searches "
                                        "with it and `semantic` is the cosine to it; 0 = the query alone")
    profile: FusionProfile = PRESET_PROFILES[DEFAULT_PROFILE]
    similarity_threshold: float = Field(0.0, ge=0, le=1, allow_inf_nan=False,
                                        description="minimum cosine of the query's own vector to a memory "
                                                    "(`similarity`)")
    kinds: list[str] | None = None
    chain_id: str | None = None
    tags: list[str] | None = Field(None, description="keep memories carrying any of these tags")
    since: datetime | None = None
    until: datetime | None = None
    exclude_ids: list[str] = []
    include_shared: bool = True

    @property
    def pool(self) -> int:
        """Candidates per leg that the profile retrieves (`fetch_pool`): two per result asked for, at
        least 10. On LoCoMo dev (top 25 ranked from each leg's first n; R@5 of a top-5 search is that
        list's first 5), n = 8 / 10 / 20 / 50 gave R@5 0.708 / 0.711 / 0.713 / 0.710 and R@10 0.749 /
        0.767 / 0.790 / 0.789: a result needs two candidates a leg, and more buy nothing. Each
        candidate costs a row read, its vector's transfer and its share of fusion: at 100,000 memories
        a top-5 search's p50 was 0.5–1.6 ms lower with 10 than with 20 (benchmarks/README.md)."""
        return self.pool_size or max(POOL_MIN, 2 * self.top_k)

    @field_validator("query", "kinds", "chain_id", "tags", "exclude_ids")
    @classmethod
    def _storable(cls, v):  # sent as SQL parameters: Postgres refuses NUL in text
        return pg_json(v)


class SearchResult(BaseModel):
    results: list[ScoredMemory]
    left_out: list[LeftOut] = Field(description="near-duplicates of kept results that fell past top_k")
    candidates: int
    embed_ms: float
    search_ms: float


def hybrid_search(pool, embedder: Embedder, req: SearchRequest, *,
                  now: datetime | None = None) -> SearchResult:
    """Embed the query, fetch its candidate pool (`fetch_pool`), rank it (`core.retrieval.ranking.rank`)."""
    t0 = time.perf_counter()
    qvec = embedder.embed(req.query)
    t1 = time.perf_counter()
    found = fetch_pool(pool, embedder, req, qvec)
    kept = rank_pool(found, req.profile, now or datetime.now(UTC), top_k=req.top_k,
                     similarity_threshold=req.similarity_threshold, distinct=req.distinct,
                     near_duplicate=req.near_duplicate, speaker_and_chain=req.search_type == "hybrid")
    t2 = time.perf_counter()
    return SearchResult(results=kept.results, left_out=kept.left_out, candidates=len(found),
                        embed_ms=(t1 - t0) * 1000,
                        search_ms=(t2 - t1) * 1000)


# The search's settings, local to the transaction its pipeline makes (statements sent before one Sync
# run in one transaction): they end with it, committed or failed, and the connection keeps its own.
SEARCH_SETTINGS = ("SELECT set_config('hnsw.ef_search', %s, true), "
                   "set_config('plan_cache_mode', 'force_generic_plan', true)")


def fetch_pool(pool, embedder: Embedder, req: SearchRequest, qvec=None) -> CandidatePool:
    """The query's candidate pool: each leg's candidates down to its `req.pool`-th that the profile
    retrieves (`core.retrieval.ranking.retrievable`), before fusion in the database's order, with their
    stored vectors and the texts of each one's immediate conversation neighbours (for the near-duplicate
    pass). `qvec` is the query's embedding when already computed. Chat, the Tune comparison and the
    optimiser rank what this returns (`ranking.rank`).

    Formation hides questions, acknowledgements and the messages its observations replace, and in a chat
    they are most of what lies near a new question: what the user asked before. Taken `req.pool` a leg
    and dropped after fusion, they left a top-5 search in the demo's chat instance (78 % of its memories
    hidden) with 1.7 memories on average, where there were 5 to give. So a leg that comes back full
    with fewer than `req.pool` candidates the profile retrieves is fetched again, larger by the share it
    lacked (`_grown`, up to POOL_MAX), and each leg is then cut after its `req.pool`-th
    (`ranking.cut_legs`), so the pool holds as many a leg whether it took one statement (`_candidates`)
    or more."""
    if qvec is None:
        qvec = embedder.embed(req.query)
    partitions = searched_partitions(pool, searched_instances(req.instance, req.include_shared))
    if not partitions:  # no memory in any searched instance yet
        return CandidatePool([])
    sizes = (req.pool, req.pool)  # (vector leg, text leg)
    while True:
        found = _candidates(pool, embedder, req, qvec, partitions, sizes)
        vector, text = legs(found, req.profile, req.pool)
        grown = (_grown(vector, sizes[0], req.pool), _grown(text, sizes[1], req.pool))
        if grown == sizes:
            return cut_legs(found, vector, text)
        sizes = grown


def _grown(leg: Leg, size: int, want: int) -> int:
    """A leg's next size: the same when it holds `want` candidates the profile retrieves, came back with
    fewer than `size` (it has no more) or reached POOL_MAX; otherwise larger by the share it lacked, with
    a quarter more, so one more statement is usually enough (the demo's chat: 2.0 statements a search)."""
    if leg.found < size or leg.retrieved >= want or size >= POOL_MAX:
        return size
    share = max(1, leg.retrieved) / leg.found
    return min(POOL_MAX, max(2 * size, math.ceil(1.25 * want / share)))


def _candidates(pool, embedder: Embedder, req: SearchRequest, qvec, partitions: dict[str, str],
                sizes: tuple[int, int]) -> CandidatePool:
    """The first `sizes` candidates of (the vector leg, the text leg), from one statement
    (`core.retrieval.hybrid_sql`)."""
    stmt, params = candidate_statement(embedder, req, qvec, partitions, sizes)
    with pool.connection() as conn:
        # The statement is prepared and runs its generic plan: a custom plan costs ~1 ms of planning per
        # query and was no better (10,000 memories: 5.1 -> 3.5 ms a query). The HNSW beam is the vector
        # pool, at least HNSW_BEAM_MIN. Both settings go with the statement in one round trip (a
        # pipeline) and last only for it (`SEARCH_SETTINGS`): saving and restoring them took two more
        # statements a search. Binary results, so stored vectors parse as arrays at no cost (text
        # parsing took ~1 ms).
        with conn.pipeline():
            conn.execute(SEARCH_SETTINGS, (str(min(POOL_MAX, max(HNSW_BEAM_MIN, params["vpool"]))),))
            cur = conn.execute(stmt, params, binary=True, prepare=True)
        rows = cur.fetchall()
    n = len(ROW_COLUMNS.split(","))
    words = query_words(req.query)
    candidates, vectors, adjacent = [], {}, {}
    ideal = rows[0][-1] if rows else None  # the text leg's ideal match for the query, on every row
    for r in rows:
        memory = row_from_tuple(r)
        cosine, query_cosine, text_raw, vector_rank, text_rank = r[n + 3:-1]
        candidates.append(Candidate(memory=memory, cosine=float(cosine or 0.0), text_raw=float(text_raw or 0.0),
                                    vector_rank=vector_rank, text_rank=text_rank,
                                    query_cosine=float(query_cosine or 0.0),
                                    speaker_named=names_speaker(words, speaker_of(memory))))
        key = (memory.instance, memory.id)
        if r[n] is not None:
            vec = r[n].to_numpy() if hasattr(r[n], "to_numpy") else r[n]  # pgvector's Vector, or an array
            vectors[key] = np.asarray(vec, dtype=np.float32)
        adjacent[key] = frozenset(t for t in r[n + 1:n + 3] if t)
    return CandidatePool(candidates, vectors, adjacent, text_ideal=float(ideal) if ideal else None)
