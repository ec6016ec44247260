"""Bulk ingest into the memory index: embeddings batched and overlapped with binary COPY.

Two costs dominate a large load, and each has its remedy here:
- Growing an HNSW index row by row is slow (measured: 534 rows/s for 20,000 rows with the index in
  place, against 7,000 rows/s without it). A new instance is therefore loaded into a table of its
  own that then becomes its partition (`ATTACH PARTITION`): its indexes are built once over all its
  rows, and its text postings in a table of their own, indexed once too. Until the attach commits
  none of it is visible, and a concurrent writer of the same instance waits on the partition's
  advisory lock.
- Embedding is CPU work in this process while COPY and index builds are work in the database's: the
  next batch is embedded while the previous one is written (COPY, then that batch's text postings),
  and an instance is attached while the next one loads. Postings made per batch rather than all at
  the attach moved 5 s of 100,000 memories' load out of the part nothing overlaps. Two instances
  are attached at once, each building its indexes on its own table before ATTACH, which then finds
  them built: ATTACH holds a lock on `memory` until its transaction ends, so building them inside it
  (as ATTACH does for indexes it lacks) made every other attach wait for the whole build, and the
  small instances after a large one were built one by one at the end with the cores partly idle.
Rows of an instance that already has a partition are COPYed into it (its indexes grow row by row).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from itertools import groupby, islice
from typing import Any, Protocol

from psycopg import sql
from psycopg.types.json import Jsonb
from psycopg_pool import ConnectionPool

from core.embeddings import Embedder
from core.index.names import partition_name, postings_name
from core.index.records import embedding_text
from core.index.text import indexed_metadata
from core.models import MemoryRecord
from core.services.bounded import without_time_limit


class LoadTarget(Protocol):
    """What a bulk load needs of the memory index (`MemoryIndex` is one), so this module needs no import of
    the index that calls it."""

    pool: ConnectionPool
    embedder: Embedder

    def ensure_vector_index(self) -> None: ...

    def partition_exists(self, instance: str, *, conn: Any = None) -> bool: ...

    def mark_partition(self, instance: str) -> None: ...

COLUMNS = ("instance", "id", "kind", "chain_id", "content", "created_at", "ev_year", "ev_month", "ev_day",
           "ev_hour", "ev_weekday", "tags", "metadata", "embedding", "embedding_model", "context")
TYPES = ["text", "text", "text", "text", "text", "timestamptz", "int2", "int2", "int2", "int2", "int2",
         "text[]", "jsonb", "vector", "text", "jsonb"]
# The whole HNSW graph of a new partition is built in memory when it fits (about 1.3 kB a row at 256
# dimensions); beyond, pgvector builds it on disk, several times slower.
BUILD_MEMORY = "512MB"


def copy_rows(conn, table: sql.Identifier, pairs: Iterable[tuple[MemoryRecord, Any]], model: str) -> None:
    """Binary COPY of (record, vector) pairs into `table` (a partition of `memory`, or a table like it)."""
    stmt = sql.SQL("COPY {} ({}) FROM STDIN WITH (FORMAT BINARY)").format(
        table, sql.SQL(", ").join(sql.Identifier(c) for c in COLUMNS))
    with conn.cursor() as cur, cur.copy(stmt) as copy:
        copy.set_types(TYPES)
        for r, vec in pairs:
            copy.write_row((r.instance, r.id, r.kind, r.chain_id, r.content, r.created_at,
                            *r.event_time.as_tuple(), list(r.tags), Jsonb(indexed_metadata(r)), vec, model,
                            Jsonb(r.context.model_dump())))


def cloned_indexes(conn, parent: str, table: sql.Identifier) -> list[sql.Composed]:
    """Statements giving `table` each index of the partitioned table `parent` (its primary key as a
    constraint, as ATTACH PARTITION requires of the index it takes for the parent's key), so that
    attaching `table` as a partition finds every one already built instead of building it."""
    rows = conn.execute("""
        SELECT pg_get_indexdef(i.indexrelid), pg_get_constraintdef(c.oid)
        FROM pg_index i LEFT JOIN pg_constraint c ON c.conindid = i.indexrelid AND c.contype IN ('p', 'u')
        WHERE i.indrelid = %s::regclass ORDER BY i.indexrelid""", (parent,)).fetchall()
    out = []
    for definition, constraint in rows:  # the catalog's own text, as Postgres prints it
        if constraint is not None:
            out.append(sql.SQL("ALTER TABLE {} ADD {}").format(table, sql.SQL(constraint)))
            continue
        # "CREATE [UNIQUE] INDEX name ON ONLY parent USING method (...) [INCLUDE ...] [WITH ...] [WHERE ...]"
        m = re.fullmatch(r"CREATE (UNIQUE )?INDEX .+? ON ONLY .+? (USING .*)", definition, re.DOTALL)
        if m is None:
            raise ValueError(f"unexpected index definition on {parent}: {definition}")
        unique, body = m[1], m[2]
        create = sql.SQL("CREATE UNIQUE INDEX ON {} {}") if unique else sql.SQL("CREATE INDEX ON {} {}")
        out.append(create.format(table, sql.SQL(body)))
    return out


def _batches(records: Iterable[MemoryRecord], size: int) -> Iterator[list[MemoryRecord]]:
    it = iter(records)
    while batch := list(islice(it, size)):
        yield batch


@dataclass
class _Staged:
    """A new instance being loaded into a table of its own: its connection and open transaction."""

    instance: str
    cm: Any
    conn: Any
    tx: Any
    # The last row whose postings are made: rows COPYed into the new table are appended, so a batch's
    # rows are those after it (a TID range scan reads only them).
    last: str = "(0,0)"

    def close(self, *, rollback: bool) -> None:
        if rollback:
            self.tx.__exit__(_Rollback, _Rollback(), None)
        else:
            self.tx.__exit__(None, None, None)
        vars(self.conn).pop("answer_timeout_s", None)  # back in the pool with the class's bound (`_stage`)
        self.cm.__exit__(None, None, None)


class _Rollback(Exception):
    """Passed to the transaction's exit so it rolls back."""


class BulkLoader:
    """One load: call `write` per embedded batch (in order), then `finish`.

    A new instance's table is attached (its indexes built) in a thread of its own while the next
    instance is loaded, so building indexes in the database overlaps with embedding here. Up to
    `ATTACHING` instances build their indexes at once: the small instances that follow a large one
    are built beside it rather than one by one after it, when nothing else is left to overlap."""

    ATTACHING = 2

    def __init__(self, index: LoadTarget):
        self.index = index
        self.staged: _Staged | None = None
        self._attacher = ThreadPoolExecutor(max_workers=self.ATTACHING)
        self._attaching: list[Future] = []

    def write(self, batch: list[MemoryRecord], vectors) -> None:
        pairs = list(zip(batch, vectors, strict=True))
        for instance, run in groupby(pairs, key=lambda p: p[0].instance):
            run = list(run)
            if self.staged is not None and instance == self.staged.instance:
                self._copy_staged(run)
                continue
            self._hand_over()
            if not self.index.partition_exists(instance) and self._stage(instance):
                self._copy_staged(run)
            else:  # the partition exists (perhaps made by another process meanwhile): rows go in one by one
                with self.index.pool.connection() as conn, without_time_limit(conn), conn.transaction():
                    self._copy(conn, sql.Identifier("memory"), run)

    def finish(self) -> None:
        self._hand_over()
        try:
            for f in self._attaching:
                f.result()
        finally:
            self._attacher.shutdown()

    def abort(self) -> None:
        if self.staged is not None:
            self.staged.close(rollback=True)
            self.staged = None
        self._attacher.shutdown(wait=True)

    # -- steps ------------------------------------------------------------------------------

    def _copy(self, conn, table: sql.Identifier, run: list) -> None:
        copy_rows(conn, table, run, self.index.embedder.name)

    def _copy_staged(self, run: list) -> None:
        """COPY into the new instance's table, then make the postings of the rows just written: those
        after the last row done, read by TID range scans."""
        staged = self.staged
        relname = sql.Identifier(partition_name(staged.instance))
        self._copy(staged.conn, relname, run)
        conn = staged.conn
        last = conn.execute(sql.SQL("SELECT max(ctid)::text FROM {} WHERE ctid > %s::tid").format(relname),
                            (staged.last,)).fetchone()[0]
        if last is None:
            return
        conn.execute(sql.SQL("""
            INSERT INTO {} (instance, lexeme, id, tf, dl, impact)
            SELECT m.instance, w.lexeme, m.id, w.tf, w.dl, memory_impact(w.tf, w.dl)
            FROM {} m CROSS JOIN LATERAL (SELECT t.lexeme, t.tf, sum(t.tf) OVER () AS dl
                                          FROM memory_terms_of(m.tsv) t) w
            WHERE m.ctid > %s::tid AND m.ctid <= %s::tid""").format(
            sql.Identifier(postings_name(staged.instance)), relname), (staged.last, last))
        staged.last = last

    def _stage(self, instance: str) -> bool:
        """Open a transaction holding the partition's lock and create its table; False if it exists."""
        relname = partition_name(instance)
        cm = self.index.pool.connection()
        conn = cm.__enter__()
        tx = conn.transaction()
        tx.__enter__()
        staged = _Staged(instance, cm, conn, tx)
        # The staged table is loaded and its indexes built (ATTACH) in this one transaction: minutes
        # at 500,000 memories, past any statement timeout meant for a turn.
        conn.execute("SET LOCAL statement_timeout = 0")
        conn.answer_timeout_s = None
        if self.index.partition_exists(instance, conn=conn):
            staged.close(rollback=False)
            return False
        conn.execute(sql.SQL("CREATE TABLE {} (LIKE memory INCLUDING DEFAULTS INCLUDING GENERATED)")
                     .format(sql.Identifier(relname)))
        # Rows COPYed into a table of their own fire no trigger: their postings are made batch by batch
        # (`_copy_staged`) in a table of their own too, indexed once when attached (inserting them into
        # the index one by one took 6.5 µs a posting).
        conn.execute(sql.SQL("CREATE TABLE {} (LIKE memory_term)").format(sql.Identifier(postings_name(instance))))
        self.staged = staged
        return True

    def _hand_over(self) -> None:
        if self.staged is not None:
            self._attaching.append(self._attacher.submit(self._attach, self.staged))
            self.staged = None

    def _attach(self, staged: _Staged) -> None:
        instance, conn = staged.instance, staged.conn
        relname = partition_name(instance)
        postings = sql.Identifier(postings_name(instance))
        try:
            conn.execute(sql.SQL("SET LOCAL maintenance_work_mem = {}").format(sql.Literal(BUILD_MEMORY)))
            # One parallel worker beside the leader: with two, on two cores, HNSW builds ran slower.
            conn.execute("SET LOCAL max_parallel_maintenance_workers = 1")
            # Every index of `memory` and of the postings, each built once over all of the instance's rows,
            # before ATTACH takes its lock on the parent (see the module's docstring).
            for parent, table in (("memory", sql.Identifier(relname)), ("memory_term", postings)):
                for statement in cloned_indexes(conn, parent, table):
                    conn.execute(statement)
            # The instance's total length Σ dl is Σ tf over its postings (no sort by memory needed).
            conn.execute(sql.SQL("""
                INSERT INTO memory_lexeme (instance, lexeme, df, len)
                SELECT %(i)s, '', (SELECT count(*) FROM {}), (SELECT coalesce(sum(tf::float8), 0) FROM {})
                UNION ALL
                SELECT %(i)s, lexeme, count(*), 0 FROM {} GROUP BY lexeme""").format(
                sql.Identifier(relname), postings, postings), {"i": instance})
            conn.execute(sql.SQL("ANALYZE {}").format(sql.Identifier(relname)))
            conn.execute(sql.SQL("ANALYZE {}").format(postings))
            conn.execute(sql.SQL("ALTER TABLE memory ATTACH PARTITION {} FOR VALUES IN ({})").format(
                sql.Identifier(relname), sql.Literal(instance)))
            conn.execute("INSERT INTO memory_partition (instance, relname) VALUES (%s, %s) "
                         "ON CONFLICT DO NOTHING", (instance, relname))
            conn.execute(sql.SQL("ALTER TABLE memory_term ATTACH PARTITION {} FOR VALUES IN ({})").format(
                postings, sql.Literal(instance)))
        except BaseException:
            staged.close(rollback=True)
            raise
        staged.close(rollback=False)
        self.index.mark_partition(instance)


def bulk_load(index: LoadTarget, records: Iterable[MemoryRecord], *, batch_size: int = 2000,
              progress: Callable[[int], None] | None = None) -> int:
    index.ensure_vector_index()
    # Not through the query cache: 100,000 texts seen once would evict every cached query (and hold
    # 50,000 vectors in this process).
    embedder = index.embedder.uncached
    loader = BulkLoader(index)
    total = 0
    pending: Future | None = None
    with ThreadPoolExecutor(max_workers=1) as writer:
        try:
            for batch in _batches(records, batch_size):
                vectors = embedder.embed_batch([embedding_text(r) for r in batch])
                if pending is not None:
                    pending.result()
                pending = writer.submit(loader.write, batch, vectors)
                total += len(batch)
                if progress:
                    progress(total)
            if pending is not None:
                pending.result()
            writer.submit(loader.finish).result()
        except BaseException:
            writer.submit(loader.abort).result()
            raise
    return total
