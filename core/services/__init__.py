"""Redis and Postgres: the embedded servers by default, external ones when their URL is set.

The embedded servers are ordinary daemons under the data directory. The first process that needs one
starts it (under a file lock, so two processes never race); every later process — dashboard sessions,
the CLI, tests — finds it running and connects. Each holds a lease meanwhile: servers a `workbench`
command started stop when the last process using them is gone, others keep running until `workbench
services stop` (`leases.py`); their data (Redis append-only file, Postgres data directory) survive
restarts. They listen only on private Unix sockets and ask for a password generated on first start
(`private.py`); every call is bounded in time, and a long-running process starts a server that died
again (`bounded.py`).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from typing import Literal

import psycopg
import redis
from pgvector.psycopg import register_vector
from psycopg_pool import ConnectionPool
from pydantic import BaseModel, Field

from core.config import Settings, mask_url
from core.errors import InvalidInput, ServiceUnavailable, WorkbenchError
from core.schema import ensure_schema
from core.services.bounded import (
    PostgresTimeout,
    RedisTimeout,
    Revival,
    bounded_connection_class,
    redis_client,
)
from core.services.embedded_postgres import EmbeddedPostgres, shared_buffers_mb
from core.services.embedded_redis import EmbeddedRedis, RedisRepair
from core.services.leases import Leases
from core.services.pool import FailFastPool, ServerHealth
from core.services.status_check import StatusCheck

__all__ = [
    "GLANCE_TIMEOUT_S",
    "EmbeddedPostgres",
    "EmbeddedRedis",
    "FailFastPool",
    "PostgresTimeout",
    "RedisRepair",
    "RedisTimeout",
    "ServiceStatus",
    "Services",
    "ServicesStopped",
    "StoppedServer",
    "apply_settings",
    "session_settings",
    "shared_buffers_mb",
]


# The longest a Redis read that a caller can do without may wait (`Services.redis_glance`). A live Redis
# answers one in well under a millisecond, and tens of milliseconds under load.
GLANCE_TIMEOUT_S = 0.5


@dataclass(frozen=True)
class ServiceStatus:
    """One service as the sidebar and `workbench services` show it. `recovery`: an embedded server being
    started again after it died, or restarted a moment ago."""

    name: str
    mode: Literal["embedded", "external"]
    url: str
    reachable: bool
    version: str | None
    detail: str | None = None
    hint: str | None = None
    recovery: str | None = None

    def as_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items()}


class StoppedServer(BaseModel):
    name: str
    pid: int


class ServicesStopped(BaseModel):
    """What `workbench services stop` did."""

    data_dir: str
    stopped: list[StoppedServer]
    external: list[str] = Field(description="services set by URL: not ours to stop")
    still_used_by: list[int] = Field(description="live processes that used the servers: each starts them "
                                                 "again when it next needs them")
    message: str


class Services:
    """Connections to Redis and Postgres for one process. Nothing connects until first asked."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self._redis: redis.Redis | None = None
        self._redis_glance: redis.Redis | None = None
        self._pools: dict[tuple[tuple[str, str], ...], ConnectionPool] = {}
        self._pg_health = ServerHealth()  # shared by the pools
        self._pools_lock = threading.RLock()  # threads that search at once open one pool, not one each
        self._redis_url: str | None = None
        self._pg_url: str | None = None
        self._embedded: dict[str, EmbeddedRedis | EmbeddedPostgres] = {}
        if settings.redis_embedded:
            self._embedded["Redis"] = EmbeddedRedis(settings.data_dir)
        if settings.postgres_embedded:
            self._embedded["Postgres"] = EmbeddedPostgres(settings.data_dir)
        self._revivals = {name: Revival(name, partial(self._run_embedded, name)) for name in self._embedded}
        self._leases = Leases(settings.data_dir)
        self._leased = False
        self._for_command = False
        # Each service's status read in a thread of its own: once found hung, a status costs a caller
        # half a second, not the service's timeout again (status_check.py).
        self._status_checks = {"Redis": StatusCheck("Redis", self._redis_info),
                               "Postgres": StatusCheck("Postgres", self._postgres_versions)}

    # -- URLs (starting the embedded servers when they are the ones in use) ------------------

    def redis_url(self) -> str:
        if self._redis_url is None:
            self._redis_url = self.settings.redis_url or self._run_embedded("Redis")
        return self._redis_url

    def postgres_url(self) -> str:
        if self._pg_url is None:
            self._pg_url = self.settings.database_url or self._run_embedded("Postgres")
        return self._pg_url

    def _run_embedded(self, name: str) -> str:
        """The embedded server's URL, started first when it does not run, under this process's lease."""
        if not self._leased:
            self._leases.take()
            self._leased = True
        server = self._embedded[name]
        server.started = False
        url = server.ensure_running()
        if server.started and self._for_command:
            self._leases.mark(name)
        return url

    # -- lifecycle: who started a server, when it may stop (leases.py) ------------------------

    def for_command(self) -> None:
        """This process is a `workbench` command: a server it starts stops with the last command using
        it (`release`), unless the dashboard or the API holds it."""
        self._for_command = True

    def release(self) -> list[str]:
        """At a command's exit: drop this process's lease, then stop each server a command started that
        no live process holds any more. The servers stopped."""
        if not self._leased:
            return []
        with self._leases.locked():
            self._leases.drop(every_share=True)
            self._leased = False
            marked = [name for name in self._embedded if self._leases.marked(name)]
            if not marked or self._leases.holders():
                return []
            self.close()
            for name in marked:
                self._embedded[name].stop()
                self._leases.unmark(name)
        return marked

    def leave(self) -> None:
        """A program is done with the servers (its Workbench closed): the connections close and, unless this
        is a command's (`release` drops that lease at its exit, stopping what the command started), its
        lease goes, which kept a command's servers up for as long as the program lived. Nothing stops here;
        used again, it takes a lease again first."""
        self.close()
        if self._for_command or not self._leased:
            return
        self._leases.drop()
        self._leased = False
        self._redis_url = self._pg_url = None  # so the next use passes `_run_embedded`, which takes it

    def stop_embedded(self) -> ServicesStopped:
        """Stop this data directory's embedded servers, whoever started them (`workbench services stop`):
        Redis with SHUTDOWN SAVE, Postgres with a fast shutdown."""
        s = self.settings
        external = [name for name in ("Redis", "Postgres") if name not in self._embedded]
        stopped: list[StoppedServer] = []
        holders: list[int] = []
        if any(server.dir.is_dir() for server in self._embedded.values()):  # else none ever ran there
            self.close()
            with self._leases.locked():
                self._leases.drop()
                self._leased = False
                holders = self._leases.holders()
                for name, server in self._embedded.items():
                    pid = server.stop()
                    self._leases.unmark(name)
                    if pid is not None:
                        stopped.append(StoppedServer(name=name, pid=pid))
        return ServicesStopped(data_dir=str(s.data_dir), stopped=stopped, external=external,
                               still_used_by=holders, message=_stop_message(s, stopped, external, holders))

    # -- clients ----------------------------------------------------------------------------

    def redis(self) -> redis.Redis:
        """A client whose every call is bounded by REDIS_TIMEOUT_S and that reconnects by itself."""
        if self._redis is None:
            s = self.settings
            self._redis = redis_client(self.redis_url(), timeout_s=s.redis_timeout_s, cluster=s.redis_cluster,
                                       revive=self._revive("Redis"))
        return self._redis

    def redis_glance(self) -> redis.Redis:
        """A second client, for reads a caller can go without (the outbox check before a search): each call
        waits at most GLANCE_TIMEOUT_S (REDIS_TIMEOUT_S when smaller). With Redis hung, a search that needs
        only Postgres waited REDIS_TIMEOUT_S for that check first. Connections of its own, so a glance never
        queues behind the main client's commands; it starts a dead embedded server again as that one does."""
        if self._redis_glance is None:
            s = self.settings
            self._redis_glance = redis_client(self.redis_url(), timeout_s=min(GLANCE_TIMEOUT_S, s.redis_timeout_s),
                                              cluster=s.redis_cluster, revive=self._revive("Redis"))
        return self._redis_glance

    def pool(self, session: Mapping[str, str] | None = None) -> ConnectionPool:
        """The Postgres pool, with pgvector registered on each connection and the schema in place.

        With `session`, a pool of its own whose connections keep these settings ({name: value}) for their
        whole session, for statements that need them at every run: hybrid retrieval's
        (`core.retrieval.hybrid.SEARCH_SESSION`). Such settings cannot go on the shared pool, where they
        would hold for every other statement too."""
        key = tuple(sorted(session.items())) if session else ()
        pool = self._pools.get(key)
        if pool is None:
            with self._pools_lock:
                pool = self._pools.get(key)
                if pool is None:
                    if key:
                        self.pool()  # pgvector and the schema first
                    else:
                        _require_pgvector(self.postgres_url(), self.settings.postgres_connect_timeout_s,
                                          update="Postgres" in self._embedded)
                    pool = self._pools[key] = self._open_pool(key)
        return pool

    def _open_pool(self, session: tuple[tuple[str, str], ...]) -> ConnectionPool:
        s = self.settings
        pool = FailFastPool(self.postgres_url(), min_size=1, max_size=8, open=False, timeout=10,
                            connection_class=bounded_connection_class(s.postgres_statement_timeout_s),
                            configure=partial(_configure, statement_timeout_s=s.postgres_statement_timeout_s,
                                              session=session),
                            kwargs={"autocommit": True, "connect_timeout": s.postgres_connect_timeout_s},
                            revive=self._revive("Postgres"), connect_timeout_s=s.postgres_connect_timeout_s,
                            health=self._pg_health)
        pool.start()  # fails as fast as a call would: at once while Postgres is down
        if not session:
            try:
                ensure_schema(pool)
            except BaseException:
                pool.close()  # not kept, so closed: its workers would go on connecting
                raise
        return pool

    def repair_redis(self) -> RedisRepair:
        if not self.settings.redis_embedded:
            raise InvalidInput("REDIS_URL is set: repair that server's append-only file with its own "
                               "redis-check-aof; this command repairs the embedded one")
        return EmbeddedRedis(self.settings.data_dir).repair_aof()

    def _revive(self, service: str):
        revival = self._revivals.get(service)
        return revival.revive if revival else None

    def close(self) -> None:
        for pool in self._pools.values():
            pool.close()
        self._pools.clear()
        for client in (self._redis, self._redis_glance):
            if client is not None:
                client.close()
        self._redis = self._redis_glance = None

    # -- status -----------------------------------------------------------------------------

    def status(self) -> list[ServiceStatus]:
        return [self._redis_status(), self._postgres_status()]

    def _recovery(self, service: str) -> str | None:
        revival = self._revivals.get(service)
        return revival.state() if revival else None

    def _redis_status(self) -> ServiceStatus:
        s = self.settings
        mode = "embedded" if s.redis_embedded else "external"
        try:
            url = self.redis_url()
            info = self._status_checks["Redis"].result()
            return ServiceStatus("Redis", mode, mask_url(url), True, info.get("redis_version"),
                                 detail=_redis_detail(info), recovery=self._recovery("Redis"))
        except Exception as e:  # noqa: BLE001 - any failure is shown as the service's state
            hint = (f"The embedded server could not start: see {EmbeddedRedis(s.data_dir).log}." if s.redis_embedded
                    else "Check that REDIS_URL is right and the server is up.")
            return ServiceStatus("Redis", mode, mask_url(s.redis_url or "embedded"), False, None,
                                 detail=_detail(e), hint=hint, recovery=self._recovery("Redis"))

    def _redis_info(self) -> dict:
        """What Redis's status shows: its INFO (one node's, in a cluster)."""
        info = self.redis().info()
        if isinstance(info, dict) and "redis_version" not in info:  # cluster: one dict per node
            info = next(iter(info.values()))
        return info

    def _postgres_versions(self) -> tuple[str, tuple | None]:
        """What Postgres's status shows: the server's version, and pgvector's row (None without it)."""
        with self.pool().connection() as conn:
            version = conn.execute("SHOW server_version").fetchone()[0]
            vec = conn.execute("SELECT extversion FROM pg_extension WHERE extname='vector'").fetchone()
        return version, vec

    def _postgres_status(self) -> ServiceStatus:
        s = self.settings
        mode = "embedded" if s.postgres_embedded else "external"
        try:
            url = self.postgres_url()
            version, vec = self._status_checks["Postgres"].result()
            return ServiceStatus("Postgres", mode, mask_url(url), True, version.split()[0],
                                 detail=f"pgvector {vec[0]}" if vec else None, recovery=self._recovery("Postgres"))
        except ServiceUnavailable as e:
            # No pgvector on the server, no server at all, or a timeout: the message already says which.
            no_vector = "pgvector" in str(e)
            return ServiceStatus("Postgres", mode, mask_url(s.database_url or "embedded"), False, None,
                                 detail=str(e), hint="Install pgvector 0.5+ on that server, or unset DATABASE_URL."
                                 if no_vector else None, recovery=self._recovery("Postgres"))
        except Exception as e:  # noqa: BLE001 - any failure is shown as the service's state
            hint = (f"The embedded server could not start: see {EmbeddedPostgres(s.data_dir).log}."
                    if s.postgres_embedded else "Check that DATABASE_URL is right and the server is up.")
            return ServiceStatus("Postgres", mode, mask_url(s.database_url or "embedded"), False, None,
                                 detail=_detail(e), hint=hint, recovery=self._recovery("Postgres"))


