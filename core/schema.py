"""Idempotent Postgres schema set-up, run when the pool opens.

Each storage module owns its DDL; this module applies them in order under an advisory lock, so two
processes starting together do not race.
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
    with pool.connection() as conn, conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
        for name in SCHEMA_MODULES:
            conn.execute(importlib.import_module(name).DDL)
