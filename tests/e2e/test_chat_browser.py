"""The Chat page in headless Chromium: a conversation made elsewhere (here: as an MCP client would) shows
in the list without the user doing anything, as does a turn made elsewhere in the open conversation, and a
thumb under an answer stores the rating, which the Feedback page then counts."""

from __future__ import annotations

import json
import threading
import time

import pytest

from core import usecases as uc
from tests.e2e.conftest import launch, open_page, settle

pytestmark = pytest.mark.e2e
WATCH_EVERY_S = 5  # pages/chat.py's WATCH_EVERY_S


def open_chat(browser, dashboard: str):
    """A page of `browser` on the Chat page once it is drawn, and its conversation picker."""
    page = open_page(browser, viewport={"width": 1400, "height": 1200})
    page.goto(dashboard + "/chat")
    conversation = page.get_by_test_id("stSelectbox").filter(has_text="Conversation")
    conversation.wait_for(timeout=30_000)
    settle(page)
    return page, conversation


def test_a_chain_made_elsewhere_appears_and_its_answer_can_be_rated(dashboard, workbench, instance):
    playwright = pytest.importorskip("playwright.sync_api")
    with playwright.sync_playwright() as p:
        browser = launch(p)
        page, conversation = open_chat(browser, dashboard)

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


def test_a_turn_made_elsewhere_shows_in_the_open_conversation(dashboard, workbench, instance):
    """The chain stays first and the total the same: the watcher sees its turn count and last activity."""
    playwright = pytest.importorskip("playwright.sync_api")
    cli = uc.Origin(source="cli")
    uc.remember(workbench, uc.UiRememberParams(thought="The boat leaves at nine.", chain_id="boat",
                                               instance=instance), origin=cli)
    with playwright.sync_playwright() as p:
        browser = launch(p)
        page, conversation = open_chat(browser, dashboard)
        conversation.click()
        page.get_by_role("option").filter(has_text="The boat leaves at nine.").click()
        settle(page)
        assert page.get_by_text("1 turn · last activity").count() == 1
        assert page.get_by_text("awaiting the next turn for feedback").count() == 1

        uc.remember(workbench, uc.UiRememberParams(thought="Thanks. When does it come back?", chain_id="boat",
                                                   instance=instance), origin=cli)
        time.sleep(WATCH_EVERY_S + 2)
        settle(page)
        assert page.get_by_text("2 turns · last activity").count() == 1
        assert page.get_by_text("Thanks. When does it come back?").count() >= 1
        assert page.get_by_text("follow-up after").count() == 1  # the first answer has its feedback now
        browser.close()


def test_spaces_are_refused_and_turn_settings_stay_open(dashboard, workbench, instance):
    playwright = pytest.importorskip("playwright.sync_api")
    uc.add_memory(workbench, uc.AddMemory(instance=instance, content="The ferry to the island leaves at nine "
                                          "from pier four, and the last one comes back at six in the evening."))
    with playwright.sync_playwright() as p:
        browser = launch(p)
        page = open_page(browser, viewport={"width": 1400, "height": 1200})
        page.goto(dashboard + "/chat")
        page.get_by_text("Turn settings").wait_for(timeout=30_000)
        settle(page)
        page.get_by_text("Turn settings").click()
        settle(page)
        box = page.get_by_placeholder("Ask something")
        box.fill("    ")
        box.press("Enter")
        settle(page)
        assert page.get_by_text("Type a message first.").count() == 1
        assert workbench.thoughts.chain_count(instance) == 0 and page.get_by_test_id("stChatMessage").count() == 0

        box.fill("When does the ferry to the island leave?")
        box.press("Enter")
        page.get_by_text("Why this answer").wait_for(timeout=60_000)
        settle(page)
        assert page.get_by_text("top_k (context items)").is_visible()  # still open after the turn
        assert page.get_by_text("1 turn · last activity").count() == 1
        # The context table fits the message: no column scrolled out past its right edge.
        scroller = page.get_by_test_id("stDataFrame").last.locator(".dvn-scroller")
        assert scroller.evaluate("e => e.scrollWidth <= e.clientWidth")
        browser.close()


