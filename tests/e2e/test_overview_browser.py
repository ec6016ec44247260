"""The Overview in headless Chromium, as a new user meets it: an empty instance opens "what to do first"
with links through the pages and how to connect an LLM, and unset settings read "unset"."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import launch, open_page, settle

pytestmark = pytest.mark.e2e


def test_a_new_user_follows_the_first_steps(dashboard, instance):
    playwright = pytest.importorskip("playwright.sync_api")
    with playwright.sync_playwright() as p:
        browser = launch(p)
        page = open_page(browser, viewport={"width": 1400, "height": 1200})
        page.goto(dashboard + "/")
        page.get_by_text("New here? What to do first").wait_for(timeout=30_000)
        settle(page)
        body = page.inner_text("body")
        assert "workbench demo load" in body and "Ollama" in body and "LLM_BASE_URL" in body
        assert "None" not in page.get_by_test_id("stDataFrame").last.inner_text()

        page.get_by_test_id("stPageLink").filter(has_text="Memory explorer").click()
        page.get_by_label("Search stored memory").wait_for(timeout=30_000)
        settle(page)
        assert page.url.endswith("/explorer")
        assert "Nothing is stored in this instance yet" in page.inner_text("body")
        browser.close()


def test_a_deep_link_probes_the_page_path_then_connects_at_the_root(dashboard):
    """Issue 19, point 12. Streamlit's frontend cannot tell a page path from a `server.baseUrlPath`, so
    for /feedback it probes both /feedback/_stcore/{health,host-config} and /_stcore/{health,host-config}
    at once and keeps the base that answers (`getPossibleBaseUris` in its bundle); the server answers the
    page-relative probes 404 on purpose (`_RESERVED_STATIC_PATH_SUFFIXES`, so they never read as the
    app's HTML). Those two 404s are the only ones, and the page works: nothing of ours to fix."""
    playwright = pytest.importorskip("playwright.sync_api")
    with playwright.sync_playwright() as p:
        browser = launch(p)
        page = open_page(browser, viewport={"width": 1400, "height": 1000})
        statuses: dict[str, int] = {}
        page.on("response", lambda r: statuses.setdefault(r.url.removeprefix(dashboard), r.status))
        page.goto(dashboard + "/feedback")
        page.get_by_role("heading", name="Feedback").wait_for(timeout=30_000)
        settle(page)
        missing = {url for url, status in statuses.items() if status == 404}
        assert missing <= {"/feedback/_stcore/health", "/feedback/_stcore/host-config"}
        assert statuses["/_stcore/health"] == statuses["/_stcore/host-config"] == 200
        browser.close()
