"""AppTest of the Feedback page: tiles that match the core summary, filters, the corrected-turns table
with its transcript, and the empty states (no data at all, everything filtered out)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import streamlit as st

from core import usecases as uc
from core.analytics import load_feedback, summarize
from core.conversation.turn import Remember, UiRememberParams
from tests.app.conftest import open_page

PAGE = "pages/feedback.py"


@pytest.fixture
def turns(workbench, instance):
    """Two conversations from ui_remember, an hour ago: one deep and acknowledged, one corrected."""
    start = datetime.now(UTC) - timedelta(hours=1)
    now = [start]
    rm = Remember(workbench, clock=lambda: now[0])

    def turn(text: str, offset_s: float, chain: str, **kw) -> None:
        now[0] = start + timedelta(seconds=offset_s)
        rm.run(UiRememberParams(thought=text, chain_id=chain, **kw), instance=instance)

    turn("Tell me about the <b>**Lisbon**</b> trip", 0, "deep-chat", style="deep", tags=["travel"])
    turn("Thanks, that works.", 15, "deep-chat", style="deep", tags=["travel"], next_thought_needed=False)
    turn("The budget is 48,000 euros.", 100, "fast-chat", tags=["work"])
    turn("No, it is 46,500 euros.", 190, "fast-chat", tags=["work"], next_thought_needed=False)
    return instance


def metric(at, label: str):
    return next(m for m in at.metric if m.label == label)


def test_page_with_data(app_env, workbench, turns):
    st.cache_data.clear()
    at = open_page(PAGE, instance=turns)
    assert not at.exception, at.exception
    assert at.title[0].value == "Feedback"
    expected = summarize(load_feedback(workbench.thoughts, turns, datetime.now(UTC) - timedelta(days=7)))
    assert metric(at, "Answers").value == str(expected.answers) == "4"
    assert metric(at, "Mean score").value == f"{expected.mean_score:.3f}"  # (0.9 + 0.1 + 0.5 − 0.1) / 2
    assert metric(at, "Correction rate").value == "25.0%"
    assert any("workbench" in c.value and "feedback summary --since" in c.value for c in at.caption)
    assert not any("--include-imported" in c.value for c in at.caption)
    at.toggle(key="fb_imported").set_value(True).run()  # the command given counts imported answers too
    assert any(c.value.endswith("--include-imported`") for c in at.caption), [c.value for c in at.caption]
    at.toggle(key="fb_imported").set_value(False).run()

    # No LLM here: every answer was quoted from the memories, one model group of its own whatever model
    # its turn was routed to (the deep one for the first conversation), and the page says why.
    assert at.multiselect(key="fb_models").options == [uc.EXTRACTIVE_MODEL]
    assert any("Every answer in this view was extractive" in c.value for c in at.caption)
    # Filtering to the travel tag leaves the deep conversation's one acknowledged answer pair.
    at.multiselect(key="fb_tags").select("travel").run()
    assert not at.exception
    assert metric(at, "Answers").value == "2" and metric(at, "Mean score").value == "1.000"

    # Only corrected turns: one row; selecting it opens the transcript, stored text shown as text.
    at.multiselect(key="fb_tags").unselect("travel").run()
    at.toggle(key="fb_corrected_only").set_value(True).run()
    assert not at.exception
    table = at.dataframe[0].value
    assert len(table) == 1 and table["correction"].iloc[0] == "No, it is 46,500 euros."
    assert at.get("download_button")  # the CSV download is offered


def test_transcript_opens_on_row_selection(app_env, workbench, turns):
    st.cache_data.clear()
    at = open_page(PAGE, instance=turns)
    at.toggle(key="fb_corrected_only").set_value(True).run()
    # AppTest cannot click a grid row; it sets the selection state the click would set.
    at.session_state["fb_worst"] = {"selection": {"rows": [0], "columns": [], "cells": []}}
    at.run()
    assert not at.exception, at.exception
    shown = [t.value for t in at.text]
    assert "The budget is 48,000 euros." in shown and "No, it is 46,500 euros." in shown
    assert any(c.value.startswith("Correction after 90 s") for c in at.caption)
    # The answer's line and its context come from the turn's metrics.
    assert any("synthesis extractive · profile balanced-default" in c.value for c in at.caption)
    assert any(e.label.startswith("Context: ") and e.label.endswith(" in the prompt") for e in at.expander)


def test_stored_text_is_not_rendered_as_markup(app_env, workbench, turns):
    st.cache_data.clear()
    at = open_page(PAGE, instance=turns)
    # Row 1 (score 1.0, after the corrected 0.4) is the deep chain's answer to the marked-up question.
    at.session_state["fb_worst"] = {"selection": {"rows": [1], "columns": [], "cells": []}}
    at.run()
    assert not at.exception
    assert "Tell me about the <b>**Lisbon**</b> trip" in [t.value for t in at.text]
    assert all("Lisbon" not in m.value for m in at.markdown)


def test_page_without_data(app_env, instance):
    st.cache_data.clear()
    at = open_page(PAGE, instance=instance)
    assert not at.exception, at.exception
    assert not at.metric
    assert any("No answers with feedback" in i.value and instance in i.value for i in at.info)


def test_a_period_with_no_answers_says_when_the_answers_were_given(app_env, workbench, instance):
    """Answers that ended months ago: the default 7 days are empty, and so is the longest period offered
    (90 days), so "pick a longer period" sent the user nowhere; the page names the answers' dates."""
    first = datetime(2025, 9, 29, 9, 0, tzinfo=UTC)
    for day, chain in ((0, "autumn"), (183, "spring")):  # 29 September and 31 March
        at = [first + timedelta(days=day)]
        Remember(workbench, clock=lambda at=at: at[0]).run(UiRememberParams(thought="Where is my invoice?",
                                                                            chain_id=chain), instance=instance)
    st.cache_data.clear()
    at = open_page(PAGE, instance=instance)
    assert not at.exception, at.exception
    assert not at.metric
    info = " ".join(i.value for i in at.info)
    assert "Its 2 answers were given from 2025-09-29 to 2026-03-31 (UTC)" in info and "Custom" in info, info
    assert "longer period" not in info


