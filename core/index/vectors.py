"""Vector columns shared by the stores: one partial HNSW index per embedding model.

Columns are untyped `vector` so rows of several models can live side by side; each model gets an
index over `embedding::vector(dim)` restricted to its rows. Queries must repeat that cast and name
the model as a literal, or the planner cannot use the index.
"""

from __future__ import annotations

import hashlib

from psycopg import sql
from psycopg_pool import ConnectionPool

from core.embeddings import Embedder
from core.services.bounded import without_time_limit


def model_slug(model: str) -> str:
    return hashlib.sha1(model.encode()).hexdigest()[:12]


# The graph's shape: 12 neighbours a node (pgvector's default 16), built with a beam of 40 (default 64).
# It costs less to build and to grow, and searched with a beam of 64 (`core.retrieval.hybrid
# .HNSW_BEAM_MIN`) it finds nearly as many of the exact 20 nearest as the default graph at pgvector's
# default beam of 40, in the same time. Measured on synthetic conversation memories, 300 questions
# (2026-11-28, benchmarks/README.md "Bulk ingest"): at 100,000, 97.1 % against 97.3 % of the 20 nearest,
# 1.12 against 1.23 ms a scan, built in 10.8 s against 20.4 s, a row inserted in 1.17 against 1.59 ms; at
# 500,000, 96.3 % against 96.5 %, 1.73 against 1.80 ms, built in 209 s against 371 s, 1.72 against 2.52 ms
# a row. Indexes made before keep the shape they were built with (only a new database gets this one).
HNSW_WITH = sql.SQL("WITH (m = 12, ef_construction = 40)")


def ensure_model_hnsw_index(pool: ConnectionPool, table: str, embedder: Embedder) -> None:
    """CREATE INDEX IF NOT EXISTS <table>_hnsw_<model slug> for the embedder's model (idempotent), when the
    catalog does not list it yet. Even for an index that exists, CREATE INDEX first waits for its SHARE lock
    on the table, which every open write transaction holds off (an import into an instance), and meanwhile
    queues every other write of every instance behind it: once per process, at its first write."""
    name = f"{table}_hnsw_{model_slug(embedder.name)}"
    stmt = sql.SQL(
        "CREATE INDEX IF NOT EXISTS {name} ON {table} USING hnsw ((embedding::vector({dim})) "
        "vector_cosine_ops) {shape} WHERE embedding_model = {model}"
    ).format(name=sql.Identifier(name), table=sql.Identifier(table),
             dim=sql.Literal(embedder.dim), model=sql.Literal(embedder.name), shape=HNSW_WITH)
    with pool.connection() as conn, without_time_limit(conn):
        if conn.execute("SELECT to_regclass(quote_ident(%s)) IS NULL", (name,)).fetchone()[0]:
            conn.execute(stmt)
