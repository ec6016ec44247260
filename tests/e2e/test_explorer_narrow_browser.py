"""The explorer in an 800-pixel window, in headless Chromium: a hit's actions and id read whole (in a column of
their own they were cut to "O…" and "D…"), a 10,000-character memory is shown by its start, and an empty
search lists every memory by time with its count."""

from __future__ import annotations

import pytest

from core import usecases as uc
from tests.e2e.conftest import launch, open_page, settle

pytestmark = pytest.mark.e2e

LONG = ("My garden journal. " + " ".join(f"Day {d}: watered the quinces." for d in range(400)))[:10_000]
# True when an element's text overflows its box (shown cut with an ellipsis).
CUT = "el => el.scrollWidth > el.clientWidth + 1"


def test_a_narrow_window_shows_whole_actions_and_a_long_memory_by_its_start(dashboard, workbench, instance):
    playwright = pytest.importorskip("playwright.sync_api")
    uc.add_memory(workbench, uc.AddMemory(instance=instance, content=LONG))
    uc.add_memory(workbench, uc.AddMemory(instance=instance, content="أعيش في القاهرة وأزرع السفرجل quince 🌳"))

    with playwright.sync_playwright() as p:
        browser = launch(p)
        page = open_page(browser, viewport={"width": 800, "height": 800})
        page.goto(dashboard + "/explorer")
        page.get_by_label("Search stored memory").wait_for(timeout=30_000)
        settle(page)
        page.get_by_role("button", name="Search", exact=True).click()  # nothing typed: the listing
        settle(page)
        assert page.get_by_text("2 memories · 1–2 shown, page 1 of 1, newest first").count() == 1
        page.get_by_label("Search stored memory").fill("quince")
        page.get_by_text("Full-text", exact=True).click()
        page.get_by_role("button", name="Search", exact=True).click()
        settle(page)
        for name in ("Delete", "Relevant", "Not relevant"):
            for button in page.get_by_role("button", name=name, exact=True).all():
                assert not button.evaluate(CUT), name
        codes = page.get_by_test_id("stCode").all()
        assert codes and not any(c.locator("pre").evaluate(CUT) for c in codes)
        assert page.get_by_text("Show all 10,000 characters").count() == 1
        body = page.inner_text("body")
        assert LONG[:200] in body and LONG[-200:] not in body  # its start; the rest behind "Show all"
        assert "أعيش في القاهرة وأزرع السفرجل quince 🌳" in body
        browser.close()