def test_the_terminal_command_filters_by_model_as_the_page_does(app_env, workbench, turns):
    """The command under the period said "(without the filters)" even for a model, which the CLI now
    filters by too: the model goes into the command, quoted for a shell."""
    st.cache_data.clear()
    at = open_page(PAGE, instance=turns)
    at.multiselect(key="fb_models").select(uc.EXTRACTIVE_MODEL).run()
    assert not at.exception, at.exception
    caption = next(c.value for c in at.caption if "feedback summary --since" in c.value)
    assert "--model 'extractive (no model)'" in caption and "without the filters" not in caption
    at.multiselect(key="fb_tags").select("travel").run()
    caption = next(c.value for c in at.caption if "feedback summary --since" in c.value)
    assert "(without the filters other than the model)" in caption


def test_everything_filtered_out(app_env, workbench, turns):
    st.cache_data.clear()
    at = open_page(PAGE, instance=turns)
    at.multiselect(key="fb_profiles").select("balanced-default").run()
    at.multiselect(key="fb_tags").select("travel").run()
    at.multiselect(key="fb_chains").select("fast-chat").run()
    assert not at.exception
    assert not at.metric
    assert any("No answers match these filters" in i.value for i in at.info)


@pytest.fixture
def rated(workbench, turns):
    """The same turns, plus one that came through MCP with a key; one answer rated up, one rated down with
    a comment, one rated down with no follow-up at all (so it has no score)."""
    instance = turns
    ids = [a.id for c in ("deep-chat", "fast-chat") for a in workbench.thoughts.chain_thoughts(instance, c)
           if a.category == "ui_remember:assistant"]
    mcp = uc.remember(workbench, uc.UiRememberParams(thought="Book the <i>ferry</i>", chain_id="mcp-chat",
                                                     instance=instance, next_thought_needed=False),
                      origin=uc.Origin(source="mcp", key="claude-desktop"))
    def rate(answer: str, rating: str, comment: str = "") -> None:
        uc.rate_answer(workbench, uc.RateAnswer(instance=instance, answer_id=answer, rating=rating,
                                                comment=comment))

    rate(ids[0], "up")
    rate(ids[2], "down", "Wrong budget: **46,500**, not 48,000")
    rate(mcp.thought2_id, "down", "Not booked at all")
    return instance


