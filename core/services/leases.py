"""Who uses the embedded servers of a data directory, so that servers a command started for a moment do
not outlive it, while the dashboard, the API or another command still using them keeps them up.

Each process that connects to an embedded server holds a lease while it runs: the file
`DATA_DIR/leases/<pid>`, holding the process's start time, so the lease of a process that crashed (or
of a pid since reused) counts for nothing. A server started by a `workbench` command is marked
(`DATA_DIR/leases/<server>.by-command`). When a command exits it drops its lease, then stops each
marked server that no live process holds any more: the last command out stops them, and `workbench
serve`, `api` and `mcp` hold theirs for as long as they run. Servers started otherwise (a Python
program, the dashboard run by Streamlit itself, the test session) are left running;
`workbench services stop` stops any.

Taking a lease and stopping for want of one happen under one file lock, so a process arriving while
another stops the servers is either seen (and nothing stops), or waits and starts them again after.

A lease is the process's, but a process may use the servers through several `Services` at once (a
program's Workbenches, a test session's): each takes its share, and the file goes with the last share
dropped (a program's closed Workbench drops its own, `Services.leave`), so closing one never leaves the
others using the servers without a lease.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

from core.errors import ConfigError, ServiceUnavailable
from core.services.private import prepare_data_dir, private_dir

LOCK_TIMEOUT_S = 120  # longer than the slowest stop (Postgres: 30 s, Redis: 20 s)

# This process's shares of each lease file: the `Leases` holding it (weakly, so one dropped unused holds
# nothing). The lock orders a share taken against the last one dropped, so a file written is never unlinked
# from under a share taken at the same moment.
_SHARES: dict[Path, weakref.WeakSet[Leases]] = {}
_SHARES_LOCK = threading.Lock()


def process_alive(pid: int) -> bool:
    """The process exists and is not a zombie (one that exited but was not reaped yet)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # alive, under another user
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return True  # no /proc: trust the signal


def start_time(pid: int) -> str:
    """When the process started (clock ticks since boot), or "" without /proc: a reused pid differs."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return ""


class Leases:
    def __init__(self, data_dir: Path):
        self.data_dir = data_dir.resolve()
        self.dir = self.data_dir / "leases"

    @property
    def mine(self) -> Path:
        return self.dir / str(os.getpid())  # at call time: a forked child is not its parent

    @contextmanager
    def locked(self) -> Iterator[None]:
        path = self.data_dir / "leases.lock"
        lock = FileLock(str(path), timeout=LOCK_TIMEOUT_S, mode=0o600)
        try:
            lock.acquire()
        except Timeout as e:
            raise ServiceUnavailable("the embedded servers", f"another process has held {path} for over "
                                     f"{LOCK_TIMEOUT_S} s (stopping the servers?); retry, or see "
                                     "`workbench services`.") from e
        try:
            yield
        finally:
            lock.release()

    def take(self) -> None:
        """This process's lease, the data directory first made (and made private) where needed."""
        if not self.data_dir.is_dir():
            try:
                self.data_dir.parent.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise ConfigError(f"cannot create the data directory {self.data_dir}: {e.strerror}. Set "
                                  "DATA_DIR to a folder you can write to.") from e
            prepare_data_dir(self.data_dir)
        with self.locked():
            private_dir(self.dir)
            with _SHARES_LOCK:
                _SHARES.setdefault(self.mine, weakref.WeakSet()).add(self)
                _write(self.mine, start_time(os.getpid()))

    def drop(self, *, every_share: bool = False) -> None:
        """This share of the process's lease: the file goes unless another share of this process holds it
        (then `holders` still names this process, rightly: it still uses the servers). `every_share`: the
        process's whole lease, at a command's exit (`Services.release`), when the process is done with the
        servers whatever else it opened (the API a `workbench api` served in it)."""
        with _SHARES_LOCK:
            shares = _SHARES.get(self.mine)
            if shares is not None:
                shares.discard(self)
                if shares and not every_share:
                    return
                del _SHARES[self.mine]
            self.mine.unlink(missing_ok=True)

    def holders(self) -> list[int]:
        """The live processes holding a lease, this one included while it holds one; the leases of
        processes that are gone are removed."""
        live = []
        for lease in self.dir.glob("[0-9]*") if self.dir.is_dir() else ():
            pid = int(lease.name)
            try:
                started = lease.read_text().strip()
            except FileNotFoundError:
                continue
            if process_alive(pid) and started == start_time(pid):
                live.append(pid)
            else:
                lease.unlink(missing_ok=True)
        return sorted(live)

    def mark(self, server: str) -> None:
        """`server` was started by a `workbench` command: the last command out stops it."""
        _write(self._marker(server), "")

    def marked(self, server: str) -> bool:
        return self._marker(server).exists()

    def unmark(self, server: str) -> None:
        self._marker(server).unlink(missing_ok=True)

    def _marker(self, server: str) -> Path:
        return self.dir / f"{server.lower()}.by-command"


def _write(path: Path, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text)
