"""Servers of their own for the fault tests: those stop, kill and restart Redis and Postgres, which must
never disturb the session's servers that every other test uses."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from core.config import load_settings
from core.runtime import Workbench
from core.services import EmbeddedPostgres, EmbeddedRedis
from tests.support.embedders import KeywordEmbedder


@pytest.fixture(scope="session")
def fault_dir(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("fault")  # short: Unix socket paths are limited to ~107 characters
    yield path
    EmbeddedRedis(path).stop()
    EmbeddedPostgres(path).stop()


@pytest.fixture
def fault_wb(fault_dir):
    """A Workbench on the fault servers (started if a test left them down), keyword embedder, no LLM."""
    EmbeddedRedis(fault_dir).ensure_running()
    EmbeddedPostgres(fault_dir).ensure_running()
    wb = Workbench(load_settings(data_dir=fault_dir), embedder=KeywordEmbedder())
    yield wb
    wb.close()
    EmbeddedRedis(fault_dir).ensure_running()
    EmbeddedPostgres(fault_dir).ensure_running()


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
