"""Floors: `python -m benchmarks.floors [--memories N] [--json OUT]`.

What the hardware allows, part by part, for the speed goals that are not met: each part of a bulk load
and of a query alone, on embedded Postgres and the offline embedder, over the speed benchmark's
memories (`benchmarks.synth`, one instance of N, default 100,000). A goal below a floor cannot be met
by this design on this machine, however the parts are arranged; a goal between the floor and the
figure says how much arranging could still buy.

Ingest, each part alone and timed on its own:
- `embed`: the memories' embedding texts, in this process (`Embedder.embed_batch`, batches of 2,000);
- `rows`: the rows into a new table without indexes, batch by batch as a new instance's load writes them
  (`core.index.bulk_load.write_new_rows`: binary COPY, each distinct text parsed once, the rows written
  with their text vectors and their postings into a table of their own);
- `hnsw`: one HNSW index build over those rows, of the product's shape (`HNSW_WITH`), with the bulk
  load's settings (512 MB, one parallel worker beside the leader);
- `postings_index`: the index of those postings, as the attach builds it.
Until 2026-12-05 the text vector was a generated column: `copy` was the rows' COPY with it, and
`postings` made the postings from the rows and indexed them.
Query, each part alone, median over the questions:
- `round_trip`: `SELECT 1` on a pooled connection (the protocol's floor);
- `embed`: the question's embedding;
- `hnsw_scan`: the 20 nearest by the HNSW index (the search's beam, `HNSW_BEAM_MIN`), nothing else;
- `posting_lists`: reading the question's words' first 100 postings each, nothing else.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from psycopg import sql

from benchmarks import synth
from benchmarks.common import RESULTS, bench_workbench, machine, write_json
from core.index.bulk_load import BUILD_MEMORY, create_new_tables, write_new_rows
from core.index.names import partition_name, postings_name
from core.index.records import embedding_text
from core.index.vectors import HNSW_WITH
from core.retrieval.hybrid import HNSW_BEAM_MIN
from core.services.bounded import without_time_limit

TABLE, POSTINGS = "floor_rows", "floor_postings"
BATCH = 2000  # records a batch, as `MemoryIndex.bulk_load` writes them


def _timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return round(time.perf_counter() - t, 2)


def ingest(wb, n: int) -> dict:
    records = list(synth.records(synth.conversations(n, instances=1, prefix="floor")))
    embedder = wb.embedder.uncached
    vectors: list = []
    seconds = {"embed": _timed(lambda: [vectors.extend(embedder.embed_batch(
        [embedding_text(r) for r in records[i:i + BATCH]])) for i in range(0, n, BATCH)])}
    name = embedder.name
    table, postings = sql.Identifier(TABLE), sql.Identifier(POSTINGS)
    with wb.pool().connection() as conn, without_time_limit(conn):
        conn.execute(sql.SQL("DROP TABLE IF EXISTS {}, {}").format(table, postings))

        def rows() -> None:
            with conn.transaction():  # the temporary table lives until the transaction ends, as in a load
                create_new_tables(conn, table, postings)
                pairs = list(zip(records, vectors, strict=True))
                for i in range(0, n, BATCH):
                    write_new_rows(conn, table, postings, pairs[i:i + BATCH], name)

        seconds["rows"] = _timed(rows)
        made = conn.execute(sql.SQL("SELECT count(*) FROM {}").format(postings)).fetchone()[0]
        conn.execute(sql.SQL("SET maintenance_work_mem = {}").format(sql.Literal(BUILD_MEMORY)))
        conn.execute("SET max_parallel_maintenance_workers = 1")
        seconds["hnsw"] = _timed(lambda: conn.execute(sql.SQL(
            "CREATE INDEX ON {} USING hnsw ((embedding::vector({})) vector_cosine_ops) {}").format(
            table, sql.Literal(embedder.dim), HNSW_WITH)))
        seconds["postings_index"] = _timed(lambda: conn.execute(sql.SQL(
            "CREATE INDEX ON {} (instance, lexeme, impact DESC) INCLUDE (id, tf, dl)").format(postings)))
        conn.execute(sql.SQL("DROP TABLE {}, {}").format(table, postings))
    # The parts run one after another here; a bulk load overlaps embedding with writing the rows, so its
    # floor is the longest chain of what cannot overlap: the attach's index builds after the last row.
    per_s = {k: round(n / v) for k, v in seconds.items() if v}
    return {"ingest_parts_s": seconds, "ingest_parts_per_s": per_s, "postings_per_memory": round(made / n, 1)}


def query(wb, instance: str, questions: list[str]) -> dict:
    embedder, pool = wb.embedder, wb.pool()
    part, postings = partition_name(instance), postings_name(instance)
    # The model as a literal, as the search writes it: the partial HNSW index is used only then.
    hnsw = sql.SQL("SELECT id FROM {} WHERE embedding_model = {} ORDER BY (embedding::vector({})) <=> "
                   "%s::vector({}) LIMIT 20").format(sql.Identifier(part), sql.Literal(embedder.name),
                                                     sql.Literal(embedder.dim), sql.Literal(embedder.dim)
                                                     ).as_string(None)
    lists = sql.SQL("""
        SELECT count(*) FROM (SELECT DISTINCT u.lexeme FROM unnest(to_tsvector('english', %s)) u) q
        CROSS JOIN LATERAL (SELECT id FROM {} x WHERE x.instance = %s AND x.lexeme = q.lexeme
                            ORDER BY impact DESC LIMIT 100) p""").format(sql.Identifier(postings)).as_string(None)
    times: dict[str, list[float]] = {"round_trip": [], "embed": [], "hnsw_scan": [], "posting_lists": []}
    with pool.connection() as conn:
        conn.execute(sql.SQL("SET hnsw.ef_search = {}").format(sql.Literal(HNSW_BEAM_MIN)))
        for i, q in enumerate(questions):
            t0 = time.perf_counter()
            conn.execute("SELECT 1", prepare=True).fetchall()
            t1 = time.perf_counter()
            vec = embedder.uncached.embed(q)
            t2 = time.perf_counter()
            conn.execute(hnsw, (vec,), prepare=True).fetchall()
            t3 = time.perf_counter()
            conn.execute(lists, (q, instance), prepare=True).fetchall()
            t4 = time.perf_counter()
            if i >= len(questions) // 4:  # the first quarter warms connections, plans and caches
                for key, dt in zip(times, (t1 - t0, t2 - t1, t3 - t2, t4 - t3), strict=True):
                    times[key].append(dt * 1000)
        conn.execute("RESET hnsw.ef_search")
    return {"query_parts_p50_ms": {k: round(statistics.median(v), 3) for k, v in times.items()}}


def run(n: int, data_dir: str | None, prefix: str = "floor") -> dict:
    instance = f"{prefix}-0"
    result: dict = {"memories": n, "machine": machine()}
    with bench_workbench(data_dir) as wb:
        wb.index.ensure_vector_index()
        result |= ingest(wb, n)
        wb.index.bulk_load(synth.records(synth.conversations(n, instances=1, prefix=prefix)))
        with wb.pool().connection() as conn:
            conn.execute("VACUUM (ANALYZE)")
        questions = [q for _, q in synth.queries(400, instances=[(instance, n)])]
        result |= query(wb, instance, questions)
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.floors", description=__doc__.split("\n")[0])
    ap.add_argument("--memories", type=int, default=100_000, help="memories [100,000]")
    ap.add_argument("--json", default=str(RESULTS / "floors.json"), help="where to write the result")
    ap.add_argument("--data-dir", default=None, help="servers' directory [a fresh temporary one]")
    args = ap.parse_args(argv)
    if args.memories < 100:
        ap.error("--memories must be 100 or more")
    write_json(run(args.memories, args.data_dir), args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
