"""The API keys page in headless Chromium: create a key, see its secret once (and not after a reload),
revoke it with the confirmation step; the key authenticates in between and is refused afterwards."""

from __future__ import annotations

import uuid

import pytest

from core import usecases as uc
from core.errors import Unauthenticated
from tests.e2e.conftest import launch, open_page, settle

pytestmark = pytest.mark.e2e


def test_create_a_key_see_it_once_and_revoke_it(dashboard, workbench, instance):
    playwright = pytest.importorskip("playwright.sync_api")
    name = f"browser-{uuid.uuid4().hex[:8]}"

    with playwright.sync_playwright() as p:
        browser = launch(p)
        page = open_page(browser, viewport={"width": 1400, "height": 1000})
        page.goto(dashboard + "/keys")
        page.get_by_label("Name", exact=True).wait_for(timeout=30_000)
        page.get_by_label("Name", exact=True).fill(name)
        page.get_by_role("button", name="Create key").click()
        page.get_by_text("it will not be shown again").wait_for(timeout=30_000)  # a busy machine starts it late
        settle(page)
        assert page.get_by_text("it will not be shown again").count() == 1
        secret = page.locator('[data-testid="stCode"] code').inner_text().strip()
        assert secret.startswith("wb_")
        principal = uc.authenticate(workbench, secret)
        assert (principal.name, principal.instances, principal.read_only) == (name, [instance], False)

        page.reload()
        page.get_by_label("Name", exact=True).wait_for(timeout=30_000)
        settle(page)
        assert secret not in page.inner_text("body")
        assert page.locator('[data-testid="stCode"]').count() == 0

        page.get_by_label("Key to revoke", exact=True).click()
        page.keyboard.type(name)  # among the keys other tests made, the picker draws only the first options
        page.get_by_role("option", name=name).click()
        settle(page)
        page.get_by_role("button", name="Revoke…").click()
        settle(page)
        assert page.get_by_text("Revoke the API key").count() == 1
        page.get_by_role("button", name="Yes, revoke").click()
        settle(page)
        assert page.get_by_text(f"API key {name} revoked.").count() == 1
        browser.close()

    with pytest.raises(Unauthenticated):
        uc.authenticate(workbench, secret)


def test_a_key_without_instances_is_refused_naming_the_picker(dashboard, workbench):
    """Refused, it read "instances: List should have at least 1 item after validation, not 0"."""
    playwright = pytest.importorskip("playwright.sync_api")
    name = f"browser-{uuid.uuid4().hex[:8]}"
    with playwright.sync_playwright() as p:
        browser = launch(p)
        page = open_page(browser, viewport={"width": 1400, "height": 1000})
        page.goto(dashboard + "/keys")
        page.get_by_label("Name", exact=True).wait_for(timeout=30_000)
        settle(page)
        page.get_by_label("Name", exact=True).fill(name)
        page.get_by_test_id("stMultiSelect").get_by_role("button", name="Clear all").click()
        page.get_by_role("button", name="Create key").click()
        page.get_by_test_id("stAlertContentError").wait_for(timeout=30_000)
        settle(page)
        said = page.get_by_test_id("stAlertContentError").inner_text()
        assert "Choose at least one instance under Instances" in said and "List should" not in said
        assert name not in {k.name for k in uc.list_keys(workbench)}
        browser.close()
