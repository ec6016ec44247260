"""The internal memory tool: a user's nearest past tasks, with the key points for a query.

Search: the user's own produced texts only; of each task execution the latest version
that has a vector of the active model; cosine distance strictly below `max_distance`; deleted texts
excluded; at most `n_max`, nearest first. It is one SQL statement with named parameters, which also
returns the nearest distance over all candidates, so a caller can say how far the limit would have
to move when nothing is within it.

The search is exact over the user's texts (a few thousand at most) rather than an HNSW scan: an HNSW
scan filtered by user returns at most `hnsw.ef_search` rows before filtering (pgvector's default scan;
0.8's iterative scans are off by default and absent from the 0.5–0.7 an external server may run), so it
could silently miss a user's neighbours. The per-model HNSW index still serves unfiltered scans.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from psycopg import sql

from core.embeddings import Embedder
from core.errors import describe
from core.past_tasks.keypoints import extract_key_points
from core.past_tasks.models import (
    InternalMemoryResult,
    PastTaskHit,
    PastTaskQuery,
    PastTaskSearch,
    PastToolExecution,
    default_max_distance,
)
from core.past_tasks.store import filter_params

if TYPE_CHECKING:
    from core.runtime import Workbench


def with_default_distance(q: PastTaskQuery, embedder: Embedder) -> PastTaskQuery:
    """The query with its `max_distance` set: the embedder's default when the caller gave none."""
    if q.max_distance is not None:
        return q
    return q.model_copy(update={"max_distance": default_max_distance(embedder.name)})


def search_past_tasks(pool, embedder: Embedder, q: PastTaskQuery) -> PastTaskSearch:
    """The search; InvalidInput when the filter names a task type that does not exist (naming those that
    do)."""
    stmt = _statement(embedder)
    vector = embedder.embed(q.query)
    with pool.connection() as conn:
        params = {"instance": q.instance, "user_id": q.user_id, "q": vector,
                  "max_distance": with_default_distance(q, embedder).max_distance, "n_max": q.n_max,
                  **filter_params(conn, q.instance, q)}
        rows = conn.execute(stmt, params).fetchall()
    nearest, candidates, searchable = rows[0][0], rows[0][1], rows[0][2]
    hits = [PastTaskHit(user_task_execution_pk=r[3], produced_text_pk=r[4], version_pk=r[5], task_name=r[6],
                        task_icon=r[7], title=r[8], production=r[9], date=r[10], distance=float(r[11]))
            for r in rows if r[3] is not None]
    # A query whose vector is all zeros (an embedder knowing none of its words) is at no distance from
    # anything: Postgres says NaN, which the recorded result (JSON) cannot hold.
    known = nearest is not None and not math.isnan(nearest)
    return PastTaskSearch(hits=hits, candidates=candidates, searchable=searchable,
                          nearest_distance=float(nearest) if known else None)


def _statement(embedder: Embedder) -> sql.Composed:
    vt = sql.SQL("vector({})").format(sql.Literal(embedder.dim))
    # `latest` picks each execution's newest version with a vector of this model (narrow rows: the
    # texts are joined only for the hits); `scored` keeps those the filter lets through (the date is the
    # latest version's: an older version inside the range does not bring a text back); the one-row `n`
    # makes the statement answer, with the nearest distance and the counts, even when no hit is in range.
    return sql.SQL("""
WITH latest AS MATERIALIZED (
    SELECT DISTINCT ON (pt.pk) e.pk AS execution_pk, pt.pk AS text_pk, v.pk AS version_pk, e.task_type_pk,
           v.created_at, v.embedding
    FROM past_task_execution e
    JOIN past_task_produced_text pt ON pt.execution_pk = e.pk
    JOIN past_task_text_version v ON v.produced_text_pk = pt.pk
    WHERE e.instance = %(instance)s AND e.user_id = %(user_id)s AND NOT pt.deleted_by_user
      AND v.embedding_model = {model} AND v.embedding IS NOT NULL
    ORDER BY pt.pk, v.created_at DESC, v.pk DESC
), scored AS MATERIALIZED (
    SELECT execution_pk, text_pk, version_pk, task_type_pk, (embedding::{vt}) <=> %(q)s::{vt} AS distance
    FROM latest
    WHERE (%(type_pks)s::bigint[] IS NULL OR task_type_pk = ANY(%(type_pks)s::bigint[]))
      AND (%(date_from)s::timestamptz IS NULL OR created_at >= %(date_from)s::timestamptz)
      AND (%(date_to)s::timestamptz IS NULL OR created_at <= %(date_to)s::timestamptz)
)
SELECT n.nearest, n.candidates, (SELECT count(*) FROM latest), s.execution_pk, s.text_pk, s.version_pk,
       tt.name, tt.icon, v.title, v.production, v.created_at, s.distance
FROM (SELECT min(distance) AS nearest, count(*) AS candidates FROM scored) n
LEFT JOIN LATERAL (
    SELECT * FROM scored WHERE distance < %(max_distance)s ORDER BY distance, execution_pk LIMIT %(n_max)s
) s ON true
LEFT JOIN past_task_text_version v ON v.pk = s.version_pk
LEFT JOIN past_task_type tt ON tt.pk = s.task_type_pk
ORDER BY s.distance, s.execution_pk
""").format(model=sql.Literal(embedder.name), vt=vt)


def run_internal_memory(wb: Workbench, q: PastTaskQuery, *, execution_id: str | None = None
                        ) -> InternalMemoryResult:
    """One tool execution: record its query, search, extract key points, record the result.

    A second call with the same `execution_id` is refused: each execution answers one query only.
    """
    store = wb.past_tasks
    q = with_default_distance(q, wb.embedder)
    store.task_type_pks(q.instance, q.task_types)  # an unknown type is refused before the execution is recorded
    params = q.model_dump(mode="json", exclude={"instance", "user_id", "query"})
    execution_id = store.begin_tool_execution(q.instance, q.user_id, q.query, params, execution_id)
    try:
        found = search_past_tasks(wb.pool(), wb.embedder, q)
        keypoints = extract_key_points(wb, q.query, found.hits)
    except Exception as e:
        store.finish_tool_execution(execution_id, "failed", {"error": describe(e).message})
        raise
    result = InternalMemoryResult(execution_id=execution_id, query=q, search=found, keypoints=keypoints,
                                  created_at=datetime.now(UTC))
    status = "partial" if keypoints.failed_batches else "done"
    store.finish_tool_execution(execution_id, status, _for_history(result))
    return result


def _for_history(result: InternalMemoryResult) -> dict:
    # The full texts are in the versions already; the history keeps which version each hit was.
    return result.model_dump(mode="json", exclude={"search": {"hits": {"__all__": {"production"}}}})


def history(wb: Workbench, instance: str, user_id: str, limit: int = 50,
            contains: str | None = None) -> list[PastToolExecution]:
    """A user's tool executions, newest first; `contains`: those whose query holds that text (any case)."""
    out = []
    for rec in wb.past_tasks.tool_executions(instance, user_id, limit, contains):
        result = error = None
        if rec.status in ("done", "partial") and rec.result:
            try:
                result = InternalMemoryResult.model_validate(rec.result)
            except ValueError:  # written by an older shape of the result
                error = "the recorded result can no longer be read"
        elif rec.result:
            error = rec.result.get("error")
        out.append(PastToolExecution(execution_id=rec.execution_id, query=rec.query, status=rec.status,
                                     created_at=rec.created_at, result=result, error=error))
    return out

