"""AppTest of the Overview: the count of memories per embedding model, and the notice with its button when
memories of another model miss the vector leg."""

from __future__ import annotations

from core import usecases as uc
from tests.app.conftest import open_page


def test_memories_of_another_model_get_a_notice_and_a_reembed_button(app_env, keyword_workbench, instance):
    uc.add_memory(keyword_workbench, uc.AddMemory(instance=instance, content="my dog loves paris"))
    at = open_page("pages/overview.py", instance=instance)
    assert not at.exception, at.exception
    assert "1 memories of " in at.warning[0].value and "`wordllama-l2-supercat-256`" in at.warning[0].value
    models = at.dataframe[0].value
    assert models.to_dict("records") == [{"model": "test-keywords-16", "memories": 1, "in the vector leg": False}]
    at = next(b for b in at.button if b.key == "overview_reembed").click().run()
    assert not at.exception, at.exception
    assert at.success[0].value.startswith("Re-embedded 1 memories of")
    assert not at.warning
    assert at.dataframe[0].value.to_dict("records") == [
        {"model": "wordllama-l2-supercat-256", "memories": 1, "in the vector leg": True}]


def test_no_notice_when_every_memory_is_of_the_active_model(app_env, workbench, instance):
    uc.add_memory(workbench, uc.AddMemory(instance=instance, content="my cat likes music"))
    at = open_page("pages/overview.py", instance=instance)
    assert not at.exception and not at.warning
    assert at.dataframe[0].value.to_dict("records") == [
        {"model": "wordllama-l2-supercat-256", "memories": 1, "in the vector leg": True}]


def test_a_new_user_is_told_what_to_do_first_and_how_to_connect_an_llm(app_env, instance):
    at = open_page("pages/overview.py", instance=instance)  # an empty instance, no LLM
    assert not at.exception, at.exception
    first = next(e for e in at.expander if e.label == "New here? What to do first")
    shown = "\n".join(m.value for m in first.markdown)
    assert "`workbench demo load`" in shown
    assert "`GROQ_API_KEY=" in shown and "`LLM_BASE_URL=https://host/v1`" in shown
    assert "Ollama" in shown and "`LLM_BASE_URL=http://localhost:11434/v1`" in shown
    links = [link.label for link in at.get("page_link")]
    assert links[:3] == ["Chat", "Memory explorer", "Past tasks"]


def test_unset_settings_read_unset(app_env, instance):
    at = open_page("pages/overview.py", instance=instance)
    settings = at.dataframe[-1].value
    assert "None" not in set(settings["value"])
    assert settings.set_index("setting").loc["LLM_BASE_URL", "value"] == "unset"
