"""AppTest of the Overview: what an instance holds in counts that add up (conversations, messages, the
indexed memories by kind), the count of memories per embedding model, and the notice with its button when
memories of another model miss the vector leg."""

from __future__ import annotations

from pathlib import Path

from core import usecases as uc
from tests.app.conftest import open_page

DATA = Path(__file__).resolve().parents[1] / "data" / "import"


def per_model(at) -> list[dict]:
    """The rows of the table of memories per embedding model."""
    return next(d.value for d in at.dataframe if "model" in d.value.columns).to_dict("records")


def test_an_import_is_counted_in_terms_that_add_up(app_env, workbench, instance):
    """Finding 21: after an import the Overview showed "Indexed memories" and "Answers" only, with no count
    of conversations or messages, and no way to tell what the indexed memories were."""
    uc.import_file(workbench, uc.ImportFile(path=DATA / "chatgpt_conversations.json", instance=instance))
    uc.formation_run(workbench, uc.FormationRun(instance=instance))
    uc.add_memory(workbench, uc.AddMemory(instance=instance, content="my dog is called Biscuit"))
    summaries = workbench.index.count(instance, kind="session_summary")
    observations = workbench.index.count(instance, kind="observation")  # the memory added is one
    at = open_page("pages/overview.py", instance=instance)
    assert not at.exception, at.exception
    tiles = {m.label: m.value for m in at.metric}
    total = 7 + observations + summaries
    assert {k: tiles[k] for k in ("Conversations", "Messages", "Indexed memories")} == {
        "Conversations": "2", "Messages": "7", "Indexed memories": f"{total:,}"}
    kinds = at.dataframe[0].value
    assert kinds["memories"].sum() == total == workbench.index.count(instance)
    assert set(kinds["kind"]) == {"user", "assistant", "observation"} | ({"session_summary"} if summaries else set())
    formed = "1 observation or summary" if observations + summaries == 1 else \
        f"{observations + summaries} observations and summaries"
    assert f"{total} indexed memories = 7 messages of the 2 conversations + {formed}." in [c.value for c in at.caption]


def test_memories_of_another_model_get_a_notice_and_a_reembed_button(app_env, keyword_workbench, instance):
    uc.add_memory(keyword_workbench, uc.AddMemory(instance=instance, content="my dog loves paris"))
    at = open_page("pages/overview.py", instance=instance)
    assert not at.exception, at.exception
    assert "1 memories of " in at.warning[0].value and "`wordllama-l2-supercat-256`" in at.warning[0].value
    assert per_model(at) == [{"model": "test-keywords-16", "memories": 1, "in the vector leg": False}]
    at = next(b for b in at.button if b.key == "overview_reembed").click().run()
    assert not at.exception, at.exception
    assert at.success[0].value.startswith("Re-embedded 1 memories of")
    assert not at.warning
    assert per_model(at) == [
        {"model": "wordllama-l2-supercat-256", "memories": 1, "in the vector leg": True}]


def test_no_notice_when_every_memory_is_of_the_active_model(app_env, workbench, instance):
    uc.add_memory(workbench, uc.AddMemory(instance=instance, content="my cat likes music"))
    at = open_page("pages/overview.py", instance=instance)
    assert not at.exception and not at.warning
    assert per_model(at) == [
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
