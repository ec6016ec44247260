"""Bulk ingest into the memory index: embeddings batched and overlapped with binary COPY.

Two costs dominate a large load, and each has its remedy here:
- Growing an HNSW index row by row is slow (measured: 534 rows/s for 20,000 rows with the index in
  place, against 7,000 rows/s without it). A new instance is therefore loaded into a table of its
  own that then becomes its partition (`ATTACH PARTITION`): its indexes are built once over all its
  rows, in parallel, and its text postings in one statement. Until then none of it is visible, and
  a concurrent writer of the same instance waits on the partition's advisory lock.
- Embedding is CPU work in this process while COPY is work in the database's: the next batch is
  embedded while the previous one is written.
Rows of an instance that already has a partition are COPYed into it (its indexes grow row by row).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from itertools import groupby, islice
from typing import TYPE_CHECKING

from psycopg import sql
from psycopg.types.json import Jsonb

from core.models import MemoryRecord

if TYPE_CHECKING:
    from core.storage.memory_index import MemoryIndex

COLUMNS = ("instance", "id", "kind", "chain_id", "content", "created_at", "ev_year", "ev_month", "ev_day",
           "ev_hour", "ev_weekday", "tags", "metadata", "embedding", "embedding_model", "context")
TYPES = ["text", "text", "text", "text", "text", "timestamptz", "int2", "int2", "int2", "int2", "int2",
         "text[]", "jsonb", "vector", "text", "jsonb"]
# The whole HNSW graph of a new partition is built in memory when it fits (about 1.3 kB a row at 256
# dimensions); beyond, pgvector builds it on disk, several times slower.
BUILD_MEMORY = "512MB"


def _batches(records: Iterable[MemoryRecord], size: int) -> Iterator[list[MemoryRecord]]:
    it = iter(records)
    while batch := list(islice(it, size)):
        yield batch


class BulkLoader:
    """One load: call `write` per embedded batch (in order), then `finish`."""

    def __init__(self, index: MemoryIndex):
        self.index = index
        self.staged: str | None = None        # instance being loaded into a table of its own
        self._cm = self._tx = self._conn = None  # its connection and transaction, open until attached

    def write(self, batch: list[MemoryRecord], vectors) -> None:
        pairs = list(zip(batch, vectors, strict=True))
        for instance, run in groupby(pairs, key=lambda p: p[0].instance):
            run = list(run)
            if instance == self.staged:
                self._copy(self._conn, sql.Identifier(self.index.partition_name(instance)), run)
            elif self.index.partition_exists(instance):
                self._finish_staged()
                with self.index.pool.connection() as conn, conn.transaction():
                    self._copy(conn, sql.Identifier("memory"), run)
            else:
                self._finish_staged()
                if self._stage(instance):
                    self._copy(self._conn, sql.Identifier(self.index.partition_name(instance)), run)
                else:  # another process created the partition meanwhile: the ordinary path
                    with self.index.pool.connection() as conn, conn.transaction():
                        self._copy(conn, sql.Identifier("memory"), run)

    def finish(self) -> None:
        self._finish_staged()

    def abort(self) -> None:
        if self._cm is not None:
            self._close(rollback=True)

    # -- steps ------------------------------------------------------------------------------

    def _copy(self, conn, table: sql.Identifier, run: list) -> None:
        name = self.index.embedder.name
        stmt = sql.SQL("COPY {} ({}) FROM STDIN WITH (FORMAT BINARY)").format(
            table, sql.SQL(", ").join(sql.Identifier(c) for c in COLUMNS))
        with conn.cursor() as cur, cur.copy(stmt) as copy:
            copy.set_types(TYPES)
            for r, vec in run:
                copy.write_row((r.instance, r.id, r.kind, r.chain_id, r.content, r.created_at,
                                *r.event_time.as_tuple(), list(r.tags), Jsonb(r.metadata), vec, name,
                                Jsonb(r.context.model_dump())))

    def _stage(self, instance: str) -> bool:
        """Open a transaction holding the partition's lock and create its table; False if it exists."""
        relname = self.index.partition_name(instance)
        self._cm = self.index.pool.connection()
        self._conn = self._cm.__enter__()
        self._tx = self._conn.transaction()
        self._tx.__enter__()
        self._conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (relname,))
        if self.index.partition_exists(instance, conn=self._conn):
            self._close(rollback=False)
            return False
        self._conn.execute(sql.SQL("CREATE TABLE {} (LIKE memory INCLUDING DEFAULTS INCLUDING GENERATED)")
                           .format(sql.Identifier(relname)))
        self.staged = instance
        return True

    def _finish_staged(self) -> None:
        if self.staged is None:
            return
        instance, conn = self.staged, self._conn
        relname = self.index.partition_name(instance)
        try:
            conn.execute(sql.SQL("SET LOCAL maintenance_work_mem = {}").format(sql.Literal(BUILD_MEMORY)))
            # Builds every index of `memory` on the new partition over all of its rows at once.
            conn.execute(sql.SQL("ALTER TABLE memory ATTACH PARTITION {} FOR VALUES IN ({})").format(
                sql.Identifier(relname), sql.Literal(instance)))
            conn.execute("INSERT INTO memory_partition (instance, relname) VALUES (%s, %s) "
                         "ON CONFLICT DO NOTHING", (instance, relname))
            # Rows COPYed into a table of their own fired no trigger: their postings are made here.
            conn.execute("SELECT memory_text_rebuild(%s)", (instance,))
            conn.execute(sql.SQL("ANALYZE {}").format(sql.Identifier(relname)))
        except BaseException:
            self._close(rollback=True)
            raise
        self._close(rollback=False)
        self.index.mark_partition(instance)

    def _close(self, *, rollback: bool) -> None:
        if rollback:
            self._tx.__exit__(_Rollback, _Rollback(), None)
        else:
            self._tx.__exit__(None, None, None)
        self._cm.__exit__(None, None, None)
        self._cm = self._tx = self._conn = self.staged = None


class _Rollback(Exception):
    """Passed to the transaction's exit so it rolls back."""


def bulk_load(index: MemoryIndex, records: Iterable[MemoryRecord], *, batch_size: int = 2000,
              progress: Callable[[int], None] | None = None) -> int:
    from core.storage.memory_index import embedding_text

    index.ensure_vector_index()
    loader = BulkLoader(index)
    total = 0
    pending: Future | None = None
    with ThreadPoolExecutor(max_workers=1) as writer:
        try:
            for batch in _batches(records, batch_size):
                vectors = index.embedder.embed_batch([embedding_text(r) for r in batch])
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
