"""AppTests of the dashboard shell and the Chat page."""

from core.conversation.metrics import TurnMetrics
from core.conversation.thoughts import CATEGORY_METRICS
from core.conversation.turn import Remember, UiRememberParams
from tests.app.conftest import open_page


def all_text(at) -> str:
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption] + [i.value for i in at.info]
    return "\n".join(str(p) for p in parts)


def test_shell_shows_both_services_and_the_models(app_env):
    at = open_page()
    assert not at.exception
    text = all_text(at)
    assert "**Redis**" in text and "**Postgres**" in text and "embedded" in text
    assert "wordllama" in text and "LLM: none" in text
    assert at.title[0].value == "Memory Workbench"


def test_a_bad_setting_is_a_message_not_a_traceback(app_env, monkeypatch):
    monkeypatch.setenv("REDIS_URL", "http://nope")
    from dashboard.resources import get_workbench

    get_workbench.clear()
    try:
        at = open_page()
        assert not at.exception
        assert "REDIS_URL" in at.error[0].value
    finally:
        monkeypatch.delenv("REDIS_URL")
        get_workbench.clear()


def test_chat_page_sends_a_message_and_shows_why(app_env, workbench, instance):
    Remember(workbench).run(UiRememberParams(thought="My dog Rex loves the beach", chain_id="earlier"),
                            instance=instance)
    at = open_page("pages/chat.py", instance=instance)
    assert not at.exception
    at.chat_input[0].set_value("What does Rex love?").run()
    assert not at.exception
    chains = workbench.thoughts.chains(instance)
    new_chain = next(c for c in chains if c.chain_id != "earlier")
    assert new_chain.title == "What does Rex love?"
    # The page re-renders the stored conversation with the "why" expander of the answer.
    at.run()
    assert any("Why this answer" in e.label for e in at.expander)
    # The expander shows the turn's stored metrics.
    stored = next(t for t in workbench.thoughts.chain_thoughts(instance, new_chain.chain_id)
                  if t.category == CATEGORY_METRICS)
    metrics = TurnMetrics.from_fields(stored.to_hash())
    shown = {m.label: m.value for m in at.metric}
    assert (shown["Model"], shown["Tokens"], shown["Context items"]) == \
        (metrics.model, "—", str(metrics.context_items))
    assert metrics.context_items >= 1  # the earlier chain's memory about Rex
    assert f"Profile: {metrics.profile}" in all_text(at)
    frames = [df.value for df in at.dataframe]
    assert any("My dog Rex loves the beach" in set(f["content"]) for f in frames if "content" in f)
