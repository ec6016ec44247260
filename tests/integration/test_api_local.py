"""`workbench api` before any key exists, on servers of its own (keys are global to a database, and other
tests create some): on loopback it serves the local user; beyond loopback it refuses to start; once a key
exists, a request without one is refused."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import httpx
import pytest

from core import usecases as uc
from core.config import load_settings
from core.runtime import Workbench
from core.services import EmbeddedPostgres, EmbeddedRedis
from tests.support.api import api_env, assert_problem, process_server, run_cli


@pytest.fixture(scope="module")
def keyless_dir() -> Path:
    path = Path(tempfile.mkdtemp(prefix="wb-api-"))  # short: Unix socket paths are limited
    yield path
    EmbeddedRedis(path).stop()
    EmbeddedPostgres(path).stop()
    shutil.rmtree(path, ignore_errors=True)


def test_beyond_loopback_without_a_key_it_refuses_to_start(keyless_dir):
    done = run_cli(["api", "--host", "0.0.0.0", "--port", "8799"], api_env(keyless_dir))
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "workbench keys create" in lines[0], done.stderr


def test_loopback_serves_the_local_user_until_a_key_exists(keyless_dir):
    with process_server(keyless_dir) as url:
        turn = httpx.post(f"{url}/v1/instances/home/remember",
                          json={"thought": "the spare key is in the shed"}, timeout=60)
        assert turn.status_code == 200, turn.text
        assert httpx.get(f"{url}/v1/instances").json() == {"instances": ["home"]}

        wb = Workbench(load_settings(data_dir=keyless_dir))
        try:
            secret = uc.create_key(wb, uc.CreateKey(name="first", instances=["home"])).secret
        finally:
            wb.close()
        assert_problem(httpx.get(f"{url}/v1/instances/home/chains"), 401, "unauthenticated")
        keyed = httpx.get(f"{url}/v1/instances/home/chains", headers={"Authorization": f"Bearer {secret}"})
        assert keyed.status_code == 200 and keyed.json()["total"] == 1
