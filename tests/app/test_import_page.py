"""AppTest of the Import page: a server path → the detected format and the preview → import → links to
the new chains; invalid records block the import until the user chooses to skip them; the explorer opens
a chain named in its `chain` query parameter."""

from __future__ import annotations

import json
from pathlib import Path

from streamlit.testing.v1 import AppTest

from core import usecases as uc
from dashboard.ui import as_plain_line
from tests.app.conftest import APP, open_page
from tests.support.chatgpt_export import conversation, write_export

DATA = Path(__file__).resolve().parents[1] / "data" / "import"
NOTHING_NEW = "Everything in this file is already here: importing it adds nothing."


def check(path: Path, instance: str) -> AppTest:
    at = open_page("pages/import_data.py", instance=instance)
    at.radio(key="imp_source").set_value("A path on the server").run()
    return at.text_input(key="imp_path").input(str(path)).run()


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def test_preview_then_import_links_to_the_new_chains(app_env, workbench, instance):
    at = check(DATA / "chatgpt_conversations.json", instance)
    assert not at.exception and not at.error
    assert "Detected format: **chatgpt**" in "\n".join(m.value for m in at.markdown)
    assert metrics(at) == {"Conversations": "2", "Messages": "7", "Memories": "0", "Past tasks": "0",
                                "Invalid": "0"}
    assert workbench.thoughts.chain_count(instance) == 0  # a preview writes nothing
    at = at.button(key="imp_go").click().run()
    assert not at.exception and not at.error
    assert "Imported 2 conversations (7 messages)" in at.success[0].value
    links = [link.proto for link in at.get("page_link")]
    chains = {c.chain_id: c.title for c in workbench.thoughts.chains(instance)}
    assert sorted(link.query_string for link in links) == sorted(f"chain={c}" for c in chains)
    # Each link is the conversation's title as the export names it, its chain id beside it, secondary.
    assert sorted(link.label for link in links) == sorted(
        f"{as_plain_line(title)} :gray[· {as_plain_line(chain)}]" for chain, title in chains.items())
    assert {title for title in chains.values()} == {"Vegetarian dinner", "Script tags"}
    assert {link.page for link in links} == {"explorer"} and not any(link.external for link in links)
    assert workbench.thoughts.chain_count(instance) == 2
    # Imported chains get no formation as they are stored: the page says so and offers it.
    assert any("formed separately" in i.value for i in at.info)
    at = at.button(key="imp_form").click().run()
    assert not at.exception and not at.error
    assert at.success[-1].value.startswith("Formed the memories of 2 chains: 0 observations from 3 messages")


def test_imported_statements_become_observations_from_the_page(app_env, workbench, instance):
    at = check(DATA / "openai_chat.jsonl", instance).button(key="imp_go").click().run()
    assert workbench.index.count(instance, kind="observation") == 0
    at = at.button(key="imp_form").click().run()
    formed = workbench.index.count(instance, kind="observation")
    assert formed == 1 and "1 observation from 4 messages" in at.success[-1].value


def test_invalid_records_block_the_import_until_skipped(app_env, workbench, instance, tmp_path):
    mixed = tmp_path / "mixed.jsonl"
    jazz = {"content": "Likes jazz.", "created_at": "2024-01-01T00:00:00Z"}
    mixed.write_text(json.dumps(jazz) + "\n{oops\n")
    at = check(mixed, instance)
    assert metrics(at)["Invalid"] == "1" and at.button(key="imp_go").disabled
    assert "Nothing can be imported" in at.warning[0].value
    at = at.radio(key="imp_on_error").set_value("skip").run()
    at = at.button(key="imp_go").click().run()
    assert "1 invalid skipped" in at.success[0].value and workbench.index.count(instance) == 1


def test_a_bad_file_is_a_message_not_a_traceback(app_env, instance, tmp_path):
    empty = tmp_path / "empty.json"
    empty.write_text("")
    at = check(empty, instance)
    assert not at.exception and "the file is empty" in at.error[0].value


