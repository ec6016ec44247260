"""The Chat page says for each answer whether memories were found, and "no memory matches" when none
reached the relevance floor."""

from core.conversation.turn import Remember, UiRememberParams
from tests.app.conftest import open_page


def test_each_answer_says_whether_memories_were_found(app_env, workbench, instance):
    rm = Remember(workbench)
    rm.run(UiRememberParams(thought="My dog Rex loves the beach", chain_id="told"), instance=instance)
    rm.run(UiRememberParams(thought="What is the capital of Mongolia?", chain_id="asked"), instance=instance)
    rm.run(UiRememberParams(thought="What does my dog Rex love?", chain_id="asked"), instance=instance)
    at = open_page("pages/chat.py", instance=instance)
    at.selectbox(key="chat_chain_select").set_value("asked").run()
    assert not at.exception
    captions = [c.value for c in at.caption]
    assert any(c.startswith("no memory matches") for c in captions)
    assert any(c.startswith("1 memory found") for c in captions)
    assert any("No memory reached the relevance floor" in c for c in captions)
