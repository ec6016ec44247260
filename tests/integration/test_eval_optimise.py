"""Evaluation on a tiny LoCoMo-shaped file (loaded once, then reused), the optimiser on a synthetic set
whose best profile is known, its agreement with `evaluate`, saving the winner, and the CLI."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from click.testing import CliRunner

from core.tuning.datasets import EvalCorpus, EvalDataset, EvalQuery, load_dataset
from core.tuning.evaluate import evaluate
from core.tuning.optimise import fetch_pools, optimise, save_best, score_point
from core.models import PRESET_PROFILES, FusionProfile, MemoryRecord
from core.retrieval.profiles import ProfileStore


def mini_locomo(sample_id: str) -> list[dict]:
    turns1 = [("Ann", "My dog loves the park."), ("Bob", "I had sushi food today."),
              ("Ann", "Paris has a great museum."), ("Bob", "Python and Redis at work.")]
    turns2 = [("Ann", "The weather was bad."), ("Bob", "I play music on weekends.")]
    return [{"sample_id": sample_id, "conversation": {
        "speaker_a": "Ann", "speaker_b": "Bob",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [{"speaker": s, "dia_id": f"D1:{i}", "text": t} for i, (s, t) in enumerate(turns1, 1)],
        "session_2_date_time": "9:00 am on 9 May, 2023",
        "session_2": [{"speaker": s, "dia_id": f"D2:{i}", "text": t} for i, (s, t) in enumerate(turns2, 1)]},
        "qa": [{"question": "Where does the dog go?", "answer": "park", "evidence": ["D1:1"], "category": 4},
               {"question": "What food did Bob eat?", "answer": "sushi", "evidence": ["D1:2"], "category": 4},
               {"question": "Which museum city?", "answer": "Paris", "evidence": ["D1:3"], "category": 1},
               {"question": "Weather and music?", "answer": "x", "evidence": ["D2:1", "D2:2"], "category": 2},
               {"question": "Trap", "adversarial_answer": "x", "evidence": ["D1:4"], "category": 5}]}]


def test_locomo_evaluation_loads_once_then_reuses(keyword_workbench, instance, tmp_path):
    path = tmp_path / "mini.json"
    path.write_text(json.dumps(mini_locomo(instance)))
    ds = load_dataset(path)
    first = evaluate(keyword_workbench, ds, PRESET_PROFILES["balanced-default"], ks=(1, 5))
    assert first.load.loaded == [ds.corpora[0].instance] and first.load.memories == 6
    assert first.queries == 4 and first.skipped == {"category 5 (adversarial)": 1}
    assert [r.category for r in first.table.rows] == ["1", "2", "4", "overall"]
    assert first.value("recall@1", "4") == 1.0  # dog -> D1_1, food -> D1_2: exact keyword vectors
    assert first.value("recall@5", "2") == 1.0
    assert first.rankings[ds.queries[0].qid][0] == "D1_1"
    again = evaluate(keyword_workbench, load_dataset(path), PRESET_PROFILES["fast-chat"], ks=(1, 5))
    assert again.load.loaded == [] and again.load.reused == [ds.corpora[0].instance]


def synthetic(instance: str) -> EvalDataset:
    """Three topics, each in its own instance: the relevant memory is the newest but the weaker match; a
    month-old distractor matches the query better on both the vector and the text leg. Only a profile
    with enough recency weight ranks the relevant one first."""
    now = datetime(2024, 5, 15, 12, 0, tzinfo=UTC)
    corpora, queries = [], []
    for i, (query, strong, weak) in enumerate([
        ("sushi food", "sushi food sushi food", "sushi dinner"),
        ("paris museum", "paris museum paris museum", "paris trip"),
        ("python redis", "python redis python redis", "python script"),
    ]):
        inst = f"{instance}-{i}"
        recs = [MemoryRecord(instance=inst, id="distractor", kind="observation", content=strong,
                             created_at=now - timedelta(days=30)),
                MemoryRecord(instance=inst, id="relevant", kind="observation", content=weak, created_at=now)]
        corpora.append(EvalCorpus(instance=inst, content_hash=str(i), records=recs))
        queries.append(EvalQuery(qid=f"q{i}", query=query, relevant=["relevant"], category="1", instance=inst,
                                 now=now))
    return EvalDataset(name="synthetic", kind="jsonl", queries=queries, corpora=corpora)


def test_optimiser_finds_the_known_best_and_agrees_with_evaluate(keyword_workbench, instance):
    wb = keyword_workbench
    ds = synthetic(instance)
    pools = fetch_pools(wb, ds, pool_size=10)
    ticks = []
    rep = optimise(pools, "recall@1", baseline=PRESET_PROFILES["balanced-default"], name="tuned-test",
                   progress=lambda done, total, what: ticks.append((done, total)))
    assert len(rep.surface) == 231 * 5 + 231 and ticks[-1] == (1386, 1386)
    assert rep.baseline_value == 0.0 and rep.best_value == 1.0
    assert rep.best.w_rec >= 0.3
    assert all(p.value == 0.0 for p in rep.surface if p.method == "linear" and p.w_rec == 0.0)
    # every grid point's figure is what `evaluate` reports for that profile
    assert evaluate(wb, ds, rep.best, ks=(1,)).value("recall@1") == 1.0
    mask = np.ones(len(pools.qids), dtype=bool)
    for prof in (PRESET_PROFILES["fast-chat"], FusionProfile(name="r", method="rrf", w_sem=0.2, w_text=0.3,
                                                             w_rec=0.5, rrf_k=5)):
        assert score_point(pools, "recall@1", mask, method=prof.method, w_sem=prof.w_sem, w_text=prof.w_text,
                           w_rec=prof.w_rec, tau_s=prof.tau_s, rrf_k=prof.rrf_k) == pytest.approx(
            evaluate(wb, ds, prof, ks=(1,)).value("recall@1"))
    saved = save_best(wb, rep, f"tuned-{instance}", activate_for=instance)
    store = ProfileStore(wb.pool())
    assert store.active(instance).name == saved.name and store.get(saved.name).w_rec == rep.best.w_rec


def test_cli_retrieve_and_eval(workbench, settings, instance, tmp_path, monkeypatch):
    from core.cli import cli
    from core.demo.tune import records
    from core.index.memory_index import MemoryIndex

    monkeypatch.setenv("DATA_DIR", str(settings.data_dir))
    MemoryIndex(workbench.pool(), workbench.embedder).add(records(instance))
    runner = CliRunner()
    out = runner.invoke(cli, ["retrieve", "What did I eat yesterday?", "--instance", instance, "--trace",
                              "--param", "op.retrieve_memory_op.params.top_k=6"])
    assert out.exit_code == 0, out.output
    payload = json.loads(out.output)
    assert payload["time"]["parts"] and len(payload["trace"]) == 6 and payload["memories"]
    assert payload["trace"][2]["params"]["top_k"] == 6
    data = tmp_path / "q.jsonl"
    data.write_text('{"query": "sushi dinner", "relevant": ["demo-tune-obs-1"], "category": "food"}\n'
                    '{"query": "museum in Paris", "relevant": ["demo-tune-obs-3", "demo-tune-ins-2"]}\n')
    report = tmp_path / "r.json"
    out = runner.invoke(cli, ["eval", "--data", str(data), "--instance", instance, "--k", "1,5", "--json",
                              str(report), "--optimise", "--metric", "recall@5",
                              "--save-as", f"cli-{instance}"])
    assert out.exit_code == 0, out.output
    assert "overall" in out.output and f"saved profile 'cli-{instance}'" in out.output
    written = json.loads(report.read_text())
    assert written["evaluation"]["table"]["rows"][-1]["category"] == "overall"
    assert written["optimiser"]["best"]["name"] == f"cli-{instance}"
    bad = runner.invoke(cli, ["eval", "--data", str(data), "--optimise", "--metric", "precision@3"])
    assert bad.exit_code != 0