def _stop_message(s: Settings, stopped: list[StoppedServer], external: list[str], holders: list[int]) -> str:
    said = [f"stopped the embedded {' and '.join(f'{x.name} (pid {x.pid})' for x in stopped)} of {s.data_dir}"
            if stopped else f"no embedded server was running in {s.data_dir}"]
    if external:
        said.append(f"{' and '.join(external)} set by URL: not stopped, not ours")
    if stopped and holders:
        said.append(f"processes {', '.join(map(str, holders))} still use them and start them again when "
                    "they next need them")
    return "; ".join(said) + "."


def _detail(exc: Exception) -> str:
    """Our own errors say what happened (with real paths, never a secret); a failed connection says so in
    words (the sidebar read "PoolTimeout." and "ConnectionError." while a server was down); others only by
    their type."""
    if isinstance(exc, WorkbenchError):
        return str(exc)
    if isinstance(exc, psycopg.OperationalError | redis.exceptions.ConnectionError):
        return "a new connection failed: the server is not running, not at the address set, or refused it"
    return type(exc).__name__


def _configure(conn: psycopg.Connection, *, statement_timeout_s: float,
               session: tuple[tuple[str, str], ...] = ()) -> None:
    """A new connection: pgvector's types, and its session's settings. `session_settings` tells them."""
    register_vector(conn)
    # A wider HNSW beam than the default 40, so a candidate pool of 50–100 is filled from the index;
    # and the server stops any statement that runs longer than POSTGRES_STATEMENT_TIMEOUT_S.
    apply_settings(conn, {"hnsw.ef_search": "100", **dict(session),
                          "statement_timeout": f"{round(statement_timeout_s * 1000)}ms"})
    conn.workbench_session = dict(session)


