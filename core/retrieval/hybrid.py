"""Hybrid retrieval over the memory index: a vector leg and a text leg in one SQL statement.

The database does the heavy lifting: the vector leg is an HNSW scan of the instance's partition,
the text leg BM25 over the memory's words, its conversation neighbours' and its date's, read from
impact-ordered postings (`core.index.text`); their union comes back with each candidate's
cosine similarity, text score and per-leg ranks. Ranking is then the pure maths of
`core.retrieval.ranking` (fusion, identical and near-duplicate texts, top k). Who is who is read too
(`core.retrieval.relations`): a role the query asks about ("my daughter") by one short statement before,
on the same connection, and the statement searches the names that hold it; a name the query holds by the
statement itself, which searches its role.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Literal, NamedTuple

import numpy as np
import psycopg
from pydantic import BaseModel, ConfigDict, Field, field_validator

from core.embeddings import Embedder
from core.ids import Id, pg_json
from core.index.partitions import searched_partitions
from core.index.records import ROW_WIDTH, row_from_tuple
from core.models import DEFAULT_PROFILE, PRESET_PROFILES, FusionProfile, ScoredMemory
from core.retrieval.attributes import attribute_ask, attribute_words
from core.retrieval.fusion import BOOSTED_AMONG, TIME_BOOST, Candidate
from core.retrieval.hybrid_sql import FILTERS, candidate_statement, searched_instances, shown_by
from core.retrieval.ranking import (
    NEAR_DUPLICATE,
    CandidatePool,
    LeftOut,
    boosted_by_time,
    rank_pool,
    time_boost_note,
)
from core.retrieval.relations import Related, related_words
from core.retrieval.speakers import names_speaker, query_words, speaker_of
from core.retrieval.timeparse import TimeHint, parse_time_hint
from core.services import apply_settings, session_settings

POOL_MIN = 10


def default_pool(top_k: int) -> int:
    """The candidates a leg gives a search for `top_k` that names no pool size, as a chat turn's
    (`SearchRequest.pool`)."""
    return max(POOL_MIN, 2 * top_k)
# How far `fetch_pool` looks for `SearchRequest.pool` memories that the profile retrieves and the request's
# filters pass: the widest HNSW beam (`hnsw.ef_search`) of the vector leg, and the most postings the text
# leg reads of a query word.
POOL_MAX = 1000
POSTINGS_MAX = 4 * POOL_MAX
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
                                              "names, negation, code spans, paths and file names reaches "
                                              "this gives way (1 keeps near-duplicates)")
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
    since: datetime | None = Field(None, description="keep memories whose time (see `time_of`) is at or "
                                                     "after this")
    until: datetime | None = Field(None, description="keep memories whose time (see `time_of`) is before "
                                                     "this")
    time_of: Literal["stored", "event"] = Field(
        "stored", description="the time since and until read: 'stored', when the memory was stored (said, "
                              "for a message: what was said before a moment); 'event', when what it says "
                              "happened, its own event time when it has one (a date given with it or named "
                              "in it, to the hour), else when it was stored (what a period asked about "
                              "holds)")
    exclude_ids: list[str] = []
    include_shared: bool = True
    time_boost: bool = Field(True, description="the time the query names ('What did I do last March?'), read "
                                               "relative to the search's `now`, ranks the memories of then "
                                               f"higher: +{TIME_BOOST:g} among the best {BOOSTED_AMONG}, none "
                                               "left out for it (`SearchResult.time`). Only in a hybrid search "
                                               "without since or until (a window already holds the time asked)")

    @property
    def pool(self) -> int:
        """Candidates per leg that the profile retrieves (`fetch_pool`): two per result asked for, at
        least 10. On LoCoMo dev (top 25 ranked from each leg's first n; R@5 of a top-5 search is that
        list's first 5), n = 8 / 10 / 20 / 50 gave R@5 0.708 / 0.711 / 0.713 / 0.710 and R@10 0.749 /
        0.767 / 0.790 / 0.789: a result needs two candidates a leg, and more buy nothing. Each
        candidate costs a row read, its vector's transfer and its share of fusion: at 100,000 memories
        a top-5 search's p50 was 0.5–1.6 ms lower with 10 than with 20 (benchmarks/README.md)."""
        return self.pool_size or default_pool(self.top_k)

    # The time filters as `hybrid_sql.FILTERS` reads them: the stored time's bounds, or the event window.
    @property
    def stored_since(self) -> datetime | None:
        return self.since if self.time_of == "stored" else None

    @property
    def stored_until(self) -> datetime | None:
        return self.until if self.time_of == "stored" else None

    @property
    def event_window(self) -> tuple[datetime | None, datetime | None] | None:
        return (self.since, self.until) if self.time_of == "event" and (self.since or self.until) else None

    @property
    def boosts_time(self) -> bool:
        """Whether the time the query names may re-rank it (`time_boost`)."""
        return self.time_boost and self.search_type == "hybrid" and self.since is None and self.until is None

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
    time: TimeHint | None = Field(None, description="the time the query names, whose memories ranked higher "
                                                    "(`SearchRequest.time_boost`); None when it names none or "
                                                    "the boost did not apply")

    def time_note(self, asked: str = "query") -> str | None:
        """The reason line of the time boost (`ranking.time_boost_note`), None without one."""
        return None if self.time is None else time_boost_note(self.time, self.results, asked)


def hybrid_search(pool, embedder: Embedder, req: SearchRequest, *,
                  now: datetime | None = None) -> SearchResult:
    """Embed the query, fetch its candidate pool (`fetch_pool`), rank it (`core.retrieval.ranking.rank`).

    When the query names a time (`SearchRequest.boosts_time`; read relative to `now`, the moment it is asked
    at, by default this one), the best BOOSTED_AMONG are ranked, those of then moved up by TIME_BOOST
    (`ranking.boosted_by_time`), and the first top_k kept: the pool a search for BOOSTED_AMONG draws from
    unless the request names its size, in the same one statement. A query naming no time costs a regular
    expression (`timeparse.has_time_keyword`)."""
    now = now or datetime.now(UTC)
    t0 = time.perf_counter()
    qvec = embedder.embed(req.query)
    t1 = time.perf_counter()
    asked, searched = time_asked(req, now)
    found = fetch_pool(pool, embedder, searched, qvec)
    kept = rank_pool(found, req.profile, now, top_k=searched.top_k,
                     similarity_threshold=req.similarity_threshold, distinct=req.distinct,
                     near_duplicate=req.near_duplicate, speaker_and_chain=req.search_type == "hybrid")
    results, left_out = kept.results, kept.left_out
    if asked is not None:
        results = boosted_by_time(results, asked)[:req.top_k]
        shown = {m.memory.id for m in results}  # the near-duplicates of results still shown
        left_out = [x for x in left_out if x.like_id in shown]
    t2 = time.perf_counter()
    return SearchResult(results=results, left_out=left_out, candidates=len(found),
                        embed_ms=(t1 - t0) * 1000, search_ms=(t2 - t1) * 1000, time=asked)


def time_asked(req: SearchRequest, now: datetime) -> tuple[TimeHint | None, SearchRequest]:
    """The time the query names, when it may re-rank the results (`SearchRequest.boosts_time`), and the
    request whose pool is drawn: with a time, that of a search for BOOSTED_AMONG (the boost re-sorts that
    many), unless the request asks for more. Shared by `hybrid_search` and the Tune page's rankings
    (`core.tuning.compare`), which show what a chat turn retrieves."""
    asked = parse_time_hint(req.query, now) if req.boosts_time else None
    if asked is None or req.top_k >= BOOSTED_AMONG:
        return asked, req
    return asked, req.model_copy(update={"top_k": BOOSTED_AMONG})


# The search's settings. `plan_cache_mode`: the statement is prepared and runs its generic plan (see
# `_candidates`). `random_page_cost` 1.1 rather than Postgres's 4, the usual value when the pages read are
# in memory or on an SSD, as a searched index's are: with 4, pgvector 0.8's cost estimate makes the planner
# read a small partition whole rather than search its HNSW index (LoCoMo's ~600-turn conversations: the
# vector leg 1.1 ms exact against 0.3 ms by the index, the statement 4.3 against 3.2 ms as the client
# sees it, the same 1,023 questions alternating between two connections). `hnsw.ef_search`: the beam.
# The Workbench's search pool (`Workbench.search_pool`) keeps them for its connections' whole session
# (`SEARCH_SESSION`), so a search sends only its statement. On another connection, or with a wider beam,
# they go with the statement in one round trip (a pipeline) and last only for it (`apply_settings` with
# `local`, to the transaction the pipeline makes: statements sent before one Sync run in one transaction);
# the connection keeps its own. Sending them so cost 0.08-0.12 ms of the statement's 1.4-1.6 ms as the
# client sees it (reused 100,000 memories, 500 questions, one connection, both ways in rotation).
SEARCH_SESSION = {"plan_cache_mode": "force_generic_plan", "random_page_cost": "1.1",
                  "hnsw.ef_search": str(HNSW_BEAM_MIN)}


def fetch_pool(pool, embedder: Embedder, req: SearchRequest, qvec=None) -> CandidatePool:
    """The query's candidate pool: each leg's first `req.pool` candidates that the profile retrieves
    (`core.retrieval.ranking.retrievable`), before fusion in the database's order, with their stored
    vectors and the texts of each one's immediate conversation neighbours (for the near-duplicate pass).
    `qvec` is the query's embedding when already computed. Chat, the Tune comparison and the optimiser
    rank what this returns (`ranking.rank`).

    Formation hides questions, acknowledgements and the messages its observations replace, and in a chat
    they are most of what lies near a new question: what the user asked before. Taken `req.pool` a leg
    and dropped after fusion, they left a top-5 search in the demo's chat instance (78 % of its memories
    hidden) with 1.7 memories on average, where there were 5 to give. So each leg leaves them out in
    the statement (`hybrid_sql.RETRIEVABLE`). The vector leg picks among the HNSW scan's nearest (its
    beam, `hnsw.ef_search`) and the text leg among each query word's first postings: when a leg keeps
    fewer than `req.pool` and there was more to look at, the statement runs again looking further
    (`Reach.widened`, up to POOL_MAX and POSTINGS_MAX).

    A hybrid search also searches the words the query's relations add (`core.retrieval.relations`): the
    names of a role it asks about ("my daughter" → "Inês"), read once before the first statement, and the
    roles of the names it holds, which the statement reads itself; and the other words of an attribute it
    asks about ("where … live" → "moved", `core.retrieval.attributes`)."""
    if qvec is None:
        qvec = embedder.embed(req.query)
    partitions = searched_partitions(pool, searched_instances(req.instance, req.include_shared))
    if not partitions:  # no memory in any searched instance yet
        return CandidatePool([])
    shown = shown_by(req.profile)
    # Only a leg whose statement leaves memories out may come back short with more to find.
    vector_filtered = req.search_type != "text" and (
        shown is not None or any(getattr(req, field) for _, field, _ in FILTERS))
    text_filtered = req.search_type != "vector" and shown is not None
    reach = Reach(beam=min(POOL_MAX, max(HNSW_BEAM_MIN, req.pool)), postings=0)
    with pool.connection() as conn:
        asks = attribute_words(req.query) if req.search_type == "hybrid" else []
        related = related_words(conn, req.query, partitions) + asks if req.search_type == "hybrid" else []
        while True:
            found, said = _candidates(conn, embedder, req, qvec, partitions, shown, reach, related, bool(asks))
            wider = reach.widened(req.pool, found, said, vector_filtered, text_filtered)
            if wider == reach:  # relevance counts a memory stating an attribute the query names as its word
                return replace(found, attribute=attribute_ask(conn, req.query)) if asks else found
            reach = wider


class Said(NamedTuple):
    """What a statement says besides its candidates."""

    memories: int  # memories of the searched instances
    cut: bool  # a query word's postings were cut at the statement's bound


class Reach(NamedTuple):
    """How far a statement looks: the vector leg among the HNSW scan's `beam` nearest, the text leg in
    each query word's first `postings` postings (0: `hybrid_sql`'s own bound)."""

    beam: int
    postings: int

    def widened(self, want: int, found: CandidatePool, said: Said, vector: bool, text: bool) -> Reach:
        """The next statement's reach: wider for a leg, `vector` or `text`, that leaves memories out and
        kept fewer than `want` where there was more to look at: the beam reached fewer memories than the
        searched instances hold, or a query word's postings were cut. The beam grows by the share the leg
        lacked, with a quarter more, so one more statement is usually enough; the postings fourfold. The
        same reach when no leg wants more."""
        beam, postings = self
        kept = sum(c.vector_rank is not None for c in found.candidates)
        if vector and kept < want and beam < min(POOL_MAX, said.memories):
            beam = min(POOL_MAX, max(2 * beam, math.ceil(1.25 * want * beam / max(1, kept))))
        kept = sum(c.text_rank is not None for c in found.candidates)
        if text and kept < want and postings < POSTINGS_MAX and said.cut:
            postings = min(POSTINGS_MAX, 4 * max(postings, 100, 4 * want))
        return Reach(beam, postings)


def _candidates(conn, embedder: Embedder, req: SearchRequest, qvec, partitions: dict[str, str],
                shown: tuple[list[str], bool] | None, reach: Reach, related: Sequence[Related] = (),
                succeeds: bool = False) -> tuple[CandidatePool, Said]:
    """Each leg's first `req.pool` candidates that `shown` keeps (`hybrid_sql.shown_by`; None: all), as far
    as `reach` looks, from one statement (`core.retrieval.hybrid_sql`), the words the query's relations add
    (`related`) searched too."""
    stmt, params = candidate_statement(embedder, req, qvec, partitions, shown, reach.postings, related, succeeds)
    # The statement is prepared and runs its generic plan: a custom plan costs ~1 ms of planning per
    # query and was no better (10,000 memories: 5.1 -> 3.5 ms a query). The settings go with it unless
    # the connection's session has them (`SEARCH_SESSION`); saving and restoring them took two more
    # statements a search. Binary results, so stored vectors parse as arrays at no cost (text parsing
    # took ~1 ms).
    if session_settings(conn) == SEARCH_SESSION and reach.beam == HNSW_BEAM_MIN:
        cur = psycopg.RawCursor(conn).execute(stmt, params, binary=True, prepare=True)
    else:
        with conn.pipeline():
            apply_settings(conn, SEARCH_SESSION | {"hnsw.ef_search": str(reach.beam)}, local=True)
            cur = psycopg.RawCursor(conn).execute(stmt, params, binary=True, prepare=True)
    rows = cur.fetchall()
    words = query_words(req.query)
    candidates, vectors, adjacent = [], {}, {}
    # On every row: the text leg's ideal match for the query, the searched instances' memory count and
    # whether a query word's postings were cut; a row with no memory (no id) when there is no candidate.
    ideal, memories, cut = rows[0][-3:]
    for r in rows if rows[0][1] is not None else ():
        memory = row_from_tuple(r)
        vec, before, after, cosine, query_cosine, text_raw, vector_rank, text_rank = r[ROW_WIDTH:-3]
        candidates.append(Candidate(memory=memory, cosine=float(cosine or 0.0), text_raw=float(text_raw or 0.0),
                                    vector_rank=vector_rank, text_rank=text_rank,
                                    query_cosine=float(query_cosine or 0.0),
                                    speaker_named=names_speaker(words, speaker_of(memory))))
        key = (memory.instance, memory.id)
        if vec is not None:  # pgvector's Vector holds float32
            vectors[key] = vec.to_numpy() if hasattr(vec, "to_numpy") else np.asarray(vec, dtype=np.float32)
        adjacent[key] = tuple(t for t in (before, after) if t)
    return (CandidatePool(candidates, vectors, adjacent, text_ideal=float(ideal) if ideal else None),
            Said(int(memories or 0), bool(cut)))
