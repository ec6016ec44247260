"""Where the data live and how long the embedded servers run (issue 19, point 1): one per-user data
directory wherever a command runs; servers a command started do not outlive it unless the API (or the
dashboard, or another command) uses them; `workbench services stop`.

Real `workbench` processes on one data directory of this module's, found the way a user's is: from
XDG_DATA_HOME, with DATA_DIR unset and the command run from another folder."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from benchmarks.api_load import wait_ready
from core.config import APP_NAME, default_data_dir, load_settings
from core.services import EmbeddedPostgres, EmbeddedRedis
from tests.support.api import start_api

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def home() -> Path:
    """An XDG_DATA_HOME of the module's: the user's own data directory is never touched. Passable (0711),
    as the account Postgres runs as under root must pass it; under /tmp and short, for the socket paths."""
    path = Path(tempfile.mkdtemp(prefix="wb-xdg-"))
    path.chmod(0o711)
    yield path
    EmbeddedRedis(path / APP_NAME).stop()
    EmbeddedPostgres(path / APP_NAME).stop()
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def data(home) -> Path:
    """The per-user data directory under `home`; nothing of it runs when a test starts."""
    path = home / APP_NAME
    assert not servers_running(path)
    return path


def workbench(home: Path, *args: str, cwd: Path = Path("/tmp")) -> subprocess.CompletedProcess:
    """`workbench ARGS` as a user runs it: from `cwd`, no DATA_DIR, the data home `home`."""
    return subprocess.run([sys.executable, "-m", "core.cli", *args], check=False, env=user_env(home), cwd=cwd,
                          capture_output=True, text=True, timeout=180)


def user_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "DATA_DIR"}
    return {**env, "XDG_DATA_HOME": str(home), "EMBEDDER": "wordllama", "PYTHONPATH": str(ROOT)}


def servers_running(data: Path) -> list[str]:
    """The redis-server and postgres processes serving `data` (each names its directory on its command
    line: Redis its socket, Postgres its cluster)."""
    found = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            comm = (proc / "comm").read_text().strip()
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if comm in ("redis-server", "postgres") and f"{data}/" in cmdline:
            found.append(comm)
    return sorted(found)


def test_the_default_is_one_per_user_directory(monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", "/srv/someone/data")
    assert default_data_dir() == Path("/srv/someone/data") / APP_NAME
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", "/home/ana")
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert default_data_dir() == Path("/home/ana/.local/share") / APP_NAME
    # As root Postgres runs as another account, which cannot enter root's home.
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    assert default_data_dir() == Path("/var/lib") / APP_NAME


def test_a_relative_data_dir_is_taken_against_the_folder_the_command_starts_in(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    assert load_settings(data_dir=".data").data_dir == tmp_path / ".data"
    assert load_settings(data_dir="~/wb").data_dir == Path.home() / "wb"


def test_a_command_from_any_folder_uses_the_same_store_and_leaves_no_server_running(home, data, tmp_path):
    said = workbench(home, "remember", "I flew to Lisbon on Monday", "--chain", "trip")
    assert said.returncode == 0, said.stderr
    assert (data / "redis").is_dir() and (data / "pg").is_dir()
    assert servers_running(data) == []

    # Leases of processes that are gone count for nothing: one that exited, and a pid now reused (here
    # by this process, which started after the lease's time).
    exited = subprocess.Popen(["true"])
    exited.wait()
    stale = [data / "leases" / str(exited.pid), data / "leases" / str(os.getpid())]
    for lease in stale:
        lease.write_text("1")
    found = workbench(home, "memory", "search", "lisbon", "--mode", "text", cwd=tmp_path)
    assert found.returncode == 0, found.stderr
    assert any("Lisbon" in hit["content"] for hit in json.loads(found.stdout)["hits"])
    assert servers_running(data) == []
    assert not any(lease.exists() for lease in stale)

    status = workbench(home, "services", cwd=ROOT)
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["data_dir"] == str(data)
    assert servers_running(data) == []


def test_commands_at_the_same_time_share_the_servers_and_the_last_one_stops_them(home, data):
    env = user_env(home)
    commands = [subprocess.Popen([sys.executable, "-m", "core.cli", *args], env=env, cwd="/tmp",
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                for args in (["remember", "Lisbon again", "--chain", "trip"],
                             ["memory", "search", "lisbon", "--mode", "text"],
                             ["memory", "search", "monday", "--mode", "text"], ["services"])]
    for proc in commands:
        _, err = proc.communicate(timeout=180)
        assert proc.returncode == 0, err
    assert servers_running(data) == []


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_a_command_leaves_the_servers_running_while_the_api_uses_them(home, data, stop):
    api, _ = start_api([], user_env(home), cwd=Path("/tmp"))
    try:
        assert servers_running(data) == ["postgres", "redis-server"]
        done = workbench(home, "memory", "search", "lisbon", "--mode", "text")
        assert done.returncode == 0, done.stderr
        assert servers_running(data) == ["postgres", "redis-server"]
    finally:
        api.send_signal(stop)  # Ctrl+C, or a supervisor's stop
        api.wait(timeout=60)
    # The API started them: with nobody else using them, its exit stopped them.
    assert api.returncode == 0, api.stderr.read()
    assert servers_running(data) == []


def test_servers_the_api_starts_again_after_services_stop_stop_with_it(home, data):
    api, url = start_api([], user_env(home), cwd=Path("/tmp"))
    try:
        stop = workbench(home, "services", "stop")
        assert stop.returncode == 0, stop.stderr
        assert servers_running(data) == []
        wait_ready(url, api)  # the API's next request starts them again
        assert servers_running(data) == ["postgres", "redis-server"]
    finally:
        api.send_signal(signal.SIGTERM)
        api.wait(timeout=60)
    assert api.returncode == 0, api.stderr.read()
    assert servers_running(data) == []


def readme_example() -> str:
    """The README's example of the core used on its own, as a user copies it."""
    text = (ROOT / "README.md").read_text()
    start = text.index("```python\n", text.index("can be used on its own")) + len("```python\n")
    return text[start:text.index("```", start)]


