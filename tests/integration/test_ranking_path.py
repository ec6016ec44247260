"""One ranking path: chat's search, `evaluate`, the optimiser and the Tune comparison rank a candidate pool
alike, identical texts and near-duplicates included, and the top k is a prefix of the top K."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from core.conversation.turn import Remember, UiRememberParams
from core.models import PRESET_PROFILES, FusionProfile, MemoryContext, MemoryRecord
from core.retrieval.hybrid import SearchRequest, hybrid_search
from core.tuning.compare import compare_profiles
from core.tuning.datasets import EvalCorpus, EvalDataset, EvalQuery
from core.tuning.evaluate import evaluate
from core.tuning.optimise import fetch_pools, optimise, score_point

NOW = datetime(2024, 5, 15, 12, 0, tzinfo=UTC)
POOL = 20
KS = (1, 2, 3, 5)
METRICS = ("recall@1", "recall@2", "recall@3", "recall@5", "ndcg@2", "ndcg@5", "mrr@5")
PROFILES = [PRESET_PROFILES["balanced-default"], PRESET_PROFILES["fast-chat"],
            PRESET_PROFILES["recall-recent"],
            FusionProfile(name="recency-only", w_sem=0.0, w_text=0.0, w_rec=1.0, tau_s=3600.0),
            FusionProfile(name="rrf-mix", method="rrf", w_sem=0.3, w_text=0.3, w_rec=0.4, rrf_k=5)]


def rec(instance: str, id_: str, content: str, hours: float, **kw) -> MemoryRecord:
    return MemoryRecord(instance=instance, id=id_, kind="turn", content=content,
                        created_at=NOW - timedelta(hours=hours), **kw)


def duplicates_dataset(instance: str) -> EvalDataset:
    """Three corpora (keyword embedder: texts with the same keywords have cosine 1) whose answer ranks
    below identical texts and near-duplicates of the best match:
    - sushi: a copy of the best match (case and spacing aside) and eight rephrasings of it, more than
      the old pass looked at (4 × top_k);
    - paris: one rephrasing and a copy, so the pool holds only top_k = 3 distinct texts, where the old
      pass did not run at all;
    - dog: a question, a rephrasing of it, and the reply next to the question, whose vector (the
      question's words and its own) is the question's, yet which is no duplicate of it;
    - steps: two agent steps that did the same thing, the answer a near-duplicate of the best match: it
      gives way to the end of the list, where it still fills the second of two slots."""
    sushi, paris, dog = f"{instance}-sushi", f"{instance}-paris", f"{instance}-dog"
    steps = f"{instance}-steps"
    corpora = {
        sushi: [rec(sushi, "best", "sushi food", 1), rec(sushi, "copy", "Sushi   FOOD", 2)]
        + [rec(sushi, f"re{i}", f"sushi food {w}", 3 + i)
           for i, w in enumerate(["again", "please", "now", "today", "yes", "ok", "right", "so"])]
        + [rec(sushi, "answer", "sushi dinner at home", 120), rec(sushi, "other", "paris museum", 200)],
        paris: [rec(paris, "best", "paris museum", 1), rec(paris, "re", "Paris museum, you said?", 2),
                rec(paris, "copy", "PARIS museum", 3), rec(paris, "answer", "the museum opens at nine", 90)],
        dog: [rec(dog, "ask", "my dog?", 1, context=MemoryContext(after=["the dog sleeps all day"])),
              rec(dog, "ask-again", "my dog, once more?", 2),
              rec(dog, "answer", "the dog sleeps all day", 50, context=MemoryContext(before=["my dog?"])),
              rec(dog, "cat", "a cat", 60)],
        steps: [rec(steps, "first", "restarted redis", 1), rec(steps, "answer", "restarted redis again", 2)],
    }
    questions = {sushi: "sushi food", paris: "paris museum", dog: "dog", steps: "redis"}
    return EvalDataset(
        name="duplicates", kind="jsonl",
        corpora=[EvalCorpus(instance=i, content_hash=i, records=r) for i, r in corpora.items()],
        queries=[EvalQuery(qid=i, query=questions[i], relevant=["answer"], category=i.rsplit("-", 1)[1],
                           instance=i, now=NOW) for i in corpora])


def point(p: FusionProfile) -> dict:
    return {"method": p.method, "w_sem": p.w_sem, "w_text": p.w_text, "w_rec": p.w_rec, "tau_s": p.tau_s,
            "rrf_k": p.rrf_k}


def test_search_results_are_prefixes_of_longer_searches(keyword_workbench, instance):
    wb = keyword_workbench
    ds = duplicates_dataset(instance)
    for corpus in ds.corpora:
        wb.index.add(corpus.records)

    def ids(q: EvalQuery, k: int) -> list[str]:
        req = SearchRequest(query=q.query, instance=q.instance, top_k=k, pool_size=POOL)
        return [s.memory.id for s in hybrid_search(wb.pool(), wb.embedder, req, now=NOW).results]

    for q in ds.queries:
        longest = ids(q, 8)
        assert "answer" in longest[:2] and "copy" not in longest, (q.qid, longest)
        for k in range(1, 8):
            assert ids(q, k) == longest[:k], (q.qid, k)


def test_the_optimiser_figures_are_evaluates(keyword_workbench, instance):
    """Per profile and metric, and for the optimiser's best profile: the optimiser's vectorised passes
    give what `evaluate` (chat's search, top max(ks)) reports."""
    wb = keyword_workbench
    ds = duplicates_dataset(instance)
    pools = fetch_pools(wb, ds, pool_size=POOL)
    mask = np.ones(len(pools.qids), dtype=bool)
    for prof in PROFILES:
        report = evaluate(wb, ds, prof, KS, pool_size=POOL)
        for metric in METRICS:
            assert score_point(pools, metric, mask, **point(prof)) == pytest.approx(report.value(metric)), \
                (prof.name, metric, report.rankings)
    default = PRESET_PROFILES["balanced-default"]
    assert evaluate(wb, ds, default, KS, pool_size=POOL).value("recall@2") == 1.0  # the answers come second
    for metric in ("recall@2", "ndcg@3"):
        rep = optimise(pools, metric, baseline=default, pool_size=POOL)
        k = int(metric.split("@")[1])
        for prof, value in ((default, rep.baseline_value), (rep.best, rep.best_value)):
            assert value == pytest.approx(evaluate(wb, ds, prof, (k,), pool_size=POOL).value(metric))
    assert pools.duplicates.all()  # every pool took the walk through both passes


BALCONY = "What did I plant on the balcony?"


def balcony_records(instance: str) -> list[MemoryRecord]:
    questions = [BALCONY, BALCONY.lower(), "Got it. What did I plant on the balcony?",
                 "Thanks, that works. What did I plant on the balcony?",
                 "Perfect, thank you. What did I plant on the balcony?"]
    facts = ["The balcony gets sun from noon until five, so I planted tomatoes and basil there.",
             "My neighbour grows roses on her terrace.", "I repainted the balcony railing green last spring.",
             "We bought a small table for the balcony.", "The basil needs water every second day."]
    return ([rec(instance, f"q{i}", q, 1 + i) for i, q in enumerate(questions)]
            + [rec(instance, f"f{i}", f, 30 + 24 * i) for i, f in enumerate(facts)])


@pytest.mark.parametrize("profile", ["balanced-default", "fast-chat"])
@pytest.mark.parametrize("top_k", [2, 4])
def test_the_tune_comparison_shows_what_chat_retrieves(workbench, instance, profile, top_k):
    """With the real offline embedder: the Tune page's rows are the ids ui_remember puts in its context."""
    workbench.index.add(balcony_records(instance))
    prof = PRESET_PROFILES[profile]
    shown = compare_profiles(workbench, instance, BALCONY, prof, prof, rows=top_k, now=NOW)
    result = Remember(workbench, clock=lambda: NOW).run(
        UiRememberParams(thought=BALCONY, top_k=top_k, profile=profile, chain_id="ranking"),
        instance=instance)
    context = [c.id for c in result.context]
    assert [r.id for r in shown.candidate_rows if not r.below_floor] == context
    assert [r.id for r in shown.active_rows if not r.below_floor] == context
    # A copy and rephrasings of the best match (cosine >= 0.9 to it) are left out: fusion alone ranks
    # q0, q1, q2, q3, q4, f0, ...
    assert context[0] == "q0" and not {"q1", "q2", "q3"} & set(context), context
    assert top_k < 3 or "f0" in context, context
