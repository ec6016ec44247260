"""The embedded servers: start, reuse from another process, keep data across a stop and a start."""

import json
import os
import subprocess
import sys

import pytest

from core.config import load_settings
from core.errors import ServiceUnavailable
from core.runtime import Workbench
from core.services import EmbeddedPostgres, EmbeddedRedis, _require_pgvector


def test_both_services_are_up_and_described(workbench):
    statuses = {s.name: s for s in workbench.services.status()}
    assert statuses["Redis"].reachable and statuses["Redis"].mode == "embedded"
    assert statuses["Redis"].detail == "append-only on"
    assert statuses["Postgres"].reachable and statuses["Postgres"].version.startswith("16")
    assert statuses["Postgres"].detail.startswith("pgvector")


def test_a_second_process_reuses_the_running_servers(settings, workbench):
    workbench.redis().set("shared-key", "from-tests")
    env = {**os.environ, "DATA_DIR": str(settings.data_dir)}
    out = subprocess.run([sys.executable, "-m", "core.cli", "services"], capture_output=True, text=True,
                         env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    status = json.loads(out.stdout)
    assert all(s["reachable"] for s in status["services"])
    code = ("from core.runtime import Workbench; wb = Workbench(); print(wb.redis().get('shared-key'))")
    again = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert again.stdout.strip() == "from-tests"
    pid_file = settings.data_dir / "redis" / "redis.pid"
    assert pid_file.exists()


def test_data_survive_a_stop_and_a_start(tmp_path_factory):
    data = tmp_path_factory.mktemp("restart")
    wb = Workbench(load_settings(data_dir=data))
    wb.redis().set("k", "v")
    with wb.pool().connection() as conn:
        conn.execute("CREATE TABLE keepme (x int)")
        conn.execute("INSERT INTO keepme VALUES (42)")
    wb.close()
    EmbeddedRedis(data).stop()
    EmbeddedPostgres(data).stop()
    assert not EmbeddedRedis(data)._ping()

    wb2 = Workbench(load_settings(data_dir=data))
    try:
        assert wb2.redis().get("k") == "v"
        with wb2.pool().connection() as conn:
            assert conn.execute("SELECT x FROM keepme").fetchone()[0] == 42
    finally:
        wb2.close()
        EmbeddedRedis(data).stop()
        EmbeddedPostgres(data).stop()


def test_unreachable_postgres_is_a_clear_error():
    with pytest.raises(ServiceUnavailable, match="DATABASE_URL"):
        _require_pgvector("postgresql://nobody@127.0.0.1:1/none")
