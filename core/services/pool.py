"""The Postgres connection pool: quick to tell a down server from a busy one, and to start the embedded
server again when it died."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import psycopg
from psycopg_pool import ConnectionPool, PoolTimeout

from core.errors import ServiceUnavailable
from core.services.bounded import PostgresTimeout

log = logging.getLogger(__name__)

# psycopg_pool's workers log every failed attempt to connect ("error connecting in 'pool-1': connection
# timeout expired", "reconnection attempt ... failed after 2.0 sec", "couldn't stop thread ...") at WARNING:
# with Postgres hung, a dozen lines a minute in the terminal of `workbench serve` and `workbench api`, none
# saying what to do. What they report reaches our callers as `PostgresTimeout` or "unavailable", and the
# pools say it once an outage (`ServerHealth.lost`). Set here, where every process that pools connections
# passes (the dashboard's Streamlit process and uvicorn's workers configure no logging of ours), unless the
# process set a level of its own first.
if (_driver_log := logging.getLogger("psycopg.pool")).level == logging.NOTSET:
    _driver_log.setLevel(logging.ERROR)


@dataclass(frozen=True)
class Hung:
    """A call found the server hung: when (`at`), in which thread, and the timeout it got."""

    at: float
    thread: int
    timeout: PostgresTimeout


class ServerHealth:
    """What the pools of one server know of it, shared so that one pool's finding spares the others the
    wait: unreachable (`down`), or hung (`hung`); and how many times it may have restarted since
    (`restarts`: found answering after it was down, started again by us, or a pooled connection found
    dead), so that each pool checks its idle connections once after each, whichever pool found it."""

    def __init__(self) -> None:
        self.down = False
        self.hung: Hung | None = None
        self.restarts = 0
        self.outage = False  # said in the log (`lost`), until it answers again (`back`)
        self._said = threading.Lock()

    def answered(self, *, restarted: bool = False) -> None:
        """A direct connection got through (`restarted`: after the embedded server was started again)."""
        if self.down or restarted:
            self.restarts += 1
        self.down = False
        self.back()

    def lost(self, what: str) -> None:
        """Say in the process's log what the outage is, once: the first call that found it says it, the
        others fail with the same words to their callers, in no terminal."""
        with self._said:
            if self.outage:
                return
            self.outage = True
        log.warning("%s Calls to it fail until it answers again (said once).", what)

    def back(self) -> None:
        """A connection got through: the outage said (`lost`) is over, and said to be."""
        if not self.outage:  # read without the lock: the common case costs nothing
            return
        with self._said:
            if not self.outage:
                return
            self.outage = False
        log.warning("Postgres answers again.")


class PostgresReconnecting(ServiceUnavailable, PoolTimeout):
    """Postgres answers a new connection, yet the pool gave the caller none in time: every connection is
    busy, or the pool is still reconnecting after the server came back. Not "unavailable": the server is
    up, and the same call a few seconds later works. Still a PoolTimeout for code that catches those."""

    def __init__(self, waited_s: float):
        super().__init__("Postgres", f"reconnecting: it answers again, but no pooled connection was ready "
                                     f"within {waited_s:g} s (all busy, or still reconnecting after a restart). "
                                     "Try again in a few seconds.")


class FailFastPool(ConnectionPool):
    """A pool that tells a down Postgres from a busy one within about a second.

    A plain pool makes every caller wait its whole timeout when the server is gone, and a ui_remember
    turn asks it three times (profile, retrieval, indexing): 30 s before the degraded answer. Here a
    caller waits at most FIRST_WAIT_S; if no connection came, one direct connection attempt decides:
    the server answers (the pool is only busy: keep waiting) or it does not (fail now, and until it
    answers again every caller fails at once after the same quick attempt instead of waiting). When
    that attempt is refused and the server is the embedded one, `revive` starts it again first. A server
    that stopped answering (hung) fails every caller at once for HUNG_FOR_S after a timeout, so one turn
    waits for it once, not at each of its calls. The pools of one server share what they found
    (`health`), so a turn that uses two of them waits once too.

    A caller whose own wait found the server hung (the check of a pooled connection got no answer
    within the statement bound) fails then, without the connection attempt: that would add
    POSTGRES_CONNECT_TIMEOUT_S to a wait already spent on the same silent server (37 s instead of 32 s
    at the defaults). Every timeout names the wait its caller had and what it was made of.

    Back from an outage at once: psycopg_pool retries a failed connection in the background with a
    delay that doubles up to `reconnect_timeout` (5 minutes by default), so after a 30 s outage its next
    attempt could be 16 s away, and the first callers after the restart waited for it (20 s, then
    "Postgres is unavailable" about a server that was up). Here the pool gives up retrying after
    RECONNECT_FOR_S; the direct connection attempt finds the server back, the connections to the old
    server are dropped (`_drop_old_connections`), and the caller's wait makes the pool connect anew, at
    once. Opening a pool (`start`) fails as fast as a call does.
    """

    FIRST_WAIT_S = 1.0
    HUNG_FOR_S = 2.0
    # A connection handed back less than this long ago is given out again without a liveness round
    # trip (HikariCP's "alive bypass window", 500 ms there): the check cost 0.1 ms p50 and 0.4 ms p95
    # per checkout, and a ui_remember turn checks out several. One that died meanwhile fails its
    # statement, is discarded as broken, and the caller's error handling takes over.
    CHECK_BYPASS_S = 1.0
    # How long the pool retries a failed connection in the background (attempts 1 s apart) before it
    # leaves the next caller to ask for one.
    RECONNECT_FOR_S = 2.0

    def __init__(self, *args, revive: Callable[[], bool] | None = None, connect_timeout_s: int = 5,
                 health: ServerHealth | None = None, **kwargs):
        kwargs.setdefault("check", self.check_unless_recent)
        kwargs.setdefault("reconnect_timeout", self.RECONNECT_FOR_S)
        super().__init__(*args, **kwargs)
        self._health = health or ServerHealth()
        self._restarts_seen = self._health.restarts
        self._revive = revive
        self._connect_timeout_s = connect_timeout_s

    def start(self) -> None:
        """Open the pool with its first connection, or fail as fast as `getconn`: at once when the server
        is down (one direct connection attempt first, which has a dead embedded server started again),
        after POSTGRES_CONNECT_TIMEOUT_S when it is hung. psycopg_pool's own wait retries for as long as
        it is given: the explorer's first search with Postgres down took 15 s to say so. A pool whose
        first connection still does not come is closed, so its workers stop trying."""
        self._fail_if_hung(time.monotonic())
        self._probe()
        self._restarts_seen = self._health.restarts  # no connection to an old server yet
        wait_s = self._connect_timeout_s + self.RECONNECT_FOR_S
        try:
            self.open(wait=True, timeout=wait_s)
        except PoolTimeout as e:  # psycopg_pool closed it
            raise PostgresReconnecting(wait_s) from e

    def _get_ready_connection(self, timeout: float | None):
        """Hand out the connection returned last (LIFO), not the one idle longest as psycopg_pool does.

        Called with the pool's lock held; not a public method of psycopg_pool, whose versions are
        pinned to those that have it (pyproject.toml). A search's statement runs in the server process
        behind the connection, whose caches (plans, catalogue, the index pages it touched) are warm in
        the CPU only if it ran the search before; taking the idle connections in turn sent each search
        to another process. PgBouncer reuses its server connections the same way by default, and
        SQLAlchemy offers it as `pool_use_lifo`. At 100,000 memories with six pooled connections, a
        search's p50 was 2.59 and 2.62 ms taking them in turn, 2.34 and 2.42 ms taking the last
        returned (benchmarks/README.md, "What made whole runs slower"). The connections left idle are
        the oldest, so the pool still closes them after `max_idle`."""
        if len(self._pool) > 1:
            self._pool.rotate(1)  # the newest, at the right end, to the left, where the pool takes from
        return super()._get_ready_connection(timeout)

    def putconn(self, conn) -> None:
        conn._workbench_returned_at = time.monotonic()  # read by check_unless_recent
        super().putconn(conn)

    def check_unless_recent(self, conn) -> None:
        """The pool's check of a connection it hands out. One found dead most likely lost its server to a
        restart, so every pool of the server checks its idle connections at its next call
        (`_drop_old_connections`) rather than find each dead one a caller at a time (psycopg_pool waits
        1 s after each before it tries the next). Not after a timeout: the others would wait as long."""
        returned = getattr(conn, "_workbench_returned_at", None)
        if returned is None or time.monotonic() - returned > self.CHECK_BYPASS_S:
            try:
                self.check_connection(conn)
            except PostgresTimeout:
                raise
            except Exception:
                self._health.restarts += 1
                raise

    def mark_hung(self, timeout: PostgresTimeout) -> None:
        """Called by a connection whose server did not answer in time, and by a connection attempt."""
        self._health.hung = Hung(time.monotonic(), threading.get_ident(), timeout)
        self._health.lost(timeout.explain("cli"))

    def getconn(self, timeout: float | None = None):
        started = time.monotonic()
        self._fail_if_hung(started)
        timeout = self.timeout if timeout is None else timeout
        if self._health.down:
            self._probe()  # raises at once while the server is still unreachable
        self._drop_old_connections()
        first = min(timeout, self.FIRST_WAIT_S)
        try:
            conn = super().getconn(first)
        except PoolTimeout:
            self._raise_if_found_hung(started)
            if timeout <= first:
                raise
        else:
            self._health.back()
            return conn
        self._probe(waited_s=first)
        self._drop_old_connections()
        try:
            conn = super().getconn(timeout - first)
        except PoolTimeout as e:
            self._raise_if_found_hung(started, waited_s=first)
            raise PostgresReconnecting(timeout) from e  # the server answered the attempt just made
        self._health.back()
        return conn

    def _fail_if_hung(self, now: float) -> None:
        """Fail at once within HUNG_FOR_S of a call that found the server hung."""
        if (hung := self._health.hung) is not None:  # read once: another thread may clear it meanwhile
            if now < hung.at + self.HUNG_FOR_S:
                found = hung.timeout
                raise PostgresTimeout(found.seconds, f"{found.why}, {now - hung.at:.1f} s ago: this call "
                                                     "failed at once rather than wait again")
            self._health.hung = None

    def _drop_old_connections(self) -> None:
        """Once the server came back (found by this pool or another of the same server), check the idle
        connections, which may be to the old server: the broken ones go, and the pool connects anew."""
        if (restarts := self._health.restarts) != self._restarts_seen:
            self._restarts_seen = restarts
            self.check()

    def _raise_if_found_hung(self, started: float, waited_s: float = 0.0) -> None:
        """After a wait for a pooled connection ran out: when this call's own check of a connection got no
        answer (psycopg_pool swallows the error and reports a PoolTimeout), that timeout, after whatever
        this call waited before (`waited_s`)."""
        hung = self._health.hung
        if hung is not None and hung.at >= started and hung.thread == threading.get_ident():
            raise _after(waited_s, hung.timeout, "an answer")

    def _probe(self, waited_s: float = 0.0) -> None:
        """One direct connection attempt, after this call waited `waited_s` for a pooled connection."""
        try:
            psycopg.connect(self.conninfo, connect_timeout=self._connect_timeout_s).close()
        except psycopg.OperationalError as e:
            if "timeout expired" in str(e):
                timeout = PostgresTimeout(self._connect_timeout_s, "POSTGRES_CONNECT_TIMEOUT_S")
                self.mark_hung(timeout)
                raise _after(waited_s, timeout, "a new connection") from e
            if self._revive is None or not self._revive():
                self._health.down = True
                self._health.lost("Postgres is unreachable: a new connection failed (the server is not running, "
                                  "not at the address set, or refused it).")
                raise PoolTimeout("Postgres is unreachable") from e
            self._health.answered(restarted=True)
            return
        self._health.answered()


def _after(waited_s: float, timeout: PostgresTimeout, what: str) -> PostgresTimeout:
    """`timeout` as the caller had it: after `waited_s` for a pooled connection, the whole wait ("6 s (1 s
    for a pooled connection, then 5 s for a new connection: POSTGRES_CONNECT_TIMEOUT_S)")."""
    if not waited_s:
        return PostgresTimeout(timeout.seconds, timeout.why)
    return PostgresTimeout(waited_s + timeout.seconds, f"{waited_s:g} s for a pooled connection, then "
                                                       f"{timeout.seconds:g} s for {what}: {timeout.why}")