def apply_settings(conn: psycopg.Connection, settings: Mapping[str, str], *, local: bool = False) -> None:
    """Set each setting ({name: value}) in one statement: for the connection's session, or with `local`
    until its transaction ends."""
    conn.execute("SELECT set_config(name, value, %s) FROM unnest(%s::text[], %s::text[]) AS s(name, value)",
                 (local, list(settings), list(settings.values())))


def session_settings(conn: psycopg.Connection) -> Mapping[str, str]:
    """The settings a pool's `session` gave this connection (`Services.pool`); none for another's."""
    return getattr(conn, "workbench_session", {})


def _redis_detail(info: dict) -> str:
    aof = "append-only on" if str(info.get("aof_enabled", "")) == "1" else None
    return aof or f"mode {info.get('redis_mode', 'standalone')}"


def _require_pgvector(url: str, connect_timeout_s: int = 5, *, update: bool = False) -> None:
    """Fail with a clear message when the server cannot give us the `vector` extension. With `update` (the
    embedded server, ours alone), an extension older than the server's files is updated to them: a data
    directory made with an earlier wheel keeps the functions of the pgvector it was made with until then."""
    try:
        with psycopg.connect(url, autocommit=True, connect_timeout=connect_timeout_s) as conn:
            row = conn.execute("SELECT default_version, installed_version FROM pg_available_extensions "
                               "WHERE name = 'vector'").fetchone()
            if row is None:
                raise ServiceUnavailable(
                    "Postgres", "the server has no pgvector extension. Install pgvector 0.5 or newer on it "
                    "(https://github.com/pgvector/pgvector#installation), or unset DATABASE_URL to use the "
                    "embedded Postgres.")
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            if update and row[1] is not None and row[1] != row[0]:
                conn.execute("ALTER EXTENSION vector UPDATE")
    except psycopg.OperationalError as e:
        if "timeout expired" in str(e):  # it accepts connections but does not answer: suspended or hung
            raise PostgresTimeout(connect_timeout_s, "POSTGRES_CONNECT_TIMEOUT_S") from e
        raise ServiceUnavailable("Postgres", "cannot connect. Check DATABASE_URL and that the server is up."
                                 ) from e
