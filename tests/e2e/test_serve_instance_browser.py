"""`workbench serve --instance NAME` as a user runs it, with no INSTANCE setting: the dashboard opens on NAME.
Its Streamlit process reads its settings anew, and `--instance` used to be lost on the way: the sidebar's
picker showed `default` and every page worked on it."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from benchmarks.browser import CHROMIUM
from core import usecases as uc
from tests.e2e.conftest import launch, open_page, settle
from tests.support.api import free_port

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=2).status_code == 200
    except httpx.TransportError:
        return False


@pytest.fixture
def served_by_cli(settings, workbench, tmp_path):
    """A function serving the dashboard with `workbench <args> serve …` on the session's servers, from a
    folder of the user's own and with no INSTANCE in the environment; its URL once it answers."""
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is missing: install Debian's chromium (make browser; CI does)")
    workbench.redis().ping()  # the session's servers up and held here, so the serve only uses them
    procs: list[subprocess.Popen] = []

    def serve(*args: str) -> str:
        port = free_port()
        env = {k: v for k, v in os.environ.items() if k != "INSTANCE"}
        env |= {"DATA_DIR": str(settings.data_dir), "PYTHONPATH": str(ROOT)}
        proc = subprocess.Popen([sys.executable, "-m", "core", *args, "--port", str(port)], cwd=tmp_path,
                                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        procs.append(proc)
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while not _answers(url + "/_stcore/health"):
            assert proc.poll() is None and time.monotonic() < deadline, "the dashboard did not start"
            time.sleep(0.2)
        return url

    yield serve
    for proc in procs:
        proc.terminate()
        proc.wait(timeout=20)


@pytest.mark.parametrize("where", ["after", "before"])
def test_serve_opens_the_dashboard_on_the_instance_given(served_by_cli, workbench, instance, where):
    uc.remember(workbench, uc.UiRememberParams(thought="The ferry to Hydra leaves at nine.",
                                               chain_id="ferry", instance=instance))
    args = ["serve", "--instance", instance] if where == "after" else ["--instance", instance, "serve"]
    url = served_by_cli(*args)
    playwright = pytest.importorskip("playwright.sync_api")
    with playwright.sync_playwright() as p:
        browser = launch(p)
        page = open_page(browser, viewport={"width": 1400, "height": 1000})
        page.goto(url + "/")
        picker = page.get_by_test_id("stSidebar").get_by_role("combobox", name="Instance")
        picker.wait_for(timeout=60_000)
        settle(page)
        assert picker.input_value() == instance
        assert page.get_by_text("What the index holds").count() == 1  # drawn once something is stored
        assert "Nothing is stored in this instance yet" not in page.inner_text("body")

        # Another page, opened by its address as a bookmark would: the same instance, its conversation.
        page.goto(url + "/explorer")
        page.get_by_label("Search stored memory").wait_for(timeout=30_000)
        settle(page)
        assert page.get_by_test_id("stSidebar").get_by_role("combobox", name="Instance").input_value() == instance
        assert "Nothing is stored in this instance yet" not in page.inner_text("body")
        browser.close()
