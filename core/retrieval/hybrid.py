"""Hybrid retrieval over the memory index: a vector leg and a text leg in one SQL statement.

The database does the heavy lifting: the vector leg is an HNSW scan of the instance's partition,
the text leg BM25 over the memory's words, its conversation neighbours' and its date's, read from
impact-ordered postings (`core.storage.memory_text`); their union comes back with each candidate's
cosine similarity, text score and per-leg ranks. Fusion is then the pure maths of
`core.scoring.fusion`.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Literal

import numpy as np
from psycopg import sql
from pydantic import BaseModel, ConfigDict, Field, field_validator

from core.embeddings import Embedder
from core.ids import pg_json, validate_id
from core.models import DEFAULT_PROFILE, PRESET_PROFILES, FusionProfile, ScoredMemory
from core.scoring.fusion import Candidate, fuse
from core.storage.memory_index import FEDERATION, ROW_COLUMNS, row_from_tuple
from core.storage.memory_text import text_leg

FEEDBACK_DOCS = 3  # best text matches whose vectors refine the query's (pseudo-relevance feedback)


class SearchRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(max_length=100_000)
    instance: str
    top_k: int = Field(5, ge=1, le=1000)
    pool_size: int = Field(50, ge=1, le=2000, description="candidates taken from each leg before fusion")
    search_type: Literal["hybrid", "vector", "text"] = Field("hybrid", description="which legs run")
    distinct: bool = Field(True, description="identical texts count once (the best-scored copy)")
    near_duplicate: float = Field(0.9, gt=0, le=1, allow_inf_nan=False,
                                  description="a result whose cosine to a better one reaches this is left "
                                              "out (1 keeps near-duplicates)")
    feedback: float = Field(0.5, ge=0, le=4, allow_inf_nan=False,
                            description="weight of the mean vector of the best text matches added to the "
                                        "query's vector (pseudo-relevance feedback); 0 = the query alone")
    profile: FusionProfile = PRESET_PROFILES[DEFAULT_PROFILE]
    similarity_threshold: float = Field(0.0, ge=0, le=1, allow_inf_nan=False)
    kinds: list[str] | None = None
    chain_id: str | None = None
    tags: list[str] | None = Field(None, description="keep memories carrying any of these tags")
    since: datetime | None = None
    until: datetime | None = None
    exclude_ids: list[str] = []
    include_shared: bool = True

    @field_validator("instance")
    @classmethod
    def _instance(cls, v: str) -> str:
        return validate_id(v, "instance")

    @field_validator("query", "kinds", "chain_id", "tags", "exclude_ids")
    @classmethod
    def _storable(cls, v):  # sent as SQL parameters: Postgres refuses NUL in text
        return pg_json(v)


class SearchResult(BaseModel):
    results: list[ScoredMemory]
    candidates: int
    embed_ms: float
    search_ms: float


def hybrid_search(pool, embedder: Embedder, req: SearchRequest, *, now: datetime | None = None) -> SearchResult:
    t0 = time.perf_counter()
    qvec = embedder.embed(req.query)
    t1 = time.perf_counter()
    candidates = fetch_candidates(pool, embedder, req, qvec)
    scored = fuse(candidates, req.profile, now or datetime.now(UTC))
    ranked = [s for s in (distinct_contents(scored) if req.distinct else scored)
              if s.score.semantic >= req.similarity_threshold]
    if req.near_duplicate < 1 and len(ranked) > req.top_k:
        head = ranked[: 4 * req.top_k]
        vectors, adjacent = _stored_vectors(pool, embedder, head)
        ranked = drop_near_duplicates(head, vectors, req.near_duplicate, adjacent)
    kept = ranked[: req.top_k]
    t2 = time.perf_counter()
    return SearchResult(results=kept, candidates=len(candidates), embed_ms=(t1 - t0) * 1000,
                        search_ms=(t2 - t1) * 1000)


def distinct_contents(scored: list[ScoredMemory]) -> list[ScoredMemory]:
    """Identical texts (ignoring case and spacing) are one memory: the best-scored copy stands for the
    rest, so a question asked in ten conversations does not fill the context ten times."""
    seen: set[str] = set()
    out = []
    for s in scored:
        key = " ".join(s.memory.content.casefold().split())
        if key not in seen:
            seen.add(key)
            out.append(s)
    return out


def drop_near_duplicates(ranked: list[ScoredMemory], vectors: dict[tuple[str, str], np.ndarray],
                         threshold: float, adjacent: dict[tuple[str, str], set[str]] | None = None
                         ) -> list[ScoredMemory]:
    """Greedy, best first: keep a memory unless its cosine to one already kept is >= threshold.

    Rephrasings of one question ("Got it. What did I plant?" / "What did I plant?") would otherwise
    take every context slot and push out the memory that answers it. Memories without a stored
    vector of the active model are kept. Two messages next to each other in a conversation
    (`adjacent`: the texts of each memory's immediate neighbours) are never each other's duplicate:
    a memory's vector includes the message before it (`embedding_text`), so a question and its answer
    have close vectors without saying the same thing.
    """
    adjacent = adjacent or {}
    kept: list[tuple[ScoredMemory, np.ndarray]] = []
    out: list[ScoredMemory] = []
    for s in ranked:
        key = (s.memory.instance, s.memory.id)
        vec = vectors.get(key)
        if vec is not None and any(
                float(vec @ kv) >= threshold and k.memory.content not in adjacent.get(key, ())
                and s.memory.content not in adjacent.get((k.memory.instance, k.memory.id), ())
                for k, kv in kept):
            continue
        out.append(s)
        if vec is not None:
            kept.append((s, vec))
    return out


def _stored_vectors(pool, embedder: Embedder, items: list[ScoredMemory]
                    ) -> tuple[dict[tuple[str, str], np.ndarray], dict[tuple[str, str], set[str]]]:
    """The items' stored vectors, and the texts of each one's immediate conversation neighbours."""
    with pool.connection() as conn:
        rows = conn.execute(
            "SELECT instance, id, embedding, context->'before'->>0, context->'after'->>0 FROM memory "
            "WHERE instance = ANY(%(instances)s) AND id = ANY(%(ids)s) AND embedding_model = %(model)s",
            {"instances": list({s.memory.instance for s in items}), "ids": [s.memory.id for s in items],
             "model": embedder.name}).fetchall()
    # The column is untyped `vector`, so pgvector hands back its Vector type rather than an array.
    vectors = {(r[0], r[1]): np.asarray(r[2].to_numpy() if hasattr(r[2], "to_numpy") else r[2],
                                        dtype=np.float32) for r in rows}
    return vectors, {(r[0], r[1]): {t for t in r[3:] if t} for r in rows}


def fetch_candidates(pool, embedder: Embedder, req: SearchRequest, qvec=None) -> list[Candidate]:
    """Both legs' candidates before fusion, in the database's order (the tuning optimiser fuses them
    itself for many profiles at once). `qvec` is the query's embedding when already computed."""
    if qvec is None:
        qvec = embedder.embed(req.query)
    stmt, params = _statement(embedder, req, qvec)
    with pool.connection() as conn:
        rows = conn.execute(stmt, params).fetchall()
    return [
        Candidate(memory=row_from_tuple(r), cosine=float(r[-4]) if r[-4] is not None else 0.0,
                  text_raw=float(r[-3] or 0.0), vector_rank=r[-2], text_rank=r[-1])
        for r in rows
    ]


def _statement(embedder: Embedder, req: SearchRequest, qvec) -> tuple[sql.Composed, dict]:
    instances = [req.instance] + ([FEDERATION] if req.include_shared and req.instance != FEDERATION else [])
    filters = [sql.SQL("m.instance = ANY(%(instances)s)")]
    params: dict = {"instances": instances, "q": qvec, "text": req.query,
                    "vpool": req.pool_size if req.search_type != "text" else 0,
                    "tpool": req.pool_size if req.search_type != "vector" else 0}
    if req.kinds:
        filters.append(sql.SQL("m.kind = ANY(%(kinds)s)"))
        params["kinds"] = req.kinds
    if req.chain_id:
        filters.append(sql.SQL("m.chain_id = %(chain_id)s"))
        params["chain_id"] = req.chain_id
    if req.tags:
        filters.append(sql.SQL("m.tags && %(tags)s"))
        params["tags"] = req.tags
    if req.since:
        filters.append(sql.SQL("m.created_at >= %(since)s"))
        params["since"] = req.since
    if req.until:
        filters.append(sql.SQL("m.created_at < %(until)s"))
        params["until"] = req.until
    if req.exclude_ids:
        filters.append(sql.SQL("m.id <> ALL(%(exclude)s)"))
        params["exclude"] = req.exclude_ids
    where = sql.SQL(" AND ").join(filters)
    filtered = bool(req.kinds or req.chain_id or req.tags or req.since or req.until)
    params["kpost"] = max(100, 4 * params["tpool"])
    params["fbk"] = FEEDBACK_DOCS if req.feedback > 0 else 0
    params["fbw"] = np.full(embedder.dim, req.feedback, dtype=np.float32)
    vec_type = sql.SQL("vector({})").format(sql.Literal(embedder.dim))
    model = sql.Literal(embedder.name)
    # The text leg runs first: its best matches refine the query's vector (Rocchio's pseudo-relevance
    # feedback, q' = q + feedback * mean of their vectors), which the vector leg then searches with
    # and `semantic` is the cosine to. wordllama averages word vectors, so a question's vector is
    # vague; the vectors of the memories that share its rare words say what it is about. LoCoMo, dense
    # leg alone R@10 0.466 -> see benchmarks/README.md; fused +0.01 R@5 and R@10.
    # The partial HNSW index is used only when the model and the cast appear literally, as here.
    # The last join names the instances too, so only their partitions are read.
    stmt = sql.SQL("""
WITH {text_leg}, tr AS (
    SELECT instance, id, tr, row_number() OVER (ORDER BY tr DESC, id) AS trank FROM t
), fb AS (
    SELECT avg(m.embedding::{vt}) AS centroid
    FROM (SELECT instance, id FROM t ORDER BY tr DESC, id LIMIT %(fbk)s) x
    JOIN memory m ON m.instance = x.instance AND m.id = x.id AND m.instance = ANY(%(instances)s)
    WHERE m.embedding_model = {model}
), qv AS (
    SELECT coalesce(%(q)s::{vt} + fb.centroid * %(fbw)s::{vt}, %(q)s::{vt}) AS q FROM fb
), v AS (
    SELECT m.instance, m.id, (m.embedding::{vt}) <=> (SELECT q FROM qv) AS dist
    FROM memory m
    WHERE {where} AND m.embedding_model = {model}
    ORDER BY (m.embedding::{vt}) <=> (SELECT q FROM qv)
    LIMIT %(vpool)s
), vr AS (
    SELECT instance, id, row_number() OVER (ORDER BY dist, id) AS vrank FROM v
), c AS (
    SELECT instance, id FROM vr UNION SELECT instance, id FROM tr
)
SELECT {cols},
       CASE WHEN m.embedding_model = {model}
            THEN 1 - ((m.embedding::{vt}) <=> (SELECT q FROM qv)) END AS cosine,
       tr.tr, vr.vrank, tr.trank
FROM c
JOIN memory m ON m.instance = c.instance AND m.id = c.id AND m.instance = ANY(%(instances)s)
LEFT JOIN vr ON vr.instance = c.instance AND vr.id = c.id
LEFT JOIN tr ON tr.instance = c.instance AND tr.id = c.id
""").format(vt=vec_type, where=where, model=model, text_leg=text_leg(filtered, where, bool(req.exclude_ids)),
            cols=sql.SQL(", ").join(sql.SQL("m." + c.strip()) for c in ROW_COLUMNS.split(",")))
    return stmt, params
