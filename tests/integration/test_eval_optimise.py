"""Evaluation on a tiny LoCoMo-shaped file (loaded once, then reused), the optimiser on a synthetic set
whose best profile is known, its agreement with `evaluate`, saving the winner, the verdict that refuses a
profile no better beyond noise (the issue's 6-query set), cancelling a run, and the CLI."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from click.testing import CliRunner

from core import usecases as uc
from core.demo.tune import records
from core.errors import Cancelled, InvalidInput
from core.models import PRESET_PROFILES, FusionProfile, MemoryRecord
from core.retrieval.profiles import ProfileStore
from core.tuning.datasets import EvalCorpus, EvalDataset, EvalQuery, load_dataset
from core.tuning.evaluate import evaluate
from core.tuning.optimise import fetch_pools, optimise, save_best, score_point
from core.tuning.verdict import paired_spread


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


def test_the_optimiser_scores_speakers_and_chains_as_the_ranking_path_does(keyword_workbench, instance,
                                                                          tmp_path):
    """Questions naming a speaker, over two sessions: every profile's figure from the pools is `evaluate`'s."""
    sample = mini_locomo(instance)
    sample[0]["qa"] += [{"question": "What does Ann say about the park museum?", "evidence": ["D1:3"],
                         "category": 4},
                        {"question": "Bob weather", "evidence": ["D2:2"], "category": 4}]
    path = tmp_path / "speakers.json"
    path.write_text(json.dumps(sample))
    ds = load_dataset(path)
    wb = keyword_workbench
    pools = fetch_pools(wb, ds, pool_size=10)
    assert pools.speaker.any() and (pools.chain != np.arange(pools.chain.shape[1])).any()
    mask = np.ones(len(pools.qids), dtype=bool)
    for prof in (*PRESET_PROFILES.values(), FusionProfile(name="r", method="rrf", w_sem=0.2, w_text=0.3,
                                                          w_rec=0.5, rrf_k=5)):
        report = evaluate(wb, ds, prof, ks=(1, 3))
        for metric in ("recall@1", "recall@3"):
            assert score_point(pools, metric, mask, method=prof.method, w_sem=prof.w_sem, w_text=prof.w_text,
                               w_rec=prof.w_rec, tau_s=prof.tau_s, rrf_k=prof.rrf_k) == pytest.approx(
                report.value(metric)), (prof.name, metric)


def test_side_by_side_sets_each_leg_alone_beside_the_profiles(keyword_workbench, instance, tmp_path):
    path = tmp_path / "mini.json"
    path.write_text(json.dumps(mini_locomo(instance)))
    ds = load_dataset(path)
    reports = uc.evaluate_side_by_side(keyword_workbench, uc.SideBySideRequest(
        instance=instance, dataset=ds, profiles=["balanced-default", "fast-chat"], ks=[1, 5]))
    assert [(r.label, r.search_type) for r in reports] == [
        ("balanced-default", "hybrid"), ("fast-chat", "hybrid"), ("text leg alone (BM25)", "text"),
        ("dense leg alone (cosine)", "vector")]
    text = evaluate(keyword_workbench, ds, PRESET_PROFILES["balanced-default"], ks=(1, 5), search_type="text")
    assert reports[2].rankings == text.rankings  # the same evaluation as asking for the leg directly
    without = uc.evaluate_side_by_side(keyword_workbench, uc.SideBySideRequest(
        instance=instance, dataset=ds, profiles=["balanced-default"], legs=False, ks=[1, 5]))
    assert [r.search_type for r in without] == ["hybrid"]


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
    assert rep.best.w_rec > 0.15  # more recency than balanced-default: the nearest profile that wins
    assert rep.recommended and (rep.spread.wins, rep.spread.ties, rep.spread.losses) == (3, 0, 0)
    assert rep.verdict.startswith("Recommended:") and "these 3 queries" in rep.verdict
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


# The case: six labelled queries on the Tune demo's memories, where the old optimiser proposed
# semantic 0 / text 0.05 / recency 0.95 (the first grid point of a tie) beside an evaluation it contradicted.
SIX_QUERIES = [
    ("What did I eat yesterday?", ["demo-tune-obs-1", "demo-tune-con-1"]),
    ("When do I walk the dog?", ["demo-tune-obs-2"]),
    ("Which museum did I visit in Paris?", ["demo-tune-obs-3"]),
    ("Where is our database now?", ["demo-tune-obs-4"]),
    ("What instrument am I learning?", ["demo-tune-obs-5"]),
    ("How was the weather in Paris?", ["demo-tune-obs-6"]),
]


# Three queries whose relevant memory is the newest of its topic: balanced-default misses all three at rank 1.
BETTER_WITH_RECENCY = [("dog", "demo-tune-obs-2"), ("Paris trip", "demo-tune-obs-6"), ("food", "demo-tune-con-1")]


def demo_records(instance: str, hour: int = 8) -> list[MemoryRecord]:
    """The Tune demo's memories as laid out at `hour` o'clock UTC, the last one past. `records` puts each
    memory at an hour of its day, a day earlier when that hour is still to come: run from 09:00 UTC on,
    today's 09:00 memory is minutes old instead of a day, and the recency queries below no longer have a
    profile reliably better than the default. Pinned, the layout is the same whenever the suite runs."""

    now = datetime.now(UTC)
    at = now.replace(hour=hour, minute=0, second=0, microsecond=0)
    return records(instance, now=at if at <= now else at - timedelta(days=1))


def six_query_jsonl() -> str:
    return "".join(json.dumps({"query": q, "relevant": r}) + "\n" for q, r in SIX_QUERIES)


def test_six_queries_get_no_recommendation_and_the_optimiser_agrees_with_the_evaluation(workbench, instance):
    from core.index.memory_index import MemoryIndex

    MemoryIndex(workbench.pool(), workbench.embedder).add(demo_records(instance))
    report = uc.tune(workbench, uc.TuneRequest(instance=instance, source=six_query_jsonl().encode(),
                                               optimise=True, metric="recall@10", save_as=f"t-{instance}"))
    opt = report.optimiser
    first_of_the_best = next(p for p in opt.surface if p.value == opt.best_value)
    assert (first_of_the_best.w_sem, first_of_the_best.w_text, first_of_the_best.w_rec) == (0.0, 0.05, 0.95)
    assert opt.queries == 6 and opt.baseline.name == "balanced-default"
    assert opt.baseline_value == pytest.approx(report.evaluation.value("recall@10"))
    assert not opt.recommended and report.saved is None
    assert opt.verdict.startswith("No profile is reliably better than balanced-default on these 6 queries")
    assert opt.spread.wins + opt.spread.ties + opt.spread.losses == 6 and opt.spread.low <= 0
    assert opt.best.model_dump(exclude={"name"}) == opt.baseline.model_dump(exclude={"name"})  # a tie: no change
    with pytest.raises(InvalidInput, match="nothing to save: No profile is reliably better"):
        uc.save_tuned(workbench, uc.SaveTuned(instance=instance, report=opt, name=f"t-{instance}"))


def test_paired_bootstrap_interval():
    one_win = paired_spread(np.array([1, 0, 0, 0, 0, 0.0]), np.zeros(6))
    assert (one_win.wins, one_win.ties, one_win.losses) == (1, 5, 0)
    assert one_win.mean == pytest.approx(1 / 6) and one_win.low == 0.0 and not one_win.reliable
    steady = paired_spread(np.full(40, 0.5) + np.r_[np.zeros(38), -0.5, -0.5], np.zeros(40))
    assert steady.reliable and steady.losses == 0 and steady.low > 0.3
    assert paired_spread(np.zeros(0), np.zeros(0)).queries == 0


def test_a_run_stops_between_batches(keyword_workbench, instance):
    """The flag the Tune page's Cancel and a closed tab act through: asked between batches of 25 queries."""
    wb = keyword_workbench
    ds = synthetic(instance)
    ds = ds.model_copy(update={"queries": [q.model_copy(update={"qid": f"{q.qid}-{i}"})
                                           for i in range(20) for q in ds.queries]})  # 60 queries
    seen = []
    with pytest.raises(Cancelled, match="retrieving cancelled after 25 of 60"):
        evaluate(wb, ds, PRESET_PROFILES["balanced-default"], ks=(1,),
                 progress=lambda done, total, what: seen.append((done, what)),
                 stop=lambda: ("retrieving" in dict(seen).values()))
    assert seen[-1] == (25, "retrieving")  # the searches stopped with the first batch

    class PageClosed(BaseException):  # what Streamlit raises inside a progress update when the tab closes
        pass

    def closed(done, total, what):
        if what == "fetching candidate pools":
            seen.append(done)
            raise PageClosed

    seen.clear()
    with pytest.raises(PageClosed):
        fetch_pools(wb, ds, pool_size=10, progress=closed)
    assert seen == [25]
    with pytest.raises(Cancelled, match="scoring profiles cancelled after 0 of"):
        optimise(fetch_pools(wb, synthetic(instance), pool_size=10), "recall@1",
                 baseline=PRESET_PROFILES["balanced-default"], stop=lambda: True)


