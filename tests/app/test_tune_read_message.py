"""AppTest of the Tune page's read_message step: a chain's messages not yet memorized, in the trace tab."""

from __future__ import annotations

from core.conversation.turn import Remember, UiRememberParams
from tests.app.conftest import open_page


def test_the_trace_tab_shows_read_message_over_a_chain(app_env, workbench, instance):
    first = Remember(workbench).run(UiRememberParams(thought="My dog Rex likes the beach", chain_id="rex"),
                                    instance=instance)
    at = open_page("pages/tune.py", instance=instance, tab="Pipeline trace")
    assert not at.exception, at.exception
    assert at.selectbox(key="tune_read_message_chain").value.chain_id == "rex"
    [step] = [e for e in at.expander if "read_message_op" in e.label]
    assert "in 2 → out 1" in step.label  # the user's question is indexed; the extractive answer is not
    shown = step.dataframe[0].value
    assert list(shown["content"]) == [first.answer] and not shown["memorized"].any()
