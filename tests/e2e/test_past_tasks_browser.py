"""The Past tasks page in headless Chromium: a new user id, three files uploaded at once (a letter, an
empty file, random bytes named .txt): the empty and the binary one are named and refused, the letter is
stored; searching finds it, and its salutation is no key point."""

from __future__ import annotations

import os

import pytest

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
        results.get_by_text("past task(s) within distance").wait_for(timeout=60_000)
        settle(page)
        assert "Seminar invitation" in results.inner_text()
        points = results.locator("li").all_inner_texts()  # the key points of the one result
        assert points and not any(p.startswith(("Dear", "Best regards")) for p in points)
        browser.close()
