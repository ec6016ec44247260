"""Browser tests: the dashboard served on the session's test servers, driven in Debian's headless Chromium.

Skipped (with the reason) only where /usr/bin/chromium is missing; CI installs it (.ci/run).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from benchmarks.browser import CHROMIUM, launch, served_dashboard

__all__ = ["launch", "settle"]  # what the browser tests import from here


@pytest.fixture
def dashboard(settings, workbench, instance):
    """The dashboard's URL, served on the session's servers with this test's instance as the default."""
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is missing: install Debian's chromium (make browser; CI does)")
    with served_dashboard({"DATA_DIR": str(settings.data_dir), "INSTANCE": instance}) as url:
        yield url


def settle(page) -> None:
    """Wait until Streamlit has finished the rerun the last action started."""
    time.sleep(0.4)
    page.wait_for_selector('[data-testid="stStatusWidget"]', state="detached", timeout=20_000)
    time.sleep(0.6)