def test_ratings_show_as_their_own_signal_and_filters_by_source_and_key(app_env, workbench, rated):
    instance = rated
    st.cache_data.clear()
    at = open_page(PAGE, instance=instance)
    assert not at.exception, at.exception
    assert metric(at, "Answers").value == "5"
    assert metric(at, "Rated up").value == "33.3%" and "1 of n=3" in metric(at, "Rated up").help
    assert (metric(at, "Thumbs up").value, metric(at, "Thumbs down").value) == ("1", "2")
    assert metric(at, "Answers rated").value == "60.0%"
    expected = summarize(load_feedback(workbench.thoughts, instance, datetime.now(UTC) - timedelta(days=7)))
    assert metric(at, "Mean score").value == f"{expected.mean_score:.3f}"  # from follow-ups, not ratings

    # The lowest-scored table carries the rating and its comment.
    table = at.dataframe[0].value
    row = table[table["rating comment"] != ""].iloc[0]
    assert (row["rated"], row["rating comment"]) == ("down", "Wrong budget: **46,500**, not 48,000")

    # Only rated down: the MCP answer, never scored, is listed too; its transcript shows the comment.
    at.toggle(key="fb_rated_down_only").set_value(True).run()
    assert not at.exception
    table = at.dataframe[0].value
    assert list(table["rating comment"]) == ["Wrong budget: **46,500**, not 48,000", "Not booked at all"]
    assert list(table["via"]) == ["unknown", "mcp (claude-desktop)"]
    at.session_state["fb_worst"] = {"selection": {"rows": [1], "columns": [], "cells": []}}
    at.run()
    assert not at.exception
    assert "Not booked at all" in [t.value for t in at.text]
    assert any(c.value.startswith("Rated down by the user at ") for c in at.caption)
    assert any("via mcp with key claude\\-desktop" in c.value for c in at.caption)
    at.toggle(key="fb_rated_down_only").set_value(False).run()

    # Filters by source and by key name.
    unknown = "unknown (stored before sources were recorded)"
    assert set(at.multiselect(key="fb_sources").options) == {"mcp", unknown}
    at.multiselect(key="fb_sources").select("mcp").run()
    assert not at.exception
    assert metric(at, "Answers").value == "1" and metric(at, "Thumbs down").value == "1"
    at.multiselect(key="fb_sources").unselect("mcp").run()
    at.multiselect(key="fb_keys").select("").run()  # "(no key)"
    assert metric(at, "Answers").value == "4" and metric(at, "Rated up").value == "50.0%"


def test_no_earlier_data_and_why_continue_and_abandon_overlap(app_env, workbench, turns):
    st.cache_data.clear()
    at = open_page(PAGE, instance=turns)  # the previous 7 days hold no answers
    assert metric(at, "Answers").delta == "no earlier data"
    assert metric(at, "Thumbs up").delta == "no earlier data"
    both = "is both continued and abandoned"
    assert both in metric(at, "Continue rate").help and both in metric(at, "Abandon rate").help
    assert any(both in c.value for c in at.caption)


