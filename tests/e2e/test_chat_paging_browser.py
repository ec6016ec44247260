"""The Chat page's conversation picker in headless Chromium, with more chains than one page of it (15): a
conversation picked stays open across Older and Newer and takes the next message (it failed with "chain_id
must be 1–128 characters … got '<the picker's label>'", the message not stored); and a conversation found by
a part of its title."""

from __future__ import annotations

import pytest

from core.conversation.turn import Remember, UiRememberParams
from tests.e2e.conftest import launch, open_page, settle

pytestmark = pytest.mark.e2e


@pytest.fixture
def twenty_chains(workbench, instance) -> None:
    """c0 the oldest: the picker's first page holds c19…c5; c7 is titled "Where do I live? (fix-city2)"."""
    remember = Remember(workbench)
    for i in range(20):
        remember.run(UiRememberParams(thought="Where do I live? (fix-city2)" if i == 7 else f"Note number {i}",
                                      chain_id=f"c{i}"), instance=instance)


def errors(page) -> list[str]:
    return [e.inner_text() for e in page.get_by_test_id("stAlert").all() if "Could not" in e.inner_text()]


def send(page, text: str) -> None:
    box = page.get_by_test_id("stChatInputTextArea")
    box.fill(text)
    box.press("Enter")
    page.get_by_text("Why this answer").last.wait_for(timeout=60_000)
    settle(page)


def test_a_conversation_picked_then_paged_past_takes_the_next_message(dashboard, workbench, instance,
                                                                       twenty_chains):
    playwright = pytest.importorskip("playwright.sync_api")
    with playwright.sync_playwright() as p:
        browser = launch(p)
        page = open_page(browser, viewport={"width": 1400, "height": 1200})
        page.goto(dashboard + "/chat")
        picker = page.get_by_test_id("stSelectbox").filter(has_text="Conversation")
        picker.wait_for(timeout=30_000)
        settle(page)
        picker.click()
        page.get_by_role("option", name="Where do I live? (fix-city2) (c7)").click()
        settle(page)
        assert page.get_by_text("1 turn · last activity").count() == 1

        page.get_by_role("button", name="Older").click()
        settle(page)
        assert picker.get_by_role("combobox").input_value() == "Where do I live? (fix-city2) (c7)"  # still open
        assert page.get_by_text("1 turn · last activity").count() == 1
        send(page, "Second message after paging")
        assert errors(page) == []
        assert workbench.thoughts.chain_meta(instance, "c7")["turns"] == "2"
        assert page.get_by_text("2 turns · last activity").count() == 1

        page.get_by_role("button", name="Newer").click()
        settle(page)
        assert picker.get_by_role("combobox").input_value() == "Where do I live? (fix-city2) (c7)"
        send(page, "Third message after paging back")
        assert errors(page) == []
        assert workbench.thoughts.chain_meta(instance, "c7")["turns"] == "3"
        assert workbench.thoughts.chain_count(instance) == 20
        browser.close()


def test_a_conversation_found_by_its_title(dashboard, workbench, instance, twenty_chains):
    playwright = pytest.importorskip("playwright.sync_api")
    with playwright.sync_playwright() as p:
        browser = launch(p)
        page = open_page(browser, viewport={"width": 1400, "height": 1200})
        page.goto(dashboard + "/chat")
        title_filter = page.get_by_role("textbox", name="Find by title")
        title_filter.wait_for(timeout=30_000)
        settle(page)
        title_filter.fill("FIX-CITY")
        title_filter.press("Enter")
        settle(page)
        assert page.get_by_text("1 conversation has “FIX-CITY” in its title").count() == 1
        picker = page.get_by_test_id("stSelectbox").filter(has_text="Conversation")
        picker.click()
        options = page.get_by_role("option")
        assert [o.inner_text() for o in options.all()] == ["+ New conversation", "Where do I live? (fix-city2) (c7)"]
        options.last.click()
        settle(page)
        send(page, "Found it by its title")
        assert errors(page) == []
        assert workbench.thoughts.chain_meta(instance, "c7")["turns"] == "2"
        browser.close()
