"""The issue's "done when", in headless Chromium: find a memory by a word, see its chain, delete the
chain; afterwards neither search nor ui_remember returns it."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from core.remember import Remember, UiRememberParams

pytestmark = pytest.mark.e2e
CHROMIUM = "/usr/bin/chromium"
APP = Path(__file__).resolve().parents[2] / "dashboard" / "app.py"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def server(settings, workbench, instance):
    """The dashboard on the session's servers, with this test's instance as the default one."""
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


def settle(page) -> None:
    """Wait until Streamlit has finished the rerun the last action started."""
    time.sleep(0.4)
    page.wait_for_selector('[data-testid="stStatusWidget"]', state="detached", timeout=20_000)
    time.sleep(0.6)


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="needs Debian's chromium (make browser)")
def test_find_a_memory_see_its_chain_and_delete_it(server, workbench, instance):
    playwright = pytest.importorskip("playwright.sync_api")
    remember = Remember(workbench)
    first = remember.run(UiRememberParams(thought="Our quince orchard has forty trees near the river.",
                                          chain_id="orchard"), instance=instance)
    remember.run(UiRememberParams(thought="The pear trees need pruning in February.", chain_id="pears"),
                 instance=instance)

    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--headless", "--no-sandbox",
                                                                    "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(server + "/explorer")
        page.get_by_label("Search stored memory").wait_for(timeout=30_000)
        page.get_by_label("Search stored memory").fill("quince")
        page.get_by_text("Full-text", exact=True).click()
        page.get_by_role("button", name="Search", exact=True).click()
        settle(page)
        assert page.get_by_text("Our quince orchard has forty trees near the river.", exact=True).count() == 1
        assert page.get_by_text("chain orchard").count() >= 1
        page.get_by_role("button", name="Open chain").first.click()
        settle(page)
        page.get_by_role("button", name="Delete chain").click()
        settle(page)
        page.get_by_role("button", name="Yes, delete").click()
        settle(page)
        assert page.get_by_text("Chain orchard deleted").count() == 1
        page.get_by_text("Search", exact=True).first.click()
        settle(page)
        assert page.get_by_text("Nothing found").count() == 1
        browser.close()

    assert not workbench.thoughts.chain_meta(instance, "orchard")
    assert workbench.index.get(instance, [first.thought1_id]) == []
    later = remember.run(UiRememberParams(thought="How many quince trees are in the orchard?", top_k=20),
                         instance=instance)
    assert all(c.chain_id != "orchard" for c in later.context)
