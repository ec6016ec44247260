"""Shared fixtures: real embedded Redis and Postgres in a temporary data directory for the session.

Tests isolate themselves by instance (a fresh id per test), not by server, so the servers start once.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import uuid
from pathlib import Path

import pytest

# Tests never read the developer's own secrets file.
os.environ["WORKBENCH_SECRETS_FILE"] = str(Path(__file__).parent / "support" / "no-secrets.toml")
for _var in ("REDIS_URL", "DATABASE_URL", "OPENAI_API_KEY", "GROQ_API_KEY", "LLM_BASE_URL", "LLM_API_KEY",
             "EMBEDDER", "INSTANCE", "DATA_DIR"):
    os.environ.pop(_var, None)
# Nor the developer's data: DATA_DIR's per-user default, should a test forget its own, lies in a temp dir.
os.environ["XDG_DATA_HOME"] = tempfile.mkdtemp(prefix="wb-home-")
atexit.register(shutil.rmtree, os.environ["XDG_DATA_HOME"], ignore_errors=True)

from core.config import Settings, load_settings  # noqa: E402
from core.runtime import Workbench  # noqa: E402
from core.services import EmbeddedPostgres, EmbeddedRedis  # noqa: E402
from tests.support.embedders import KeywordEmbedder  # noqa: E402
from tests.support.fake_llm import FakeLLMServer  # noqa: E402


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The session's servers live in their own temp dir, not under pytest's basetemp: pytest deletes
    all but its three newest basetemps, which would pull the data from under a concurrent session.
    The path is short because Unix socket paths are limited to ~107 characters."""
    path = Path(tempfile.mkdtemp(prefix="wb-test-"))
    yield path
    EmbeddedRedis(path).stop()
    EmbeddedPostgres(path).stop()
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="session")
def settings(data_dir) -> Settings:
    return load_settings(data_dir=data_dir)


@pytest.fixture(scope="session")
def workbench(settings) -> Workbench:
    """The product's runtime with the real offline embedder (wordllama) and no LLM."""
    wb = Workbench(settings)
    yield wb
    wb.close()


@pytest.fixture(scope="session")
def keyword_workbench(settings) -> Workbench:
    """The runtime with the deterministic keyword embedder, for exact-score assertions."""
    wb = Workbench(settings, embedder=KeywordEmbedder())
    yield wb
    wb.close()


@pytest.fixture
def instance() -> str:
    return f"t-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def fake_llm():
    with FakeLLMServer() as srv:
        yield srv


@pytest.fixture
def llm_settings(settings, fake_llm) -> Settings:
    """Settings pointing the LLM at the local fake server, with fast retries."""
    return settings.model_copy(update={"llm_base_url": fake_llm.url + "/v1", "llm_max_retries": 2,
                                       "llm_timeout_s": 5.0})
