"""A status check waits as long as its check takes until the service is found hung; from then on a caller
waits at most a glance for it, and the first check that answers ends that (core/services/status_check.py).
The checks here are plain callables that block on an event or raise as a server's client would."""

from __future__ import annotations

import threading
import time

import pytest

from core.errors import ServiceTimeout, ServiceUnavailable
from core.services.status_check import StatusCheck, StatusUnanswered

SLOW_S = 1.5  # a check that takes this long is waited for while the service is not known hung


class Server:
    """What the check reads: answers, refuses, times out (after `hang_s`), or does not answer until released."""

    def __init__(self) -> None:
        self.state = "up"
        self.released = threading.Event()
        self.calls = 0

    def check(self) -> str:
        self.calls += 1
        if self.state == "slow":
            time.sleep(SLOW_S)
        elif self.state == "timeout":
            raise ServiceTimeout("Postgres", 5, "POSTGRES_CONNECT_TIMEOUT_S")
        elif self.state == "refused":
            raise ServiceUnavailable("Postgres", "cannot connect")
        elif self.state == "silent":
            self.released.wait(30)
        return "16.4"


@pytest.fixture
def server() -> Server:
    s = Server()
    yield s
    s.released.set()  # no check thread left waiting


def timed(check: StatusCheck) -> tuple[object, float]:
    t0 = time.monotonic()
    try:
        result: object = check.result()
    except Exception as e:  # noqa: BLE001 - the outcome is what the test reads
        result = e
    return result, time.monotonic() - t0


def test_a_service_not_known_hung_is_waited_for(server):
    check = StatusCheck("Postgres", server.check)
    server.state = "slow"  # a first start, a schema being made: not called a hang
    result, seconds = timed(check)
    assert result == "16.4" and seconds >= SLOW_S
    server.state = "refused"  # down, not hung: said as it is, and not remembered as a hang
    assert isinstance(timed(check)[0], ServiceUnavailable) and check.hung_since is None


def test_once_found_hung_a_caller_waits_a_glance_and_is_told_how_long(server):
    check = StatusCheck("Postgres", server.check)
    server.state = "timeout"
    assert isinstance(timed(check)[0], ServiceTimeout) and check.hung_since is not None
    server.state = "silent"
    results = [timed(check) for _ in range(3)]
    for result, seconds in results:
        assert isinstance(result, StatusUnanswered), result
        assert seconds < SLOW_S  # a glance, not the check's whole wait
        assert "Postgres did not answer within" in str(result) and "one is still waiting" in str(result)
    assert server.calls == 2  # the one silent check is waited on by every later caller, not one each
    server.state = "up"
    server.released.set()  # the server answers the check that was waiting
    deadline = time.monotonic() + 5
    while (result := timed(check)[0]) != "16.4":
        assert time.monotonic() < deadline, result
        time.sleep(0.05)
    assert check.hung_since is None  # back: waited for again as a live service is
