"""What the evaluation shows is what chat hands over (the tuning report's H1): beside the ranking's figures,
the recall of a chat turn's context, the relevance floor applied, equal to what `ui_remember` really hands
to synthesis for each query."""

from __future__ import annotations

import json

import pytest

from core import usecases as uc
from core.conversation.turn import Remember, UiRememberParams
from core.index.memory_index import MemoryIndex
from tests.integration.test_eval_optimise import SIX_QUERIES, demo_records, six_query_jsonl

K = 5


def test_the_handed_recall_is_what_ui_remember_puts_in_its_context(workbench, instance):
    report = uc.tune(workbench, uc.TuneRequest(instance=instance, source=_loaded(workbench, instance),
                                               ks=[1, K])).evaluation
    assert report.relevance_floor == workbench.settings.relevance_floor
    assert report.handed_label == f"handed to chat: floor {workbench.settings.relevance_floor:.2f} applied"
    handed = []
    for i, (query, relevant) in enumerate(SIX_QUERIES):
        # A fresh copy of the instance for each turn: a turn stores its message, which the next would find.
        copy = f"{instance}-{i}"
        MemoryIndex(workbench.pool(), workbench.embedder).add(demo_records(copy))
        turn = Remember(workbench).run(UiRememberParams(thought=query, chain_id=f"q{i}", top_k=K,
                                                        include_history=False), instance=copy)
        handed.append(len({c.id for c in turn.context} & set(relevant)) / len(set(relevant)))
    assert report.handed.value(f"recall@{K}") == pytest.approx(sum(handed) / len(handed))
    # The floor leaves relevant memories out on this set: the two figures differ, and the table says so.
    assert report.handed.value(f"recall@{K}") < report.value(f"recall@{K}")
    assert 0 < report.handed_counts[K] <= K


def test_the_cli_prints_the_handed_figures_under_their_label(settings, workbench, instance, monkeypatch, tmp_path):
    from tests.support.cli import in_process_cli

    data = tmp_path / "set.jsonl"
    data.write_text(six_query_jsonl())
    MemoryIndex(workbench.pool(), workbench.embedder).add(demo_records(instance))
    cli = in_process_cli(settings, workbench, monkeypatch)
    code, out, err = cli("eval", "--data", str(data), "--instance", instance, "--k", "1,5",
                         "--json", str(tmp_path / "r.json"))
    assert code == 0, err
    floor = workbench.settings.relevance_floor
    assert f"handed to chat: floor {floor:.2f} applied" in out
    assert "handed recall@5" in out and "memories, mean" in out
    written = json.loads((tmp_path / "r.json").read_text())["evaluation"]
    assert written["relevance_floor"] == floor and written["handed"]["metrics"] == ["recall@1", "recall@5"]


def _loaded(workbench, instance) -> bytes:
    MemoryIndex(workbench.pool(), workbench.embedder).add(demo_records(instance))
    return six_query_jsonl().encode()
