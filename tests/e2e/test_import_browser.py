"""The Import page in a real browser: upload an export whose messages hold HTML, script and Markdown
links, see the preview, import with the progress bar, follow the link to the new chain in the Memory
explorer, and find every imported text shown literally and inert (headless Chromium)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.e2e.conftest import launch, open_page, settle
from tests.e2e.test_stored_text_is_inert import PAYLOADS, assert_inert

pytestmark = pytest.mark.e2e


def test_upload_preview_import_and_open_the_chain(dashboard, workbench, instance, tmp_path):
    playwright = pytest.importorskip("playwright.sync_api")
    export = tmp_path / "hostile.jsonl"
    messages = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"{payload} imported line {i}"}
                for i, payload in enumerate(PAYLOADS)]
    export.write_text(json.dumps({"id": "hostile", "created_at": "2024-03-01T10:00:00Z",
                                  "title": PAYLOADS[0], "messages": messages}) + "\n")
    texts = [m["content"] for m in messages]

    with playwright.sync_playwright() as p:
        browser = launch(p)
        page = open_page(browser, viewport={"width": 1400, "height": 1200})
        page.goto(dashboard + "/import_data")
        page.locator('input[type="file"]').wait_for(state="attached", timeout=30_000)
        page.locator('input[type="file"]').set_input_files(str(export))
        page.get_by_text("Detected format").wait_for(timeout=30_000)
        settle(page)
        assert "openai-jsonl" in page.inner_text("body")
        assert_inert(page, [])
        assert workbench.thoughts.chain_count(instance) == 0  # the preview wrote nothing
        uploads = Path(workbench.settings.data_dir) / "uploads"
        assert len(list(uploads.glob("*"))) == 1  # the copy the import will stream

        page.get_by_role("button", name="Import", exact=True).click()
        page.get_by_text("Imported 1 conversation (").wait_for(timeout=60_000)
        settle(page)
        assert workbench.thoughts.chain_count(instance) == 1
        assert not list(uploads.glob("*"))  # imported: its copy is gone

        # The conversation's link: its title (here a hostile one, shown inert), its chain id beside it.
        page.get_by_role("link", name=re.compile(r"· openai-[0-9a-f]{16}$")).first.click()
        page.get_by_text(texts[-1]).wait_for(timeout=30_000)
        settle(page)
        assert "/explorer" in page.url
        assert_inert(page, texts)
        browser.close()


def test_a_file_taken_off_the_page_leaves_no_copy(dashboard, workbench, tmp_path):
    playwright = pytest.importorskip("playwright.sync_api")
    export = tmp_path / "notes.jsonl"
    export.write_text(json.dumps({"content": "Ana's bike lock code is 8826", "created_at": "2024-03-01"}) + "\n")
    uploads = Path(workbench.settings.data_dir) / "uploads"
    with playwright.sync_playwright() as p:
        browser = launch(p)
        page = open_page(browser)
        page.goto(dashboard + "/import_data")
        page.locator('input[type="file"]').wait_for(state="attached", timeout=30_000)
        page.locator('input[type="file"]').set_input_files(str(export))
        page.get_by_text("Detected format").wait_for(timeout=30_000)
        settle(page)
        assert [f.name.endswith("notes.jsonl") for f in uploads.glob("*")] == [True]
        page.get_by_test_id("stFileChipDeleteBtn").click()
        page.get_by_text("Detected format").wait_for(state="detached", timeout=30_000)
        settle(page)
        assert not list(uploads.glob("*"))  # previewed, never imported: no copy kept
        browser.close()
