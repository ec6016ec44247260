"""The memory index on Postgres + pgvector: one table for everything that is searched.

Rows are partitioned by instance (one partition per instance, created on first write), so a search
touches only its instance's rows and the HNSW index of that partition returns that instance's
nearest neighbours, never another's. Each embedding model gets its own partial HNSW index over
`embedding::vector(dim)`, and every vector query names the model, so vectors of different models
never mix.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from contextlib import nullcontext
from functools import lru_cache
from typing import Any

import numpy as np
from psycopg import sql
from psycopg.types.json import Jsonb
from psycopg_pool import ConnectionPool

from core.embeddings import Embedder
from core.ids import validate_id
from core.index.bulk_load import COLUMNS, bulk_load
from core.index.names import partition_name
from core.index.partitions import note_partition
from core.index.records import (
    ROW_COLUMNS,
    embedding_text,
    embedding_text_of,
    row_from_tuple,
    stands_alone,
    stated_event_sql,
)
from core.index.text import ANALYSIS_DDL, TEXT_INDEX_DDL, indexed_metadata
from core.index.vectors import ensure_model_hnsw_index
from core.models import MemoryContext, MemoryRecord, MemoryRow

# tsv: the memory's words, its neighbours' and its date's, by weight (see core.index.text).
DDL = ANALYSIS_DDL + """
CREATE TABLE IF NOT EXISTS memory (
    instance        text        NOT NULL,
    id              text        NOT NULL,
    kind            text        NOT NULL,
    chain_id        text,
    content         text        NOT NULL,
    created_at      timestamptz NOT NULL,
    ev_year         smallint    NOT NULL DEFAULT -1,
    ev_month        smallint    NOT NULL DEFAULT -1,
    ev_day          smallint    NOT NULL DEFAULT -1,
    ev_hour         smallint    NOT NULL DEFAULT -1,
    ev_weekday      smallint    NOT NULL DEFAULT -1,
    tags            text[]      NOT NULL DEFAULT '{}',
    metadata        jsonb       NOT NULL DEFAULT '{}',
    embedding       vector,
    embedding_model text,
    context         jsonb       NOT NULL DEFAULT '{}',
    tsv             tsvector,  -- memory_tsv(content, context, ev_year, ev_month, ev_day), by a trigger
    PRIMARY KEY (instance, id)
) PARTITION BY LIST (instance);
CREATE INDEX IF NOT EXISTS memory_created ON memory (instance, created_at DESC);
-- the few memories whose event time is their own (`records.stated_event_sql`), for time windows
CREATE INDEX IF NOT EXISTS memory_event_stated ON memory (instance, ev_year)
    WHERE """ + stated_event_sql() + """;
CREATE INDEX IF NOT EXISTS memory_chain ON memory (instance, chain_id);
-- the few memories that state who is who ("my daughter Inês", `core.formation.relations`), which a search
-- naming a role or a name reads (`core.retrieval.relations`)
CREATE INDEX IF NOT EXISTS memory_relations ON memory (instance) WHERE metadata ? 'relations';
-- the session summaries a correction or an update superseded, which the turn that told it makes again
-- (`core.formation.summaries.summarise_superseded`, after every turn): a few rows, read without a scan
CREATE INDEX IF NOT EXISTS memory_superseded_summaries ON memory (instance)
    WHERE kind = 'session_summary' AND metadata ? 'superseded_at';
