"""The evaluation scores what an agent gets (the tuning report's M2): retrieve_memory's final memories,
after fuse_rerank, equal to what `uc.retrieve_memory` (the use case MCP `retrieve_memory`, HTTP /retrieve
and `workbench retrieve` call) returns for each query, scored with the same metrics."""

from __future__ import annotations

import json

import pytest

from core import usecases as uc
from core.index.memory_index import MemoryIndex
from tests.integration.test_eval_optimise import SIX_QUERIES, demo_records, six_query_jsonl

# Conversation memories weigh 4 times an observation in fuse_rerank: they go first, whatever the ranking.
PARAMS = {"op.retrieve_memory_op.params.top_k": 10, "op.fuse_rerank_op.params.output_memory_max_count": 4,
          "op.fuse_rerank_op.params.fuse_ratio_dict": {"conversation": 4.0, "observation": 1.0}}


def _by_hand(workbench, instance, params: uc.ScopeParams, k: int) -> tuple[float, float]:
    """(recall@k, MRR) of retrieve_memory's memories for the six queries, computed here."""
    recalls, rrs = [], []
    for query, relevant in SIX_QUERIES:
        result = uc.retrieve_memory(workbench, uc.RetrieveRequest(instance=instance, query=query,
                                                                  profile="balanced-default", params=params))
        ids = [m.memory.id for m in result.memories]
        recalls.append(len(set(ids[:k]) & set(relevant)) / len(relevant))
        rrs.append(next((1 / (i + 1) for i, d in enumerate(ids) if d in relevant), 0.0))
    return sum(recalls) / len(recalls), sum(rrs) / len(rrs)


def test_the_agent_figures_are_those_of_what_retrieve_memory_returns(workbench, instance):
    MemoryIndex(workbench.pool(), workbench.embedder).add(demo_records(instance))
    params = uc.ScopeParams.from_flat(PARAMS)
    report = uc.tune(workbench, uc.TuneRequest(instance=instance, source=six_query_jsonl().encode(),
                                               profile="balanced-default", ks=[1, 5, 10], memoryscope=True,
                                               scope_params=params))
    agent = report.memoryscope
    # Cut at the most it returns (4 here): recall@5 and @10 would be read off 4 memories.
    assert agent.ks == [1, 4] and agent.table.metrics == ["recall@1", "recall@4", "ndcg@1", "ndcg@4", "mrr@4"]
    assert agent.label == "balanced-default: retrieve_memory's output (MemoryScope, after fuse_rerank): " \
                          "what an agent gets"
    assert agent.scope_params == params.flat() and agent.handed is None
    for k in (1, 4):
        recall, mrr = _by_hand(workbench, instance, params, k)
        assert agent.value(f"recall@{k}") == pytest.approx(recall)
    assert agent.value("mrr@4") == pytest.approx(mrr)
    # fuse_rerank's type ratios reorder the ranking: what an agent gets is not what is evaluated.
    assert agent.value("recall@1") != report.evaluation.value("recall@1")


def test_with_the_defaults_an_agent_gets_three_memories_at_most(workbench, instance):
    MemoryIndex(workbench.pool(), workbench.embedder).add(demo_records(instance))
    agent = uc.tune(workbench, uc.TuneRequest(instance=instance, source=six_query_jsonl().encode(),
                                              memoryscope=True)).memoryscope
    defaults = uc.ScopeParams()
    assert agent.ks == [1, defaults.retrieve_memory_op.top_k]
    recall, _ = _by_hand(workbench, instance, defaults, 3)
    assert agent.value("recall@3") == pytest.approx(recall)


def test_the_cli_prints_the_agent_table_under_its_label(settings, workbench, instance, monkeypatch, tmp_path):
    from tests.support.cli import in_process_cli

    data = tmp_path / "set.jsonl"
    data.write_text(six_query_jsonl())
    MemoryIndex(workbench.pool(), workbench.embedder).add(demo_records(instance))
    cli = in_process_cli(settings, workbench, monkeypatch)
    params = [a for name, value in PARAMS.items() for a in ("--param", f"{name}={json.dumps(value)}")]
    code, out, err = cli("eval", "--data", str(data), "--instance", instance, "--profile", "balanced-default",
                         "--memoryscope", *params, "--json", str(tmp_path / "r.json"))
    assert code == 0, err
    assert "scored on retrieve_memory's output (MemoryScope, after fuse_rerank): what an agent gets" in out
    assert "op parameters: op.retrieve_memory_op.params.top_k=10, op.fuse_rerank_op.params.fuse_ratio_dict=" \
           '{"conversation": 4.0, "observation": 1.0}, op.fuse_rerank_op.params.output_memory_max_count=4' in out
    written = json.loads((tmp_path / "r.json").read_text())["memoryscope"]
    recall, mrr = _by_hand(workbench, instance, uc.ScopeParams.from_flat(PARAMS), 4)
    overall = written["table"]["rows"][-1]["values"]
    assert overall["recall@4"] == pytest.approx(recall) and overall["mrr@4"] == pytest.approx(mrr)
    assert f"what an agent gets with balanced-default (retrieve_memory, 4 memories at most): recall@4 {recall:.3f}" \
           in out

    code, _, err = cli("eval", "--data", str(data), "--instance", instance, "--param", "op.x=1")
    assert code == 2 and "add --memoryscope" in err
