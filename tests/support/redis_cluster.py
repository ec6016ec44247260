"""A real Redis Cluster of three local nodes for tests: Debian's redis-server, joined by redis-cli.

Each node is a redis-server process on a free loopback port, with `cluster-enabled yes` and its own
directory; `redis-cli --cluster create` assigns the 16384 slots across the three. Only the processes
started here are stopped, by their pid.
"""

from __future__ import annotations

import random
import shutil
import socket
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path

import redis

REDIS_SERVER = "/usr/bin/redis-server"


def missing_tools() -> str | None:
    """Why the cluster cannot run here, or None."""
    if not Path(REDIS_SERVER).exists():
        return f"{REDIS_SERVER} is missing: install Debian's redis-server (CI does, in .ci/run)"
    if shutil.which("redis-cli") is None:
        return "redis-cli is missing: install Debian's redis-tools (redis-server depends on it)"
    return None


def _free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def _free_ports(n: int) -> list[int]:
    """Ports free together with their cluster bus port (port + 10000, so the port stays below 55536)."""
    rng = random.Random()
    ports: list[int] = []
    while len(ports) < n:
        port = rng.randrange(20000, 45000)
        if port not in ports and _free(port) and _free(port + 10000):
            ports.append(port)
    return ports


@contextmanager
def redis_cluster(base: Path, nodes: int = 3):
    """Start the cluster under `base`; yields the URL of its first node."""
    ports = _free_ports(nodes)
    procs: list[subprocess.Popen] = []
    try:
        for port in ports:
            d = base / str(port)
            d.mkdir(parents=True)
            procs.append(subprocess.Popen(
                [REDIS_SERVER, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(d),
                 "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                 "--cluster-node-timeout", "2000", "--appendonly", "yes", "--save", "",
                 "--protected-mode", "no", "--logfile", str(d / "redis.log")],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        for port in ports:
            _wait(lambda p=port: redis.Redis(host="127.0.0.1", port=p, socket_timeout=1).ping())
        subprocess.run(["redis-cli", "--cluster", "create", *(f"127.0.0.1:{p}" for p in ports),
                        "--cluster-replicas", "0", "--cluster-yes"],
                       check=True, capture_output=True, timeout=60)
        for port in ports:
            _wait(lambda p=port: redis.Redis(host="127.0.0.1", port=p, socket_timeout=1)
                  .execute_command("CLUSTER INFO")["cluster_state"] == "ok")
        yield f"redis://127.0.0.1:{ports[0]}"
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()


def _wait(ready, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            if ready():
                return
        except (redis.exceptions.RedisError, OSError):
            pass
        if time.monotonic() > deadline:
            raise TimeoutError("the Redis Cluster did not become ready")
        time.sleep(0.05)
