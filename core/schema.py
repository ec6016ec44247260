"""Idempotent Postgres schema set-up, run when the pool opens.

Each storage module owns its DDL; this module applies them in order under an advisory lock, so two
processes starting together do not race. The DDL also upgrades a database made by an older version, once
(a text index re-made, a column added): over a real history that takes longer than a turn's statement
timeout (a two-year ChatGPT import, 35,516 memories: 55 s), and a cancelled upgrade, rolled back, was tried
again at every start, so the data directory never opened. It runs without the time limits.
"""

from __future__ import annotations

import importlib

from psycopg_pool import ConnectionPool

# Modules that define a `DDL` string, in the order they must be applied.
SCHEMA_MODULES = [
    "core.index.memory_index",
    "core.retrieval.profiles",
    "core.tuning.labels",
    "core.past_tasks.store",
    "core.bank.db",
    "core.access.keys",
    "core.archive.marks",
]

_LOCK_KEY = 0x4D454D57  # "MEMW"


def ensure_schema(pool: ConnectionPool) -> None:
    from core.services.bounded import without_time_limit  # core.services imports this module

    with pool.connection() as conn, conn.transaction(), without_time_limit(conn):
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
        for name in SCHEMA_MODULES:
            conn.execute(importlib.import_module(name).DDL)