-- the few superseded memories, which a windowed search finds when their fact held in the window
-- (`core.retrieval.hybrid_sql.HELD`) beside the window's rows, by a BitmapOr rather than an HNSW scan filtered
CREATE INDEX IF NOT EXISTS memory_superseded ON memory (instance) WHERE metadata ? 'superseded_at';
-- memories per embedding model and kind (the Overview, re-embedding) by an index-only scan, never the wide
-- rows (`core.admin.overview.memory_counts`); it replaces memory_model, its first two columns
CREATE INDEX IF NOT EXISTS memory_model_kind ON memory (instance, embedding_model, kind);
DROP INDEX IF EXISTS memory_model;
CREATE TABLE IF NOT EXISTS memory_partition (
    instance  text PRIMARY KEY,
    relname   text NOT NULL UNIQUE
);
""" + TEXT_INDEX_DDL


# Rows a statement writes at most (16 parameters each, well under the protocol's 65,535).
ROWS_PER_STATEMENT = 500
ROW_IDENTIFIERS = sql.SQL(", ").join(sql.Identifier(c.strip()) for c in ROW_COLUMNS.split(","))


@lru_cache(maxsize=64)
def upsert(rows: int) -> str:
    """INSERT of `rows` rows replacing rows of the same (instance, id): one statement, so its text
    trigger runs once for all of them."""
    values = ", ".join(["(" + ", ".join(["%s"] * len(COLUMNS)) + ")"] * rows)
    updated = ", ".join(f"{c} = EXCLUDED.{c}" for c in COLUMNS[2:])
    return (f"INSERT INTO memory ({', '.join(COLUMNS)}) VALUES {values} "
            f"ON CONFLICT (instance, id) DO UPDATE SET {updated}")


class MemoryIndex:
    """Writes and reads rows of the memory index. Searching lives in `core.retrieval.hybrid`."""

    def __init__(self, pool: ConnectionPool, embedder: Embedder):
        self.pool = pool
        self.embedder = embedder
        self._known_partitions: set[str] = set()
        self._vector_index_ready = False

    # -- set-up -----------------------------------------------------------------------------

    def ensure_vector_index(self) -> None:
        """The partial HNSW index for the active embedding model (created once, idempotent)."""
        if self._vector_index_ready:
            return
        ensure_model_hnsw_index(self.pool, "memory", self.embedder)
        self._vector_index_ready = True

    def partition_exists(self, instance: str, *, conn=None) -> bool:
        if instance in self._known_partitions:
            return True
        query = "SELECT to_regclass(%s) IS NOT NULL"
        if conn is not None:
            return conn.execute(query, (partition_name(instance),)).fetchone()[0]
        with self.pool.connection() as c:
            found = c.execute(query, (partition_name(instance),)).fetchone()[0]
        if found:
            self._known_partitions.add(instance)
        return found

    def mark_partition(self, instance: str) -> None:
        self._known_partitions.add(instance)
        note_partition(self.pool, instance, partition_name(instance))  # searchable at once here

    def ensure_partition(self, instance: str) -> None:
        validate_id(instance, "instance")
        if instance in self._known_partitions:
            return
        relname = partition_name(instance)
        with self.pool.connection() as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (relname,))
            # Made and attached, not PARTITION OF: no lock that queues the other instances (`core.index.text`).
            conn.execute("SELECT memory_attach_partition('memory', %s, %s)", (relname, instance))
            conn.execute("INSERT INTO memory_partition (instance, relname) VALUES (%s, %s) "
                         "ON CONFLICT DO NOTHING", (instance, relname))
            conn.execute("SELECT memory_text_partitions(%s, %s)", (instance, relname))  # its postings, counters
        self.mark_partition(instance)

    # -- writes -----------------------------------------------------------------------------

    def add(self, records: Sequence[MemoryRecord], *, embeddings: np.ndarray | None = None) -> int:
        """Insert or replace records, embedding them in one batch. Returns how many were written."""
        if not records:
            return 0
        self.ensure_vector_index()
        for instance in {r.instance for r in records}:
            self.ensure_partition(instance)
        if embeddings is None:
            embeddings = self.embedder.embed_batch([embedding_text(r) for r in records])
        # Sorted, so two writers of the same memories lock their rows in one order (no deadlock); the
        # trigger sorts the text counters it locks itself.
        rows = sorted((
            (r.instance, r.id, r.kind, r.chain_id, r.content, r.created_at, *r.event_time.as_tuple(),
             list(r.tags), Jsonb(indexed_metadata(r)), vec, self.embedder.name, Jsonb(r.context.model_dump()))
            for r, vec in zip(records, embeddings, strict=True)), key=lambda row: (row[0], row[1]))
        # The same memory twice: the last one given stands (one statement cannot write a row twice).
        rows = list({row[:2]: row for row in rows}.values())
        chunks = [rows[i:i + ROWS_PER_STATEMENT] for i in range(0, len(rows), ROWS_PER_STATEMENT)]
        with self.pool.connection() as conn:
            # Up to ROWS_PER_STATEMENT rows are one statement on the pool's autocommit connection: the
            # server commits as it ends. In an explicit transaction the text counters' row locks
            # (`memory_text_apply`) stayed held over two more round trips, and concurrent writers of the
            # instance queued on them; a statement a row also ran the trigger once a row.
            with conn.transaction() if len(chunks) > 1 else nullcontext():
                for chunk in chunks:
                    conn.execute(upsert(len(chunk)), [v for row in chunk for v in row])
        return len(rows)

    def bulk_load(self, records: Iterable[MemoryRecord], *, batch_size: int = 2000,
                  progress: Any = None) -> int:
        """Fast ingest for large sets (imports, benchmarks, demo data): see `core.index.bulk_load`."""
        return bulk_load(self, records, batch_size=batch_size, progress=progress)

    def delete(self, instance: str, ids: Sequence[str]) -> int:
        with self.pool.connection() as conn:
            cur = conn.execute("DELETE FROM memory WHERE instance = %s AND id = ANY(%s)", (instance, list(ids)),
                               prepare=False)
            return cur.rowcount

    def delete_derived(self, instance: str, ids: Sequence[str]) -> int:
        """Delete the rows made from these memories (an observation or an important copy, whose
        `metadata.source_thought` names one; a session summary, whose `metadata.source_ids` does), so
        deleting a message leaves no copy of it behind, even one in other words."""
        with self.pool.connection() as conn:
            cur = conn.execute("DELETE FROM memory WHERE instance = %(i)s AND (metadata->>'source_thought' = "
                               "ANY(%(ids)s) OR metadata->'source_ids' ?| %(ids)s)", {"i": instance, "ids": list(ids)},
                               prepare=False)
            return cur.rowcount

    def delete_chain(self, instance: str, chain_id: str) -> int:
        with self.pool.connection() as conn:
            cur = conn.execute("DELETE FROM memory WHERE instance = %s AND chain_id = %s", (instance, chain_id),
                               prepare=False)
            return cur.rowcount

    def delete_instance(self, instance: str) -> int:
        with self.pool.connection() as conn:
            cur = conn.execute("DELETE FROM memory WHERE instance = %s", (instance,), prepare=False)
            return cur.rowcount

    # -- reads ------------------------------------------------------------------------------

    def table(self, instance: str) -> sql.Identifier | None:
        """The instance's partition, which a read of one instance names itself (None: it has none, so no
        rows). Over the parent, a statement the pool prepares (at its sixth run on a connection) was planned
        once generically over every instance's partitions: among 800 instances a turn's read of its rows by
        id took 318 ms and a summary's self-join 1,124 ms, with 8,041 locks, once per connection and
        statement. Reads only: a write goes through `memory`, whose statement triggers keep the text index, sent
        unprepared (`prepare=False`) so that Postgres plans it at each run with the instance known."""
        return sql.Identifier(partition_name(instance)) if self.partition_exists(instance) else None

    def get(self, instance: str, ids: Sequence[str]) -> list[MemoryRow]:
        if (table := self.table(instance)) is None:
            return []
        with self.pool.connection() as conn:
            rows = conn.execute(sql.SQL("SELECT {} FROM {} WHERE instance = %s AND id = ANY(%s)").format(
                ROW_IDENTIFIERS, table), (instance, list(ids))).fetchall()
        return [row_from_tuple(r) for r in rows]

    def held(self, instance: str, ids: Sequence[str], *, conn=None) -> set[str]:
        """Those of `ids` the instance's index holds, read from its partition (on `conn`, a transaction's own,
        when given)."""
        if not ids or not self.partition_exists(instance, conn=conn):
            return set()
        query = sql.SQL("SELECT id FROM {} WHERE instance = %s AND id = ANY(%s)").format(
            sql.Identifier(partition_name(instance)))
        if conn is not None:
            return {row[0] for row in conn.execute(query, (instance, list(ids)))}
        with self.pool.connection() as c:
            return {row[0] for row in c.execute(query, (instance, list(ids)))}

    def records(self, instance: str, *, ids: Sequence[str] = (), chains: Sequence[str] = ()
                ) -> list[MemoryRecord]:
        """The rows with these ids or of these chains, as records (their conversation context included),
        in their order: what a deletion reads to find the text it removes and the rows quoting it."""
        if (table := self.table(instance)) is None:
            return []
        with self.pool.connection() as conn:
            rows = conn.execute(sql.SQL(
                "SELECT {}, context FROM {} WHERE instance = %s "
                "AND (id = ANY(%s) OR chain_id = ANY(%s)) ORDER BY created_at, id").format(ROW_IDENTIFIERS, table),
                (instance, list(ids), list(chains))).fetchall()
        return [MemoryRecord(**row_from_tuple(r).model_dump(), context=MemoryContext(**(r[-1] or {})))
                for r in rows]

    def count(self, instance: str | None = None, *, model: str | None = None, kind: str | None = None) -> int:
        where, params = [], []
        if instance is not None:
            where.append("instance = %s")
            params.append(instance)
        if model is not None:
            where.append("embedding_model = %s")
            params.append(model)
        if kind is not None:
            where.append("kind = %s")
            params.append(kind)
        clause = f"WHERE {' AND '.join(where)}" if where else ""
        with self.pool.connection() as conn:
            return conn.execute(f"SELECT count(*) FROM memory {clause}", params, prepare=False).fetchone()[0]

    def instances(self) -> list[str]:
        with self.pool.connection() as conn:
            return [r[0] for r in conn.execute("SELECT instance FROM memory_partition ORDER BY instance")]

    def has_instance(self, instance: str) -> bool:
        """Whether `instances` lists `instance`: one key lookup, where the list is read whole."""
        with self.pool.connection() as conn:
            return conn.execute("SELECT EXISTS (SELECT 1 FROM memory_partition WHERE instance = %s)",
                                (instance,)).fetchone()[0]

    def stale_ids(self, instance: str, limit: int = 1000) -> list[tuple[str, str]]:
        """Rows whose vector is missing or from another model than the active one, with the text their
        vector is made from (`embedding_text`)."""
        with self.pool.connection() as conn:
            rows = conn.execute(
                "SELECT id, content, context, kind, metadata FROM memory WHERE instance = %s "
                "AND embedding_model IS DISTINCT FROM %s ORDER BY id LIMIT %s",
                (instance, self.embedder.name, limit), prepare=False).fetchall()
        return [(id_, embedding_text_of(content, (context or {}).get("before"), stands_alone(kind, metadata)))
                for id_, content, context, kind, metadata in rows]

    def reembed(self, instance: str, *, batch_size: int = 500, progress: Any = None) -> int:
        """Re-embed every row of an instance made by another model (or none) with the active one."""
        self.ensure_vector_index()
        done = 0
        while batch := self.stale_ids(instance, batch_size):
            vectors = self.embedder.embed_batch([content for _, content in batch])
            with self.pool.connection() as conn:
                conn.execute("UPDATE memory m SET embedding = v.embedding, embedding_model = %s "
                             "FROM unnest(%s::text[], %s::vector[]) AS v(id, embedding) "
                             "WHERE m.instance = %s AND m.id = v.id",
                             (self.embedder.name, [id_ for id_, _ in batch], list(vectors), instance), prepare=False)
            done += len(batch)
            if progress:
                progress(done)
        return done