def test_a_message_sent_while_an_answer_is_pending_is_not_lost(settings, workbench, instance, tmp_path):
    """With a slow LLM the input stayed enabled, and a second message silently dropped the first (the LLM got
    it; it was never stored). Now the input is disabled while a turn runs, the page says what it waits for,
    and a rerun meanwhile (here: opening the turn settings) answers the same turn again, stored once."""
    playwright = pytest.importorskip("playwright.sync_api")
    from pathlib import Path

    from benchmarks.browser import CHROMIUM, served_dashboard
    from tests.support.fake_llm import FakeLLMServer

    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is missing: install Debian's chromium (make browser; CI does)")
    with FakeLLMServer() as llm, served_dashboard({
            "DATA_DIR": str(settings.data_dir), "INSTANCE": instance, "LLM_BASE_URL": llm.url + "/v1",
            "MODEL_FAST": "fast-1", "LLM_TIMEOUT_S": "30"}) as url, playwright.sync_playwright() as p:
        answer = threading.Event()  # the LLM answers A once the rerun is asked for, however slow the machine

        def turn_a(body: dict) -> str | None:
            """Turn A's calls wait for the rerun; any other call (a summary of another test's quiet chain,
            made in the background from the session's servers) is echoed at once, whatever its order."""
            if "Interrupt A: my lamp is orange." not in json.dumps(body):
                return None
            answer.wait(60)
            return "Your lamp is orange."

        llm.answer_with(turn_a)
        browser = launch(p)
        page = open_page(browser, viewport={"width": 1400, "height": 1200})
        page.goto(url + "/chat")
        # A new server's first page: its script imports the core on this first run (over 30 s once, on a
        # machine running seven other jobs).
        page.get_by_text("Turn settings").wait_for(timeout=90_000)
        settle(page)
        box = page.get_by_test_id("stChatInputTextArea")
        box.fill("Interrupt A: my lamp is orange.")
        box.press("Enter")
        # The first turn of the server imports what a turn needs before it calls the LLM: as the first page,
        # over 30 s on a loaded machine (a clean-clone run beside the other worker's tests).
        page.get_by_text("Waiting for fast-1").wait_for(timeout=90_000)
        assert box.is_disabled()
        page.screenshot(path=str(tmp_path / "pending.png"))
        page.get_by_text("Turn settings").click()  # a rerun while the LLM is still busy with A
        page.wait_for_timeout(2_000)
        answer.set()

        page.get_by_text("Why this answer").wait_for(timeout=60_000)
        settle(page)
        assert not box.is_disabled()
        (chain,) = workbench.thoughts.chains(instance)
        said = [t.thought for t in workbench.thoughts.chain_thoughts(instance, chain.chain_id)
                if t.category == uc.CATEGORY_USER]
        assert said == ["Interrupt A: my lamp is orange."]
        assert page.get_by_text("1 turn · last activity").count() == 1
        # What the answer cost, as the LLM counted it: the prompt's tokens and the answer's.
        page.get_by_text("15 tokens: 10 prompt + 5 answer").wait_for(state="attached", timeout=10_000)

        box.fill("Interrupt B: my rug is blue.")  # the next message goes on in the same conversation
        box.press("Enter")
        page.get_by_text("2 turns · last activity").wait_for(timeout=60_000)
        assert workbench.thoughts.chain_count(instance) == 1
        browser.close()


# Where a paragraph's text sits in its box: its gaps on the left and on the right, in px.
TEXT_GAPS = """p => { const r = document.createRange(); r.selectNodeContents(p);
  const t = r.getBoundingClientRect(), b = p.getBoundingClientRect();
  return [Math.round(t.left - b.left), Math.round(b.right - t.right)]; }"""


def test_a_right_to_left_message_is_laid_out_right_to_left(dashboard):
    """A Hebrew message was laid out left to right, its full stop at its right end."""
    playwright = pytest.importorskip("playwright.sync_api")
    hebrew, english = "שלום, קוראים לי דנה ואני גרה בתל אביב.", "My name is Dana and I live in Tel Aviv."
    with playwright.sync_playwright() as p:
        browser = launch(p)
        page = open_page(browser, viewport={"width": 1400, "height": 1000})
        page.goto(dashboard + "/chat")
        box = page.get_by_placeholder("Ask something")
        box.wait_for(timeout=30_000)
        settle(page)
        for text in (hebrew, english):
            box.fill(text)
            box.press("Enter")
            page.get_by_text(text, exact=True).wait_for(timeout=60_000)
            settle(page)
        left, right = page.locator('[data-testid="stChatMessage"] p', has_text=hebrew).first.evaluate(TEXT_GAPS)
        assert right <= 1 < left  # against the right edge
        left, right = page.locator('[data-testid="stChatMessage"] p', has_text=english).first.evaluate(TEXT_GAPS)
        assert left <= 1 < right  # against the left edge
        browser.close()
