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
Rows of an instance that already has a partition are COPYed into it (its indexes grow row by row); those
another process wrote meanwhile are left out (`BulkLoader._copy_existing`).

Postgres's text parser is the rest of a conversation's cost: a memory is searched by its words and its
six neighbours' (`core.index.text`), so a text vector made per row parsed each message seven times
(LoCoMo's turns: 0.26 of the 0.30 ms a row cost COPY). A new instance's batch goes to a temporary table,
and one statement parses each distinct text of the batch once, composes each row's vector from those
with `memory_tsv_of` as `memory_tsv` does, writes the rows and makes their postings.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from itertools import groupby, islice
from typing import Any, Protocol

from psycopg import sql
from psycopg.errors import UniqueViolation
from psycopg.types.json import Jsonb
from psycopg_pool import ConnectionPool

from core.embeddings import Embedder
from core.index.names import lexemes_name, partition_name, postings_name
from core.index.records import embedding_text
from core.index.text import INDEXED_CHARS, indexed_metadata, neighbour_text
from core.models import MemoryRecord
from core.services.bounded import without_time_limit


class LoadTarget(Protocol):
    """What a bulk load needs of the memory index (`MemoryIndex` is one), so this module needs no import of
    the index that calls it."""

    pool: ConnectionPool
    embedder: Embedder

    def ensure_vector_index(self) -> None: ...

    def partition_exists(self, instance: str, *, conn: Any = None) -> bool: ...

    def held(self, instance: str, ids: Sequence[str], *, conn: Any = None) -> set[str]: ...

    def mark_partition(self, instance: str) -> None: ...

COLUMNS = ("instance", "id", "kind", "chain_id", "content", "created_at", "ev_year", "ev_month", "ev_day",
           "ev_hour", "ev_weekday", "tags", "metadata", "embedding", "embedding_model", "context")
TYPES = ["text", "text", "text", "text", "text", "timestamptz", "int2", "int2", "int2", "int2", "int2",
         "text[]", "jsonb", "vector", "text", "jsonb"]
# The whole HNSW graph of a new partition is built in memory when it fits (about 1.3 kB a row at 256
# dimensions); beyond, pgvector builds it on disk, several times slower.
BUILD_MEMORY = "512MB"


def copy_rows(conn, table: sql.Identifier, pairs: Iterable[tuple[MemoryRecord, Any]], model: str,
              words: Sequence[list[int]] | None = None) -> None:
    """Binary COPY of (record, vector) pairs into `table` (a partition of `memory`, or a table like it);
    with `words`, each row's `TextKeys.rows` too (into `INCOMING`)."""
    columns, types = (COLUMNS, TYPES) if words is None else (COLUMNS + ("words",), TYPES + ["int4[]"])
    stmt = sql.SQL("COPY {} ({}) FROM STDIN WITH (FORMAT BINARY)").format(
        table, sql.SQL(", ").join(sql.Identifier(c) for c in columns))
    with conn.cursor() as cur, cur.copy(stmt) as copy:
        copy.set_types(types)
        for i, (r, vec) in enumerate(pairs):
            row = (r.instance, r.id, r.kind, r.chain_id, r.content, r.created_at, *r.event_time.as_tuple(),
                   list(r.tags), Jsonb(indexed_metadata(r)), vec, model, Jsonb(r.context.model_dump()))
            copy.write_row(row if words is None else (*row, words[i]))


class TextKeys:
    """The distinct texts a batch's text vectors are made of, and for each row which of them (1-based; 0
    for a missing neighbour): its content, then its neighbours in `memory_tsv`'s order (before and after at
    distance 1, then before 2 and 3, after 2 and 3: `memory_tsv_of`'s order), each cut as `memory_tsv` cuts it."""

    def __init__(self, records: Iterable[MemoryRecord]):
        self._index: dict[str, int] = {}
        self.rows = [self._row(r) for r in records]
        self.texts = list(self._index)

    def _key(self, text: str | None) -> int:
        return 0 if text is None else self._index.setdefault(text, len(self._index) + 1)

    def _row(self, r: MemoryRecord) -> list[int]:
        before, after = r.context.before, r.context.after

        def near(texts: list[str], i: int) -> int:
            return self._key(neighbour_text(texts[i]) if i < len(texts) else None)

        return [self._key(r.content[:INDEXED_CHARS]), near(before, 0), near(after, 0), near(before, 1),
                near(before, 2), near(after, 1), near(after, 2)]


# A new instance's batch: its rows with their `TextKeys`, until they are written to its table.
INCOMING = "memory_incoming"
# The batch's rows into the new instance's table `{table}`, each with its text vector made of its texts' own
# (`memory_tsv_of`, as `memory_tsv` makes it, each distinct text parsed once), and their postings into
# `{postings}`.
_WRITE_INCOMING = sql.SQL("""
WITH tv AS MATERIALIZED (
    SELECT k::int AS k, memory_analyse(t) AS v FROM unnest(%(texts)s::text[]) WITH ORDINALITY AS u(t, k)
), dates AS MATERIALIZED (
    SELECT y, mo, d, to_tsvector('english', memory_date_words(y, mo, d)) AS v
    FROM (SELECT DISTINCT ev_year, ev_month, ev_day FROM {incoming}) x(y, mo, d)
), written AS (
    INSERT INTO {table} ({columns}, tsv)
    SELECT {incoming_columns}, memory_tsv_of(c.v, b0.v, a0.v, b1.v, b2.v, a1.v, a2.v, dt.v)
    FROM {incoming} i
    JOIN tv c ON c.k = i.words[1]
    LEFT JOIN tv b0 ON b0.k = i.words[2] LEFT JOIN tv a0 ON a0.k = i.words[3]
    LEFT JOIN tv b1 ON b1.k = i.words[4] LEFT JOIN tv b2 ON b2.k = i.words[5]
    LEFT JOIN tv a1 ON a1.k = i.words[6] LEFT JOIN tv a2 ON a2.k = i.words[7]
    JOIN dates dt ON dt.y = i.ev_year AND dt.mo = i.ev_month AND dt.d = i.ev_day
    RETURNING instance, id, tsv
)
INSERT INTO {postings} (instance, lexeme, id, tf, dl, impact)
SELECT m.instance, w.lexeme, m.id, w.tf, w.dl, memory_impact(w.tf, w.dl)
FROM written m CROSS JOIN LATERAL (SELECT t.lexeme, t.tf, sum(t.tf) OVER () AS dl
                                  FROM memory_terms_of(m.tsv) t) w""")


def create_new_tables(conn, table: sql.Identifier, postings: sql.Identifier) -> None:
    """A new instance's table and its postings' table, in `conn`'s transaction, and the temporary table its
    batches pass through (`write_new_rows`), dropped when the transaction ends. Rows written into a table
    of their own fire no trigger: their postings are made batch by batch in a table of their own too,
    indexed once when attached (inserting them into the index one by one took 6.5 µs a posting)."""
    conn.execute(sql.SQL("CREATE TABLE {} (LIKE memory INCLUDING DEFAULTS)").format(table))
    conn.execute(sql.SQL("CREATE TEMPORARY TABLE {} (LIKE memory INCLUDING DEFAULTS, words int4[]) "
                         "ON COMMIT DROP").format(sql.Identifier(INCOMING)))
    conn.execute(sql.SQL("CREATE TABLE {} (LIKE memory_term)").format(postings))


def write_new_rows(conn, table: sql.Identifier, postings: sql.Identifier,
                   pairs: Sequence[tuple[MemoryRecord, Any]], model: str) -> None:
    """A batch of (record, vector) pairs into a new instance's tables (`create_new_tables`): the rows with
    their text vectors, and their postings (`_WRITE_INCOMING`), through `INCOMING`."""
    keys = TextKeys(r for r, _ in pairs)
    copy_rows(conn, sql.Identifier(INCOMING), pairs, model, keys.rows)
    conn.execute(_WRITE_INCOMING.format(
        table=table, postings=postings, incoming=sql.Identifier(INCOMING),
        columns=sql.SQL(", ").join(map(sql.Identifier, COLUMNS)),
        incoming_columns=sql.SQL(", ").join(sql.Identifier("i", c) for c in COLUMNS)), {"texts": keys.texts})
    conn.execute(sql.SQL("TRUNCATE {}").format(sql.Identifier(INCOMING)))


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
                self._copy_existing(instance, run)

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

    def _copy_existing(self, instance: str, run: list) -> None:
        """Rows into the instance's partition. One that another process wrote since the caller looked (a
        sweep indexing what an interrupted run of the same import stored, `core.conversation.indexing`)
        fails the COPY: the batch is then written again without the rows the index holds by now, the same
        rows made from the same messages. Looked up only then, so a load that meets none pays nothing."""
        try:
            with self.index.pool.connection() as conn, without_time_limit(conn), conn.transaction():
                self._copy(conn, sql.Identifier("memory"), run)
            return
        except UniqueViolation:
            pass
        with self.index.pool.connection() as conn, without_time_limit(conn), conn.transaction():
            there = self.index.held(instance, [r.id for r, _ in run], conn=conn)
            self._copy(conn, sql.Identifier("memory"), [p for p in run if p[0].id not in there])

    def _copy_staged(self, run: list) -> None:
        instance = self.staged.instance
        write_new_rows(self.staged.conn, sql.Identifier(partition_name(instance)),
                       sql.Identifier(postings_name(instance)), run, self.index.embedder.name)

    def _stage(self, instance: str) -> bool:
        """Open a transaction holding the partition's lock and create its table; False if it exists."""
        relname = partition_name(instance)
        cm = self.index.pool.connection()
        conn = cm.__enter__()
        tx = conn.transaction()
        tx.__enter__()
        staged = _Staged(instance, cm, conn, tx)
        try:
            # The staged table is loaded and its indexes built (ATTACH) in this one transaction: minutes
            # at 500,000 memories, past any statement timeout meant for a turn.
            conn.execute("SET LOCAL statement_timeout = 0")
            conn.answer_timeout_s = None
            # The partition's lock, as `ensure_partition` takes it, held to the attach: a second load of the
            # same new instance (two imports at once) waits here, then finds the partition and writes into it;
            # both created its table, and the second failed on its type's name ("Unexpected UniqueViolation").
            # Then looked up in pg_class as this statement sees it: `to_regclass` answered from the session's
            # catalog cache, which still held "no such table" from before the other load committed it.
            conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (relname,))
            made = conn.execute("SELECT EXISTS (SELECT FROM pg_class WHERE relname = %s AND relkind = 'r')",
                                (relname,)).fetchone()[0]
            exists = made or self.index.partition_exists(instance, conn=conn)
            if not exists:
                create_new_tables(conn, sql.Identifier(relname), sql.Identifier(postings_name(instance)))
        except BaseException:  # its transaction ended here: left open, psycopg warned "error ignored in rollback"
            staged.close(rollback=True)
            raise
        if exists:
            staged.close(rollback=False)
            return False
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
        lexemes = sql.Identifier(lexemes_name(instance))
        try:
            conn.execute(sql.SQL("SET LOCAL maintenance_work_mem = {}").format(sql.Literal(BUILD_MEMORY)))
            # One parallel worker beside the leader: with two, on two cores, HNSW builds ran slower.
            conn.execute("SET LOCAL max_parallel_maintenance_workers = 1")
            # The words' counters, in a table of their own too. The instance's total length Σ dl is Σ tf
            # over its postings (no sort by memory needed).
            conn.execute(sql.SQL("CREATE TABLE {} (LIKE memory_lexeme INCLUDING DEFAULTS)").format(lexemes))
            conn.execute(sql.SQL("""
                INSERT INTO {} (instance, lexeme, df, len)
                SELECT %(i)s, '', (SELECT count(*) FROM {}), (SELECT coalesce(sum(tf::float8), 0) FROM {})
                UNION ALL
                SELECT %(i)s, lexeme, count(*), 0 FROM {} GROUP BY lexeme""").format(
                lexemes, sql.Identifier(relname), postings, postings), {"i": instance})
            # Every index of `memory`, of the postings and of the counters, each built once over all of the
            # instance's rows, before ATTACH takes its lock on the parent (see the module's docstring).
            for parent, table in (("memory", sql.Identifier(relname)), ("memory_term", postings),
                                  ("memory_lexeme", lexemes)):
                for statement in cloned_indexes(conn, parent, table):
                    conn.execute(statement)
            conn.execute(sql.SQL("ANALYZE {}").format(sql.Identifier(relname)))
            conn.execute(sql.SQL("ANALYZE {}").format(postings))
            conn.execute(sql.SQL("ANALYZE {}").format(lexemes))
            conn.execute(sql.SQL("ALTER TABLE memory ATTACH PARTITION {} FOR VALUES IN ({})").format(
                sql.Identifier(relname), sql.Literal(instance)))
            conn.execute("INSERT INTO memory_partition (instance, relname) VALUES (%s, %s) "
                         "ON CONFLICT DO NOTHING", (instance, relname))
            for parent, table in (("memory_term", postings), ("memory_lexeme", lexemes)):
                conn.execute(sql.SQL("ALTER TABLE {} ATTACH PARTITION {} FOR VALUES IN ({})").format(
                    sql.Identifier(parent), table, sql.Literal(instance)))
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
