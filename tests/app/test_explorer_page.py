"""AppTest of the Memory explorer: find a memory by a word, open its chain, delete the chain with a
confirmation, and see it gone; a long memory shortened with an ellipsis in the confirmation; then the
memory-bank view with its add-entry form."""

from __future__ import annotations

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from core import usecases as uc
from core.bank import MemoryBank, MemoryEntry
from core.conversation.turn import Remember, UiRememberParams
from dashboard.ui import as_plain_line
from tests.app.conftest import open_page


def open_explorer(instance: str) -> AppTest:
    st.cache_data.clear()  # the sidebar's instance list must include this test's instance
    at = open_page("pages/explorer.py", instance=instance)
    assert not at.exception, at.exception
    return at


@pytest.fixture
def app(app_env, instance):
    return open_explorer(instance)


def button(at, label: str):
    return next(b for b in at.button if b.label == label)


def texts(at) -> str:
    return "\n".join(t.value for t in at.text)


def test_find_open_and_delete_a_chain(app_env, workbench, instance):
    remember = Remember(workbench)
    remember.run(UiRememberParams(thought="Our quince orchard <b>[link](http://x)</b> has **forty** trees.",
                                  chain_id="orchard"), instance=instance)
    remember.run(UiRememberParams(thought="The pear hedge needs pruning in February.", chain_id="pears"),
                 instance=instance)
    at = open_explorer(instance)
    assert at.title[0].value == "Memory explorer"

    at.text_input(key="xp_q").input("quince")
    at.radio(key="xp_mode").set_value("Full-text")
    button(at, "Search").click()
    at.run()
    assert not at.exception
    # Stored text is shown as text, exactly as stored: no HTML, no Markdown.
    assert "Our quince orchard <b>[link](http://x)</b> has **forty** trees." in texts(at)
    assert any("chain **orchard**" in m.value for m in at.markdown)
    assert "pear" not in texts(at)

    at.button(key="xp_hit_open_0").click()
    at.run()
    assert at.radio(key="xp_view").value == "Chains"
    assert "orchard" in at.subheader[0].value
    at.button(key="xp_chain_delete").click()
    at.run()
    assert any("Delete the chain" in w.value for w in at.warning)
    assert workbench.thoughts.chain_meta(instance, "orchard")  # nothing deleted before the confirmation
    at.button(key="xp_confirm_yes").click()
    at.run()
    assert not at.exception
    said = ("Deleted the conversation “Our quince orchard \\<b\\>\\[link\\]\\(http\\://x\\)\\</b\\> has "
            "\\*\\*forty\\*\\* tr…” (chain orchard): 1 turn, 1 feedback record and 2 indexed memories.")
    assert [s.value for s in at.success] == [said]  # stored text made inert
    assert not at.toast  # said once
    assert not workbench.thoughts.chain_meta(instance, "orchard")

    at.radio(key="xp_view").set_value("Search")
    at.run()
    assert "quince" not in texts(at)
    assert any("Nothing found" in i.value for i in at.info)
    assert workbench.thoughts.chain_meta(instance, "pears")  # the other chain stays


def test_the_delete_dialog_shortens_a_long_memory_with_an_ellipsis(app_env, workbench, instance):
    text = "Back up the database to the NAS, then check that the copy reads back, every 30 minutes."
    uc.add_memory(workbench, uc.AddMemory(instance=instance, content=text))
    at = open_explorer(instance)
    at.button(key="xp_hit_del_0").click().run()
    asked = next(w.value for w in at.warning if w.value.startswith("Delete the memory"))
    shortened = as_plain_line(text, 80)  # the dialog's own limit, with its ellipsis
    assert shortened.endswith("…") and f"**{shortened}**?" in asked


def test_memory_bank_view_and_add_form(app_env, workbench, instance):
    bank = MemoryBank(workbench, instance, "deploy")
    for i in range(6):
        bank.add_entry(MemoryEntry(command=f"docker compose up -d svc{i}", result="started", tags=["docker"]))
    app = open_explorer(instance)  # after the data exist: the sidebar lists instances that have some
    app.radio(key="xp_view").set_value("Memory bank")
    app.run()
    assert not app.exception
    metrics = {m.label: m.value for m in app.metric}
    assert (metrics["Live entries"], metrics["Compressed"], metrics["Summaries"]) == ("3", "3", "1")
    assert any("Summary of 3 steps" in e.label for e in app.expander)

    app.text_area(key="xp_ba_thinking").input("Check the new service answers")
    app.text_input(key="xp_ba_command").input("curl -s localhost:8080/health")
    button(app, "Add entry").click()
    app.run()
    assert not app.exception
    assert any("Stored as step 7" in s.value for s in app.success)
    assert {m.label: m.value for m in app.metric}["Live entries"] == "4"

    button(app, "Delete bank").click()
    app.run()
    app.button(key="xp_confirm_yes").click()
    app.run()
    assert any(s.value.startswith("Deleted the memory bank deploy:") for s in app.success)
    assert any("No memory bank" in i.value for i in app.info)


