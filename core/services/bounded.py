"""Clients whose every call is bounded in time, and that start an embedded server again when it died.

- Redis: a socket timeout on every read and write (`REDIS_TIMEOUT_S`). A timeout is never retried (the
  command may have run); a connection error is, and on the embedded server it first starts the server
  again (`Revival`). After a timeout the client's calls fail at once for a moment (`RedisHung`), so a
  turn waits for a hung Redis once, not at each of its calls.
- Postgres: the server stops a statement after `POSTGRES_STATEMENT_TIMEOUT_S`; a server that stops
  answering altogether (suspended, hung) cannot even do that, so the client gives up a little later
  (`BoundedConnection`) and closes the connection, whose state is then unknown.
Both report a timeout as one (`ServiceTimeout`: "Postgres did not answer within N s"), never as
"unavailable".
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import hiredis
import psycopg
import redis
from psycopg import errors as pg_errors
from redis.backoff import ExponentialBackoff
from redis.retry import Retry

from core.errors import ServiceTimeout, describe

log = logging.getLogger(__name__)

# How much longer than the statement timeout the client waits before it takes the server for hung.
ANSWER_GRACE_S = 2.0


class RedisTimeout(ServiceTimeout, redis.exceptions.TimeoutError):
    """Redis did not answer in time; still a redis-py TimeoutError for code that catches those."""

    def __init__(self, seconds: float):
        super().__init__("Redis", seconds, "REDIS_TIMEOUT_S")


class PostgresTimeout(ServiceTimeout, psycopg.OperationalError):
    """Postgres did not answer in time; still a psycopg OperationalError for code that catches those.

    `seconds` is the wait the caller had, `why` what it was made of and the settings that bound it."""

    def __init__(self, seconds: float, why: str = "POSTGRES_STATEMENT_TIMEOUT_S"):
        super().__init__("Postgres", seconds, why)

    @classmethod
    def answer(cls, answer_timeout_s: float) -> PostgresTimeout:
        """No answer within `BoundedConnection.answer_timeout_s`: 32 s is "POSTGRES_STATEMENT_TIMEOUT_S
        30 s + 2 s", so the number shown adds up to the setting the user knows."""
        statement_s = answer_timeout_s - ANSWER_GRACE_S
        return cls(answer_timeout_s, f"POSTGRES_STATEMENT_TIMEOUT_S {statement_s:g} s + {ANSWER_GRACE_S:g} s")


class Revival:
    """Starts an embedded server again after it died: at most once every MIN_GAP_S, and while starting
    keeps failing, twice as rarely after each failure up to MAX_GAP_S. Its `state` is what the sidebar
    shows."""

    MIN_GAP_S = 2.0
    MAX_GAP_S = 30.0
    SHOWN_FOR_S = 60.0  # how long "restarted" stays in the sidebar after a restart

    def __init__(self, service: str, start: Callable[[], Any], clock: Callable[[], float] = time.monotonic):
        self.service = service
        self._start = start
        self._clock = clock
        self._lock = threading.Lock()
        self.attempts = 0  # in the current outage
        self.failures = 0  # consecutive failed starts
        self.last_attempt: float | None = None
        self.restarted_at: float | None = None
        self.last_error: str | None = None

    def gap(self) -> float:
        return min(self.MAX_GAP_S, self.MIN_GAP_S * 2 ** max(0, self.failures - 1))

    def revive(self) -> bool:
        """Try to start the server unless the last try is too recent; True when it runs now."""
        arrived = self._clock()
        with self._lock:
            now = self._clock()
            if self.last_attempt is not None and now - self.last_attempt < self.gap():
                # True when another thread restarted it while this one waited for the lock.
                return self.restarted_at is not None and self.restarted_at >= arrived
            self.last_attempt = now
            self.attempts = self.attempts + 1 if self.failures else 1  # counted within one outage
            try:
                self._start()
            except Exception as e:  # noqa: BLE001 - any failure to start: try again after the back-off
                self.failures += 1
                self.last_error = describe(e).message
                log.warning("%s: restart attempt %d failed: %s", self.service, self.attempts, self.last_error)
                return False
            log.warning("%s: the embedded server stopped answering; restarted it (attempt %d)",
                        self.service, self.attempts)
            self.failures = 0
            self.last_error = None
            self.restarted_at = self._clock()
            return True

    def state(self) -> str | None:
        """'restarting: attempt 2 failed (...); next attempt in 4 s', or 'restarted 3 s ago (attempt 1)'."""
        if self.last_attempt is None:
            return None
        ago = self._clock() - self.last_attempt
        if self.failures:
            wait = max(0.0, self.gap() - ago)
            return (f"restarting: attempt {self.attempts} failed ({self.last_error}); "
                    f"next attempt in {wait:.0f} s")
        if ago < self.SHOWN_FOR_S:
            return f"restarted {ago:.0f} s ago (attempt {self.attempts})"
        return None


