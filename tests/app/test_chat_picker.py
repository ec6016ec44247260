"""AppTest of the Chat page's conversation picker: the open conversation stays open across Newer and Older
(the browser sends a selection back as its label, and the label of a chain not on the page once came back as
its chain id), a turn goes to the chain picked, never to a label; and the title filter."""

from __future__ import annotations

import pytest

from core.conversation.turn import Remember, UiRememberParams
from tests.app.conftest import open_page


@pytest.fixture
def twenty_chains(app_env, workbench, instance) -> list[str]:
    """20 chains, c0 the oldest: the first page (15) holds c19…c5, the second c4…c0."""
    remember = Remember(workbench)
    for i in range(20):
        remember.run(UiRememberParams(thought=f"Where do I live? note {i}" if i == 7 else f"Note number {i}",
                                      chain_id=f"c{i}"), instance=instance)
    return [f"c{i}" for i in range(20)]


def button(at, label: str):
    return next(b for b in at.button if b.label == label)


def test_a_conversation_picked_stays_open_across_older_and_newer_and_takes_the_turn(twenty_chains, workbench,
                                                                                   instance):
    at = open_page("pages/chat.py", instance=instance)
    picker = at.selectbox(key="chat_chain_select")
    picker.select("c7").run()
    assert any(c.value.startswith("1 turn · last activity") for c in at.caption)

    button(at, "Older").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.session_state.chat_page == 1
    picker = at.selectbox(key="chat_chain_select")
    assert picker.value == "c7"  # still open, offered beside the second page's chains
    assert picker.options[:2] == ["+ New conversation", "Where do I live? note 7 (c7)"]
    assert {f"Note number {i} (c{i})" for i in range(5)} <= set(picker.options)
    assert any(c.value.startswith("1 turn · last activity") for c in at.caption)

    at.chat_input[0].set_value("And where do I work?").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert workbench.thoughts.chain_meta(instance, "c7")["turns"] == "2"
    assert at.selectbox(key="chat_chain_select").value == "c7"

    button(at, "Newer").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.selectbox(key="chat_chain_select").value == "c7"
    assert len(workbench.thoughts.chains(instance, limit=100)) == 20  # no chain made from a label


def test_picking_on_the_second_page_and_going_back_keeps_it(twenty_chains, workbench, instance):
    at = open_page("pages/chat.py", instance=instance)
    button(at, "Older").click().run()
    at.selectbox(key="chat_chain_select").select("c2").run()
    button(at, "Newer").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.selectbox(key="chat_chain_select").value == "c2"
    at.chat_input[0].set_value("One more note").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert workbench.thoughts.chain_meta(instance, "c2")["turns"] == "2"


def test_new_conversation_after_paging_starts_a_new_chain(twenty_chains, workbench, instance):
    at = open_page("pages/chat.py", instance=instance)
    at.selectbox(key="chat_chain_select").select("c7").run()
    button(at, "Older").click().run()
    at.selectbox(key="chat_chain_select").select("+ New conversation").run()
    at.chat_input[0].set_value("A fresh start").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    [made] = [c for c in workbench.thoughts.chains(instance, limit=100) if c.title == "A fresh start"]
    assert at.selectbox(key="chat_chain_select").value == made.chain_id
    assert workbench.thoughts.chain_meta(instance, "c7")["turns"] == "1"


def test_the_title_filter_finds_a_conversation_among_many(twenty_chains, workbench, instance):
    at = open_page("pages/chat.py", instance=instance)
    at.text_input(key="chat_title_filter").input("WHERE DO I").run()
    assert not at.exception
    picker = at.selectbox(key="chat_chain_select")
    assert picker.options == ["+ New conversation", "Where do I live? note 7 (c7)"]
    assert any("1 conversation has “WHERE DO I” in its title" in c.value for c in at.caption)
    picker.select("c7").run()
    at.text_input(key="chat_title_filter").input("number 1").run()  # Note number 1, 10…19
    picker = at.selectbox(key="chat_chain_select")
    assert picker.value == "c7"  # the open one stays, beside the matches
    assert picker.options[:2] == ["+ New conversation", "Where do I live? note 7 (c7)"]
    assert picker.options[2:] == [f"Note number {i} (c{i})" for i in (*range(19, 9, -1), 1)]  # newest first
    at.text_input(key="chat_title_filter").input("no such title").run()
    assert any("No conversation title has “no such title” in it" in c.value for c in at.caption)
