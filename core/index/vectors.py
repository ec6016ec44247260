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


def ensure_model_hnsw_index(pool: ConnectionPool, table: str, embedder: Embedder) -> None:
    """CREATE INDEX IF NOT EXISTS <table>_hnsw_<model slug> for the embedder's model (idempotent)."""
    stmt = sql.SQL(
        "CREATE INDEX IF NOT EXISTS {name} ON {table} USING hnsw ((embedding::vector({dim})) "
        "vector_cosine_ops) WHERE embedding_model = {model}"
    ).format(name=sql.Identifier(f"{table}_hnsw_{model_slug(embedder.name)}"), table=sql.Identifier(table),
             dim=sql.Literal(embedder.dim), model=sql.Literal(embedder.name))
    with pool.connection() as conn, without_time_limit(conn):
        conn.execute(stmt)