# ---------------------------------------------------------------------------------------------
# Redis


class HiredisPacker:
    """Commands packed into Redis's protocol by hiredis in one call: the same bytes as redis-py's own
    packer, several times faster. redis-py 8 passes each argument through a Python encoder before hiredis
    sees it (30 µs for an HSET of 16 arguments, 4.6 s of CPU in an import of 50,000 messages); hiredis
    encodes str, int and float itself, as that encoder does (UTF-8, `repr`). Anything else (a bytearray, a
    memoryview, a bool or another type redis-py refuses) goes through the connection's encoder, so its
    errors are redis-py's own."""

    def __init__(self) -> None:
        self.encode: Callable[[Any], Any] | None = None  # the connection's encoder's, once it has one

    def pack(self, *args) -> list[bytes]:
        head = args[0]  # a command of two words ("CONFIG SET") comes as one argument
        if (" " in head) if isinstance(head, str) else (b" " in head):
            args = (*head.split(), *args[1:])
        try:
            return [hiredis.pack_command(args)]
        except TypeError:
            return [hiredis.pack_command(tuple(
                bytes(a) if isinstance(a, (bytearray, memoryview)) else self.encode(a) for a in args))]


class RedisHung:
    """What the connections of one Redis client found: when one last got no answer within REDIS_TIMEOUT_S.
    For HUNG_FOR_S after that, a call about to send a command or to connect fails at once with that
    timeout, sending nothing, instead of waiting the same bound again for the same silent server: a
    ui_remember turn's best-effort read of the instances (`new_instance_note`) found Redis hung, then the
    turn's own read of the chain waited REDIS_TIMEOUT_S a second time (6.5 s at a 3 s bound). The
    Postgres pool does the same (`FailFastPool.HUNG_FOR_S`). A Redis that answers again is used again
    once the window has passed."""

    HUNG_FOR_S = 2.0

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self._clock = clock
        self._at: float | None = None
        self._seconds = 0.0

    def found(self, seconds: float) -> None:
        """A call got no answer within `seconds`."""
        self._at, self._seconds = self._clock(), seconds

    def fail_if_hung(self) -> None:
        """Raise the timeout found within HUNG_FOR_S, as it was: Redis did not answer within that bound
        (the turn whose first read found it waited that long), so the same sentence stays true."""
        at = self._at  # read once: another thread may clear or renew it meanwhile
        if at is None:
            return
        if self._clock() - at >= self.HUNG_FOR_S:
            self._at = None
            return
        raise RedisTimeout(self._seconds)


class _Bounded:
    """A redis-py connection that reports socket timeouts as `RedisTimeout` and, when it cannot connect
    to the embedded server, has it started again (`revive`) and connects once more. Its commands are
    packed by `HiredisPacker` when its encoding is UTF-8, as ours is. `hung`: shared by the connections
    of one client, so that after one timed out the others fail at once for a moment (`RedisHung`)."""

    def __init__(self, *args, revive: Callable[[], bool] | None = None, hung: RedisHung | None = None,
                 **kwargs):
        packer = None
        if (kwargs.get("encoding", "utf-8"), kwargs.get("encoding_errors", "strict")) == ("utf-8", "strict"):
            kwargs["command_packer"] = packer = HiredisPacker()
        super().__init__(*args, **kwargs)
        self._revive = revive
        self._hung = hung or RedisHung()
        if packer is not None:
            packer.encode = self.encoder.encode

    def connect(self):
        self._hung.fail_if_hung()
        try:
            return self._timed(super().connect)
        except redis.exceptions.ConnectionError:
            if self._revive is None or not self._revive():
                raise
        return self._timed(super().connect)

    def send_packed_command(self, *args, **kwargs):
        self._hung.fail_if_hung()
        return self._timed(super().send_packed_command, *args, **kwargs)

    def read_response(self, *args, **kwargs):
        # A command already sent waits for its answer, as it must: only new commands fail at once.
        return self._timed(super().read_response, *args, **kwargs)

    def _timed(self, call, *args, **kwargs):
        try:
            return call(*args, **kwargs)
        except RedisTimeout:
            raise
        except redis.exceptions.TimeoutError as e:
            self._hung.found(self.socket_timeout)
            raise RedisTimeout(self.socket_timeout) from e


