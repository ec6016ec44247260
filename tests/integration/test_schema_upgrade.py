"""The schema's set-up, which also upgrades a database an older version made, runs without the turn's
statement timeout: over a two-year import the text index's re-analysis took 55 s, past the 30 s limit, and
the cancelled upgrade was tried again (and cancelled again) at every start. It says so while it runs, and
a start whose code brings the DDL applied last applies nothing."""

from __future__ import annotations

import logging
import sys
import types
from functools import partial

import pytest
from psycopg_pool import ConnectionPool

from core import schema
from core.index import memory_index
from core.services import _configure
from core.services.bounded import bounded_connection_class
from tests.integration.conftest import scratch_database


@pytest.fixture
def database(workbench):
    """The conninfo of a database of its own on the test server, with pgvector and nothing else."""
    with scratch_database(workbench, "schema") as conninfo:
        yield conninfo


def test_an_upgrade_longer_than_the_statement_timeout_completes_and_the_limit_is_back(database, monkeypatch):
    slow = types.ModuleType("tests_slow_upgrade")
    slow.DDL = "SELECT pg_sleep(0.6)"  # an upgrade step three times the limit below
    monkeypatch.setitem(sys.modules, slow.__name__, slow)
    monkeypatch.setattr(schema, "SCHEMA_MODULES", [*schema.SCHEMA_MODULES, slow.__name__])
    # A database of its own: applied to the session's, this schema made the next process of the worker (a
    # CLI command's) find it changed and print the upgrade's warning.
    pool = ConnectionPool(database, min_size=1, max_size=1, open=False,
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


def test_an_upgrade_says_so_while_it_runs_and_the_next_start_applies_nothing(database, caplog):
    with ConnectionPool(database, min_size=1, max_size=1, kwargs={"autocommit": True}) as pool:
        with pool.connection() as conn:
            conn.execute(memory_index.DDL)  # a database an older version made: the memory table, no digest
        with caplog.at_level(logging.WARNING, logger="core.schema"):
            schema.ensure_schema(pool)
        said = [r.getMessage() for r in caplog.records]
        assert said[0].startswith("upgrading the database for this version of Memory Workbench: once")
        assert said[1].startswith("database upgraded in ") and len(said) == 2

        caplog.clear()
        with pool.connection() as conn:
            conn.execute("DROP INDEX memory_model_kind")  # gone behind its back: a start that applies nothing
        with caplog.at_level(logging.WARNING, logger="core.schema"):
            schema.ensure_schema(pool)  # leaves it gone
        assert caplog.records == []
        with pool.connection() as conn:
            assert conn.execute("SELECT to_regclass('memory_model_kind')").fetchone()[0] is None
            assert conn.execute("SELECT count(*) FROM schema_applied").fetchone()[0] == 1


def test_a_new_database_is_made_without_a_word(database, caplog):
    with ConnectionPool(database, min_size=1, max_size=1, kwargs={"autocommit": True}) as pool:
        with caplog.at_level(logging.WARNING, logger="core.schema"):
            schema.ensure_schema(pool)
        assert caplog.records == []
        with pool.connection() as conn:
            assert conn.execute("SELECT to_regclass('memory') IS NOT NULL").fetchone()[0]
