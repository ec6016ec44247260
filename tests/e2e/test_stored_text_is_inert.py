"""Stored text is shown as text, in a real browser: memories, tags and corrections holding HTML, script,
`javascript:` links and Streamlit colour directives run nothing and show literally on the Chat page and in
the Memory explorer (headless Chromium; skipped only where /usr/bin/chromium is missing)."""

from __future__ import annotations

import pytest

from core.conversation.turn import Remember, UiRememberParams
from tests.e2e.conftest import launch, settle
from tests.e2e.test_chat_browser import open_chat

pytestmark = pytest.mark.e2e
PAYLOADS = ["<script>window.__xss=1</script>", '<img src=x onerror="window.__xss=1">',
            "[link](javascript:window.__xss=1)", ":red[colour]"]
TAG = "[tag](javascript:window.__xss=1)"
CORRECTION = "actually, [fix](javascript:window.__xss=1) is :red[wrong]"


def assert_inert(page, texts: list[str]) -> None:
    assert page.evaluate("typeof window.__xss") == "undefined"
    assert page.locator('img[src="x"]').count() == 0
    assert page.locator('a[href^="javascript"]').count() == 0
    assert page.locator("script:not([src])").filter(has_text="__xss").count() == 0
    body = page.inner_text("body")
    for text in texts:
        assert text in body, f"{text!r} is not shown literally"


def test_memories_with_markup_show_as_text(dashboard, workbench, instance):
    playwright = pytest.importorskip("playwright.sync_api")
    rm = Remember(workbench)
    for payload in PAYLOADS:
        rm.run(UiRememberParams(thought=f"{payload} remember the xss memory", chain_id="xss", tags=[TAG]),
               instance=instance)
    rm.run(UiRememberParams(thought=CORRECTION, chain_id="xss"), instance=instance)

    with playwright.sync_playwright() as p:
        browser = launch(p)
        # Chat: the stored conversation, with its tags and the correction in the feedback caption.
        page, conversation = open_chat(browser, dashboard)
        conversation.click()
        page.get_by_role("option").nth(1).click()
        settle(page)
        assert_inert(page, [f"{x} remember the xss memory" for x in PAYLOADS] + [TAG, CORRECTION])
        # A new turn whose extractive answer quotes those memories.
        page.get_by_test_id("stChatInputTextArea").fill("what is the xss memory")
        page.keyboard.press("Enter")
        settle(page)
        assert_inert(page, [f"{x} remember the xss memory" for x in PAYLOADS])

        # Memory explorer: the search hits.
        page.goto(dashboard + "/explorer")
        page.get_by_label("Search stored memory").wait_for(timeout=30_000)
        page.get_by_label("Search stored memory").fill("xss memory")
        page.get_by_text("Full-text", exact=True).click()
        page.get_by_role("button", name="Search", exact=True).click()
        settle(page)
        assert_inert(page, [f"{x} remember the xss memory" for x in PAYLOADS] + [TAG])
        browser.close()
