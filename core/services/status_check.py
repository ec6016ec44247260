"""A service's status check that costs a caller its timeout once per outage of a hung server, not at
every call.

The sidebar draws every service's status in every run of every page. With Postgres hung (suspended, a
full disk's stall), each check after the pool's 2 s fail-fast window waited its bound again (a pooled
connection's check, or POSTGRES_CONNECT_TIMEOUT_S for a new one): every click in any page took 5-7 s
more for as long as the server hung, the first one 32 s. Here a check runs in a thread of its own.
While the service answers, or has not been found hung, the caller waits for the check as before (a
slow first start, the schema's creation, must not be called a hang). Once a check got no answer within
its bound, the service is known hung: later callers wait at most GLANCE_S for a new check (or the one
still running) and, without an answer by then, are told it has not answered for so long. The first
check that answers ends that, so a server continued (SIGCONT) is shown up at the next call once its
pending check has had its answer.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Generic, TypeVar

from core.errors import ServiceTimeout

T = TypeVar("T")


class StatusUnanswered(ServiceTimeout):
    """A service known hung has not answered the status checks for `seconds`: the one asked now is
    still waiting."""

    def __init__(self, service: str, seconds: float):
        super().__init__(service, round(max(seconds, StatusCheck.GLANCE_S), 1),
                         "status checks since it was found hung; one is still waiting")


class StatusCheck(Generic[T]):
    """Runs `check` (what a service's status reads from it) in a thread of its own, at most one at a time,
    and says how long a caller waits for it: as long as it takes while the service is not known hung,
    at most GLANCE_S once it is (a check ended with a `ServiceTimeout`), until a check ends otherwise."""

    GLANCE_S = 0.5  # a live server answers a status check in milliseconds, tens of them under load

    def __init__(self, service: str, check: Callable[[], T], clock: Callable[[], float] = time.monotonic):
        self.service = service
        self._check = check
        self._clock = clock
        self._lock = threading.Lock()
        self._running: Future[T] | None = None
        self.hung_since: float | None = None  # when the first check that got no answer started

    def result(self) -> T:
        """What `check` returned, or raised, or `StatusUnanswered` when the service is known hung and no
        answer came within GLANCE_S."""
        with self._lock:
            running = self._running
            if running is None or running.done():
                running = self._running = self._start()
            hung_since = self.hung_since
        try:
            value = running.result(timeout=None if hung_since is None else self.GLANCE_S)
        except FutureTimeout:
            raise StatusUnanswered(self.service, self._clock() - hung_since) from None
        except ServiceTimeout:
            self._found_hung(running)
            raise
        except Exception:
            self._answered(running)
            raise
        self._answered(running)
        return value

    def _start(self) -> Future[T]:
        future: Future[T] = Future()
        future.started = self._clock()  # type: ignore[attr-defined]

        def run() -> None:
            try:
                future.set_result(self._check())
            except BaseException as e:  # noqa: BLE001 - handed to the caller, who reports it
                future.set_exception(e)

        threading.Thread(target=run, name=f"{self.service.lower()}-status", daemon=True).start()
        return future

    def _found_hung(self, check: Future[T]) -> None:
        with self._lock:
            if self.hung_since is None:
                self.hung_since = check.started  # type: ignore[attr-defined]

    def _answered(self, check: Future[T]) -> None:
        """The service answered (or refused at once): not hung, unless a later check found it so since."""
        with self._lock:
            if self.hung_since is not None and check.started >= self.hung_since:  # type: ignore[attr-defined]
                self.hung_since = None
