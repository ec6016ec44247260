"""Browser tests: the dashboard served on the session's test servers, driven in Debian's headless Chromium.

Skipped (with the reason) only where /usr/bin/chromium is missing; CI installs it (.ci/run).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from benchmarks.browser import CHROMIUM, RECORD_STATES, launch, served_dashboard

__all__ = ["launch", "open_page", "settle"]  # what the browser tests import from here


@pytest.fixture
def dashboard(settings, workbench, instance):
    """The dashboard's URL, served on the session's servers with this test's instance as the default."""
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is missing: install Debian's chromium (make browser; CI does)")
    with served_dashboard({"DATA_DIR": str(settings.data_dir), "INSTANCE": instance}) as url:
        yield url


# True once a run of the script ended since the last settle of this document (or none has started by
# `until`, a performance.now() time) and the app is idle: the script not running, no status widget. The
# runs seen are then counted (`__runsSettled`) for the next settle.
SETTLED = """(until) => {
  const app = document.querySelector('[data-testid="stApp"]');
  const idle = app?.dataset.testScriptState === 'notRunning'
    && !document.querySelector('[data-testid="stStatusWidget"]');
  const ended = window.__stateChanges.filter(([left]) => left === 'running').length;
  if (!idle || !(ended > (window.__runsSettled ?? 0) || performance.now() > until)) return false;
  window.__runsSettled = ended;
  return true;
}"""


def open_page(browser, **options):
    """A new page of `browser` (Playwright's `new_page` options) whose documents record the script's state
    changes (`RECORD_STATES`, as the dashboard benchmark does), for `settle`."""
    page = browser.new_page(**options)
    page.add_init_script(RECORD_STATES)
    return page


def settle(page, start_within_s: float = 2.0) -> None:
    """Wait until Streamlit has finished the rerun the last action started: a run of the script has ended
    since the last `settle` of this document, or none started within `start_within_s` (the action asked
    for none), and the app is idle, still so a moment later (a run may ask for another at its end).

    Waiting for a run to end, rather than for the status widget a moment after the action, is what holds
    on a busy machine: a rerun that started late, or ran too briefly to show the widget, was missed."""
    if page.evaluate("window.__stateChanges") is None:
        raise RuntimeError("settle() needs a page made by open_page(), whose documents record the runs")
    until = page.evaluate("performance.now()") + start_within_s * 1000
    page.wait_for_function(SETTLED, arg=until, polling=50, timeout=30_000)
    time.sleep(0.3)
    page.wait_for_function(SETTLED, arg=0, polling=50, timeout=30_000)
