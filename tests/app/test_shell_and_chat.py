"""AppTests of the dashboard shell and the Chat page."""

from core.conversation.metrics import TurnMetrics
from core.conversation.thoughts import CATEGORY_ASSISTANT, CATEGORY_METRICS
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


def test_chat_turns_come_from_the_dashboard_and_answers_can_be_rated(app_env, workbench, instance):
    at = open_page("pages/chat.py", instance=instance)
    at.toggle(key="chat_include_history").set_value(False)
    at.text_input(key="chat_step_title").set_value("calendar")
    at.text_area(key="chat_step_output").set_value("Dentist on Tuesday at 9")
    at.chat_input[0].set_value("When is the dentist?").run()
    assert not at.exception, at.exception
    chain = workbench.thoughts.chains(instance)[0].chain_id
    thoughts = workbench.thoughts.chain_thoughts(instance, chain)
    metrics = TurnMetrics.from_fields(next(t for t in thoughts if t.category == CATEGORY_METRICS).to_hash())
    assert (metrics.source, metrics.key) == ("dashboard", None)
    assert "[calendar]\n    Dentist on Tuesday at 9" in metrics.prompt[1].content  # a step's output quoted
    assert "chat history left out of the prompt (include_history=false)" in metrics.notes

    # Thumbs under the answer: a click stores the rating, and the answer says so.
    answer = next(t for t in thoughts if t.category == CATEGORY_ASSISTANT)
    at.run()
    thumbs = at.feedback(key=f"rate_{answer.id}")
    assert thumbs.value is None
    thumbs.set_value(0).run()  # thumbs down
    assert not at.exception, at.exception
    assert workbench.thoughts.feedback([answer.id])[answer.id].rating == "down"
    assert any("rated down" in c.value for c in at.caption)
    at.feedback(key=f"rate_{answer.id}").set_value(1).run()
    assert workbench.thoughts.feedback([answer.id])[answer.id].rating == "up"
    # A fresh session shows the stored rating on the thumbs.
    again = open_page("pages/chat.py", instance=instance)
    again.selectbox(key="chat_chain_select").select(chain).run()
    assert again.feedback(key=f"rate_{answer.id}").value == 1
    assert any("rated up" in c.value for c in again.caption)


def test_the_chat_page_steps_back_when_its_page_of_chains_was_deleted(app_env, workbench, instance):
    from core import usecases as uc

    for i in range(16):  # one more than a page
        Remember(workbench).run(UiRememberParams(thought=f"Note number {i}", chain_id=f"c{i}"), instance=instance)
    at = open_page("pages/chat.py", instance=instance)
    older = next(b for b in at.button if b.label == "Older")
    older.click().run()
    assert at.session_state.chat_page == 1
    uc.chain_delete(workbench, uc.ChainRef(instance=instance, chain_id="c0"))  # the second page's only chain
    at.run()
    assert not at.exception
    assert at.session_state.chat_page == 0
    assert len(at.selectbox[0].options) == 16  # "new" and the 15 chains left


def test_the_why_of_a_turn_adds_up_from_what_the_page_shows(app_env, workbench, instance):
    """The page named the profile but not its weights, nor the coverage relevance reads: a reader could not
    add a row up from the page alone."""
    import re

    Remember(workbench).run(UiRememberParams(thought="Marta booked the hotel in Alfama for three nights",
                                             chain_id="trip"), instance=instance)
    at = open_page("pages/chat.py", instance=instance)
    at.chat_input[0].set_value("Which hotel did Marta book?").run()
    at.run()
    (how,) = [c.value for c in at.caption if "How the scores add up" in c.value]
    w = dict(zip(("sem", "text", "rec"), map(float, re.search(
        r"own = ([\d.]+)·sem \+ ([\d.]+)·text \+ ([\d.]+)·rec", how).groups()), strict=True))
    r = dict(zip(("sem", "cov"), map(float, re.search(r"rel = ([\d.]+)·sem \+ ([\d.]+)·cov", how).groups()),
                 strict=True))
    (frame,) = [df.value for df in at.dataframe if "content" in df.value]
    for row in frame.to_dict("records"):
        own = w["sem"] * row["semantic"] + w["text"] * row["text"] + w["rec"] * row["recency"] + 0.2 * row["speaker"]
        assert abs((own + 0.3 * row["chain score"]) / 1.3 - row["combined"]) < 0.01, row
        assert abs(r["sem"] * row["semantic"] + r["cov"] * row["coverage"] + 0.2 * row["speaker"]
                   - row["relevance"]) < 0.01, row


def test_the_chat_page_says_so_when_its_open_conversation_was_deleted(app_env, workbench, instance):
    """Reading a deleted chain is NotFound now (it read as a chain without messages): the page says the
    conversation is gone, and the next message starts a new one rather than going to the deleted id."""
    from core import usecases as uc

    Remember(workbench).run(UiRememberParams(thought="The spare key is under the blue pot", chain_id="keys"),
                            instance=instance)
    at = open_page("pages/chat.py", instance=instance)
    at.selectbox(key="chat_chain_select").select("keys").run()
    assert not at.exception and not at.error
    uc.forget(workbench, uc.Forget(instance=instance, target="chain", id="keys"))  # an assistant forgot it
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any("Conversation keys is no longer there" in i.value for i in at.info)
    at.chat_input[0].set_value("Where is the spare key?").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    [chain] = workbench.thoughts.chains(instance)
    assert chain.chain_id != "keys" and chain.title == "Where is the spare key?"
