"""The issue's "done when", in headless Chromium: the newest memories before a search, find a memory by a
word (only hits with it), see its chain, delete the chain in a dialog; afterwards neither search nor
ui_remember returns it."""

from __future__ import annotations

import pytest

from core.conversation.turn import Remember, UiRememberParams
from tests.e2e.conftest import launch, open_page, settle

pytestmark = pytest.mark.e2e


def test_find_a_memory_see_its_chain_and_delete_it(dashboard, workbench, instance):
    playwright = pytest.importorskip("playwright.sync_api")
    remember = Remember(workbench)
    first = remember.run(UiRememberParams(thought="Our quince orchard has forty trees near the river.",
                                          chain_id="orchard"), instance=instance)
    remember.run(UiRememberParams(thought="The pear trees need pruning in February.", chain_id="pears"),
                 instance=instance)

    with playwright.sync_playwright() as p:
        browser = launch(p)
        page = open_page(browser, viewport={"width": 1400, "height": 1000})
        page.goto(dashboard + "/explorer")
        page.get_by_label("Search stored memory").wait_for(timeout=30_000)
        settle(page)
        assert "newest memories of this instance" in page.inner_text("body")  # before any search
        assert page.get_by_text("The pear trees need pruning in February.", exact=True).count() >= 1
        page.get_by_label("Search stored memory").fill("quince")
        page.get_by_text("Full-text", exact=True).click()
        page.get_by_role("button", name="Search", exact=True).click()
        settle(page)
        assert page.get_by_text("Our quince orchard has forty trees near the river.", exact=True).count() == 1
        assert page.get_by_text("chain orchard").count() >= 1
        assert "each has words of the query" in page.inner_text("body")
        assert page.get_by_text("The pear trees need pruning in February.", exact=True).count() == 0
        page.get_by_role("button", name="Open chain").first.click()
        settle(page)
        # What the rerun draws, waited for too: this count flaked once, before `settle` waited for the run.
        page.get_by_text("chain orchard · 1 turn ·").wait_for(timeout=20_000)
        assert page.get_by_text("chain orchard · 1 turn ·").count() == 1
        page.get_by_role("button", name="Delete chain").click()
        settle(page)
        dialog = page.get_by_role("dialog")  # seen wherever the page is scrolled
        assert "Delete the chain" in dialog.inner_text()
        dialog.get_by_role("button", name="Yes, delete").click()
        settle(page)
        assert page.get_by_text("Chain orchard deleted").count() >= 1  # at the top, and as a toast
        page.get_by_text("Search", exact=True).first.click()
        settle(page)
        assert page.get_by_text("Nothing found").count() == 1
        browser.close()

    assert not workbench.thoughts.chain_meta(instance, "orchard")
    assert workbench.index.get(instance, [first.thought1_id]) == []
    later = remember.run(UiRememberParams(thought="How many quince trees are in the orchard?", top_k=20),
                         instance=instance)
    assert all(c.chain_id != "orchard" for c in later.context)
