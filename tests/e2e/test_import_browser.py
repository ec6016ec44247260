"""The Import page in a real browser: upload an export whose messages hold HTML, script and Markdown
links, see the preview, import with the progress bar, follow the link to the new chain in the Memory
explorer, and find every imported text shown literally and inert; import into a new instance named on the
page (headless Chromium)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.e2e.conftest import launch, open_page, settle
from tests.e2e.test_stored_text_is_inert import PAYLOADS, assert_inert
from tests.support.chatgpt_export import conversation, write_export

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


def test_an_export_goes_into_a_new_instance_named_on_the_page(dashboard, workbench, instance, tmp_path):
    """Finding 22: the page imported into the sidebar's instance only, and the sidebar listed only existing
    ones, so keeping an export apart took the CLI's `--instance`. Now a new instance is named on the page
    (the name checked by the id rules), imported into, worked on, and offered by the sidebar's picker."""
    playwright = pytest.importorskip("playwright.sync_api")
    export = write_export(tmp_path / "conversations.json", [
        conversation("Kyoto trip", "c-kyoto", [("user", "We booked Hotel Granvia in Kyoto", 1.7e9),
                                                ("assistant", "Noted: Hotel Granvia.", 1.7e9 + 5)]),
        conversation("Dog", "c-dog", [("user", "My dog is called Biscuit", 1.7e9 + 60)])])
    new = f"{instance}-chatgpt"
    with playwright.sync_playwright() as p:
        browser = launch(p)
        page = open_page(browser, viewport={"width": 1400, "height": 1200})
        page.goto(dashboard + "/import_data")
        page.get_by_text("A new instance").wait_for(timeout=30_000)
        settle(page)
        page.get_by_text("A new instance").click()
        settle(page)
        name = page.get_by_role("textbox", name="Name of the new instance")
        name.fill("my history")
        name.press("Enter")
        settle(page)
        assert "The instance name must be 1–128 characters" in page.inner_text("body")
        name.fill(instance)  # the sidebar's own: not a new one
        name.press("Enter")
        settle(page)
        assert f"An instance named {instance} exists already" in page.inner_text("body")
        name.fill(new)
        name.press("Enter")
        settle(page)
        page.locator('input[type="file"]').set_input_files(str(export))
        page.get_by_text("Detected format").wait_for(timeout=30_000)
        settle(page)
        page.get_by_role("button", name="Import", exact=True).click()
        page.get_by_text(f"Made instance {new}").wait_for(timeout=60_000)
        settle(page)
        assert workbench.thoughts.chain_count(new) == 2 and workbench.thoughts.chain_count(instance) == 0
        assert page.get_by_text("Imported 2 conversations (3 messages)").count() == 1
        picker = page.get_by_test_id("stSidebar").get_by_role("combobox", name="Instance")
        assert picker.input_value() == new  # the dashboard works on it now
        page.get_by_role("button", name="Form memories").click()
        page.get_by_text("Formed the memories of 2 chains").wait_for(timeout=60_000)
        settle(page)

        # The picker offers the new instance beside the one the dashboard opened on. Typed, as a user finds
        # one among many: the list draws only the options in view (the suite's other instances come first).
        offered = offer(page, picker, instance)
        assert offered.count() == 1 and offer(page, picker, new).count() == 1
        offer(page, picker, instance).click()
        settle(page)
        assert offer(page, picker, new).count() == 1  # still offered once switched back
        browser.close()


def offer(page, picker, name: str):
    """The picker's option named `name`, once its name is typed into the opened picker."""
    page.keyboard.press("Escape")
    picker.click()
    picker.fill(name)
    page.get_by_role("option").first.wait_for(timeout=10_000)
    return page.get_by_role("option", name=name, exact=True)


