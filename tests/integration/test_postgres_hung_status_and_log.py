"""With Postgres hung (every postgres process SIGSTOPped), the services' status costs a caller its timeout
once, not at every call, and never says Postgres is up; and the terminal of `workbench api` shows our one
line about the outage and its end, not psycopg_pool's warning at each reconnection attempt.

Before: every status after the pool's 2 s fail-fast window waited 1 s for a pooled connection and then
POSTGRES_CONNECT_TIMEOUT_S for a new one, so every run of every dashboard page took 6 s more while the
server hung; and `workbench api` printed "WARNING psycopg.pool: error connecting in 'pool-1': connection
timeout expired" and "reconnection attempt ... failed after 2.0 sec" a dozen times in 30 s, and nothing of
its own.
"""

from __future__ import annotations

import os
import time

import httpx
import pytest

from core.config import load_settings
from core.runtime import Workbench
from core.services import EmbeddedPostgres, EmbeddedRedis, FailFastPool
from tests.support.api import start_api
from tests.support.embedders import KeywordEmbedder
from tests.support.faults import postgres_pids, suspended

STATEMENT_S = 1.0  # a pooled connection's check then waits 1 + 2 s for an answer
CONNECT_S = 3  # what each status cost, after 1 s for a pooled connection, once the fail-fast window passed
STATUS_COST_S = FailFastPool.FIRST_WAIT_S + CONNECT_S


@pytest.fixture
def hung_wb(fault_wb):
    wb = Workbench(load_settings(data_dir=fault_wb.settings.data_dir, redis_url=fault_wb.settings.redis_url,
                                 database_url=fault_wb.settings.database_url,
                                 postgres_statement_timeout_s=STATEMENT_S, postgres_connect_timeout_s=CONNECT_S),
                   embedder=KeywordEmbedder())
    yield wb
    wb.close()


def postgres(wb: Workbench):
    return {s.name: s for s in wb.services.status()}["Postgres"]


def test_a_hung_postgres_costs_the_status_its_timeout_once(hung_wb):
    wb = hung_wb
    assert postgres(wb).reachable
    time.sleep(FailFastPool.CHECK_BYPASS_S + 0.3)  # the pooled connection is checked at the next checkout
    seen = []
    with suspended(postgres_pids(wb.settings.data_dir)):
        t0 = time.monotonic()
        first = postgres(wb)  # finds it hung: waits its bound, once
        first_s = time.monotonic() - t0
        # Spread as a user's clicks are: past the pool's fail-fast window, where each status waited again.
        for _ in range(4):
            time.sleep(FailFastPool.HUNG_FOR_S + 0.5)
            t0 = time.monotonic()
            seen.append((postgres(wb), time.monotonic() - t0))
    assert not first.reachable and "did not answer within" in first.detail, first
    assert first_s >= STATEMENT_S, first_s
    for status, seconds in seen:
        assert not status.reachable and "did not answer within" in status.detail, status  # never "up"
        assert seconds < CONNECT_S, [round(s, 2) for _, s in seen]  # a glance, not 1 s + 3 s again
    # Continued: shown up within a few seconds (the pool fails at once for 2 s after its last timeout).
    deadline = time.monotonic() + 10
    while not (status := postgres(wb)).reachable:
        assert time.monotonic() < deadline, status
        time.sleep(0.3)
    print(f"\nstatus with Postgres hung: first {first_s:.2f} s, then "
          f"{', '.join(f'{s:.2f}' for _, s in seen)} s (each cost {STATUS_COST_S:g} s before)")


def test_workbench_api_says_a_postgres_hang_once_not_the_drivers_warnings(fault_wb, instance):
    data_dir = fault_wb.settings.data_dir
    env = {**os.environ, "DATA_DIR": str(data_dir), "INSTANCE": instance,
           "REDIS_URL": EmbeddedRedis(data_dir).ensure_running(),
           "DATABASE_URL": EmbeddedPostgres(data_dir).ensure_running(),
           "POSTGRES_STATEMENT_TIMEOUT_S": str(STATEMENT_S), "POSTGRES_CONNECT_TIMEOUT_S": str(CONNECT_S)}
    proc, url = start_api([], env, ready=False)
    try:
        with httpx.Client(base_url=url, timeout=60) as client:
            def search() -> int:
                return client.post(f"/v1/instances/{instance}/memories/search", json={"query": "bike"}).status_code

            assert search() == 200
            time.sleep(FailFastPool.CHECK_BYPASS_S + 0.3)
            with suspended(postgres_pids(data_dir)):
                codes = []
                for _ in range(4):
                    codes.append(search())
                    time.sleep(FailFastPool.HUNG_FOR_S + 0.5)  # the pool's workers try to connect meanwhile
            deadline = time.monotonic() + 15
            while search() != 200:
                assert time.monotonic() < deadline, "the API did not serve again after Postgres continued"
                time.sleep(0.5)
    finally:
        proc.terminate()
        _, stderr = proc.communicate(timeout=30)
    assert codes == [503] * 4, codes
    lines = stderr.splitlines()
    assert not [line for line in lines if "psycopg" in line], stderr  # the driver's warnings
    said = [line for line in lines if "did not answer within" in line]
    assert len(said) == 1 and "Postgres did not answer within" in said[0], stderr  # ours, once
    assert "(said once)" in said[0] and "workbench services" in said[0]
    assert sum("Postgres answers again." in line for line in lines) == 1, stderr
    assert "Traceback" not in stderr
