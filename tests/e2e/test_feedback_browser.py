"""The Feedback page in headless Chromium: with "Only corrected turns" on, the CSV holds those turns
only; a change against an empty earlier period reads "no earlier data"; the tiles' labels show whole; only
the open tab's charts are drawn; the filters and the chart tab are still set after visiting another page;
at 1,100 px every Period option shows whole."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from core.conversation.turn import Remember, UiRememberParams
from tests.e2e.conftest import launch, open_page, settle

pytestmark = pytest.mark.e2e


# The Period options drawn past the edges of the control's box (cut off, or scrolled out of it).
PERIOD_CUT = """g => { const box = g.closest('[data-testid="stElementContainer"]').getBoundingClientRect();
  return [...g.querySelectorAll('button')].filter(b => { const r = b.getBoundingClientRect();
    return r.left < box.left - 0.5 || r.right > box.right + 0.5; }).map(b => b.innerText); }"""


def corrected_only(page):
    return page.locator("label", has_text="Only corrected turns").locator("input")


def test_the_csv_follows_the_toggle_and_the_filters_survive(dashboard, workbench, instance):
    playwright = pytest.importorskip("playwright.sync_api")
    start = datetime.now(UTC) - timedelta(hours=1)
    now = [start]
    remember = Remember(workbench, clock=lambda: now[0])
    for i, (text, chain) in enumerate([("The budget is 48,000 euros.", "budget"),
                                       ("No, it is 46,500 euros.", "budget"),
                                       ("Book the dentist for Friday.", "dentist"),
                                       ("Thanks, that works.", "dentist"),
                                       ("Where is the boat?", "boat"), ("Great, thank you.", "boat")]):
        now[0] = start + timedelta(seconds=60 * i)
        remember.run(UiRememberParams(thought=text, chain_id=chain), instance=instance)

    with playwright.sync_playwright() as p:
        browser = launch(p)
        page = open_page(browser, viewport={"width": 1400, "height": 1200}, accept_downloads=True)
        page.goto(dashboard + "/feedback")
        page.get_by_text("Only corrected turns").wait_for(timeout=60_000)
        settle(page)
        answers = page.get_by_test_id("stMetric").filter(has_text="Answers").first
        assert "no earlier data" in answers.inner_text()
        # Every tile's label shows whole in a 1500 px window (a page of 1485 px beside its scroll bar).
        page.set_viewport_size({"width": 1485, "height": 1200})
        labels = page.get_by_test_id("stMetricLabel").get_by_test_id("stMarkdownContainer")
        assert labels.evaluate_all("ls => ls.filter(l => l.scrollWidth > l.clientWidth).map(l => l.innerText)") == []
        # In a 1,100 px window beside the sidebar, six columns cut every value to "0.…" and every label to
        # "Mea…": the tiles keep their width and wrap onto a second row.
        page.set_viewport_size({"width": 1100, "height": 1200})
        settle(page, start_within_s=0.5)
        cut = ("ls => ls.filter(l => l.scrollWidth > l.clientWidth + 1).map(l => l.innerText)")
        assert labels.evaluate_all(cut) == []
        assert page.get_by_test_id("stMetricValue").locator("div").evaluate_all(cut) == []
        tops = page.get_by_test_id("stMetric").evaluate_all("ms => ms.map(m => m.getBoundingClientRect().top)")
        assert len({round(t) for t in tops}) > 2  # the six tiles in two rows, the ratings in their own
        # In a [3, 2] column the Period control had 376 of the 386 px its options need at 1,100 px: it cut
        # off "Custom", and "24 hours" once Custom was picked. It keeps its width; the dates go under it.
        period = page.get_by_test_id("stButtonGroup").first
        assert period.evaluate(PERIOD_CUT) == []
        period.get_by_text("Custom").click()
        settle(page)
        assert period.evaluate(PERIOD_CUT) == []
        dates = page.get_by_test_id("stDateInput").bounding_box()
        assert dates["width"] >= 250 and dates["y"] > period.bounding_box()["y"]  # whole, on the next line
        period.get_by_text("7 days").click()
        settle(page)
        page.set_viewport_size({"width": 1400, "height": 1200})
        charts = page.get_by_test_id("stVegaLiteChart")
        charts.first.wait_for(timeout=30_000)  # a loaded machine may draw it after the rerun has ended
        settle(page)
        assert charts.count() == 1  # the trend; the other tabs' charts are not built

        page.get_by_role("tab", name="Scores and follow-ups").click()
        charts.nth(1).wait_for(timeout=30_000)
        settle(page)
        assert charts.count() == 2
        assert charts.locator("svg.marks").count() == 2  # both drawn

        page.get_by_text("Only corrected turns").click()
        settle(page)
        with page.expect_download() as download:
            page.get_by_role("button", name="Download CSV").click()
        lines = Path(download.value.path()).read_text(encoding="utf-8").strip().splitlines()
        assert len(lines) == 2 and "budget" in lines[1]  # the header and the one corrected turn, of 6 answers

        page.get_by_test_id("stSidebarNav").get_by_text("Chat", exact=True).click()
        page.get_by_placeholder("Ask something").wait_for(timeout=30_000)
        settle(page)
        page.get_by_test_id("stSidebarNav").get_by_text("Feedback", exact=True).click()
        page.get_by_text("Only corrected turns").wait_for(timeout=60_000)
        settle(page)
        assert corrected_only(page).is_checked()
        assert page.get_by_role("tab", selected=True).inner_text() == "Scores and follow-ups"
        browser.close()


def test_a_custom_period_without_answers_names_its_own_dates(dashboard, workbench, instance):
    """The message of a Custom period without answers gave the start of the period before it (2019-12-27 for
    2020-01-01) and told the user to pick Custom, which was picked."""
    playwright = pytest.importorskip("playwright.sync_api")
    Remember(workbench).run(UiRememberParams(thought="The budget is 48,000 euros.", chain_id="budget"),
                            instance=instance)
    with playwright.sync_playwright() as p:
        browser = launch(p)
        page = open_page(browser, viewport={"width": 1400, "height": 1200})
        page.goto(dashboard + "/feedback")
        page.get_by_text("Only corrected turns").wait_for(timeout=60_000)
        settle(page)
        page.get_by_test_id("stButtonGroup").first.get_by_text("Custom", exact=True).click()
        settle(page)
        for field, (year, month, day) in (("start", ("2020", "01", "01")), ("end", ("2020", "01", "05"))):
            for part, value in (("year", year), ("month", month), ("day", day)):
                page.locator(f'[data-testid="stDateInput"] [data-range-field="{field}"] [data-type="{part}"]'
                             ).first.click()
                page.keyboard.type(value)
        page.keyboard.press("Escape")  # the calendar closed: the dates are sent
        page.get_by_text("No answers with feedback").wait_for(timeout=30_000)
        settle(page)
        said = page.get_by_test_id("stAlertContentInfo").filter(has_text="No answers with feedback").inner_text()
        assert f"in instance {instance} between 2020-01-01 and 2020-01-05." in said
        assert said.endswith("(UTC): pick those dates.") and "Custom" not in said
        browser.close()
