"""A labelled set made of "relevant / not relevant" marks: kept per instance, read as the same JSONL the
Tune page and `eval --data` take, evaluated directly; unknown ids in a set are named, not scored 0."""

from __future__ import annotations

import json

import pytest

from core import usecases as uc
from core.errors import InvalidInput, NotFound
from tests.support.cli import in_process_cli

FACTS = {"pasta": "I ate pasta with pesto yesterday evening.", "bike": "My bike has a flat rear tyre.",
         "sushi": "We had sushi for lunch on Friday.", "train": "The train to Porto leaves at 9."}


@pytest.fixture
def memories(workbench, instance) -> dict[str, str]:
    return {key: uc.add_memory(workbench, uc.AddMemory(instance=instance, content=text, id=f"m-{key}")).id
            for key, text in FACTS.items()}


def mark(wb, instance, query, memory_id, relevant):
    return uc.mark_relevance(wb, uc.MarkRelevance(instance=instance, query=query, memory_id=memory_id,
                                                  relevant=relevant))


def test_marks_build_a_set_per_instance_that_evaluates_and_exports(workbench, instance, memories):
    wb = workbench
    mark(wb, instance, "what did I eat", memories["pasta"], True)
    mark(wb, instance, "what  did I eat ", memories["sushi"], True)  # the same query, typed differently
    now = mark(wb, instance, "what did I eat", memories["bike"], False)
    assert (now.relevant, now.not_relevant) == ([memories["pasta"], memories["sushi"]], [memories["bike"]])
    mark(wb, instance, "where is my bike", memories["train"], False)  # judged, but nothing relevant
    labelled = uc.labelled_set(wb, uc.InstanceRequest(instance=instance))
    assert [q.query for q in labelled.queries] == ["where is my bike", "what did I eat"]
    assert labelled.jsonl() == json.dumps({"query": "what did I eat",
                                           "relevant": [memories["pasta"], memories["sushi"]]}) + "\n"
    assert uc.labelled_set(wb, uc.InstanceRequest(instance=f"{instance}-x")).queries == []

    dataset = uc.read_dataset(wb, uc.ReadDataset(instance=instance, source=labelled.jsonl().encode(),
                                                 name="labelled"))
    assert dataset.unknown_ids == [] and len(dataset.queries) == 1
    report = uc.evaluate(wb, uc.EvaluateRequest(instance=instance, dataset=dataset, ks=[2, 10]))
    assert report.value("recall@10") == 1.0

    assert mark(wb, instance, "what did I eat", memories["bike"], None).not_relevant == []
    assert uc.clear_labels(wb, uc.ClearLabels(instance=instance, query="what did I eat")) == 2
    assert mark(wb, instance, "where is my bike", memories["train"], None) is None
    with pytest.raises(NotFound, match="is not in"):
        mark(wb, instance, "what did I eat", "m-nowhere", True)


def test_unknown_ids_are_named_and_left_out_not_scored_zero(settings, workbench, instance, memories,
                                                            monkeypatch, tmp_path):
    wb = workbench
    lines = [{"query": "what did I eat", "relevant": [memories["pasta"], "gone-1"]},
             {"query": "when is the train", "relevant": ["gone-2", "gone-3"]}]
    raw = "".join(json.dumps(line) + "\n" for line in lines)
    dataset = uc.read_dataset(wb, uc.ReadDataset(instance=instance, source=raw.encode()))
    assert dataset.unknown_ids == ["gone-1", "gone-2", "gone-3"]
    assert [q.relevant for q in dataset.queries] == [[memories["pasta"]]]
    assert dataset.skipped == {"relevant ids not in the instance (dropped)": 3,
                               "queries whose relevant ids are all unknown": 1}
    assert uc.unknown_ids_note(dataset.unknown_ids) == ("3 ids are not in this instance: gone-1, gone-2, "
                                                        "gone-3. They were left out of the scores.")
    report = uc.evaluate(wb, uc.EvaluateRequest(instance=instance, dataset=dataset, ks=[10]))
    assert report.queries == 1 and report.value("recall@10") == 1.0
    with pytest.raises(InvalidInput, match="none of the set's relevant ids is in"):
        uc.read_dataset(wb, uc.ReadDataset(instance=instance, source=json.dumps(lines[1]).encode()))

    # The query left with no id is named, not only counted (the user pass U2's finding 5).
    assert dataset.emptied == ["when is the train"]
    assert dataset.left_out_queries == {"queries whose relevant ids are all unknown": ["when is the train"]}

    path, written = tmp_path / "set.jsonl", tmp_path / "r.json"
    path.write_text(raw)
    run = in_process_cli(settings, workbench, monkeypatch)
    code, out, err = run("eval", "--data", str(path), "--instance", instance, "--k", "10", "--json", str(written))
    assert code == 0, err
    assert "3 ids are not in this instance: gone-1, gone-2, gone-3" in out
    assert "left out: 3 relevant ids not in the instance (dropped); 1 query whose" in out
    assert ("1 query has no relevant id in the instance: 'when is the train'; left out of the scores."
            in out.splitlines())
    # --json names them beside the evaluation's counts of them
    report = json.loads(written.read_text())
    assert report["evaluation"]["skipped"] == dataset.skipped
    assert report["unknown_ids"] == ["gone-1", "gone-2", "gone-3"]
    assert report["left_out_queries"] == {"queries whose relevant ids are all unknown": ["when is the train"]}
