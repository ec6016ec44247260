"""The embedded servers: start, reuse from another process, keep data across a stop and a start."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

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
    out = subprocess.run([sys.executable, "-m", "core.cli", "services"], check=False, capture_output=True,
                         text=True, env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    status = json.loads(out.stdout)
    assert all(s["reachable"] for s in status["services"])
    assert status["data_dir"] == str(settings.data_dir) and "settings_file" in status
    assert EmbeddedRedis(settings.data_dir).probe() == "up"  # found running, so left running
    code = ("from core.runtime import Workbench; wb = Workbench(); print(wb.redis().get('shared-key'))")
    again = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, env=env, timeout=60)
    assert again.stdout.strip() == "from-tests"
    pid_file = settings.data_dir / "redis" / "redis.pid"
    assert pid_file.exists()


def test_data_survive_a_stop_and_a_start():
    data = Path(tempfile.mkdtemp(prefix="wb-restart-"))  # not pytest's basetemp: 0700, see fault_dir
    wb = Workbench(load_settings(data_dir=data))
    wb.redis().set("k", "v")
    with wb.pool().connection() as conn:
        conn.execute("CREATE TABLE keepme (x int)")
        conn.execute("INSERT INTO keepme VALUES (42)")
    wb.close()
    EmbeddedRedis(data).stop()
    EmbeddedPostgres(data).stop()
    assert EmbeddedRedis(data).probe() == "down"

    wb2 = Workbench(load_settings(data_dir=data))
    try:
        assert wb2.redis().get("k") == "v"
        with wb2.pool().connection() as conn:
            assert conn.execute("SELECT x FROM keepme").fetchone()[0] == 42
    finally:
        wb2.close()
        EmbeddedRedis(data).stop()
        EmbeddedPostgres(data).stop()
        shutil.rmtree(data, ignore_errors=True)


def test_a_stop_lets_a_rewrite_asked_for_finish():
    """SHUTDOWN kills a rewrite of the append-only file under way: a command that deleted text and then
    stopped the server it had started left the old file, text inside, in 2 of 6 runs."""
    data = Path(tempfile.mkdtemp(prefix="wb-rewrite-"))
    server = EmbeddedRedis(data)
    try:
        r = Workbench(load_settings(data_dir=data)).redis()
        r.set("note", "QUOKKAZEBRA93 " * 1000)
        r.mset({f"filler:{i}": "x" * 200 for i in range(20_000)})  # a rewrite that takes a moment
        r.delete("note")
        r.bgrewriteaof()
        r.close()
        server.stop()
        files = [f for f in server.dir.rglob("*") if f.is_file()]
        assert files and not [f.name for f in files if b"QUOKKAZEBRA93" in f.read_bytes()]
    finally:
        server.stop()
        shutil.rmtree(data, ignore_errors=True)


def test_unreachable_postgres_is_a_clear_error():
    with pytest.raises(ServiceUnavailable, match="DATABASE_URL"):
        _require_pgvector("postgresql://nobody@127.0.0.1:1/none")


def test_a_damaged_append_only_file_names_its_path_and_is_repaired_after_a_backup():
    data = Path(tempfile.mkdtemp(prefix="wb-aof-"))
    server = EmbeddedRedis(data)
    env = {**os.environ, "DATA_DIR": str(data)}
    try:
        client = Workbench(load_settings(data_dir=data)).redis()
        client.set("kept", "before the damage")
        client.close()
        server.stop()
        with server.aof.open("ab") as f:
            f.write(b"!!! half a command from a full disk\r\n")
        damaged = server.aof.read_bytes()

        with pytest.raises(ServiceUnavailable) as failed:
            server.ensure_running()
        message = str(failed.value)
        assert f"append-only file {server.aof} is damaged" in message and ".data/" not in message
        assert "workbench services repair-redis" in message
        status = {s.name: s for s in Workbench(load_settings(data_dir=data)).services.status()}["Redis"]
        assert not status.reachable and "repair-redis" in status.detail and str(data) in status.hint

        cli = [sys.executable, "-m", "core.cli", "services", "repair-redis"]
        declined = subprocess.run(cli, check=False, input="n\n", capture_output=True, text=True, env=env, timeout=60)
        assert declined.returncode != 0 and server.aof.read_bytes() == damaged
        repaired = subprocess.run([*cli, "--yes"], check=False, capture_output=True, text=True, env=env, timeout=60)
        assert repaired.returncode == 0, repaired.stderr
        report = json.loads(repaired.stdout)
        assert report["size_after"] < report["size_before"] and "Successfully truncated" in report["report"]
        assert Path(report["backup"]).read_bytes() == damaged
        assert os.stat(report["backup"]).st_mode & 0o077 == 0

        wb = Workbench(load_settings(data_dir=data))
        assert wb.redis().get("kept") == "before the damage"
        wb.close()
        running = subprocess.run([*cli, "--yes"], check=False, capture_output=True, text=True, env=env, timeout=60)
        assert running.returncode == 2 and "nothing to repair" in running.stderr
        server.stop()  # a sound file, stopped: checked, neither copied nor cut
        sound = subprocess.run([*cli, "--yes"], check=False, capture_output=True, text=True, env=env, timeout=60)
        assert sound.returncode == 0, sound.stderr
        checked = json.loads(sound.stdout)
        assert checked["backup"] is None and checked["report"].startswith("nothing to repair: ")
        assert checked["size_after"] == checked["size_before"] and len(list(server.aof.parent.glob("*.bak"))) == 1
    finally:
        server.stop()
        EmbeddedPostgres(data).stop()
        shutil.rmtree(data, ignore_errors=True)
