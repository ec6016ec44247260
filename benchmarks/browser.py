"""The dashboard served in a process of its own and driven in Debian's headless Chromium: shared by the
browser tests (`tests/e2e`) and the dashboard benchmark (`benchmarks.dashboard_scale`), so both measure
and test the same server the same way."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
APP = Path(__file__).resolve().parents[1] / "dashboard" / "app.py"

# Recorded in each document from its start (an init script): every change of Streamlit's script state, as
# the state it left and its time (a change's new state is the next change's old one; the last one's is the
# current state). Read this way, a fast run (an empty page's) that goes from `running` to `notRunning`
# between two calls of the observer still shows both changes, where reading the state when the observer
# is called sees only the end.
RECORD_STATES = """window.__stateChanges = [];
new MutationObserver((records) => {
  const now = performance.now();
  for (const r of records) window.__stateChanges.push([r.oldValue, now]);
}).observe(document, {subtree: true, attributes: true, attributeOldValue: true,
                      attributeFilter: ["data-test-script-state"]});"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def served_dashboard(env: dict[str, str], *, ready_within_s: float = 30, app: Path = APP) -> Iterator[str]:
    """The dashboard's URL (or another Streamlit `app`'s), served by `streamlit run` on a free port with
    `env` added to this process's environment (DATA_DIR and INSTANCE above all); stopped on exit. Ready
    once its health check answers."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", str(app), "--server.port", str(port),
                             "--server.address", "127.0.0.1", "--server.headless", "true",
                             "--browser.gatherUsageStats", "false"],
                            env={**os.environ, **env}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + ready_within_s
    while time.monotonic() < deadline:
        try:
            if urllib.request.urlopen(url + "/_stcore/health", timeout=1).status == 200:
                break
        except OSError:
            time.sleep(0.2)
    try:
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def launch(p):
    """Debian's Chromium through Playwright (never a downloaded browser)."""
    return p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
