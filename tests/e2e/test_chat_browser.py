"""The Chat page in headless Chromium: a conversation made elsewhere (here: as an MCP client would) shows
in the list without the user doing anything, and a thumb under an answer stores the rating, which the
Feedback page then counts."""

from __future__ import annotations

import time

import pytest

from core import usecases as uc
from tests.e2e.conftest import launch, settle

pytestmark = pytest.mark.e2e
WATCH_EVERY_S = 5  # pages/chat.py's WATCH_EVERY_S


def test_a_chain_made_elsewhere_appears_and_its_answer_can_be_rated(dashboard, workbench, instance):
    playwright = pytest.importorskip("playwright.sync_api")
    with playwright.sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page(viewport={"width": 1400, "height": 1200})
        page.goto(dashboard + "/chat")
        conversation = page.get_by_test_id("stSelectbox").filter(has_text="Conversation")
        conversation.wait_for(timeout=30_000)
        settle(page)

        # Another front end starts a conversation while the page is open; the user does nothing.
        made = uc.remember(workbench, uc.UiRememberParams(
            thought="Made elsewhere: the boat leaves at nine", chain_id="elsewhere", instance=instance),
            origin=uc.Origin(source="mcp", key="e2e-key"))
        time.sleep(WATCH_EVERY_S + 2)
        settle(page)
        conversation.click()
        option = page.get_by_role("option").filter(has_text="Made elsewhere: the boat leaves at nine")
        assert option.count() == 1
        option.click()
        settle(page)
        assert page.get_by_text("Made elsewhere: the boat leaves at nine").count() >= 1

        # Thumbs up under its answer.
        page.get_by_role("radio", name="Thumbs up").first.click()
        settle(page)
        assert workbench.thoughts.feedback([made.thought2_id])[made.thought2_id].rating == "up"
        assert page.get_by_text("rated up").count() == 1

        # The Feedback page counts it as its own signal and can show only this key's turns.
        page.goto(dashboard + "/feedback")
        page.get_by_text("Explicit ratings", exact=False).first.wait_for(timeout=30_000)
        settle(page)
        tile = page.get_by_test_id("stMetric").filter(has_text="Thumbs up")
        assert tile.get_by_test_id("stMetricValue").inner_text() == "1"
        browser.close()