def test_bad_input_is_a_message_not_a_traceback(app):
    app.text_input(key="xp_q").input("quince")
    app.text_input(key="xp_chain_filter").input("no such/chain")
    button(app, "Search").click()
    app.run()
    assert not app.exception
    [error] = [e.value for e in app.error]
    assert error.startswith("**Could not search.** Chain id: ")
    app.text_input(key="xp_q").input("   ")  # no words: a listing, with the same filters, refused the same way
    button(app, "Search").click()
    app.run()
    assert not app.exception
    [error] = [e.value for e in app.error]
    assert error.startswith("**Could not list the memories.** Chain id: ")


def test_before_a_search_the_newest_memories_show(app_env, workbench, instance):
    Remember(workbench).run(UiRememberParams(thought="The quince orchard has forty trees.", chain_id="orchard"),
                            instance=instance)
    at = open_explorer(instance)
    assert "The quince orchard has forty trees." in texts(at)
    assert any(c.value.startswith("The 2 newest memories of this instance") for c in at.caption)


def test_full_text_hits_all_contain_the_words_and_a_chain_counts_turns(app_env, workbench, instance):
    remember = Remember(workbench)
    for i in range(5):
        remember.run(UiRememberParams(thought=f"Quince note number {i}.", chain_id="quinces"), instance=instance)
    remember.run(UiRememberParams(thought="The pear hedge needs pruning in February.", chain_id="pears"),
                 instance=instance)
    at = open_explorer(instance)
    at.text_input(key="xp_q").input("pruning")
    at.radio(key="xp_mode").set_value("Full-text")
    button(at, "Search").click()
    at.run()
    summary = next(c.value for c in at.caption if "for “pruning”" in c.value)
    assert summary.startswith("1 hit for") and "each has words of the query" in summary
    assert "semantic" not in summary and "Quince" not in texts(at)  # no padding with unrelated memories

    at.radio(key="xp_view").set_value("Chains")
    at.run()
    at.selectbox(key="xp_chain_pick").select("quinces").run()
    assert any(c.value.startswith("chain quinces · 5 turns ·") for c in at.caption)


def test_the_instances_are_listed_when_their_expander_is_opened(app_env, workbench, instance):
    """The list counts every instance's memories: read only while its expander is open."""
    Remember(workbench).run(UiRememberParams(thought="The fig tree fruits twice a year.", chain_id="figs"),
                            instance=instance)
    at = open_explorer(instance)
    [box] = [e for e in at.expander if e.label == "Instances"]
    assert not box.dataframe
    at.session_state["xp_instances_open"] = True  # as a click on it does
    [box] = [e for e in at.run().expander if e.label == "Instances"]
    assert not at.exception, at.exception
    listed = box.dataframe[0].value
    assert instance in set(listed["instance"]) and listed.set_index("instance").loc[instance, "chains"] == 1


def test_a_page_of_chains_past_the_last_says_so(app_env, workbench, instance):
    Remember(workbench).run(UiRememberParams(thought="One note", chain_id="only"), instance=instance)
    at = open_explorer(instance)
    at.radio(key="xp_view").set_value("Chains")
    at.run()
    at.number_input(key="xp_page").set_value(7)
    at.run()
    assert not at.exception
    assert any("Page 7 is past the last page (1) of 1 chain." == i.value for i in at.info)


def test_a_deleted_memory_s_relevance_marks_are_said_where_the_outcome_is_read(app_env, workbench, instance):
    """A user who deleted two labelled notes saw the labelled set's figures change with no word why: the
    marks that went with them were said only behind "Details"."""
    from dashboard.explorer_views import _delete

    added = uc.add_memory(workbench, uc.AddMemory(instance=instance, content="Runbook: rotate the JWT keys"))
    uc.mark_relevance(workbench, uc.MarkRelevance(instance=instance, query="key rotation", memory_id=added.id,
                                                  relevant=True))
    open_explorer(instance)  # the page's workbench, which _delete uses
    done = _delete(instance, {"target": "memory", "id": added.id, "label": "Runbook: rotate the JWT keys"})
    assert done["message"].endswith("1 relevance mark of the Tune page's labelled set named it: removed, so the "
                                    "set's figures change.")
    assert not any("relevance mark" in line for line in done["details"])