# Counts, while a progress bar is shown, the elements drawn after it: a run's elements not drawn again yet
# (Streamlit's stale elements, dimmed) sit there until the run ends.
AFTER_THE_BAR = """() => {
  window.__afterBar = 0;
  const count = () => {
    const bar = document.querySelector('[data-testid="stProgress"]')?.closest('[data-testid="stElementContainer"]');
    let n = 0;
    for (let e = bar?.nextElementSibling; e; e = e.nextElementSibling) n += e.checkVisibility() ? 1 : 0;
    window.__afterBar = Math.max(window.__afterBar, n);
  };
  new MutationObserver(count).observe(document.body, {subtree: true, childList: true, attributes: true});
}"""


def test_forming_memories_draws_the_outcome_once(dashboard, workbench, instance, tmp_path):
    """Finding 23: while Form memories ran after an upload, the import's outcome was drawn a second time,
    dimmed, below the progress bar (the elements of the import's run, laid out lower on the page than the
    run that forms). The import's run now ends by drawing the page again, as every later run draws it."""
    playwright = pytest.importorskip("playwright.sync_api")
    export = write_export(tmp_path / "conversations.json", [
        conversation(f"Trip {i}", f"c-{i}", [("user", f"We booked hotel number {i} in Kyoto", 1.7e9 + i)])
        for i in range(30)])
    with playwright.sync_playwright() as p:
        browser = launch(p)
        page = open_page(browser, viewport={"width": 1400, "height": 1200})
        page.goto(dashboard + "/import_data")
        page.locator('input[type="file"]').wait_for(state="attached", timeout=30_000)
        page.locator('input[type="file"]').set_input_files(str(export))
        page.get_by_text("Detected format").wait_for(timeout=30_000)
        settle(page)
        page.get_by_role("button", name="Import", exact=True).click()
        page.get_by_role("button", name="Form memories").wait_for(timeout=60_000)
        settle(page)
        page.evaluate(AFTER_THE_BAR)
        page.get_by_role("button", name="Form memories").click()
        page.get_by_text("Formed the memories of 30 chains").wait_for(timeout=60_000)
        settle(page)
        assert page.evaluate("window.__afterBar") == 0
        assert page.get_by_text("Imported 30 conversations (30 messages)").count() == 1
        browser.close()


def test_the_preview_says_what_importing_the_file_would_add(dashboard, workbench, instance, tmp_path):
    """A user importing each month's export could not tell the same file imported again (adds nothing) from
    next month's (adds 40 conversations): the preview said only what the file holds."""
    playwright = pytest.importorskip("playwright.sync_api")
    hotel = [("user", "We booked Hotel Granvia in Kyoto", 1.7e9), ("assistant", "Noted: Hotel Granvia.", 1.7e9 + 5)]
    (tmp_path / "may").mkdir()
    may = write_export(tmp_path / "may" / "conversations.json", [  # each month's export has the same name
        conversation("Kyoto trip", "c-kyoto", hotel),
        conversation("Dog", "c-dog", [("user", "My dog is called Biscuit", 1.7e9 + 60)])])
    june = write_export(tmp_path / "conversations.json", [
        conversation("Kyoto trip", "c-kyoto", [*hotel, ("user", "And the onsen?", 1.7e9 + 90)]),
        conversation("Dog", "c-dog", [("user", "My dog is called Biscuit", 1.7e9 + 60)]),
        *[conversation(f"Trip {i}", f"c-{i}", [("user", f"We booked hotel number {i}", 1.7e9 + 100 + i),
                                                ("assistant", f"Hotel {i} noted.", 1.7e9 + 101 + i)])
          for i in range(40)]])

    def upload(page, path: Path) -> str:
        if page.get_by_test_id("stFileChipDeleteBtn").count():
            page.get_by_test_id("stFileChipDeleteBtn").click()
            page.get_by_text("Detected format").wait_for(state="detached", timeout=30_000)
            settle(page)
        page.locator('input[type="file"]').set_input_files(str(path))
        page.get_by_text("Detected format").wait_for(timeout=30_000)
        settle(page)
        return page.inner_text("body")

    with playwright.sync_playwright() as p:
        browser = launch(p)
        page = open_page(browser, viewport={"width": 1400, "height": 1200})
        page.goto(dashboard + "/import_data")
        page.locator('input[type="file"]').wait_for(state="attached", timeout=30_000)
        assert "Adds 2 new conversations (3 messages)." in upload(page, may)
        page.get_by_role("button", name="Import", exact=True).click()
        page.get_by_text("Imported 2 conversations (3 messages)").wait_for(timeout=60_000)
        settle(page)

        # The same file again, downloaded anew (a file input does not fire when the same file is picked again).
        (tmp_path / "again").mkdir()
        shown = upload(page, write_export(tmp_path / "again" / "conversations.json", json.loads(may.read_text())))
        assert "Everything in this file is already here: importing it adds nothing." in shown
        assert "Adds" not in shown
        shown = upload(page, june)  # next month's export
        assert ("Adds 40 new conversations (80 messages) and 1 message to 1 conversation you already have; "
                "1 conversation is already here.") in shown
        assert workbench.thoughts.chain_count(instance) == 2  # previews write nothing
        browser.close()


