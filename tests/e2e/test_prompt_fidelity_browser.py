"""The Chat page and the Feedback transcript, in headless Chromium, show the prompt the LLM server received
byte for byte (a fake OpenAI-compatible server records it), say whether it was sent at all, and show the
server's token figures; stored text stays inert on the page and reaches the LLM unchanged."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.browser import CHROMIUM, served_dashboard
from core import usecases as uc
from tests.e2e.conftest import launch, open_page, settle
from tests.support.fake_llm import FakeLLMServer

pytestmark = pytest.mark.e2e
CAT = "My cat is called ```Mochi``` 🐱 — **bold** <b>not html</b>"


def shown_prompt(expander) -> list[str]:
    """The prompt's code blocks of a "Why this answer" expander (after the memory ids' block)."""
    blocks = expander.get_by_test_id("stCode")
    texts = [blocks.nth(i).locator("code").inner_text() for i in range(blocks.count())]
    return texts[-2:]


def send(page, text: str) -> None:
    page.get_by_test_id("stChatInputTextArea").fill(text)
    page.keyboard.press("Enter")
    settle(page, 5)
    page.get_by_text("Why this answer").last.wait_for(timeout=30_000)
    settle(page)


def test_the_pages_show_the_prompt_the_llm_received(settings, workbench, instance):
    playwright = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is missing: install Debian's chromium (make browser; CI does)")
    uc.add_memory(workbench, uc.AddMemory(instance=instance, content=CAT))
    # A turn made without an LLM (the session's runtime has none): its prompt was never sent.
    uc.remember(workbench, uc.UiRememberParams(thought="Offline: what is my cat called?", chain_id="offline",
                                               instance=instance), origin=uc.Origin(source="dashboard"))
    with (FakeLLMServer() as fake,
          served_dashboard({"DATA_DIR": str(settings.data_dir), "INSTANCE": instance,
                            "LLM_BASE_URL": fake.url + "/v1", "LLM_MAX_RETRIES": "0"}) as url,
          playwright.sync_playwright() as p):
        browser = launch(p)
        page = open_page(browser, viewport={"width": 1400, "height": 1200})
        page.goto(url + "/chat")
        page.get_by_test_id("stChatInputTextArea").wait_for(timeout=30_000)
        settle(page)

        # A message ending in blank lines (quoted in the prompt, so its last line is the indent): st.code drops
        # a last line break and trailing blanks unless told otherwise.
        # Replies and requests by the question's text: the dashboard's start summarises other tests' quiet
        # chains in the background, with this LLM, whenever they are due.
        fake.reply("Your cat is **Mochi**.", prompt_tokens=321, completion_tokens=9, total_tokens=331,
                   to="What is my cat called?")
        send(page, "What is my cat called?\n\n")
        body = fake.chat_requests_with("What is my cat called?")[-1]["body"]
        why = page.get_by_test_id("stExpander").filter(has_text="Why this answer").last
        assert shown_prompt(why) == [m["content"] for m in body["messages"]]
        assert CAT in body["messages"][1]["content"] and body["messages"][1]["content"].endswith("called?\n    ")
        assert why.get_by_text(f"The messages sent to {body['model']}, exactly as sent:").count() == 1
        tokens = why.get_by_test_id("stMetric").filter(has_text="Tokens").get_by_test_id("stMetricValue")
        assert tokens.inner_text() == "331"
        assert why.get_by_text("331 tokens: 321 prompt + 9 answer").count() == 1
        # The answer and the user's message render as typed: no bold, no HTML.
        assert page.get_by_text("Your cat is **Mochi**.").count() == 1
        assert page.locator("strong", has_text="Mochi").count() == 0 and page.locator("b", has_text="not html").count() == 0

        # A follow-up scores the first answer, so the Feedback page lists it.
        fake.reply("Mochi.", prompt_tokens=400, completion_tokens=2, total_tokens=402, to="Thanks! And again?")
        send(page, "Thanks! And again?")
        assert shown_prompt(page.get_by_test_id("stExpander").filter(has_text="Why this answer").last) == \
            [m["content"] for m in fake.chat_requests_with("Thanks! And again?")[-1]["body"]["messages"]]

        # The offline turn's prompt says it was never sent.
        page.goto(url + "/chat")
        conversation = page.get_by_test_id("stSelectbox").filter(has_text="Conversation")
        conversation.wait_for(timeout=30_000)
        settle(page)
        conversation.click()
        page.get_by_role("option").filter(has_text="Offline: what is my cat called?").click()
        settle(page)
        offline = page.get_by_test_id("stExpander").filter(has_text="Why this answer").last
        offline.locator("summary").click()
        settle(page)
        assert offline.get_by_text("Not sent: no LLM is configured", exact=False).count() == 1

        # The Feedback transcript of the first answer: the same messages, byte for byte.
        page.goto(url + "/feedback")
        page.get_by_text("Lowest-scored turns").first.wait_for(timeout=30_000)
        settle(page)
        grid = page.get_by_test_id("stDataFrame").last
        grid.scroll_into_view_if_needed()
        box = grid.bounding_box()
        page.mouse.click(box["x"] + 15, box["y"] + 35 + 18)  # the first row's selection box
        settle(page)
        prompt = page.get_by_test_id("stExpander").filter(has_text="Prompt: the exact messages")
        prompt.locator("summary").click()
        settle(page)
        assert shown_prompt(prompt) == [m["content"] for m in body["messages"]]
        assert page.get_by_test_id("stExpander").filter(has_text="Context: 1 memory in the prompt").count() == 1
        browser.close()
