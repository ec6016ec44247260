"""Every call to Redis and Postgres is bounded in time: a hung server (SIGSTOP, on the fault servers)
makes a turn degrade or fail within the configured bound, and says it did not answer in time — not that
it is unavailable. A stopped server cannot cancel its own statements, so the bound is the client's.
"""

from __future__ import annotations

import time

import httpx
import pytest

from core import usecases as uc
from core.config import load_settings
from core.conversation.turn import Remember, UiRememberParams
from core.errors import ServiceTimeout, describe
from core.runtime import Workbench
from core.services import EmbeddedPostgres, EmbeddedRedis, FailFastPool
from core.services.bounded import RedisHung
from tests.support.api import thread_server
from tests.support.embedders import KeywordEmbedder
from tests.support.faults import postgres_pids, suspended

STATEMENT_S = 1.0  # the client then waits 1 + 2 s for an answer
CONNECT_S = 2
REDIS_S = 1.0


@pytest.fixture
def bounded_wb(fault_wb):
    """The fault servers, with short bounds (fault_wb restarts them if a test left them down)."""
    wb = Workbench(load_settings(data_dir=fault_wb.settings.data_dir, redis_timeout_s=REDIS_S,
                                 postgres_statement_timeout_s=STATEMENT_S, postgres_connect_timeout_s=CONNECT_S),
                   embedder=KeywordEmbedder())
    yield wb
    wb.close()


def test_a_hung_postgres_degrades_a_turn_within_the_bound_and_says_so(bounded_wb, instance):
    wb, rm = bounded_wb, Remember(bounded_wb)
    rm.run(UiRememberParams(thought="the museum opens at nine", chain_id="c"), instance=instance)
    seconds, notes = [], []
    with suspended(postgres_pids(wb.settings.data_dir)):
        for text in ("when does the museum open", "and on sundays"):
            t0 = time.monotonic()
            r = rm.run(UiRememberParams(thought=text, chain_id="c"), instance=instance)
            seconds.append(time.monotonic() - t0)
            notes.append(r.notes)
        statuses = {s.name: s for s in wb.services.status()}
    bound = STATEMENT_S + 2
    # The first turn waits for the hung server once (its later calls fail at once), the next not at all.
    assert seconds[0] < bound + CONNECT_S + 2, seconds
    assert seconds[1] < 1, seconds
    for turn_notes in notes:
        degraded = [n for n in turn_notes if n.startswith("retrieval degraded")]
        assert degraded and f"Postgres did not answer within {bound:g} s" in degraded[0], turn_notes
    assert not statuses["Postgres"].reachable and "did not answer within" in statuses["Postgres"].detail
    time.sleep(2.5)  # the pool fails at once for 2 s after a timeout
    r = rm.run(UiRememberParams(thought="the museum", chain_id="d"), instance=instance)
    assert not any("degraded" in n for n in r.notes), r.notes
    print(f"\nturns with Postgres suspended took {', '.join(f'{s:.2f}' for s in seconds)} s (bound {bound:g} s)")