class _BoundedTcp(_Bounded, redis.Connection):
    pass


class _BoundedUnix(_Bounded, redis.UnixDomainSocketConnection):
    pass


class _BoundedSsl(_Bounded, redis.SSLConnection):
    pass


def redis_client(url: str, *, timeout_s: float, cluster: bool = False,
                 revive: Callable[[], bool] | None = None) -> redis.Redis:
    """A client that reconnects by itself: connection errors are retried for about 0.7 s (enough to ride
    over a restart, short enough that a page says "Redis is unavailable" within seconds), timeouts never
    (the command may have run: the caller decides)."""
    retry = Retry(ExponentialBackoff(cap=0.4, base=0.05), retries=3,
                  supported_errors=(redis.exceptions.ConnectionError,))
    common: dict[str, Any] = {"decode_responses": True, "retry": retry, "health_check_interval": 10,
                              "socket_timeout": timeout_s, "socket_connect_timeout": timeout_s}
    if cluster:
        from redis.cluster import RedisCluster

        return RedisCluster.from_url(url, **common)
    scheme = url.split("://", 1)[0]
    connection_class = {"unix": _BoundedUnix, "rediss": _BoundedSsl}.get(scheme, _BoundedTcp)
    return redis.Redis.from_url(url, connection_class=connection_class, revive=revive, hung=RedisHung(),
                                **common)


# ---------------------------------------------------------------------------------------------
# Postgres


class BoundedConnection(psycopg.Connection):
    """A connection that waits at most `answer_timeout_s` for any answer of the server (statements,
    commits, COPY). Past it the server is taken for hung (a live one would have cancelled the statement
    at its statement_timeout first): the connection is closed, so the pool replaces it, and
    `PostgresTimeout` raised."""

    answer_timeout_s: float | None = None  # set by `bounded_connection_class`

    def wait(self, gen, interval=psycopg.connection._WAIT_INTERVAL, timeout=None):
        if timeout is not None or self.answer_timeout_s is None:
            return super().wait(gen, interval, timeout)
        try:
            return super().wait(gen, interval, self.answer_timeout_s)
        except pg_errors._WaitTimeout as e:
            self.pgconn.finish()
            timeout = PostgresTimeout.answer(self.answer_timeout_s)
            pool = getattr(self, "_pool", None)
            if hasattr(pool, "mark_hung"):
                pool.mark_hung(timeout)
            raise timeout from e


def bounded_connection_class(statement_timeout_s: float) -> type[BoundedConnection]:
    return type("BoundedConnection", (BoundedConnection,), {"answer_timeout_s": statement_timeout_s + ANSWER_GRACE_S})


@contextmanager
def without_time_limit(conn: psycopg.Connection) -> Iterator[psycopg.Connection]:
    """Lift both bounds on this connection while work that is long by nature runs on it: an index build
    over a whole instance, a bulk COPY, a VACUUM. They take minutes at a million memories, and the
    statement timeout is meant for a turn's queries, not for them. Restored afterwards (inside a
    transaction that fails, Postgres reverts the setting itself)."""
    before = conn.execute("SELECT current_setting('statement_timeout')").fetchone()[0]
    conn.execute("SELECT set_config('statement_timeout', '0', false)")
    conn.answer_timeout_s = None
    try:
        yield conn
    finally:
        vars(conn).pop("answer_timeout_s", None)  # the class's bound again
        try:
            conn.execute("SELECT set_config('statement_timeout', %s, false)", (before,))
        except psycopg.Error:
            pass  # an aborted transaction: its rollback restores the setting

