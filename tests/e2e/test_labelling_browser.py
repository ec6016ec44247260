"""Labelling from what you see and profiles from the dashboard, in headless Chromium: search in the
explorer, mark two results relevant, evaluate the labelled set on the Tune page and export it; then
activate a profile and undo it. Screenshots go to the test's tmp dir."""

from __future__ import annotations

import json

import pytest

from core import usecases as uc
from tests.e2e.conftest import launch, open_page, settle

pytestmark = pytest.mark.e2e

FACTS = {"pasta": "I cooked pasta with pesto on Sunday.", "salad": "Lunch was a pasta salad with tuna.",
         "bike": "My bike has a flat rear tyre."}


def test_label_search_results_evaluate_and_export_then_activate_and_undo(dashboard, workbench, instance,
                                                                         tmp_path):
    playwright = pytest.importorskip("playwright.sync_api")
    ids = {key: uc.add_memory(workbench, uc.AddMemory(instance=instance, content=text, id=f"m-{key}")).id
           for key, text in FACTS.items()}

    with playwright.sync_playwright() as p:
        browser = launch(p)
        page = open_page(browser, viewport={"width": 1400, "height": 1200})
        page.goto(dashboard + "/explorer")
        page.get_by_label("Search stored memory").wait_for(timeout=30_000)
        page.get_by_label("Search stored memory").fill("pasta")
        page.get_by_text("Full-text", exact=True).click()
        page.get_by_role("button", name="Search", exact=True).click()
        settle(page)
        code = page.locator('[data-testid="stCode"]')
        assert {ids["pasta"], ids["salad"]} <= {code.nth(i).inner_text().strip() for i in range(code.count())}
        for n in range(2):
            page.get_by_role("radio", name="Relevant", exact=True).nth(n).click()  # a segmented control
            settle(page)
        page.get_by_text("So far: 2 relevant, 0 not.").wait_for(timeout=20_000)
        page.screenshot(path=str(tmp_path / "explorer-marked.png"), full_page=True)

        page.goto(dashboard + "/tune")
        page.get_by_role("tab", name="Labelled set").wait_for(timeout=30_000)
        settle(page)
        page.get_by_role("tab", name="Labelled set").click()
        page.get_by_role("button", name="Evaluate the labelled set").click()
        page.get_by_text("Rank of the first relevant memory, per query").wait_for(timeout=60_000)
        settle(page)
        assert page.get_by_text("Scored on 1 query (those with a relevant mark), on the fusion ranking that "
                                "ui_remember (chat) uses").count() == 1
        page.screenshot(path=str(tmp_path / "tune-labelled-set.png"), full_page=True)
        with page.expect_download() as download:
            page.get_by_role("button", name="Export JSONL").click()
        exported = tmp_path / "labelled.jsonl"
        download.value.save_as(exported)
        assert [json.loads(line) for line in exported.read_text().splitlines()] == [
            {"query": "pasta", "relevant": [ids["pasta"], ids["salad"]]}]

        page.get_by_role("tab", name="Profiles").click()
        page.get_by_label("Profile", exact=True).click()
        page.get_by_role("option", name="recall-recent (preset)").click()
        settle(page)
        page.get_by_role("button", name="Activate", exact=True).click()
        settle(page)
        page.get_by_text("recall-recent is now active").wait_for(timeout=20_000)
        assert uc.list_profiles(workbench, uc.InstanceRequest(instance=instance)).active == "recall-recent"
        page.screenshot(path=str(tmp_path / "tune-activated.png"), full_page=True)
        page.get_by_role("button", name="Undo").click()
        settle(page)
        page.get_by_text("balanced-default is active again").wait_for(timeout=20_000)
        page.screenshot(path=str(tmp_path / "tune-undone.png"), full_page=True)
        browser.close()

    assert uc.list_profiles(workbench, uc.InstanceRequest(instance=instance)).active == "balanced-default"
