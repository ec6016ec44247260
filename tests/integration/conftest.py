"""Servers of their own for the fault tests: those stop, kill and restart Redis and Postgres, which must
never disturb the session's servers that every other test uses; and the servers a module's tests share (the
HTTP API, a fake LLM)."""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
import pytest
from psycopg.conninfo import make_conninfo

from core.config import load_settings
from core.index import memory_index
from core.runtime import Workbench
from core.services import EmbeddedPostgres, EmbeddedRedis
from tests.support.api import thread_server
from tests.support.embedders import KeywordEmbedder
from tests.support.fake_llm import FakeLLMServer


@pytest.fixture(scope="session")
def fault_dir() -> Path:
    # Under /tmp, not pytest's basetemp: that one is 0700, which the pgserver account Postgres runs as
    # (when the tests run as root) may not enter.
    path = Path(tempfile.mkdtemp(prefix="wb-fault-"))
    yield path
    EmbeddedRedis(path).stop()
    EmbeddedPostgres(path).stop()
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def fault_wb(fault_dir):
    """A Workbench on the fault servers (started if a test left them down), keyword embedder, no LLM.

    It reaches them by URL, as external servers, so one a test stops or kills stays down until the test
    starts it again (a process starts the embedded servers again by itself: test_server_recovery.py)."""
    urls = fault_urls(fault_dir)
    wb = Workbench(load_settings(data_dir=fault_dir, redis_url=urls["REDIS_URL"], database_url=urls["DATABASE_URL"]),
                   embedder=KeywordEmbedder())
    yield wb
    wb.close()
    EmbeddedRedis(fault_dir).ensure_running()
    EmbeddedPostgres(fault_dir).ensure_running()


def fault_urls(fault_dir: Path) -> dict[str, str]:
    """The fault servers' REDIS_URL and DATABASE_URL, each started if it is down: a process given them
    reaches them as external servers, so one a test stops stays down until the test starts it again."""
    return {"REDIS_URL": EmbeddedRedis(fault_dir).ensure_running(),
            "DATABASE_URL": EmbeddedPostgres(fault_dir).ensure_running()}


def kill_redis(data_dir: Path) -> None:
    """SIGKILL: a crash, not a shutdown; only what the append-only file holds survives."""
    pid = int((data_dir / "redis" / "redis.pid").read_text().strip())
    os.kill(pid, signal.SIGKILL)
    for _ in range(200):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.01)


@contextmanager
def scratch_database(workbench, prefix: str, options: str = "") -> Iterator[str]:
    """The conninfo of a database of its own on the test server (`options` of CREATE DATABASE, e.g. a
    locale), with pgvector and nothing else; dropped afterwards."""
    name = f"{prefix}_{uuid.uuid4().hex[:8]}"
    with workbench.pool().connection() as conn:
        conn.execute(f"CREATE DATABASE {name} {options}")
        conninfo = make_conninfo(conn.info.dsn, dbname=name, password=conn.info.password)
    try:
        with psycopg.connect(conninfo, autocommit=True) as db:
            db.execute("CREATE EXTENSION IF NOT EXISTS vector")
        yield conninfo
    finally:
        with workbench.pool().connection() as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture
def other_database(workbench):
    """A database of its own on the test server, for a schema of another age."""
    with scratch_database(workbench, "upgrade") as conninfo, psycopg.connect(conninfo, autocommit=True) as db:
        yield db


@pytest.fixture
def old_instance_database(other_database):
    """`other_database` with today's schema and an instance "old" partitioned as a first write makes it, for
    rows written as an older version wrote them."""
    other_database.execute(memory_index.DDL)
    other_database.execute("""CREATE TABLE memory_p_old PARTITION OF memory FOR VALUES IN ('old');
                              SELECT memory_text_partitions('old', 'memory_p_old');
                              INSERT INTO memory_partition VALUES ('old', 'memory_p_old');""")
    return other_database


@pytest.fixture(scope="module")
def api(workbench) -> Iterator[str]:
    """The HTTP API on uvicorn in a thread, shared by a module's tests and without a rate limit (a module
    sends thousands of requests); a module needing other settings defines its own `api`."""
    with thread_server(workbench, settings=workbench.settings.model_copy(
            update={"api_rate_limit": "100000/minute"})) as url:
        yield url


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeLLMServer]:
    """A fake OpenAI-compatible LLM server shared by a module's tests (`fake_llm` is one a test)."""
    with FakeLLMServer() as srv:
        yield srv
