"""Every page, with Redis or Postgres unreachable: a message that says what to do, never a traceback.

The settings point REDIS_URL / DATABASE_URL at a loopback port nothing listens on, so every call fails
the way it does when a server is down. The dashboard's cached Workbench is dropped before and after,
so the other AppTests keep the session servers.
"""

from __future__ import annotations

import socket
import time

import pytest

from tests.app.conftest import open_page

PAGES = ["pages/overview.py", "pages/chat.py", "pages/past_tasks.py", "pages/explorer.py", "pages/tune.py",
         "pages/feedback.py", "pages/keys.py"]


def closed_port() -> int:
    with socket.socket() as s:  # bound then closed: nothing listens there afterwards
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _clear_caches() -> None:
    import streamlit as st

    from dashboard.resources import get_workbench

    get_workbench.clear()
    st.cache_data.clear()


@pytest.fixture
def broken(app_env, monkeypatch, request):
    service = request.param
    if service == "redis":
        monkeypatch.setenv("REDIS_URL", f"redis://127.0.0.1:{closed_port()}/0")
    else:
        monkeypatch.setenv("DATABASE_URL", f"postgresql://nobody@127.0.0.1:{closed_port()}/none")
    _clear_caches()
    yield service
    monkeypatch.delenv("REDIS_URL", raising=False)
    monkeypatch.delenv("DATABASE_URL", raising=False)
    _clear_caches()


def page_text(at) -> str:
    return "\n".join(str(e.value) for e in [*at.error, *at.warning, *at.info, *at.markdown, *at.caption])


# Pages that make no call to that service: the sidebar's status is their message.
UNUSED = {("pages/overview.py", "redis"), ("pages/past_tasks.py", "redis"), ("pages/tune.py", "redis")}


@pytest.mark.parametrize("broken", ["redis", "postgres"], indirect=True)
@pytest.mark.parametrize("page", PAGES)
def test_page_says_what_failed_and_what_to_do(broken, page):
    t0 = time.monotonic()
    at = open_page(page, instance="default")
    seconds = time.monotonic() - t0
    assert not at.exception, [e.value for e in at.exception]
    name = "Redis" if broken == "redis" else "Postgres"
    text = page_text(at)
    assert "Traceback" not in text and 'File "' not in text
    # The sidebar names the service and says what to check.
    assert f"**{name}** unavailable" in text and "Check " in text, text
    if (page, broken) not in UNUSED:
        errors = "\n".join(e.value for e in at.error)
        assert name in errors and "retry" in errors, errors
    # Failing fast: a page with a service down answers within seconds, not after minutes of retries.
    assert seconds < 20, f"{page} took {seconds:.1f} s with {broken} down"