def test_a_second_import_offers_its_own_formation_and_names_the_uploaded_file(dashboard, workbench, instance,
                                                                              tmp_path):
    """A second import's outcome showed the first one's "Formed the memories of …" and no Form memories
    button; the formation's summaries read as the imported chains' though it summarises any conversation of
    the instance; and a refused upload was named by the server's copy ("526d10bb-…-garbage.json")."""
    playwright = pytest.importorskip("playwright.sync_api")
    first = write_export(tmp_path / "first.json", [
        conversation(f"Trip {i}", f"c-{i}", [("user", f"We booked hotel number {i} in Kyoto", 1.7e9 + 10 * i),
                                             ("user", f"The flight leaves on May {i + 3}", 1.7e9 + 10 * i + 1),
                                             ("user", "My sister Ana joins us there", 1.7e9 + 10 * i + 2)])
        for i in range(2)])
    second = write_export(tmp_path / "second.json", [
        conversation("Dog", "c-dog", [("user", "My dog is called Biscuit", 1.7e9 + 60)])])
    garbage = tmp_path / "garbage.json"
    garbage.write_bytes(b"\x00\x01 not text")

    def upload(page, path: Path) -> None:
        page.get_by_test_id("stFileChipDeleteBtn").click()
        page.get_by_text("Detected format").wait_for(state="detached", timeout=30_000)
        settle(page)
        page.locator('input[type="file"]').set_input_files(str(path))
        settle(page, start_within_s=3)

    with playwright.sync_playwright() as p:
        browser = launch(p)
        page = open_page(browser, viewport={"width": 1400, "height": 1200})
        page.goto(dashboard + "/import_data")
        page.locator('input[type="file"]').wait_for(state="attached", timeout=30_000)
        page.locator('input[type="file"]').set_input_files(str(first))
        page.get_by_text("Detected format").wait_for(timeout=30_000)
        settle(page)
        page.get_by_role("button", name="Import", exact=True).click()
        page.get_by_role("button", name="Form memories").wait_for(timeout=60_000)
        settle(page)
        assert "not only this file's" in page.inner_text("body")  # what the button forms
        page.get_by_role("button", name="Form memories").click()
        formed = page.get_by_text("Formed the memories of 2 chains")
        formed.wait_for(timeout=60_000)
        settle(page)
        assert re.search(r"and [12] session summar(y|ies) of (a conversation|conversations) in the instance that "
                         r"ended or went quiet, imported here or not \(by the offline rules\)\.$",
                         formed.inner_text())

        upload(page, second)
        page.get_by_role("button", name="Import", exact=True).click()
        page.get_by_text("Imported 1 conversation (1 message)").wait_for(timeout=60_000)
        settle(page)
        assert page.get_by_text("Formed the memories of").count() == 0  # the first import's
        page.get_by_role("button", name="Form memories").click()  # this one's, offered
        page.get_by_text("Formed the memories of 1 chain:").wait_for(timeout=60_000)
        settle(page)

        upload(page, garbage)
        refused = page.get_by_test_id("stAlertContentError").inner_text()
        assert "Could not check the file. garbage.json: the file holds NUL bytes" in refused
        assert "-garbage.json" not in refused
        browser.close()
