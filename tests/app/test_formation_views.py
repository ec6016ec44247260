"""AppTest of formation on the pages: the Tune page's control of which message kinds the candidate
profile retrieves (the rankings beside it show the effect), the explorer's history of a corrected fact,
and the Chat page's mark on an answer whose memory a later correction superseded."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import streamlit as st

from core import usecases as uc
from tests.app.conftest import open_page
from tests.support.clock import Clock


def chat(workbench, instance, chain, *texts):
    clock = Clock(datetime.now(UTC) - timedelta(hours=1))
    out = []
    for text in texts:
        clock.advance(30)
        out.append(uc.remember(workbench, uc.UiRememberParams(thought=text, chain_id=chain, instance=instance),
                               clock=clock))
    return out


def test_the_tune_control_shows_what_retrieving_questions_changes(app_env, workbench, instance):
    chat(workbench, instance, "c", "What should I pack for the Lisbon trip?", "The Lisbon trip is on 14 March.")
    st.cache_data.clear()
    at = open_page("pages/tune.py", instance=instance)
    at.text_input(key="tune_query").set_value("Lisbon trip pack").run()
    assert not at.exception, at.exception
    active, candidate = (d.value for d in at.dataframe[:2])
    assert "What should I pack for the Lisbon trip?" not in list(candidate["content"])
    at.multiselect(key="formation_kinds").select("question").run()
    active, candidate = (d.value for d in at.dataframe[:2])
    assert "What should I pack for the Lisbon trip?" in list(candidate["content"])
    assert "What should I pack for the Lisbon trip?" not in list(active["content"])


def test_the_explorer_shows_a_fact_s_history(app_env, workbench, instance):
    chat(workbench, instance, "conf", "My conference last spring was in Paris.", "Where was my conference?",
         "No, it was Lyon.")
    at = open_page("pages/explorer.py", instance=instance)
    assert not at.exception, at.exception
    history = next(b for b in at.button if b.label == "History")
    history.click().run()
    shown = [m.value for m in at.markdown if "*said " in m.value]  # the history's lines, oldest first
    assert len(shown) == 2 and "was in Paris" in shown[0] and "It was Lyon" in shown[1]
    assert "superseded" in shown[0] and "current" in shown[1]


def test_the_explorer_search_marks_a_superseded_fact_and_says_what_superseded_it(app_env, workbench, instance):
    chat(workbench, instance, "conf", "My conference last spring was in Paris.", "Where was my conference?",
         "No, it was Lyon.")
    at = open_page("pages/explorer.py", instance=instance)
    at.text_input(key="xp_q").set_value("conference Paris")
    at.radio(key="xp_mode").set_value("Full-text")
    at.button(key="FormSubmitter:xp_search_form-Search").click().run()
    assert not at.exception, at.exception
    told = [i for i, t in enumerate(at.text) if t.value == "My conference last spring was in Paris."]
    assert told, [t.value for t in at.text]
    marks = [c.value for c in at.caption if "Superseded" in c.value]
    assert len(marks) == len(told)  # the observation and the message that told it, each once
    assert all("by a correction: “It was Lyon\\.”" in m for m in marks), marks
    headers = [m.value for m in at.markdown if m.value.startswith("`")]
    assert sum("superseded" in h for h in headers) == len(told)
    current = [h for h in headers if "superseded" not in h]
    assert current  # the correction's fact and the question: no mark


def test_the_explorer_marks_only_the_corrected_statement_of_a_message(app_env, workbench, instance):
    told = "My conference last spring was in Paris. My sister is a nurse."
    chat(workbench, instance, "two", told, "Where was my conference?", "No, it was Lyon.")
    at = open_page("pages/explorer.py", instance=instance)
    at.text_input(key="xp_q").set_value("conference Paris")
    at.radio(key="xp_mode").set_value("Full-text")
    at.button(key="FormSubmitter:xp_search_form-Search").click().run()
    assert not at.exception, at.exception
    assert any(t.value == told for t in at.text), [t.value for t in at.text]
    marks = [c.value for c in at.caption if "Superseded" in c.value]
    assert any("“My conference last spring was in Paris\\.” by a correction" in m
               and "other statements stand" in m for m in marks), marks
    headers = [m.value for m in at.markdown if m.value.startswith("`user`")]
    assert headers and not any("superseded" in h for h in headers)  # the message itself is not superseded


def test_the_chat_page_marks_a_memory_superseded_since(app_env, workbench, instance):
    _, asked, _ = chat(workbench, instance, "conf", "My conference last spring was in Paris.",
                       "Where was my conference?", "No, it was Lyon.")
    assert asked.context[0].content == "My conference last spring was in Paris."
    at = open_page("pages/chat.py", instance=instance)
    at.selectbox(key="chat_chain_select").select("conf").run()
    assert not at.exception, at.exception
    captions = " ".join(c.value for c in at.caption)
    assert "superseded since by a later message" in captions and "My conference last spring" in captions


def test_starting_from_a_saved_profile_loads_what_it_retrieves(app_env, workbench, instance):
    uc.save_profile(workbench, uc.SaveProfile(profile=uc.FusionProfile(
        name="asks-too", retrieve_kinds=["statement", "question"], include_superseded=True)))
    at = open_page("pages/tune.py", instance=instance)
    assert at.multiselect(key="formation_kinds").value == ["statement", "correction", "instruction"]
    at.selectbox(key="tune_start").select("asks-too").run()
    assert not at.exception, at.exception
    assert at.multiselect(key="formation_kinds").value == ["statement", "question"]
    assert at.checkbox(key="formation_superseded").value is True


def test_a_fact_said_again_word_for_word_reads_as_a_restatement_not_a_correction():
    """A correction said again replaces its earlier self: "superseded by a correction: <the same words>"
    read as a contradiction."""
    from dashboard.formation_view import superseded_note

    at = datetime(2026, 5, 1, 9, 30, tzinfo=UTC)
    again = superseded_note(at, "The race is on 25 May.", "the race is on  25 May.")
    assert "2026-05-01 09:30 when the same words were said again (the later copy is current)" in again
    assert "by a correction" not in again
    assert "by a correction: “It was Lyon\\.”" in superseded_note(at, "It was Lyon.", "It was in Paris.")
    assert superseded_note(at, None, "It was in Paris.").startswith(":orange[**Superseded** 2026-05-01 09:30 by a "
                                                                  "correction]")


def test_a_fact_an_update_superseded_reads_as_superseded_by_a_later_statement():
    from dashboard.formation_view import superseded_note

    at = datetime(2026, 5, 1, 9, 30, tzinfo=UTC)
    note = superseded_note(at, "We just moved to Denver last week.", "I live in Chicago.", update=True)
    assert "by a later statement: “We just moved to Denver last week\\.”" in note and "correction" not in note
