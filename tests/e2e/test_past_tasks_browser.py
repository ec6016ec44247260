"""The Past tasks page in headless Chromium: a new user id, three files uploaded at once (a letter, an
empty file, random bytes named .txt): the empty and the binary one are named and refused, the letter is
stored; searching finds it, and its salutation is no key point. Then the filter by task type and produced
date, in the Search tab and the Stored texts tab, each naming it in its result line."""

from __future__ import annotations

import os
from datetime import UTC, datetime

import pytest

from core import usecases as uc
from tests.e2e.conftest import launch, open_page, settle

pytestmark = pytest.mark.e2e
LETTER = (b"Seminar invitation\nDear Prof. Daniel Weber,\nThe seminar on warehouse robots takes place on "
          b"Thursday at 4 pm in room B12.\nSix external speakers give talks on forklift safety.\n"
          b"Best regards,\nAnna Keller")


def test_upload_refuses_what_is_not_text_and_stores_the_rest(dashboard, workbench, instance):
    playwright = pytest.importorskip("playwright.sync_api")
    with playwright.sync_playwright() as p:
        browser = launch(p)
        page = open_page(browser, viewport={"width": 1400, "height": 1200})
        page.goto(dashboard + "/past_tasks")
        user = page.get_by_test_id("stSelectbox").filter(has_text="User")
        user.wait_for(timeout=30_000)
        user.locator("input").fill("weber-assistant")
        user.locator("input").press("Enter")
        settle(page)
        page.get_by_role("tab", name="Add texts").click()
        page.locator('input[type="file"]').set_input_files([
            {"name": "invitation.txt", "mimeType": "text/plain", "buffer": LETTER},
            {"name": "empty.txt", "mimeType": "text/plain", "buffer": b"   \n"},
            {"name": "noise.txt", "mimeType": "text/plain", "buffer": os.urandom(2048)}])
        settle(page)
        page.get_by_role("button", name="Add to past tasks").click()
        page.get_by_text("They are searchable now").wait_for(timeout=60_000)
        settle(page)
        body = page.inner_text("body")
        assert "Not stored: empty.txt: the file is empty" in body
        assert "Not stored: noise.txt: this is not text" in body
        assert "Stored: Seminar invitation (new)" in body
        stored = workbench.past_tasks.list_texts(instance, "weber-assistant", with_text=False)
        assert [t.title for t in stored] == ["Seminar invitation"]

        page.get_by_role("tab", name="Search").click()
        page.get_by_label("Query").fill("Prof. Daniel Weber seminar")
        page.get_by_role("button", name="Search", exact=True).click()
        results = page.get_by_role("tabpanel", name="Search")
        results.get_by_text("within distance").wait_for(timeout=60_000)
        settle(page)
        assert "Seminar invitation" in results.inner_text()
        points = results.locator("li").all_inner_texts()  # the key points of the one result
        assert points and not any(p.startswith(("Dear", "Best regards")) for p in points)
        browser.close()


def pick_days(panel, start: str, end: str) -> None:
    """Type a range into the tab's "Produced between" date input (its start, then its end date), and close
    its calendar, which commits it."""
    for which, day in (("start", start), ("end", end)):
        panel.get_by_role("spinbutton", name=f"year, Produced between (UTC) {which} date").click()
        panel.page.keyboard.type(day.replace("-", ""))
    panel.page.keyboard.press("Escape")
    panel.page.get_by_role("heading", name="Past tasks").click()


def pick_type(page, panel, name: str) -> None:
    panel.get_by_test_id("stMultiSelect").click()
    page.get_by_role("option", name=name).click()
    page.keyboard.press("Escape")


def test_the_type_and_date_filter_narrows_the_search_and_the_stored_texts(dashboard, workbench, instance):
    playwright = pytest.importorskip("playwright.sync_api")
    budget = "The travel budget for the warehouse team was cut by ten percent."
    uc.ingest_texts(workbench, uc.IngestTexts(items=[
        uc.ProducedTextInput(instance=instance, user_id="ops", task=task, title=title, production=budget,
                             created_at=datetime(2025, month, day, 12, tzinfo=UTC))
        for task, title, month, day in [("email", "Budget email in November", 11, 30),
                                        ("email", "Budget email in December", 12, 1),
                                        ("note", "Budget note in November", 11, 3),
                                        ("email", "Budget email of early November", 11, 1)]]))
    with playwright.sync_playwright() as p:
        browser = launch(p)
        page = open_page(browser, viewport={"width": 1400, "height": 1400})
        page.goto(dashboard + "/past_tasks")
        page.get_by_test_id("stSelectbox").filter(has_text="User").wait_for(timeout=30_000)
        settle(page)
        search = page.get_by_role("tabpanel", name="Search")
        search.get_by_label("Query").fill("travel budget warehouse")
        pick_type(page, search, "email")
        pick_days(search, "2025-11-01", "2025-11-30")
        search.get_by_role("button", name="Search", exact=True).click()
        line = search.locator("[data-testid=stMarkdown]").filter(has_text="within distance")
        line.wait_for(timeout=60_000)
        settle(page)
        assert line.inner_text().startswith("2 past tasks within distance 0.65 · email · 1–30 Nov 2025 (2 of 4 "
                                            "searchable match)")
        titles = search.locator("strong").all_inner_texts()
        assert "Budget email in November" in titles and "Budget email of early November" in titles
        assert not {"Budget email in December", "Budget note in November"} & set(titles)

        page.get_by_role("tab", name="Stored texts").click()
        stored = page.get_by_role("tabpanel", name="Stored texts")
        pick_type(page, stored, "email")
        settle(page)
        assert "3 produced texts (latest versions) · email." in stored.inner_text()
        pick_days(stored, "2025-12-01", "2025-12-31")
        settle(page)
        assert "1 produced text (latest versions) · email · 1–31 Dec 2025." in stored.inner_text()
        browser.close()