def test_cli_retrieve_and_eval(workbench, settings, instance, tmp_path, monkeypatch):
    from core.cli import cli
    from core.index.memory_index import MemoryIndex

    monkeypatch.setenv("DATA_DIR", str(settings.data_dir))
    MemoryIndex(workbench.pool(), workbench.embedder).add(demo_records(instance))
    runner = CliRunner()
    out = runner.invoke(cli, ["retrieve", "What did I eat yesterday?", "--instance", instance, "--trace",
                              "--param", "op.retrieve_memory_op.params.top_k=6"])
    assert out.exit_code == 0, out.output
    payload = json.loads(out.output)
    assert payload["time"]["parts"] and len(payload["trace"]) == 6 and payload["memories"]
    assert payload["trace"][2]["params"]["top_k"] == 6
    data = tmp_path / "q.jsonl"
    data.write_text(six_query_jsonl())
    report = tmp_path / "r.json"
    out = runner.invoke(cli, ["eval", "--data", str(data), "--instance", instance, "--k", "1,10", "--json",
                              str(report), "--optimise", "--save-as", f"cli-{instance}"])
    assert out.exit_code == 1, out.output  # nothing saved: a script that asked for the profile is told
    written = json.loads(report.read_text())
    assert written["evaluation"]["table"]["rows"][-1]["category"] == "overall"
    assert not written["optimiser"]["recommended"]
    assert "profiles scored on 6 queries" in out.output and written["optimiser"]["verdict"] in out.output
    assert "No profile is reliably better than balanced-default on these 6 queries" in out.output
    assert out.stderr == f"not saved as 'cli-{instance}': only a recommended profile is saved\n"
    assert "saved profile" not in out.output
    data.write_text("".join(json.dumps({"query": q, "relevant": [r]}) + "\n" for q, r in BETTER_WITH_RECENCY))
    out = runner.invoke(cli, ["eval", "--data", str(data), "--instance", instance, "--optimise", "--metric",
                              "recall@1", "--save-as", f"cli-{instance}"])
    assert out.exit_code == 0, out.output
    assert "Recommended:" in out.output and f"saved profile 'cli-{instance}'" in out.output
    bad = runner.invoke(cli, ["eval", "--data", str(data), "--optimise", "--metric", "precision@3"])
    assert bad.exit_code != 0
