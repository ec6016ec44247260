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