def test_servers_started_elsewhere_are_left_alone_and_services_stop_stops_them(home, data):
    started = subprocess.run([sys.executable, "-c", readme_example()], check=False, env=user_env(home),
                             cwd="/tmp", capture_output=True, text=True, timeout=180)
    assert started.returncode == 0, started.stderr
    assert "no memory matches this message" in started.stdout  # a fresh store's first turn, answered
    assert servers_running(data) == ["postgres", "redis-server"]  # a Python program's: they keep running

    done = workbench(home, "memory", "search", "lisbon", "--mode", "text")
    assert done.returncode == 0, done.stderr
    assert servers_running(data) == ["postgres", "redis-server"]  # found running: left alone

    snapshot = data / "redis" / "dump.rdb"
    before = snapshot.stat().st_mtime_ns if snapshot.exists() else 0
    stop = workbench(home, "services", "stop")
    assert stop.returncode == 0, stop.stderr
    report = json.loads(stop.stdout)
    assert [s["name"] for s in report["stopped"]] == ["Redis", "Postgres"] and report["still_used_by"] == []
    assert report["message"].startswith("stopped the embedded Redis (pid ") and str(data) in report["message"]
    assert servers_running(data) == []
    assert snapshot.stat().st_mtime_ns > before  # SHUTDOWN SAVE wrote a snapshot

    again = workbench(home, "services", "stop")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["message"] == f"no embedded server was running in {data}."


def test_a_data_directory_that_cannot_be_made_is_one_line_naming_the_setting(home):
    env = {**user_env(home), "DATA_DIR": "/proc/no-such-process/data"}
    done = subprocess.run([sys.executable, "-m", "core.cli", "memory", "search", "lisbon"], check=False, env=env,
                          cwd="/tmp", capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stdout == ""  # a setting to change: bad input, not an outage
    assert done.stderr.strip().splitlines() == [
        ("error: cannot create the data directory /proc/no-such-process/data: No such file or directory. Set "
         "DATA_DIR to a folder you can write to.")]
