"""Browser tests: the dashboard served on the session's test servers, driven in Debian's headless Chromium.

Skipped (with the reason) only where /usr/bin/chromium is missing; CI installs it (.ci/run).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
APP = Path(__file__).resolve().parents[2] / "dashboard" / "app.py"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def dashboard(settings, workbench, instance):
    """The dashboard's URL, served on the session's servers with this test's instance as the default."""
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is missing: install Debian's chromium (make browser; CI does)")
    port = free_port()
    env = {**os.environ, "DATA_DIR": str(settings.data_dir), "INSTANCE": instance}
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", str(APP), "--server.port", str(port),
                             "--server.address", "127.0.0.1", "--server.headless", "true",
                             "--browser.gatherUsageStats", "false"],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if urllib.request.urlopen(url + "/_stcore/health", timeout=1).status == 200:
                break
        except OSError:
            time.sleep(0.2)
    yield url
    proc.terminate()
    proc.wait(timeout=10)


def launch(p):
    """Debian's Chromium through Playwright (never a downloaded browser)."""
    return p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)


def settle(page) -> None:
    """Wait until Streamlit has finished the rerun the last action started."""
    time.sleep(0.4)
    page.wait_for_selector('[data-testid="stStatusWidget"]', state="detached", timeout=20_000)
    time.sleep(0.6)
