"""Idempotent Postgres schema set-up, run when the pool opens.

Each storage module owns its DDL; this module applies them in order under an advisory lock, so two
processes starting together do not race. The DDL also upgrades a database made by an older version, once
(a text index re-made, a column added): over a real history that takes longer than a turn's statement
timeout (a two-year ChatGPT import, 35,516 memories: 55 s), and a cancelled upgrade, rolled back, was tried
again at every start, so the data directory never opened. It runs without the time limits, and says so
first (a warning on standard error, the terminal `make run` serves from), so a long first start after an
upgrade is not silent.

The digest of the DDL it applied last is kept (`schema_applied`): a start whose code brings the same DDL applies
nothing (30-50 ms saved at every start of a command, the API or the MCP server).
"""

from __future__ import annotations

import hashlib
import importlib
import logging
import time

from psycopg_pool import ConnectionPool

log = logging.getLogger(__name__)

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
_APPLIED = "CREATE TABLE IF NOT EXISTS schema_applied (digest text PRIMARY KEY, applied_at timestamptz NOT NULL)"


def ensure_schema(pool: ConnectionPool) -> None:
    from core.services.bounded import without_time_limit  # core.services imports this module

    ddl = [importlib.import_module(name).DDL for name in SCHEMA_MODULES]
    digest = hashlib.sha256("\0".join(ddl).encode()).hexdigest()
    with pool.connection() as conn:
        if _applied(conn, digest):
            return
    with pool.connection() as conn, conn.transaction(), without_time_limit(conn):
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
        if _applied(conn, digest):  # another process applied it while this one waited for the lock
            return
        older = conn.execute("SELECT to_regclass('memory') IS NOT NULL").fetchone()[0]
        if older:
            log.warning("upgrading the database for this version of Memory Workbench: once, and over a long "
                        "history it can take a minute or more; wait for it to finish")
        started = time.perf_counter()
        for statement in ddl:
            conn.execute(statement)
        conn.execute(_APPLIED)
        conn.execute("DELETE FROM schema_applied")  # the last one alone: code taken back applies its own again
        conn.execute("INSERT INTO schema_applied VALUES (%s, now())", (digest,))
        if older:
            log.warning("database upgraded in %.1f s", time.perf_counter() - started)


def _applied(conn, digest: str) -> bool:
    """Whether this DDL was the last applied to the database."""
    if not conn.execute("SELECT to_regclass('schema_applied') IS NOT NULL").fetchone()[0]:
        return False
    return conn.execute("SELECT EXISTS (SELECT 1 FROM schema_applied WHERE digest = %s)", (digest,)).fetchone()[0]
