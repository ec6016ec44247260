"""AppTest of the Chat page's rough edges: a message of spaces is refused before any turn, counts read
"1 turn", the message limit is stated, "deep" without an LLM says it changes nothing, and a refused
setting is named by its label."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

from core import usecases as uc
from core.conversation.turn import Remember, UiRememberParams
from core.formation.important import derived_id
from tests.app.conftest import open_page
from tests.support.clock import Clock


def test_only_spaces_are_refused_before_the_turn(app_env, workbench, instance):
    at = open_page("pages/chat.py", instance=instance)
    at.chat_input[0].set_value("   ").run()
    assert not at.exception and not at.error
    assert [w.value for w in at.warning] == ["Type a message first."]
    assert workbench.thoughts.chains(instance) == []  # no turn, no empty bubble stored
    assert not at.chat_message
    assert any(c.value == uc.limit_caption("Messages", uc.MESSAGE_MAX_CHARS) for c in at.caption)


def test_one_turn_reads_one_turn(app_env, workbench, instance):
    Remember(workbench).run(UiRememberParams(thought="The boat leaves at nine", chain_id="boat"),
                            instance=instance)
    at = open_page("pages/chat.py", instance=instance)
    at.selectbox(key="chat_chain_select").select("boat").run()
    assert any(c.value.startswith("1 turn · last activity") for c in at.caption)


def test_deep_style_without_an_llm_says_it_changes_nothing(app_env, instance):
    at = open_page("pages/chat.py", instance=instance)
    at.selectbox(key="chat_chain_select")  # the page is drawn
    style = next(s for s in at.selectbox if s.label == "Style")
    style.select("deep").run()
    assert any("“deep” changes nothing" in c.value for c in at.caption)


def test_a_refused_setting_is_named_by_its_label(app_env, workbench, instance):
    at = open_page("pages/chat.py", instance=instance)
    at.text_input(key="chat_step_title").set_value("x" * 300)  # tool titles are short
    at.text_area(key="chat_step_output").set_value("some output")
    at.chat_input[0].set_value("Hello").run()
    assert not at.exception
    message = at.error[0].value
    assert message.startswith("**Could not answer this turn.** Earlier tool and its output:")
    assert "invalid input" not in message and "intermediate_steps" not in message


def test_opening_the_page_marks_abandoned_answers_and_summarises_quiet_chains_behind_it(app_env, workbench,
                                                                                       instance):
    """The sweep: the abandoned answer is marked before the page shows it; the quiet chain's summary is
    written by a thread of its own, which no run of the page waits for."""
    clock = Clock(datetime.now(UTC) - timedelta(hours=2))
    for said in ("Our canoe is moored at the north jetty.", "Its paddles hang in the boathouse by the lake."):
        Remember(workbench, clock=clock).run(UiRememberParams(thought=said, chain_id="canoe"), instance=instance)
        clock.advance(30)
    at = open_page("pages/chat.py", instance=instance)
    at.selectbox(key="chat_chain_select").select("canoe").run()
    assert not at.exception and not at.error, (at.exception, [e.value for e in at.error])
    assert any("abandoned: no follow-up within 10 minutes" in c.value for c in at.caption)
    summary_id = derived_id("summary", "canoe")
    for _ in range(100):
        if workbench.index.get(instance, [summary_id]):
            break
        time.sleep(0.1)
    [summary] = workbench.index.get(instance, [summary_id])
    assert "north jetty" in summary.content and summary.metadata["reason"] == "quiet"
