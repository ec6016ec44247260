"""AppTest of labelling from what you see: ids with a copy button in the explorer and the Chat page's
context; "relevant / not relevant" marks on the explorer's results build the instance's labelled set, which
the Tune page evaluates and exports; an uploaded set's unknown ids are named."""

from __future__ import annotations

import json

import pytest

from core import usecases as uc
from dashboard.labelling import mark_key
from tests.app.conftest import APP, open_page, open_tab

FACTS = {"pasta": "I cooked pasta with pesto on Sunday.", "salad": "Lunch was a pasta salad with tuna.",
         "bike": "My bike has a flat rear tyre."}


@pytest.fixture
def memories(app_env, workbench, instance) -> dict[str, str]:
    return {key: uc.add_memory(workbench, uc.AddMemory(instance=instance, content=text, id=f"m-{key}")).id
            for key, text in FACTS.items()}


def texts(elements) -> str:
    return "\n".join(str(e.value) for e in elements)


def search(at, query: str) -> None:
    at.text_input(key="xp_q").input(query)
    at.radio(key="xp_mode").set_value("Full-text")
    next(b for b in at.button if b.label == "Search").click()
    at.run()
    assert not at.exception, at.exception


def mark(at, instance: str, query: str, memory_id: str, choice: str | None) -> None:
    at.segmented_control(key=mark_key(instance, query, memory_id)).set_value(choice).run()
    assert not at.exception and not at.error, (at.exception, texts(at.error))


def test_mark_results_in_the_explorer_then_evaluate_and_export_on_the_tune_page(workbench, instance, memories):
    at = open_page("pages/explorer.py", instance=instance)
    search(at, "pasta")
    shown = {c.value for c in at.code}
    assert {memories["pasta"], memories["salad"]} <= shown  # each hit's id, with st.code's copy button
    mark(at, instance, "pasta", memories["pasta"], "Relevant")
    mark(at, instance, "pasta", memories["salad"], "Relevant")
    mark(at, instance, "pasta", memories["salad"], "Not relevant")  # changed one's mind
    mark(at, instance, "pasta", memories["salad"], "Relevant")
    assert "So far: 2 relevant, 0 not." in texts(at.caption)
    labelled = uc.labelled_set(workbench, uc.InstanceRequest(instance=instance))
    assert labelled.jsonl() == json.dumps({"query": "pasta",
                                           "relevant": [memories["pasta"], memories["salad"]]}) + "\n"

    at.switch_page(str(APP.parents[1] / "pages" / "tune.py")).run()
    open_tab(at, "Labelled set")
    assert not at.exception, at.exception
    assert "1 query marked in" in texts(at.caption)
    at.button(key="label_run").click().run()
    assert not at.exception and not at.error, (at.exception, texts(at.error))
    scores = next(f.value for f in at.dataframe if "recall@10" in f.value.columns)
    assert list(scores["profile"]) == ["balanced-default", "candidate"]
    assert list(scores["recall@10"]) == [1.0, 1.0]
    # what the figures score, and each metric's definition on hover
    scored = next(c for c in at.caption if c.value.startswith("Scored on 1 query"))
    assert "on the fusion ranking that ui_remember (chat) uses, before MemoryScope's fuse_rerank" in scored.value
    assert "not the hit rate" in scored.proto.help
    per_query = next(f.value for f in at.dataframe if list(f.value.columns) == ["query", "balanced-default",
                                                                                 "candidate"])
    assert list(per_query["query"]) == ["pasta"] and per_query["balanced-default"][0] == 1
    export = next(e for e in at.get("download_button") if e.proto.label == "Export JSONL")
    assert not export.proto.disabled


def test_an_uploaded_sets_unknown_ids_are_named(workbench, instance, memories, tmp_path):
    path = tmp_path / "set.jsonl"
    path.write_text(json.dumps({"query": "pasta", "relevant": [memories["pasta"], "gone-1", "gone-2"]}) + "\n")
    at = open_page("pages/tune.py", instance=instance, tab="Evaluate & optimise")
    at.radio(key="tune_eval_source").set_value("Path on the server").run()
    at.text_input(key="tune_eval_path").set_value(str(path)).run()
    assert not at.exception, at.exception
    assert "2 ids are not in this instance: gone-1, gone-2." in texts(at.warning)


def test_the_chat_context_shows_ids_to_copy(workbench, instance, memories):
    at = open_page("pages/chat.py", instance=instance)
    at.chat_input[0].set_value("What did I cook with pesto?").run()
    at.run()
    assert not at.exception, at.exception
    context = next(f.value for f in at.dataframe if "content" in f.value.columns)
    assert memories["pasta"] in set(context["id"])
    assert any(memories["pasta"] in c.value.splitlines() for c in at.code)
