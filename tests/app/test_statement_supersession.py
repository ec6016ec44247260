"""AppTest of the Chat page when a correction supersedes one statement of a message that told several:
the answer that used the message's statements is marked for the superseded one alone, and its "why"
lists each statement as the memory it used."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from core import usecases as uc
from tests.app.conftest import open_page
from tests.support.clock import Clock


def test_the_chat_page_marks_only_the_statement_a_correction_superseded(app_env, workbench, instance):
    clock = Clock(datetime.now(UTC) - timedelta(hours=1))
    turns = []
    for text in ("I live in Lisbon. My sister is a nurse. I drink green tea.",
                 "Where do I live and what does my sister do?", "Actually I moved to Porto, not Lisbon."):
        clock.advance(30)
        turns.append(uc.remember(workbench, uc.UiRememberParams(thought=text, chain_id="home", instance=instance),
                                 clock=clock))
    used = [c.content for c in turns[1].context]
    assert {"I live in Lisbon.", "My sister is a nurse."} <= set(used)
    at = open_page("pages/chat.py", instance=instance)
    at.selectbox(key="chat_chain_select").select("home").run()
    assert not at.exception, at.exception
    # The answers that used the Lisbon statement (the question's, and the correction's own, retrieved before
    # it was applied) name it, and it alone.
    marks = [c.value for c in at.caption if "superseded since by a later message" in c.value]
    named = [m.split("superseded since by a later message: ")[1].split(" · ")[0] for m in marks]
    assert named and set(named) == {"“I live in Lisbon\\.”"}, marks
    why = [d.value for d in at.dataframe if "content" in d.value.columns]
    assert any({"I live in Lisbon.", "My sister is a nurse."} <= set(frame["content"]) for frame in why)
