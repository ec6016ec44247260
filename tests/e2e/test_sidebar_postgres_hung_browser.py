"""The sidebar with Postgres hung (every postgres process SIGSTOPped), in headless Chromium: a run of a page
that makes no Postgres call of its own (the Memory explorer's chain list, Redis's) pays the status check's
wait once, not at every run; the sidebar says Postgres did not answer in every run meanwhile, never that
it is up; and the first runs after the server continues show it up again.

Before: each run after the pool's 2 s fail-fast window waited 1 s for a pooled connection and then
POSTGRES_CONNECT_TIMEOUT_S for a new one in the sidebar's status check (6.1 s a run at the defaults,
measured with `make run`-like serving), for as long as the server hung.

The dashboard runs on the fault tests' servers, reached by URL, with short bounds.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks.browser import CHROMIUM, served_dashboard
from core.services import FailFastPool
from dashboard.sidebar import STATUS_TTL_S
from tests.e2e.conftest import launch, open_page, settle
from tests.integration.conftest import fault_dir, fault_urls  # noqa: F401 - fault_dir: the fault servers' data directory
from tests.support.faults import postgres_pids, suspended

pytestmark = pytest.mark.e2e

STATEMENT_S = 1.0
CONNECT_S = 3  # each run's status check cost 1 s + this before

# How long the last run of the script took, from the state changes the page recorded (`open_page`): the
# change that left `running` and the one before it, which entered it.
LAST_RUN_S = """() => {
  const changes = window.__stateChanges;
  for (let i = changes.length - 1; i > 0; i--)
    if (changes[i][0] === 'running') return (changes[i][1] - changes[i - 1][1]) / 1000;
  return null;
}"""


@pytest.fixture
def hung_dashboard(fault_dir, instance) -> Iterator[tuple[str, Path]]:  # noqa: F811 - imported
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is missing: install Debian's chromium (make browser; CI does)")
    env = {"DATA_DIR": str(fault_dir), "INSTANCE": instance, **fault_urls(fault_dir),
           "POSTGRES_STATEMENT_TIMEOUT_S": str(STATEMENT_S), "POSTGRES_CONNECT_TIMEOUT_S": str(CONNECT_S),
           "STREAMLIT_SERVER_FILE_WATCHER_TYPE": "none"}
    with served_dashboard(env) as url:
        yield url, fault_dir


def test_a_hung_postgres_costs_the_sidebar_its_wait_once(hung_dashboard, tmp_path):
    playwright = pytest.importorskip("playwright.sync_api")
    url, data_dir = hung_dashboard
    with playwright.sync_playwright() as p:
        browser = launch(p)
        page = open_page(browser, viewport={"width": 1300, "height": 800})
        sidebar = page.get_by_test_id("stSidebar")
        page.goto(url + "/explorer")
        page.get_by_text("Chains", exact=True).first.wait_for(timeout=60_000)
        settle(page)
        page.get_by_text("Chains", exact=True).first.click()  # Redis's chain list: no Postgres call
        settle(page)

        def rerun() -> tuple[float, str]:
            """The page run again as it is (Streamlit's R key): how long the run took, the sidebar's text."""
            page.get_by_role("heading", name="Memory explorer").click()
            page.keyboard.press("r")
            settle(page)
            return page.evaluate(LAST_RUN_S), sidebar.inner_text()

        assert "Postgres 16" in rerun()[1]
        with suspended(postgres_pids(data_dir)):
            time.sleep(STATUS_TTL_S + 0.5)  # the status cached while it answered has expired
            first_s, first = rerun()  # finds it hung: its wait, once
            runs = []
            for _ in range(4):  # spread as a user's clicks are: past the pool's 2 s fail-fast window
                time.sleep(FailFastPool.HUNG_FOR_S + 0.5)
                runs.append(rerun())
            page.screenshot(path=tmp_path / "hung.png")
        deadline = time.monotonic() + 15
        while "Postgres 16" not in (back := rerun()[1]):
            assert time.monotonic() < deadline, back
            time.sleep(0.5)
        page.screenshot(path=tmp_path / "back.png")
        browser.close()
    for text in (first, *(t for _, t in runs)):
        assert "Postgres unavailable" in text and "did not answer within" in text and "Postgres 16" not in text, text
    assert first_s >= STATEMENT_S, first_s
    assert all(seconds < CONNECT_S for seconds, _ in runs), [round(s, 2) for s, _ in runs]
    print(f"\nruns with Postgres hung: first {first_s:.2f} s, then {', '.join(f'{s:.2f}' for s, _ in runs)} s "
          f"(each cost {FailFastPool.FIRST_WAIT_S + CONNECT_S:g} s before); screenshots in {tmp_path}")
