"""The MemoryScope flow on real Postgres: retrieve (hybrid search with a profile, dedupe, threshold), the
trace, the time boost, and the LLM steps against the local fake OpenAI-compatible server."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from core.models import DEFAULT_PROFILE, PRESET_PROFILES, FusionProfile, MemoryRecord
from core.retrieval.memoryscope import ScopeParams, run_memoryscope
from core.runtime import Workbench
from core.tuning.datasets import EvalDataset, EvalQuery
from core.tuning.evaluate import evaluate
from core.index.memory_index import MemoryIndex
from core.index.records import event_time_of
from tests.support.embedders import KeywordEmbedder

NOW = datetime(2024, 5, 15, 10, 0, tzinfo=UTC)  # Wednesday
TS = int(NOW.timestamp())


def seed(wb, instance: str) -> None:
    def rec(id_, kind, content, days):
        at = NOW - timedelta(days=days)
        return MemoryRecord(instance=instance, id=id_, kind=kind, content=content, created_at=at,
                            event_time=event_time_of(at))

    MemoryIndex(wb.pool(), wb.embedder).add([
        rec("sushi-1", "observation", "sushi food with a friend", 1),
        rec("sushi-2", "conversation", "sushi food with a friend", 3),   # same content, older: a duplicate
        rec("sushi-3", "insight", "the user loves sushi", 10),
        rec("paris-1", "observation", "a museum in paris", 2),
        rec("dog-1", "obs_customized", "walk the dog", 1),
    ])


def params(**flat) -> ScopeParams:
    base = {"op.set_query_op.params.timestamp": TS}
    return ScopeParams.from_flat(base | {f"op.{k.replace('__', '.params.')}": v for k, v in flat.items()})


def test_flow_trace_dedupe_threshold_and_time_boost(keyword_workbench, instance):
    wb = keyword_workbench
    seed(wb, instance)
    r = run_memoryscope(wb, "sushi food yesterday", instance=instance, profile=FusionProfile(),
                        params=params(retrieve_memory_op__top_k=10))
    ops = [t.op for t in r.trace]
    assert ops == ["set_query_op", "extract_time_op", "retrieve_memory_op", "semantic_rank_op",
                   "fuse_rerank_op", "print_memory_op"]
    steps = {t.op: t for t in r.trace}
    assert all(t.ms >= 0 and isinstance(t.params, dict) for t in r.trace)
    assert steps["retrieve_memory_op"].params["top_k"] == 10
    assert r.timestamp == NOW
    # extract_time: offline, the rule-based parser, relative to the query timestamp
    extract = steps["extract_time_op"]
    assert extract.status == "fallback" and "no LLM configured" in extract.note
    assert r.time_hint.parts == {"year": 2024, "month": 5, "day": 14}
    # retrieve_memory: the duplicate content is kept once (the better one), as chat ranks
    ids = [m["id"] for m in steps["retrieve_memory_op"].output]
    assert "sushi-1" in ids and "sushi-2" not in ids
    assert "ranked as chat ranks them (identical texts once)" in steps["retrieve_memory_op"].note
    # semantic_rank: skipped offline, said so
    rank = steps["semantic_rank_op"]
    assert rank.status == "skipped" and "no LLM configured" in rank.note
    # fuse_rerank: yesterday's observation gets the time ratio, formatted "[time weekday] content"
    top = r.memories[0]
    assert top.memory.id == "sushi-1" and top.time_matched and top.time_ratio == 2.0
    assert top.fused_score == pytest.approx(top.retrieval.combined * 1.0 * 2.0)
    assert r.formatted[0] == "[2024-05-14 10:00:00 Tuesday] sushi food with a friend"
    assert r.answer.startswith("Memory 1 (observation): [2024-05-14 10:00:00 Tuesday]")
    assert len(r.memories) <= 5

    strict = run_memoryscope(wb, "sushi food", instance=instance, profile=FusionProfile(),
                             params=params(retrieve_memory_op__top_k=10,
                                           retrieve_memory_op__threshold_score=0.5))
    kept = strict.trace[2].output
    assert kept and all(m["retrieval"] >= 0.5 for m in kept)
    assert strict.trace[1].status == "skipped" and strict.time_hint is None  # no time keyword


def test_the_profile_changes_the_ranking(keyword_workbench, instance):
    seed(keyword_workbench, instance)
    semantic = run_memoryscope(keyword_workbench, "sushi", instance=instance, params=params(
        retrieve_memory_op__top_k=5), profile=FusionProfile(name="s", w_sem=1.0, w_text=0.0, w_rec=0.0))
    recent = run_memoryscope(keyword_workbench, "sushi", instance=instance, params=params(
        retrieve_memory_op__top_k=5), profile=FusionProfile(name="r", w_sem=0.0, w_text=0.0, w_rec=1.0))
    first = lambda res: res.trace[2].output[0]["id"]
    assert first(semantic) == "sushi-3"  # "the user loves sushi": the closest vector
    assert first(recent) in ("sushi-1", "dog-1")  # a day old: the newest


STEP = "Agent step: {} in {} -> failed: merge conflict in pyproject.toml, resolved keeping both deps."


def test_retrieve_memory_ranks_as_the_evaluation_does(workbench, instance):
    """One ranking path: retrieve_memory's list (what `workbench retrieve`, /retrieve and MCP's
    retrieve_memory hand fuse_rerank) is the evaluated one, near-duplicates given way alike; distinct agent
    steps (another command, another file) are both kept."""
    steps = {"npm": STEP.format("`npm run build`", "charts/api/values.yaml"),
             "again": STEP.format("`npm run build`", "charts/api/values.yaml").replace(", resolved", "; resolved it"),
             "docker": STEP.format("`docker build -t api .`", "charts/api/values.yaml"),
             "backfill": STEP.format("`curl -s localhost:8080/healthz`", "scripts/backfill.py"),
             "report": STEP.format("`curl -s localhost:8080/healthz`", "jobs/report.py"),
             "lint": "Agent step: `ruff check .` in core/ -> passed."}
    MemoryIndex(workbench.pool(), workbench.embedder).add([
        MemoryRecord(instance=instance, id=k, kind="observation", content=t, created_at=NOW - timedelta(hours=i))
        for i, (k, t) in enumerate(steps.items())])
    query = "which agent steps failed with a merge conflict in pyproject.toml"
    profile = PRESET_PROFILES[DEFAULT_PROFILE]
    dataset = EvalDataset(name="steps", kind="jsonl", include_shared=True, queries=[
        EvalQuery(qid="q", query=query, relevant=["npm"], category="all", instance=instance, now=NOW)])
    evaluated = evaluate(workbench, dataset, profile, ks=(4,)).rankings["q"]
    scope = run_memoryscope(workbench, query, instance=instance, profile=profile,
                            params=params(retrieve_memory_op__top_k=4))
    retrieved = scope.trace[2]
    assert [m["id"] for m in retrieved.output] == evaluated
    assert {"docker", "backfill", "report"} <= set(evaluated)  # distinct steps, all kept
    assert len({"npm", "again"} & set(evaluated)) == 1  # the repeat gave way
    assert "1 near-duplicate left out: " in retrieved.note


@pytest.fixture
def llm_wb(llm_settings):
    wb = Workbench(llm_settings, embedder=KeywordEmbedder())
    yield wb
    wb.close()


def test_llm_time_extraction_with_few_shot(llm_wb, fake_llm, instance):
    seed(llm_wb, instance)
    fake_llm.reply('Here: {"Year": 2024, "Month": 5, "Day of Week": 1,}')
    r = run_memoryscope(llm_wb, "What did I eat last Tuesday?", instance=instance,
                        params=params(semantic_rank_op__enable_ranker=False))
    step = r.trace[1]
    assert step.status == "ran" and step.output["source"] == "llm"
    assert r.time_hint.parts == {"year": 2024, "month": 5, "weekday": 1}
    (req,) = fake_llm.chat_requests
    msgs = req["body"]["messages"]
    assert msgs[0]["role"] == "system" and "weekday (Monday = 0)" in msgs[0]["content"]
    assert len(msgs) == 1 + 2 * 6 + 1  # system, six few-shot pairs, the query
    assert msgs[-1]["content"] == ("Sentence: What did I eat last Tuesday?\n"
                                   "Sentence timestamp: 2024-05-15 10:00:00 Wednesday")


def test_llm_failure_falls_back_to_rules(llm_wb, fake_llm, instance):
    seed(llm_wb, instance)
    fake_llm.fail(503, times=3)
    r = run_memoryscope(llm_wb, "sushi yesterday", instance=instance,
                        params=params(semantic_rank_op__enable_ranker=False))
    assert r.trace[1].status == "fallback" and "LLM failed" in r.trace[1].note
    assert r.time_hint.parts == {"year": 2024, "month": 5, "day": 14} and r.time_hint.source == "rules"


def test_semantic_rank_scores_are_kept_apart(llm_wb, fake_llm, instance):
    seed(llm_wb, instance)
    fake_llm.reply('{"scores": [{"index": 2, "score": 0.9}, {"index": 3, "score": 0.4}]}')
    r = run_memoryscope(llm_wb, "sushi food", instance=instance, params=params(
        retrieve_memory_op__top_k=4, semantic_rank_op__output_memory_max_count=3,
        fuse_rerank_op__fuse_score_threshold=0.0))
    step = r.trace[3]
    assert step.status == "ran" and "LLM scored 2 of 4" in step.note and "unscored" in step.note
    assert [m["base_source"] for m in step.output] == ["llm", "llm", "retrieval"]
    assert [m["llm_score"] for m in step.output][:2] == [0.9, 0.4]
    prompt = fake_llm.chat_requests[-1]["body"]["messages"][-1]["content"]
    assert "Query: sushi food" in prompt and "1. " in prompt and "4. " in prompt
    assert step.output_size == 3  # output_memory_max_count


def test_semantic_rank_skips_when_not_more_than_the_limit(llm_wb, fake_llm, instance):
    seed(llm_wb, instance)
    r = run_memoryscope(llm_wb, "sushi food", instance=instance, params=params(retrieve_memory_op__top_k=3))
    assert r.trace[3].status == "skipped" and "≤ output_memory_max_count 10" in r.trace[3].note
    assert fake_llm.chat_requests == []  # no time keyword, no ranking: no LLM call at all


def test_messages_count_as_conversation_memories(keyword_workbench, instance):
    """A user's or an assistant's message is a conversation memory (0.5), not an unknown type (0.1): it keeps
    its place above an unrelated observation, and the trace says which ratio each kind took."""
    def rec(id_, kind, content, chain=None):
        return MemoryRecord(instance=instance, id=id_, kind=kind, content=content, created_at=NOW,
                            chain_id=chain, event_time=event_time_of(NOW))

    MemoryIndex(keyword_workbench.pool(), keyword_workbench.embedder).add([
        rec("said", "user", "my favourite tea is genmaicha", "t1"),
        rec("reply", "assistant", "genmaicha green tea noted as favourite", "t1"),
        rec("coffee", "observation", "the user drinks coffee, not tea, at work"),
        rec("step", "bank_entry", "ran brew --tea genmaicha"),
    ])
    query = "favourite tea genmaicha"
    wide = {"retrieve_memory_op__top_k": 10, "fuse_rerank_op__fuse_score_threshold": 0.0}
    r = run_memoryscope(keyword_workbench, query, instance=instance, profile=FusionProfile(),
                        params=params(**wide))
    got = {m.memory.id: m for m in r.memories}
    assert {got["said"].type_ratio, got["reply"].type_ratio} == {0.5}
    assert got["said"].fused_score == pytest.approx(got["said"].retrieval.combined * 0.5)
    assert got["coffee"].type_ratio == 1.0 and got["step"].type_ratio == 0.1
    assert r.memories[0].memory.id in ("said", "reply")  # the old 0.1 put the coffee observation first
    fuse = r.trace[4]
    assert any(f"conversation ×0.5 for {kinds}" in fuse.note
               for kinds in ("user, assistant", "assistant, user"))
    assert "unknown_type_ratio ×0.1 for bank_entry" in fuse.note
    rows = {row["id"]: row for row in fuse.output}
    said = rows["said"]
    assert (said["kind"], said["type"], said["ratio_from"]) == ("user", "conversation", "conversation")
    assert "(conversation, user): " in r.answer and "(conversation, assistant): " in r.answer
    # A ratio given for the kind itself still applies to it.
    own = run_memoryscope(keyword_workbench, query, instance=instance, profile=FusionProfile(),
                          params=params(**wide, fuse_rerank_op__fuse_ratio_dict={"user": 3.0,
                                                                                   "conversation": 0.5}))
    mine = {m.memory.id: m for m in own.memories}
    assert (mine["said"].type_ratio, mine["said"].ratio_from) == (3.0, "user")
    assert mine["reply"].type_ratio == 0.5 and mine["coffee"].type_ratio == 0.1