def test_filters_survive_leaving_the_page(app_env, workbench, turns):
    st.cache_data.clear()
    at = open_page(PAGE, instance=turns)
    at.button_group(key="fb_period").set_value("30 days").run()
    at.multiselect(key="fb_tags").select("work").run()
    at.toggle(key="fb_corrected_only").set_value(True).run()
    at.switch_page(str(Path(PAGE).resolve())).run()  # the same page again after another one
    at.switch_page(str(Path("pages/chat.py").resolve())).run()
    at.switch_page(str(Path(PAGE).resolve())).run()
    assert not at.exception, at.exception
    assert at.button_group(key="fb_period").value == "30 days"
    assert at.multiselect(key="fb_tags").value == ["work"]
    assert at.toggle(key="fb_corrected_only").value is True
    assert metric(at, "Answers").value == "2"


def test_imported_answers_counted_are_in_no_rate_and_the_page_says_so(app_env, workbench, turns, tmp_path):
    """With "Include imported answers" on, every imported answer counted as an ended one: the page said
    "Rates are over all 6 answers, 4 of them ended" and each rate was lowered by them."""
    import json

    chats = tmp_path / "chats.jsonl"
    at_time = (datetime.now(UTC) - timedelta(hours=2)).isoformat()
    chats.write_text(json.dumps({"created_at": at_time, "messages": [
        {"role": "user", "content": "Where is the spare key?"}, {"role": "assistant", "content": "Under the pot."},
        {"role": "user", "content": "And the wifi?"}, {"role": "assistant", "content": "On the fridge."}]}))
    uc.import_file(workbench, uc.ImportFile(instance=turns, path=chats, format="openai-jsonl"))
    st.cache_data.clear()
    at = open_page(PAGE, instance=turns)
    rate = metric(at, "Correction rate").value
    at.toggle(key="fb_imported").set_value(True).run()
    assert not at.exception
    assert metric(at, "Answers").value == "6" and metric(at, "Correction rate").value == rate == "25.0%"
    assert any(c.value.startswith("Rates are over the 4 answers given here, not the 2 imported answers, which "
                                  "carry no follow-up data of their own; 2 of them ended") for c in at.caption)


def test_extractive_answers_are_their_own_model_beside_the_llms(app_env, workbench, instance, llm_settings,
                                                                  fake_llm):
    """Answers an LLM wrote count under the model that wrote them; answers quoted from the memories (no LLM
    call) under "extractive (no model)", not under the model their turn was routed to."""
    from core.runtime import Workbench

    start = datetime.now(UTC) - timedelta(hours=1)
    now = [start]
    with_llm = Workbench(llm_settings, embedder=workbench.embedder)
    try:
        fake_llm.reply("The Louvre first.", total_tokens=50)
        Remember(with_llm, clock=lambda: now[0]).run(UiRememberParams(thought="Plan a museum day", chain_id="llm",
                                                                      style="deep"), instance=instance)
    finally:
        with_llm.close()
    for text, offset in (("Plan a beach day", 60), ("Thanks, that works.", 75)):
        now[0] = start + timedelta(seconds=offset)
        Remember(workbench, clock=lambda: now[0]).run(UiRememberParams(thought=text, chain_id="quoted",
                                                                       style="deep"), instance=instance)
    st.cache_data.clear()
    at = open_page(PAGE, instance=instance)
    assert not at.exception, at.exception
    deep = workbench.settings.model_deep
    assert set(at.multiselect(key="fb_models").options) == {f"{deep} (deep)", uc.EXTRACTIVE_MODEL}
    assert not any("Every answer in this view was extractive" in c.value for c in at.caption)
    at.multiselect(key="fb_models").select(deep).run()
    assert not at.exception
    assert metric(at, "Answers").value == "1"
    at.multiselect(key="fb_models").unselect(deep).select(uc.EXTRACTIVE_MODEL).run()
    assert metric(at, "Answers").value == "2"
    table = at.dataframe[0].value
    assert set(table["model"]) == {uc.EXTRACTIVE_MODEL} and set(table["synthesis"]) == {"extractive"}


