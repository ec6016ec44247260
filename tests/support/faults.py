"""Servers stopped in place (SIGSTOP), as a suspended machine or a full disk's stall leaves them: hung, not down."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager

from core.services import EmbeddedPostgres


@contextmanager
def suspended(pids: list[int]) -> Iterator[None]:
    """The processes stopped, continued on exit."""
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        for pid in pids:
            os.kill(pid, signal.SIGCONT)


def postgres_pids(data_dir) -> list[int]:
    """The postmaster and every backend: stopping only the postmaster leaves open sessions answering."""
    postmaster = EmbeddedPostgres(data_dir)._postmaster_pid()
    children = subprocess.run(["pgrep", "-P", str(postmaster)], check=False, capture_output=True, text=True).stdout.split()
    return [postmaster, *map(int, children)]
