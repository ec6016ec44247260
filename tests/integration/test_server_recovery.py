"""An embedded server that died is started again by the long-running process that needs it (the
dashboard, the API), on the next request, with a bounded back-off; the sidebar says so.
"""

from __future__ import annotations

import itertools
import os
import signal
import threading
import time

import httpx
import pytest

from core.config import load_settings
from core.conversation.turn import Remember, UiRememberParams
from core.runtime import Workbench
from core.services import EmbeddedPostgres, EmbeddedRedis
from core.services.bounded import Revival
from tests.integration.conftest import kill_redis
from tests.support.embedders import KeywordEmbedder


@pytest.fixture
def embedded_wb(fault_wb):
    """The fault servers as the embedded servers of DATA_DIR (fault_wb reaches them as external ones)."""
    wb = Workbench(load_settings(data_dir=fault_wb.settings.data_dir), embedder=KeywordEmbedder())
    yield wb
    wb.close()


def kill_postgres(data_dir) -> None:
    pg = EmbeddedPostgres(data_dir)
    pid = pg._postmaster_pid()
    os.kill(pid, signal.SIGKILL)
    while pg._postmaster_pid() == pid:
        time.sleep(0.01)


def test_the_next_turn_after_redis_is_killed_works(embedded_wb, instance):
    rm = Remember(embedded_wb)
    rm.run(UiRememberParams(thought="the keys are under the mat", chain_id="c"), instance=instance)
    kill_redis(embedded_wb.settings.data_dir)
    r = rm.run(UiRememberParams(thought="where are the keys", chain_id="c"), instance=instance)
    assert r.status == "ok"
    assert len(embedded_wb.thoughts.chain_thoughts(instance, "c")) >= 4  # the first turn survived the crash
    redis_status = {s.name: s for s in embedded_wb.services.status()}["Redis"]
    assert redis_status.reachable and redis_status.recovery.startswith("restarted"), redis_status


def test_the_next_turn_after_postgres_is_killed_works(embedded_wb, instance):
    rm = Remember(embedded_wb)
    rm.run(UiRememberParams(thought="the museum opens at nine", chain_id="c"), instance=instance)
    kill_postgres(embedded_wb.settings.data_dir)
    first = rm.run(UiRememberParams(thought="when does the museum open", chain_id="c"), instance=instance)
    second = rm.run(UiRememberParams(thought="the museum at nine", chain_id="c"), instance=instance)
    # At most one turn degraded (and said so); the next one retrieves again.
    assert first.status == "ok" and second.status == "ok"
    assert not any("degraded" in n for n in second.notes), second.notes
    assert "the museum opens at nine" in {m.content for m in second.context}
    status = {s.name: s for s in embedded_wb.services.status()}["Postgres"]
    assert status.reachable and status.recovery.startswith("restarted"), status


def test_restarts_back_off_while_starting_fails():
    clock = [0.0]
    starts: list[float] = []

    def start():
        starts.append(clock[0])
        raise OSError("no space left on device")

    revival = Revival("Redis", start, clock=lambda: clock[0])
    for _ in range(200):  # a request every half second for 100 s
        revival.revive()
        clock[0] += 0.5
    gaps = [b - a for a, b in itertools.pairwise(starts)]
    assert gaps[:5] == [2.0, 4.0, 8.0, 16.0, 30.0] and set(gaps[5:]) == {30.0}, gaps
    assert revival.state().startswith(f"restarting: attempt {len(starts)} failed")
    assert "next attempt in" in revival.state()


def test_restarts_are_at_least_two_seconds_apart(fault_dir):
    clock = [0.0]
    revival = Revival("Redis", EmbeddedRedis(fault_dir).ensure_running, clock=lambda: clock[0])
    assert revival.revive()
    clock[0] += 1.0
    assert not revival.revive()  # too soon after the last attempt
    clock[0] += 1.0
    assert revival.revive()
    assert revival.state() == "restarted 0 s ago (attempt 1)"


def test_callers_waiting_for_a_restart_all_see_it_running(fault_dir):
    kill_redis(fault_dir)
    revival = Revival("Redis", EmbeddedRedis(fault_dir).ensure_running)
    results: list[bool] = []
    threads = [threading.Thread(target=lambda: results.append(revival.revive())) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert results == [True] * 4 and revival.attempts == 1


def test_the_sidebar_shows_the_restart(fault_dir, fault_wb, monkeypatch):
    import streamlit as st

    from dashboard.resources import get_workbench
    from tests.app.conftest import open_page

    monkeypatch.setenv("DATA_DIR", str(fault_dir))
    get_workbench.clear()
    st.cache_data.clear()
    try:
        at = open_page("pages/chat.py", instance="page")
        assert not at.exception
        kill_redis(fault_dir)
        st.cache_data.clear()  # the sidebar caches the services' state for 5 s
        at.run()
        assert not at.exception
        shown = "\n".join(c.value for c in at.sidebar.caption) + "\n".join(m.value for m in at.sidebar.markdown)
        assert "restarted" in shown and "attempt 1" in shown, shown
    finally:
        EmbeddedRedis(fault_dir).ensure_running()
        get_workbench().close()
        get_workbench.clear()
        st.cache_data.clear()


def test_the_api_restarts_a_killed_redis_on_the_next_request(embedded_wb, instance):
    """The rate limit is counted in Redis before a request's work: through a client of its own, it
    answered every request 503 after Redis died, and only /readyz (which used the product's client) ever
    started the server again."""
    from tests.support.api import thread_server

    with thread_server(embedded_wb, settings=embedded_wb.settings.model_copy(
            update={"api_rate_limit": "100000/minute"})) as url, httpx.Client(base_url=url, timeout=60) as c:
        path = f"/v1/instances/{instance}/remember"
        assert c.post(path, json={"thought": "the bins go out on Tuesday", "chain_id": "bins"}).status_code == 200
        kill_redis(embedded_wb.settings.data_dir)
        after = c.post(path, json={"thought": "when do the bins go out", "chain_id": "bins"})
        assert after.status_code == 200, after.text
        assert c.get(f"/v1/instances/{instance}/chains/bins").status_code == 200