def test_custom_days_share_no_answer(app_env, workbench, instance):
    """The Custom period ended at the next midnight, both ends included: an answer given at midnight
    counted in the day before too, and the command the page gives ended at that midnight as well."""
    from datetime import time

    st.cache_data.clear()
    midnight = datetime.combine(datetime.now(UTC).date() - timedelta(days=1), time.min, UTC)
    for at_time, chain in ((midnight - timedelta(hours=1), "late"), (midnight, "midnight")):
        Remember(workbench, clock=lambda t=at_time: t).run(UiRememberParams(
            thought="Where did I park?", chain_id=chain, next_thought_needed=False), instance=instance)
    at = open_page(PAGE, instance=instance)
    at.button_group(key="fb_period").set_value("Custom").run()
    day_before = midnight.date() - timedelta(days=1)
    for days, expected in (((day_before, day_before), "1"), ((midnight.date(), midnight.date()), "1"),
                           ((day_before, midnight.date()), "2")):
        at.date_input(key="fb_dates").set_value(days).run()
        assert not at.exception, at.exception
        assert metric(at, "Answers").value == expected, days
    at.date_input(key="fb_dates").set_value((day_before, day_before)).run()
    assert any(f"--since {day_before.isoformat()}T00:00Z --until {day_before.isoformat()}`" in c.value
               for c in at.caption), [c.value for c in at.caption]
    # Chosen days are compared with as many whole days just before, even while the last one is today
    # (the previous window began at the hour now stood, or a microsecond after a midnight).
    today = midnight.date() + timedelta(days=1)
    for days, before in (((midnight.date(), midnight.date()), (day_before, day_before)),
                         ((midnight.date(), today), (day_before - timedelta(days=1), day_before))):
        at.date_input(key="fb_dates").set_value(days).run()
        assert any(f"compared with {before[0]} 00:00 → {before[1]} 23:59." in c.value for c in at.caption), \
            [c.value for c in at.caption]


def test_a_week_without_answers_says_so_without_blaming_a_filter(app_env, workbench, instance):
    """A week with no answer, after one with answers, said "No answers match these filters … Clear a
    filter" with no filter set."""
    st.cache_data.clear()
    monday = datetime(2026, 2, 2, 10, 0, tzinfo=UTC)
    Remember(workbench, clock=lambda: monday).run(UiRememberParams(thought="Where is my invoice?", chain_id="w6"),
                                                  instance=instance)
    at = open_page(PAGE, instance=instance)
    at.button_group(key="fb_period").set_value("Custom").run()
    at.date_input(key="fb_dates").set_value((monday.date() + timedelta(days=7),
                                             monday.date() + timedelta(days=13))).run()
    assert not at.exception, at.exception
    info = " ".join(i.value for i in at.info)
    assert "No answers in this period (2026-02-09 00:00 → 2026-02-15 23:59 UTC)" in info, info
    assert "the previous period had 1 answer." in info and "filter" not in info


def test_no_change_reads_as_none(app_env, workbench, instance):
    """A change of nothing ("+0") was drawn as a rise: an up arrow, red on the Thumbs down tile."""
    st.cache_data.clear()
    now = datetime.now(UTC)
    for at_time, chain in ((now - timedelta(days=8), "before"), (now - timedelta(hours=1), "now")):
        Remember(workbench, clock=lambda t=at_time: t).run(UiRememberParams(
            thought="Where did I park?", chain_id=chain, next_thought_needed=False), instance=instance)
    at = open_page(PAGE, instance=instance)
    assert not at.exception, at.exception
    down, answers = metric(at, "Thumbs down"), metric(at, "Answers")
    assert (down.delta, answers.delta) == ("+0", "+0")
    gray = metric(at, "Mean score").proto.color  # no delta at all (no score either side): neutral
    assert (down.proto.color, answers.proto.color) == (gray, gray)
    assert down.proto.direction == answers.proto.direction == metric(at, "Mean score").proto.direction