def test_the_explorer_opens_the_chain_a_link_names(app_env, workbench, instance):
    check(DATA / "claude_conversations.json", instance).button(key="imp_go").click().run()
    chain = workbench.thoughts.chains(instance)[0].chain_id
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.session_state["instance"] = instance
    at.query_params["chain"] = chain
    at.run()
    at.switch_page(str(APP.parents[1] / "pages" / "explorer.py"))
    at = at.run()
    assert not at.exception and at.session_state["xp_chain"] == chain
    first = workbench.thoughts.chain_thoughts(instance, chain)[0].thought
    assert first in [t.value for t in at.text]  # the chain is open, its thoughts shown


def test_a_workbench_archive_is_restored_from_the_page(app_env, workbench, instance, tmp_path):
    from core import usecases as uc

    uc.import_file(workbench, uc.ImportFile(path=DATA / "claude_conversations.json", instance=instance))
    archive = tmp_path / "instance.zip"
    uc.export_archive(workbench, uc.ExportArchive(out=archive, instance=instance))
    at = check(archive, f"{instance}-copy")
    # Before anything is clicked: where the archive comes from and what it holds (it named its format only).
    said = "\n".join(m.value for m in at.markdown)
    assert f"Detected format: **workbench-archive** of instance **{as_plain_line(instance)}**" in said, said
    assert as_plain_line(", exported ") in said
    tiles = {m.label: m.value for m in at.metric}
    assert (tiles["Conversations"], tiles["Thoughts"]) == ("2", "6"), tiles
    at = at.button(key="imp_go").click().run()
    assert not at.exception and not at.error and "restored" in at.success[0].value
    assert workbench.thoughts.chain_count(f"{instance}-copy") == 2
    # Into an instance that holds data, the preview refuses it before the Import button is reached.
    at = check(archive, instance)
    assert "already holds data" in at.error[0].value
    assert not [b for b in at.button if b.key == "imp_go"]


def test_what_the_import_assumed_is_said_before_and_once_after(app_env, workbench, instance, tmp_path):
    """A file without times was refused, and NUL characters were replaced without a word."""
    export = write_export(tmp_path / "conversations.json", [conversation("Pasted log", None, [
        ("user", "log: a\x00b", None), ("assistant", "That is a NUL.", None)])])
    at = check(export, instance)
    assert not at.exception and not at.error and not at.button(key="imp_go").disabled
    before = [i.value for i in at.info]
    assert before == [as_plain_line(note) for note in uc.import_preview(workbench, uc.ImportFile(
        path=export, instance=instance)).notes()]
    assert before[0].startswith("Times assumed") and "NUL characters" in before[1]
    at = at.button(key="imp_go").click().run()
    assert not at.exception and not at.error and "Imported 1 conversation (2 messages)" in at.success[0].value
    after = [i.value for i in at.info]
    assert [n for n in after if n in before] == before  # each said once: the preview's are gone
    [chain] = workbench.thoughts.chains(instance)
    assert workbench.thoughts.chain_thoughts(instance, chain.chain_id)[0].thought == "log: a\ufffdb"


