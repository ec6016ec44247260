"""The schema's set-up, which also upgrades a database an older version made, runs without the turn's
statement timeout: over a two-year import the text index's re-analysis took 55 s, past the 30 s limit, and
the cancelled upgrade was tried again (and cancelled again) at every start."""

from __future__ import annotations

import sys
import types
from functools import partial

from psycopg.conninfo import make_conninfo
from psycopg_pool import ConnectionPool

from core import schema
from core.services import _configure
from core.services.bounded import bounded_connection_class


def test_an_upgrade_longer_than_the_statement_timeout_completes_and_the_limit_is_back(workbench, monkeypatch):
    slow = types.ModuleType("tests_slow_upgrade")
    slow.DDL = "SELECT pg_sleep(0.6)"  # an upgrade step three times the limit below
    monkeypatch.setitem(sys.modules, slow.__name__, slow)
    monkeypatch.setattr(schema, "SCHEMA_MODULES", [*schema.SCHEMA_MODULES, slow.__name__])
    with workbench.pool().connection() as conn:  # the test's own database
        conninfo = make_conninfo(conn.info.dsn, password=conn.info.password)
    pool = ConnectionPool(conninfo, min_size=1, max_size=1, open=False,
                          connection_class=bounded_connection_class(0.2),
                          configure=partial(_configure, statement_timeout_s=0.2, session=()),
                          kwargs={"autocommit": True})
    pool.open(wait=True, timeout=15)
    try:
        schema.ensure_schema(pool)
        with pool.connection() as conn:
            assert conn.execute("SHOW statement_timeout").fetchone()[0] == "200ms"
    finally:
        pool.close()
