"""`workbench ARGS` run in this process through the real entry point (`core.cli.main`, with its error
handling and exit codes) on the session's services, so a test's many runs share one Postgres pool."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from click.testing import CliRunner

import core.runtime
from core.cli import main
from core.runtime import Workbench


def installed(*args: str, data_dir, stdin=None, **env: str) -> subprocess.CompletedProcess:
    """`workbench ARGS` in a subprocess, on `data_dir`, with these settings."""
    return subprocess.run([sys.executable, "-m", "core.cli", *args], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "DATA_DIR": str(data_dir), **env}, stdin=stdin, check=False)


def in_process_cli(settings, workbench: Workbench, monkeypatch: pytest.MonkeyPatch
                   ) -> Callable[..., tuple[int, str, str]]:
    """A `run(*args, stdin=None) -> (exit code, stdout, stderr)` for the test that asks for it."""
    monkeypatch.setenv("DATA_DIR", str(settings.data_dir))

    def shared(s):
        wb = Workbench(s, embedder=workbench.embedder)
        wb.services = workbench.services
        return wb

    monkeypatch.setattr(core.runtime, "Workbench", shared)
    # The servers' lifecycle stays the session's: a command here neither marks what it starts as its own
    # nor stops anything at its exit (core/services/leases.py).
    monkeypatch.setattr(workbench.services, "for_command", lambda: None)
    monkeypatch.setattr(workbench.services, "release", list)

    def run(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
        runner = CliRunner()
        with runner.isolation(input=stdin) as (out, err, _):
            monkeypatch.setattr(sys, "argv", ["workbench", *args])
            try:
                main()
                code = 0
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else 1
        return code, out.getvalue().decode(), err.getvalue().decode()

    return run


@contextmanager
def usual_umask() -> Iterator[None]:
    """umask 022, most systems' default, under which a file created without a mode of its own is 0644
    (readable by everyone): a test that a command's file is 0600 shows nothing under a stricter one."""
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def mode(path: Path) -> str:
    """A file's permission bits as `os.stat` gives them, e.g. '0o600'."""
    return oct(stat.S_IMODE(os.stat(path).st_mode))