def test_a_deleted_conversation_is_left_out_unless_the_box_is_ticked(app_env, workbench, instance, tmp_path):
    """A conversation deleted in the explorer came back whole with the next month's export."""
    export = write_export(tmp_path / "conversations.json", [
        conversation("Hotel", "c-hotel", [("user", "We booked Hotel Granvia Kyoto.", 1714550400),
                                          ("assistant", "By the station.", 1714550405)]),
        conversation("Dog", "c-dog", [("user", "Our dog is Biscuit.", 1714551400)])])
    first = uc.import_file(workbench, uc.ImportFile(path=export, instance=instance))
    hotel = next(c.chain_id for c in first.outcome.chains if c.title == "Hotel")
    uc.chain_delete(workbench, uc.ChainRef(instance=instance, chain_id=hotel))
    at = check(export, instance)  # the preview says it first, as a dry run does
    assert [i.value for i in at.info if "you deleted" in i.value] == [as_plain_line(
        "What you deleted here would be left out: 1 conversation, 2 messages in all; import the file with "
        "--include-deleted (CLI) or “Import what I deleted” (Import page) to bring it back.")]
    at = at.button(key="imp_go").click().run()
    assert not at.exception and not at.error and "Imported 0 conversations" in at.success[0].value
    assert [i.value for i in at.info if "you deleted" in i.value] == [as_plain_line(
        "What you deleted here was left out: 1 conversation, 2 messages in all; import the file with "
        "--include-deleted (CLI) or “Import what I deleted” (Import page) to bring it back.")]
    assert not workbench.thoughts.chain_meta(instance, hotel)
    at = check(export, instance).checkbox(key="imp_include_deleted").check().run()
    assert [i.value for i in at.info if "you deleted" in i.value] == [as_plain_line(
        "What you deleted here would be brought back, as asked: 1 conversation, 2 messages in all.")]
    at = at.button(key="imp_go").click().run()
    assert not at.exception and not at.error and "Imported 1 conversation (2 messages)" in at.success[0].value
    assert any("Brought back what you had deleted" in c.value for c in at.caption)
    assert workbench.thoughts.chain_meta(instance, hotel)


def test_the_chat_page_says_an_imported_answer_was_followed_or_ended_its_conversation(app_env, workbench,
                                                                                      instance):
    """Every imported answer read "final answer: no follow-up expected", even those the user answered."""
    check(DATA / "chatgpt_conversations.json", instance).button(key="imp_go").click().run()
    chain = next(c.chain_id for c in workbench.thoughts.chains(instance) if c.title == "Vegetarian dinner")
    answers = [t for t in workbench.thoughts.chain_thoughts(instance, chain) if t.category == uc.CATEGORY_ASSISTANT]
    assert len(answers) >= 2
    at = open_page("pages/chat.py", instance=instance)
    at.selectbox(key="chat_chain_select").select(chain).run()
    assert not at.exception and not at.error
    captions = [c.value for c in at.caption]
    assert sum("imported: the next message followed it in the export" in c for c in captions) == len(answers) - 1
    assert sum("imported: its conversation ended here" in c for c in captions) == 1
    assert not any("final answer: no follow-up expected" in c for c in captions)


def test_a_formation_the_llm_failed_in_part_says_who_read_what(app_env, workbench, instance):
    """The outcome read "(by the offline rules)" for "llm and rules", and the run's notes (why the rules
    stood in for the LLM) were never shown."""
    at = check(DATA / "chatgpt_conversations.json", instance).button(key="imp_go").click().run()
    note = "LLM formation: the LLM read 2 of 3 messages, the rules 1 (1: HTTP 500)"
    at.session_state["imp_formed"] = uc.FormationResult(instance=instance, chains=2, messages=3, summaries=1,
                                                        formed_by="llm and rules", notes=[note])
    at = at.run()
    assert not at.exception
    assert at.success[-1].value.endswith("(by the LLM, and the offline rules where it failed).")
    assert any(i.value == as_plain_line(note) for i in at.info)


def test_the_preview_says_what_is_new_and_after_the_import_that_nothing_is(app_env, workbench, instance):
    at = check(DATA / "chatgpt_conversations.json", instance)
    said = [m.value for m in at.markdown if "conversation" in m.value]
    assert said == [f":material/add_circle: **{as_plain_line('Adds 2 new conversations (7 messages).')}**"]
    at = at.button(key="imp_go").click().run()
    assert not at.exception and not at.error and "Imported 2 conversations" in at.success[0].value
    # The preview is looked up again once the file is imported: what it said was new is here now.
    said = [m.value for m in at.markdown if "already here" in m.value]
    assert said == [f":material/check_circle: **{as_plain_line(NOTHING_NEW)}**"]
