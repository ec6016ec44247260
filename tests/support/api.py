"""Real uvicorn servers for the HTTP API tests: in a thread of the test process (on a given Workbench), or
as `workbench api` processes on a data directory, each on a free loopback port."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import uvicorn

from benchmarks.api_load import wait_ready
from core.api.app import create_app
from core.runtime import Workbench

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def thread_server(wb: Workbench, **app_options) -> Iterator[str]:
    """`create_app(wb, **app_options)` served by uvicorn in a thread; yields its base URL."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(wb, **app_options), host="127.0.0.1", port=port,
                                           log_level="warning", access_log=False))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the API server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=15)


def api_env(data_dir: Path, **settings: str) -> dict[str, str]:
    """The environment of a `workbench api` process on the test servers in `data_dir`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REDIS_", "DATABASE_", "INSTANCE"))}
    env.update({"DATA_DIR": str(data_dir), "EMBEDDER": "wordllama", **settings})
    return env


def run_cli(args: list[str], env: dict[str, str], timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "core.cli", *args], env=env, cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout)


def start_api(args: list[str], env: dict[str, str], cwd: Path = ROOT, *,
              ready: bool = True) -> tuple[subprocess.Popen, str]:
    """`workbench api ARGS` on a free loopback port: the process and its base URL, answering /readyz
    (with `ready`; else only listening). A port found free may be taken by another test's server before
    the process binds it, a second or two later: the process then exits ("address already in use") and
    another port is tried."""
    for attempt in range(3):
        port = free_port()
        proc = subprocess.Popen([sys.executable, "-m", "core.cli", "api", "--port", str(port), *args], env=env,
                                cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        url = f"http://127.0.0.1:{port}"
        try:
            wait_ready(url, proc, probe=ready)
            return proc, url
        except RuntimeError as e:
            proc.kill()
            proc.wait()
            if "address already in use" not in str(e) or attempt == 2:
                raise
    raise AssertionError("unreachable")


@contextmanager
def process_server(data_dir: Path, *, workers: int = 1, **settings: str) -> Iterator[str]:
    """`workbench api` in its own process on the servers of `data_dir`; yields its base URL."""
    proc, url = start_api(["--workers", str(workers)], api_env(data_dir, **settings))
    try:
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def assert_problem(response: httpx.Response, status: int, code: str) -> dict:
    """The response is a problem document with this status and code; returns it."""
    assert response.status_code == status, (response.status_code, response.text)
    assert response.headers["content-type"].startswith("application/problem+json"), response.headers
    body = response.json()
    assert set(body) >= {"type", "title", "status", "code", "detail"}, body
    assert body["status"] == status and body["code"] == code, body
    assert body["detail"] and "Traceback" not in response.text
    return body
