"""The embedded servers and the dashboard killed as power loss or the OOM killer kills them, then started
again as a user would (`workbench services`, `workbench serve`), without cleaning anything by hand."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from core.services import EmbeddedPostgres, EmbeddedRedis

ROOT = Path(__file__).resolve().parents[2]


def _workbench(data_dir: Path, *args: str, **popen) -> subprocess.Popen:
    env = {**os.environ, "DATA_DIR": str(data_dir), "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-m", "core.cli", *args], cwd=ROOT, env=env, text=True, **popen)


def _gone(pid: int, within_s: float) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


def test_servers_killed_with_their_pid_files_naming_a_live_process_start_again():
    """After a crash the pid files stay; after a reboot their pids may be another process's."""
    data_dir = Path(tempfile.mkdtemp(prefix="wb-crash-"))
    decoy = subprocess.Popen(["sleep", "60"])
    try:
        redis, postgres = EmbeddedRedis(data_dir), EmbeddedPostgres(data_dir)
        redis.ensure_running()
        postgres.ensure_running()
        os.kill(redis.pid(), signal.SIGKILL)
        os.kill(int((data_dir / "pg" / "postmaster.pid").read_text().split()[0]), signal.SIGKILL)
        time.sleep(0.5)
        (data_dir / "redis" / "redis.pid").write_text(f"{decoy.pid}\n")
        lines = (data_dir / "pg" / "postmaster.pid").read_text().splitlines()
        (data_dir / "pg" / "postmaster.pid").write_text("\n".join([str(decoy.pid), *lines[1:]]) + "\n")

        assert _services_reachable(data_dir) == [("Redis", True), ("Postgres", True)]
        assert decoy.poll() is None  # the process the stale files named is left alone
    finally:
        decoy.kill()
        EmbeddedRedis(data_dir).stop()
        EmbeddedPostgres(data_dir).stop()
        shutil.rmtree(data_dir, ignore_errors=True)


FIRST_START = """
import sys
from pathlib import Path
from core.services import EmbeddedPostgres
EmbeddedPostgres(Path(sys.argv[1])).ensure_running()
"""


def _services_reachable(data_dir: Path) -> list[tuple[str, bool]]:
    check = _workbench(data_dir, "services", stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = check.communicate(timeout=90)
    assert check.returncode == 0, (out, err)
    return [(s["name"], s["reachable"]) for s in json.loads(out)["services"]]


@pytest.mark.parametrize("whole_group", [False, True], ids=["command-killed", "power-lost"])
def test_a_first_start_killed_while_the_cluster_is_made_starts_again(whole_group):
    """Killed during initdb: the command alone (initdb runs on and finishes, our pg_hba.conf is never
    written), or everything (a half-made cluster). Every later start failed ("no password supplied")."""
    data_dir = Path(tempfile.mkdtemp(prefix="wb-crash-"))
    try:
        child = subprocess.Popen([sys.executable, "-c", FIRST_START, str(data_dir)], cwd=ROOT,
                                 env={**os.environ, "PYTHONPATH": str(ROOT)}, start_new_session=True)
        deadline = time.monotonic() + 60
        while not (data_dir / "pg" / "PG_VERSION").exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        if whole_group:
            os.killpg(child.pid, signal.SIGKILL)
        else:
            child.kill()
        child.wait(timeout=10)
        time.sleep(0.5 if whole_group else 5)  # an orphaned initdb finishes its cluster meanwhile

        assert _services_reachable(data_dir) == [("Redis", True), ("Postgres", True)]
    finally:
        EmbeddedRedis(data_dir).stop()
        EmbeddedPostgres(data_dir).stop()
        shutil.rmtree(data_dir, ignore_errors=True)


def test_a_killed_serve_takes_its_dashboard_with_it(workbench):
    """SIGKILL reaches `workbench serve` alone: its Streamlit used to run on, holding the port."""
    workbench.redis().ping()  # the session's servers up and held here, so the serve only uses them
    workbench.index.count("crash-serve")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    serve = _workbench(workbench.settings.data_dir, "serve", "--port", str(port), stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    try:
        deadline, children = time.monotonic() + 30, []
        while not children and time.monotonic() < deadline:
            children = [int(p) for p in Path(f"/proc/{serve.pid}/task/{serve.pid}/children").read_text().split()]
            time.sleep(0.1)
        assert children, "the dashboard was not started"

        serve.kill()
        serve.wait(timeout=10)

        assert _gone(children[0], within_s=10)
    finally:
        serve.kill()
        for pid in children:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
