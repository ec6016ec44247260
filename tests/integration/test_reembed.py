"""Re-embedding: memories made by another embedding model are counted per model, shown as missing from the
vector leg, and `uc.reembed` / `workbench reembed` bring them back into it."""

from __future__ import annotations

import json

from click.testing import CliRunner

from core import usecases as uc

FACTS = ["my dog loves the museum in paris", "the budget meeting is about postgres and redis",
         "sushi is my favourite food when I travel"]


def keyword_memories(keyword_workbench, instance) -> None:
    for fact in FACTS:
        uc.add_memory(keyword_workbench, uc.AddMemory(instance=instance, content=fact))


def vector_hits(wb, instance, query: str) -> list[str]:
    found = uc.memory_search(wb, uc.ExplorerSearch(query=query, instance=instance, mode="vector"))
    return [h.content for h in found.hits]


def test_memories_of_another_model_are_counted_then_reembedded(keyword_workbench, workbench, instance):
    keyword_memories(keyword_workbench, instance)
    before = uc.stored_counts(workbench, uc.InstanceRequest(instance=instance))
    assert before.memories_by_model == {"test-keywords-16": 3} and before.tiles["Indexed memories"] == 3
    assert (before.active_model, before.not_in_vector_leg) == ("wordllama-l2-supercat-256", 3)
    assert vector_hits(workbench, instance, "dog museum paris") == []  # only the text leg sees them

    steps = []
    result = uc.reembed(workbench, uc.InstanceRequest(instance=instance), progress=lambda *s: steps.append(s))
    assert (result.reembedded, result.model) == (3, "wordllama-l2-supercat-256")
    assert steps[-1] == (3, 3, "re-embedding")
    after = uc.stored_counts(workbench, uc.InstanceRequest(instance=instance))
    assert after.memories_by_model == {"wordllama-l2-supercat-256": 3} and after.not_in_vector_leg == 0
    assert vector_hits(workbench, instance, "dog museum paris")[0] == FACTS[0]


def test_the_cli_reembeds_an_instance_with_a_progress_bar(keyword_workbench, workbench, settings, instance,
                                                          monkeypatch):
    from core.cli import cli

    keyword_memories(keyword_workbench, instance)
    monkeypatch.setenv("DATA_DIR", str(settings.data_dir))
    out = CliRunner().invoke(cli, ["reembed", "--instance", instance])
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout) == {"instance": instance, "model": "wordllama-l2-supercat-256", "reembedded": 3}
    assert "re-embedding" in out.stderr
    again = CliRunner().invoke(cli, ["reembed", "--instance", instance])
    assert json.loads(again.stdout)["reembedded"] == 0
    assert vector_hits(workbench, instance, "sushi food travel")[0] == FACTS[2]