def test_a_call_waits_for_a_hung_postgres_once_and_says_how_long(bounded_wb, instance):
    """The first API call on a pooled connection idle for over a second: the pool's check of it got no
    answer within the statement bound, and then a connection attempt waited POSTGRES_CONNECT_TIMEOUT_S
    more (37 s at the defaults), while the 503 named only that last wait ("within 5 s"). Now the call
    waits once and says so; one that fails at once says why; a later one names both its waits. The
    dashboard and the CLI word the same timeout from the same numbers."""
    wb = bounded_wb
    answer_s, connect_s = STATEMENT_S + 2, FailFastPool.FIRST_WAIT_S + CONNECT_S
    with thread_server(wb, mcp=False) as url, httpx.Client(base_url=url, timeout=60) as client:
        def search() -> tuple[httpx.Response, float]:
            t0 = time.monotonic()
            response = client.post(f"/v1/instances/{instance}/memories/search", json={"query": "museum"})
            return response, time.monotonic() - t0

        assert search()[0].status_code == 200  # the pool is open
        time.sleep(FailFastPool.CHECK_BYPASS_S + 0.3)  # its connection is checked at the next checkout
        with suspended(postgres_pids(wb.settings.data_dir)):
            first, first_s = search()
            with pytest.raises(ServiceTimeout) as at_once:  # as the dashboard and the MCP tools call it
                uc.memory_search(wb, uc.ExplorerSearch(query="museum", instance=instance))
            time.sleep(FailFastPool.HUNG_FOR_S + 0.3)
            later, later_s = search()
    assert first.status_code == 503 and first.json()["code"] == "timeout", first.text
    statement = f"POSTGRES_STATEMENT_TIMEOUT_S {STATEMENT_S:g} s + 2 s"
    detail = first.json()["detail"]
    assert detail.startswith(f"Postgres did not answer within {answer_s:g} s ({statement}). "), detail
    assert answer_s - 0.1 < first_s < answer_s + 1, first_s  # before: answer_s + CONNECT_S
    said = {front: describe(at_once.value, front).message for front in ("dashboard", "cli", "api")}
    for message in said.values():
        assert message.startswith(f"Postgres did not answer within {answer_s:g} s ({statement}, "), said
        assert "this call failed at once" in message, said
    assert later.status_code == 503 and later.json()["detail"].startswith(
        f"Postgres did not answer within {connect_s:g} s ({FailFastPool.FIRST_WAIT_S:g} s for a pooled "
        f"connection, then {CONNECT_S:g} s for a new connection: POSTGRES_CONNECT_TIMEOUT_S). "), later.text
    assert connect_s - 0.1 < later_s < connect_s + 1, later_s
    print(f"\ncalls with Postgres suspended took {first_s:.2f} and {later_s:.2f} s")


def test_a_new_process_on_a_hung_external_postgres_says_it_did_not_answer(fault_wb, instance):
    """A process's first connection (the CLI's, say) to a server set by DATABASE_URL that is suspended:
    a timeout after POSTGRES_CONNECT_TIMEOUT_S, not "cannot connect. Check DATABASE_URL"."""
    data_dir = fault_wb.settings.data_dir
    wb = Workbench(load_settings(data_dir=data_dir, database_url=EmbeddedPostgres(data_dir).ensure_running(),
                                 postgres_connect_timeout_s=CONNECT_S), embedder=KeywordEmbedder())
    try:
        with suspended(postgres_pids(data_dir)):
            t0 = time.monotonic()
            with pytest.raises(ServiceTimeout) as failed:
                uc.memory_search(wb, uc.ExplorerSearch(query="museum", instance=instance))
            took = time.monotonic() - t0
    finally:
        wb.close()
    message = describe(failed.value, "cli").message
    expected = f"Postgres did not answer within {CONNECT_S:g} s (POSTGRES_CONNECT_TIMEOUT_S). "
    assert message.startswith(expected), message
    assert CONNECT_S - 0.1 < took < CONNECT_S + 1, took


def test_a_hung_redis_fails_a_turn_within_the_bound_as_a_timeout(bounded_wb, instance):
    wb, rm = bounded_wb, Remember(bounded_wb)
    rm.run(UiRememberParams(thought="redis holds the chain", chain_id="c"), instance=instance)
    with suspended([EmbeddedRedis(wb.settings.data_dir).pid()]):
        t0 = time.monotonic()
        with pytest.raises(ServiceTimeout) as failed:
            rm.run(UiRememberParams(thought="is it there", chain_id="c"), instance=instance)
        took = time.monotonic() - t0
        status = {s.name: s for s in wb.services.status()}["Redis"]
    message = describe(failed.value).message
    assert f"Redis did not answer within {REDIS_S:g} s" in message and "unavailable" not in message, message
    assert took < REDIS_S * 2 + 1, took
    assert not status.reachable and "did not answer within" in status.detail
    time.sleep(RedisHung.HUNG_FOR_S + 0.3)  # the client fails at once for 2 s after a timeout
    assert rm.run(UiRememberParams(thought="back again", chain_id="c"), instance=instance).status == "ok"
    print(f"\nthe turn with Redis suspended failed after {took:.2f} s (bound {REDIS_S:g} s)")


def test_the_default_bounds_are_set(settings):
    assert settings.redis_timeout_s == 5 and settings.postgres_statement_timeout_s == 30
    assert settings.postgres_connect_timeout_s == 5
