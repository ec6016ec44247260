"""The issue's "done when", in headless Chromium: the newest memories before a search, find a memory by a
word (only hits with it), see its chain, delete the chain in a dialog; afterwards neither search nor
ui_remember returns it."""

from __future__ import annotations

import re
import time

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
        # Said once, at the top: no toast repeating it.
        assert page.get_by_text("Deleted the conversation “Our quince orchard").count() == 1
        assert page.get_by_test_id("stToast").count() == 0
        page.get_by_text("Search", exact=True).first.click()
        settle(page)
        assert page.get_by_text("Nothing found").count() == 1
        browser.close()

    assert not workbench.thoughts.chain_meta(instance, "orchard")
    assert workbench.index.get(instance, [first.thought1_id]) == []
    later = remember.run(UiRememberParams(thought="How many quince trees are in the orchard?", top_k=20),
                         instance=instance)
    assert all(c.chain_id != "orchard" for c in later.context)


def test_a_chain_opened_from_a_hit_far_down_is_shown_in_view_and_found_by_title(dashboard, workbench, instance):
    """"Open chain" on the last of many hits: the chain is drawn first in the Chains view and brought into
    sight (it was drawn under a page of unrelated chains, out of view); Back to the search returns to the
    hits. Then the Chains view finds it by a part of its title."""
    playwright = pytest.importorskip("playwright.sync_api")
    remember = Remember(workbench)
    for i in range(12):
        remember.run(UiRememberParams(thought=f"Quince tree number {i} was planted near the river in spring.",
                                      chain_id=f"tree{i}"), instance=instance)
    with playwright.sync_playwright() as p:
        browser = launch(p)
        page = open_page(browser, viewport={"width": 1400, "height": 900})
        page.goto(dashboard + "/explorer")
        page.get_by_label("Search stored memory").wait_for(timeout=30_000)
        settle(page)
        page.get_by_label("Search stored memory").fill("quince tree")
        page.get_by_text("Full-text", exact=True).click()
        page.get_by_role("button", name="Search", exact=True).click()
        settle(page)
        last = page.get_by_role("button", name="Open chain").last
        last.scroll_into_view_if_needed()
        last.click()
        settle(page)
        chain = page.locator(".st-key-xp_open_chain")
        chain.wait_for(timeout=20_000)
        page.wait_for_function("() => { const r = document.querySelector('.st-key-xp_open_chain')"
                               ".getBoundingClientRect(); return r.top >= -2 && r.top < innerHeight / 2; }",
                               timeout=10_000)  # its top in the upper half of the window
        time.sleep(1)  # and it stays there once the run has ended
        assert -2 <= chain.evaluate("e => e.getBoundingClientRect().top") < 450
        assert chain.get_by_text("Quince tree number").count() >= 1
        page.get_by_role("button", name="Back to the search").click()
        settle(page)
        assert page.get_by_role("button", name="Open chain").count() == 12
        assert page.locator(".st-key-xp_open_chain").count() == 0

        page.get_by_text("Chains", exact=True).click()
        settle(page)
        title = page.get_by_role("textbox", name="Title contains")
        title.fill("NUMBER 11")
        title.press("Enter")
        settle(page)
        assert page.get_by_text("Page 1 of 1 · 1 chain with “NUMBER 11” in the title").count() == 1
        browser.close()


def test_a_memory_found_by_its_id(dashboard, workbench, instance, tmp_path):
    """The id the Chat page lists under a turn's memories, pasted into the search: that memory comes first."""
    playwright = pytest.importorskip("playwright.sync_api")
    remember = Remember(workbench)
    quince = remember.run(UiRememberParams(thought="Our quince orchard has forty trees near the river.",
                                           chain_id="orchard"), instance=instance)
    remember.run(UiRememberParams(thought="The pear trees need pruning in February.", chain_id="pears"),
                 instance=instance)
    with playwright.sync_playwright() as p:
        browser = launch(p)
        page = open_page(browser, viewport={"width": 1400, "height": 1000})
        page.goto(dashboard + "/explorer")
        page.get_by_label("Search stored memory").wait_for(timeout=30_000)
        settle(page)
        page.get_by_label("Search stored memory").fill(quince.thought1_id)
        page.get_by_role("button", name="Search", exact=True).click()
        settle(page)
        body = page.inner_text("body")
        assert re.search(f"for “{quince.thought1_id}” · (it|the first) is the memory with this id", body)
        hits = body.split("How a score adds up", 1)[1]
        first = hits.index("Our quince orchard has forty trees near the river.")
        pear = hits.find("The pear trees")  # found too when semantically close: after it
        assert hits.index("chain orchard") < first and (pear == -1 or first < pear)
        assert page.get_by_text(quince.thought1_id, exact=True).count() >= 1  # its id, to copy
        page.screenshot(path=str(tmp_path / "explorer-by-id.png"), full_page=True)
        browser.close()


def test_a_hybrid_search_and_a_memorys_deletion_say_where_its_words_and_its_copies_are(dashboard, workbench,
                                                                                      instance):
    """The hybrid caption counted "with words of the query" hits whose words are only in the messages next
    to them; deleting an observation said it "removes it from the thought store, its bank" though an
    observation has neither."""
    playwright = pytest.importorskip("playwright.sync_api")
    remember = Remember(workbench)
    for text in ("Our quince orchard has forty trees near the river.", "When should we harvest the quince trees?"):
        remember.run(UiRememberParams(thought=text, chain_id="orchard"), instance=instance)  # a question stays
    with playwright.sync_playwright() as p:
        browser = launch(p)
        page = open_page(browser, viewport={"width": 1400, "height": 1000})
        page.goto(dashboard + "/explorer")
        page.get_by_label("Search stored memory").wait_for(timeout=30_000)
        settle(page)
        page.get_by_label("Search stored memory").fill("quince orchard")
        page.get_by_role("button", name="Search", exact=True).click()
        settle(page)
        assert "with words of the query, in its text or in the messages next to it: " in page.inner_text("body")

        def delete_says(hit) -> str:
            hit.get_by_role("button", name="Delete").click()
            settle(page)
            said = page.get_by_role("dialog").inner_text()
            page.get_by_role("dialog").get_by_role("button", name="Cancel").click()
            settle(page)
            return said

        hits = page.locator('[data-testid="stVerticalBlock"]')
        observation = hits.filter(has=page.get_by_role("button", name="History")).last
        assert "This removes it from the memory index. It cannot be undone." in delete_says(observation)
        message = hits.filter(has_text=re.compile(r"(user|assistant) · chain orchard")).last
        assert ("This removes it from the thought store and the memory index. It cannot be undone."
                in delete_says(message))
        browser.close()
