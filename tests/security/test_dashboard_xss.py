"""Stored text that is HTML, JavaScript or Markdown renders as itself on every page that shows it: a
memory, a chat message, a past task's text and a rated answer holding `<img onerror>`, `<script>` or a
`javascript:` link run nothing in a real browser (Chromium, a dialog listener on each page)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.browser import CHROMIUM, served_dashboard
from core import usecases as uc
from tests.e2e.conftest import launch, open_page, settle

PAYLOADS = ("<img src=x onerror=alert(1)> tomato soup", "[click me](javascript:alert(2)) tomato soup",
            "<script>alert(3)</script> tomato soup", "<svg onload=alert(4)></svg> tomato soup")
PAGES = ("chat", "explorer", "past_tasks", "feedback")


@pytest.fixture
def seeded(workbench, instance):
    """Every kind of stored text the pages show, each holding the payloads."""
    for text in PAYLOADS:
        uc.add_memory(workbench, uc.AddMemory(instance=instance, content=text))
    turn = uc.remember(workbench, uc.UiRememberParams(instance=instance, thought=" ".join(PAYLOADS)),
                       origin=uc.Origin(source="cli"))
    uc.rate_answer(workbench, uc.RateAnswer(instance=instance, answer_id=turn.thought2_id, rating="down",
                                            comment=PAYLOADS[0]))
    uc.ingest_texts(workbench, uc.IngestTexts(items=[uc.ProducedTextInput(
        instance=instance, user_id="xss-user", task="note", title=PAYLOADS[1], production=" ".join(PAYLOADS))]))
    return turn


def show_the_payloads(page, name: str) -> None:
    """What a user does on the page to see the stored text: send a message on Chat (its extractive answer
    quotes the memories), search and list the texts on Past tasks."""
    if name == "chat":
        box = page.get_by_test_id("stChatInputTextArea")
        box.fill(PAYLOADS[0] + " " + PAYLOADS[1])
        box.press("Enter")
        settle(page, start_within_s=5)
    elif name == "past_tasks":
        page.get_by_label("Query").fill("tomato soup")
        page.get_by_role("button", name="Search").click()
        settle(page, start_within_s=5)


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} is missing")
def test_no_stored_text_runs_as_script_on_any_page(settings, seeded, instance, tmp_path):
    from playwright.sync_api import sync_playwright

    dialogs: list[str] = []
    with served_dashboard({"DATA_DIR": str(settings.data_dir), "INSTANCE": instance}) as url, \
            sync_playwright() as p:
        browser = launch(p)
        page = open_page(browser, viewport={"width": 1400, "height": 1800})
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        for name in PAGES:
            page.goto(f"{url}/{name}")
            settle(page, start_within_s=5)
            show_the_payloads(page, name)
            page.screenshot(path=str(tmp_path / f"{name}.png"), full_page=True)
            assert not page.locator("a[href^='javascript:']").count(), name
            assert not page.locator("img[src='x'], svg[onload]").count(), name
            shown = page.inner_text("body")
            assert name not in ("chat", "explorer", "past_tasks") or "onerror=alert(1)" in shown, name
        if Path("/tmp/security").is_dir():  # the reviewer's copies of the screenshots
            for shot in tmp_path.glob("*.png"):
                (Path("/tmp/security") / shot.name).write_bytes(shot.read_bytes())
        browser.close()
    assert dialogs == []
