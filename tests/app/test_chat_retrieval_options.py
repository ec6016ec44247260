"""AppTest: the Chat page's retrieval options reach the turn (search type, tags as a filter)."""

from core.conversation.metrics import TurnMetrics
from core.conversation.thoughts import CATEGORY_METRICS
from core.conversation.turn import Remember, UiRememberParams
from tests.app.conftest import open_page


def test_search_type_and_the_tag_filter_reach_retrieval(app_env, workbench, instance):
    turn = Remember(workbench)
    turn.run(UiRememberParams(thought="The budget meeting moved to Friday", tags=["work"]), instance=instance)
    turn.run(UiRememberParams(thought="The budget for the kitchen is tight", tags=["home"]), instance=instance)
    at = open_page("pages/chat.py", instance=instance)
    assert not at.exception
    assert at.selectbox(key="chat_search_type").options == ["hybrid", "vector", "text"]
    assert at.toggle(key="chat_filter_tags").disabled  # no tags yet: nothing to filter by
    at.multiselect[0].set_value(["work"]).run()
    at.toggle(key="chat_filter_tags").set_value(True)
    at.selectbox(key="chat_search_type").set_value("vector")
    at.chat_input[0].set_value("What about the budget?").run()
    assert not at.exception
    chain = next(c for c in workbench.thoughts.chains(instance) if c.title == "What about the budget?")
    stored = next(t for t in workbench.thoughts.chain_thoughts(instance, chain.chain_id)
                  if t.category == CATEGORY_METRICS)
    metrics = TurnMetrics.from_fields(stored.to_hash())
    contents = [c.content for c in metrics.context]
    assert "The budget meeting moved to Friday" in contents
    assert "The budget for the kitchen is tight" not in contents
    assert "retrieval restricted to memories tagged work" in metrics.notes
    assert all(c.text == 0 for c in metrics.context)  # the vector leg alone: no text score
