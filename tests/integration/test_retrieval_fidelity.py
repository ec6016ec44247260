"""Retrieval shows what it does (issue 17): thresholds read relevance, not age; a token budget keeps the most
relevant before a chronological answer orders them; near-duplicates are told apart from distinct facts on
a labelled set and reported when left out; the LLM's scores rank apart from retrieval's; time hints that do
not parse do not fail a turn; a turn's tags can filter retrieval."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from core.conversation.turn import Remember, UiRememberParams
from core.errors import InvalidInput
from core.models import FusionProfile, MemoryRecord, MemoryRow
from core.retrieval.fusion import Candidate
from core.retrieval.hybrid import SearchRequest, hybrid_search
from core.retrieval.memoryscope import ScopeParams, run_memoryscope
from core.retrieval.ranking import NEAR_DUPLICATE, CandidatePool, near_duplicate_matrix, rank_pool
from core.runtime import Workbench
from tests.support.embedders import KeywordEmbedder

PAIRS = Path(__file__).parents[1] / "data" / "near_duplicates.jsonl"


def add(wb, instance, *memories, age_s: float = 0.0, **kw):
    now = datetime.now(UTC)
    wb.index.add([MemoryRecord(instance=instance, id=id_, kind=kw.get("kind", "observation"), content=text,
                               created_at=now - timedelta(seconds=age_s), tags=kw.get("tags", []))
                  for id_, text in memories])


# -- 3. thresholds read relevance, never recency alone ---------------------------------------------

def test_a_fresh_unrelated_memory_passes_no_relevance_threshold(keyword_workbench, instance):
    wb = keyword_workbench
    add(wb, instance, ("dog", "walk the dog"))  # new: recency ~1, so combined ~0.15 on its age alone
    add(wb, instance, ("sushi", "sushi food"), age_s=30 * 86400)

    def run(**flat):
        params = ScopeParams.from_flat({f"op.{k.replace('__', '.params.')}": v for k, v in flat.items()})
        return run_memoryscope(wb, "sushi food", instance=instance, profile=FusionProfile(), params=params)

    loose = run(retrieve_memory_op__top_k=10, fuse_rerank_op__fuse_score_threshold=0.0)
    dog = next(m for m in loose.memories if m.memory.id == "dog")
    assert dog.retrieval.combined >= 0.1 and dog.retrieval.relevance == 0  # it would pass on age alone
    strict = run(retrieve_memory_op__top_k=10, retrieve_memory_op__threshold_score=0.1,
                 fuse_rerank_op__fuse_score_threshold=0.0)
    assert [m["id"] for m in strict.trace[2].output] == ["sushi"]
    assert "below threshold_score (on relevance, without recency)" in strict.trace[2].note
    default = run(retrieve_memory_op__top_k=10)  # fuse_score_threshold 0.1, the seed's default
    assert [m.memory.id for m in default.memories] == ["sushi"]


# -- 4. chronological with a token budget --------------------------------------------------------------

def test_chronological_keeps_the_most_relevant_within_the_budget_then_orders_by_time(keyword_workbench,
                                                                                     instance):
    wb = keyword_workbench

    def context(token_cap):  # each in an instance of its own: a turn's question becomes a memory too
        where = f"{instance}-{token_cap}"
        # Each costs its line in the prompt (date, kind, relevance and text: 30-40 tokens), not its text alone.
        add(wb, where, ("old", "paris"), age_s=10 * 86400)          # older, less relevant
        add(wb, where, ("best", "paris museum"), age_s=86400)       # the best match
        r = Remember(wb).run(UiRememberParams(thought="paris museum", style="chronological", top_k=2,
                                              similarity_threshold=0.1, token_cap=token_cap), instance=where)
        return [c.id for c in r.context]

    assert context(50) == ["best"]  # the budget fits one: the most relevant, not the oldest
    assert context(100) == ["old", "best"]  # all fit: in time order


# -- 9. near-duplicates ----------------------------------------------------------------------------------

def labelled_pairs() -> list[dict]:
    return [json.loads(line) for line in PAIRS.read_text().splitlines() if line.strip()]


def test_the_near_duplicate_default_on_labelled_repeats_and_distinct_facts(workbench):
    """The ranking's own relation (`near_duplicate_matrix`) on each labelled pair, with the offline
    embedder: repeats should be near-duplicates, distinct facts ("...on March 3" / "...on March 5") not."""
    pairs = labelled_pairs()
    assert len(pairs) >= 60 and sum(p["repeat"] for p in pairs) >= 30 and sum(not p["repeat"] for p in pairs) >= 30
    now = datetime.now(UTC)
    tp = fp = fn = 0
    for p in pairs:
        vecs = workbench.embedder.embed_batch([p["a"], p["b"]])
        rows = [MemoryRow(instance="i", id=k, kind="turn", content=p[k], created_at=now) for k in "ab"]
        pool = CandidatePool([Candidate(r, 0.5, 0.0, None, None) for r in rows],
                             vectors={("i", r.id): np.asarray(v) for r, v in zip(rows, vecs, strict=True)})
        said = bool(near_duplicate_matrix(pool, NEAR_DUPLICATE)[0, 1])
        tp += said and p["repeat"]
        fp += said and not p["repeat"]
        fn += p["repeat"] and not said
    precision, recall = tp / (tp + fp), tp / (tp + fn)
    print(f"\nnear-duplicates at {NEAR_DUPLICATE}: precision {precision:.3f}, recall {recall:.3f} "
          f"({len(pairs)} labelled pairs)")
    assert precision >= 0.9 and recall >= 0.8


OTHER_WORDS = ("friend family home walk weekend work happy love time year day people city train station ticket "
               "coffee book read write letter music song dance party dinner kitchen bread cheese apple market shop "
               "price money bank school teacher lesson class student paint picture camera photo beach sea boat "
               "island mountain river forest tree bird dog cat horse car road bridge tower museum art history "
               "story film game team match ball run swim bike doctor health sleep dream night star moon light "
               "window door table chair phone email message meeting office project plan idea problem answer")


def test_long_notes_on_one_subject_are_not_near_duplicates_unless_they_share_their_words(workbench):
    """The embedder averages word vectors, so two notes of 100 words on one subject have close vectors
    whatever they say; they give way to each other only when they share their words too."""
    subject, other = ["garden", "plant", "water", "seed", "soil"], OTHER_WORDS.split()

    def note(seed: int) -> str:
        rng = random.Random(seed)
        words = [rng.choice(subject) if rng.random() < 0.7 else rng.choice(other) for _ in range(100)]
        return ". ".join(" ".join(words[i:i + 10]).capitalize() for i in range(0, 100, 10)) + "."

    a, b = note(1), note(2)
    texts = {"a": a, "again": a + " Also the garden again.", "b": b}  # in the pool's order, equal scores
    now = datetime.now(UTC)
    rows = [MemoryRow(instance="i", id=k, kind="note", content=t, created_at=now) for k, t in texts.items()]
    vecs = np.asarray(workbench.embedder.embed_batch(list(texts.values())))
    pool = CandidatePool([Candidate(r, 0.5, 0.0, None, None) for r in rows],
                         vectors={("i", r.id): v for r, v in zip(rows, vecs, strict=True)})
    assert float(vecs[0] @ vecs[2]) >= NEAR_DUPLICATE  # a and b: close by their vectors alone
    close = near_duplicate_matrix(pool, NEAR_DUPLICATE)
    assert not close[0, 2] and close[0, 1]  # the same words and one sentence more: a repeat
    ranked = rank_pool(pool, FusionProfile(), now, top_k=2)
    assert [r.memory.id for r in ranked.results] == ["a", "b"]
    assert [(x.id, x.like_id) for x in ranked.left_out] == [("again", "a")]


STEP = "Agent step: {} in {} -> failed: merge conflict in pyproject.toml, resolved keeping both deps."


def test_agent_steps_with_another_command_or_file_are_not_near_duplicates(workbench):
    """Two steps with the same outcome are close by their vectors and words alike; the command or the file
    tells them apart, as a number or a name tells two facts apart. The same step told again gives way."""
    texts = {"npm": STEP.format("`npm run build`", "charts/api/values.yaml"),
             "again": STEP.format("`npm run build`", "charts/api/values.yaml").replace(", resolved", "; resolved it"),
             "docker": STEP.format("`docker build -t api .`", "charts/api/values.yaml"),
             "backfill": STEP.format("`curl -s localhost:8080/healthz`", "scripts/backfill.py"),
             "report": STEP.format("`curl -s localhost:8080/healthz`", "jobs/report.py")}
    now = datetime.now(UTC)
    rows = [MemoryRow(instance="i", id=k, kind="observation", content=t, created_at=now) for k, t in texts.items()]
    vecs = np.asarray(workbench.embedder.embed_batch(list(texts.values())))
    pool = CandidatePool([Candidate(r, 0.5 - i / 100, 0.0, i + 1, None) for i, r in enumerate(rows)],  # in order
                         vectors={("i", r.id): v for r, v in zip(rows, vecs, strict=True)})
    pairs = [(0, 2), (3, 4), (0, 1)]  # another command; another file; the same step again
    assert all(vecs[i] @ vecs[j] >= NEAR_DUPLICATE for i, j in pairs)  # close by their vectors alone
    close = near_duplicate_matrix(pool, NEAR_DUPLICATE)
    assert [bool(close[i, j]) for i, j in pairs] == [False, False, True]
    ranked = rank_pool(pool, FusionProfile(), now, top_k=4)
    assert [r.memory.id for r in ranked.results] == ["npm", "docker", "backfill", "report"]
    assert [(x.id, x.like_id) for x in ranked.left_out] == [("again", "npm")]


def test_distinct_facts_are_both_kept_and_a_left_out_repeat_is_reported(workbench, instance):
    add(workbench, instance, ("m3", "The dentist appointment is on March 3."),
        ("m5", "The dentist appointment is on March 5."))
    add(workbench, instance, ("again", "Reminder: the dentist appointment is on March 3."), age_s=3600)
    add(workbench, instance, ("a", "When is the dentist appointment?"), ("b", "Got it. When is the dentist appointment?"),
        age_s=7200)

    found = hybrid_search(workbench.pool(), workbench.embedder, SearchRequest(
        query="When is the dentist appointment?", instance=instance, top_k=3, include_shared=False))
    ids = [r.memory.id for r in found.results]
    assert {"m3", "m5"} <= set(ids + [x.id for x in found.left_out])  # distinct dates: neither gives way
    assert {x.id for x in found.left_out} == {"b"} and found.left_out[0].like_id == "a"
    turn = Remember(workbench).run(UiRememberParams(thought="When is the dentist appointment?", top_k=3),
                                   instance=instance)
    assert any(n.startswith("near-duplicate left out: 'Got it. When is the dentist appointment?'")
               for n in turn.notes)


# -- 10. the LLM's scores rank before retrieval's -------------------------------------------------------

def test_fuse_rerank_puts_model_scored_memories_before_unscored_ones(llm_settings, fake_llm, instance):
    wb = Workbench(llm_settings, embedder=KeywordEmbedder())  # the fake LLM scores, the keyword embedder
    add(wb, instance, ("best", "sushi food"), kind="insight")   # retrieval's best: left unscored
    add(wb, instance, ("s2", "sushi"), ("s3", "food"), ("s4", "sushi dog"), age_s=86400)
    fake_llm.reply('{"scores": [{"index": 2, "score": 0.3}, {"index": 3, "score": 0.2}]}')
    params = ScopeParams.from_flat({"op.retrieve_memory_op.params.top_k": 4,
                                    "op.semantic_rank_op.params.output_memory_max_count": 3,
                                    "op.fuse_rerank_op.params.fuse_score_threshold": 0.0})
    try:
        r = run_memoryscope(wb, "sushi food", instance=instance, profile=FusionProfile(), params=params)
    finally:
        wb.close()
    assert r.trace[3].status == "ran"
    best = next(m for m in r.memories if m.memory.id == "best")
    assert best.base_source == "retrieval" and best.fused_score > max(m.fused_score for m in r.memories
                                                                      if m.base_source == "llm")
    # Its fused score is higher, yet the model-scored memories come first: the scores are not comparable.
    assert [m.base_source for m in r.memories] == ["llm", "llm", "retrieval"]
    assert "model-scored first" in r.trace[4].note


# -- 12. time hints that do not parse -------------------------------------------------------------------

def test_a_question_s_time_ranks_its_memories_and_a_statement_s_does_not(keyword_workbench, instance):
    """A statement names the time of what it tells ("I had sushi food last month."), asking for nothing of then:
    its related memories are not boosted by it (the demo's "I moved to Porto last month" showed any of last
    month's). An instruction's time is "the message's", not a question's."""
    add(keyword_workbench, instance, ("old", "sushi food"), age_s=40 * 86400)
    turn = Remember(keyword_workbench)
    told = turn.run(UiRememberParams(thought="I had sushi food last month."), instance=instance)
    asked = turn.run(UiRememberParams(thought="What sushi food did I have last month?"), instance=instance)
    bidden = turn.run(UiRememberParams(thought="Remind me of the sushi food from last month."), instance=instance)
    assert not any("time 'last month'" in n for n in told.notes), told.notes
    assert any(n.startswith("the question's time 'last month'") for n in asked.notes), asked.notes
    assert any(n.startswith("the message's time 'last month'") for n in bidden.notes), bidden.notes



def test_time_hints_that_do_not_parse_leave_retrieval_unrestricted(keyword_workbench, instance):
    add(keyword_workbench, instance, ("old", "sushi food"), age_s=90 * 86400)
    turn = Remember(keyword_workbench)

    def run(temporal):
        return turn.run(UiRememberParams(thought="sushi food", temporal=temporal, similarity_threshold=0.1),
                        instance=instance)

    def found(result):  # the old memory, of those retrieved (the turns' own questions are memories too)
        return [c.id for c in result.context if c.id == "old"]

    holidays = run("over the holidays")
    assert found(holidays) == ["old"]
    assert any(n.startswith("the time hint (temporal) 'over the holidays' could not be read as a time range")
               for n in holidays.notes)  # the page's field is "Time hint", the API's and MCP's `temporal`
    recent = run("recently")
    assert found(recent) == [] and any("the last 30 days" in n for n in recent.notes)
    assert found(run("last weekend")) == []
    with pytest.raises(InvalidInput, match="names no time"):
        run("banana")


# -- 14. tags filter retrieval when asked --------------------------------------------------------------

def test_a_turn_tags_filter_retrieval_only_when_asked(keyword_workbench, instance):
    add(keyword_workbench, instance, ("work", "budget meeting"), tags=["work"])
    add(keyword_workbench, instance, ("home", "budget meeting at home"), tags=["home"])
    turn = Remember(keyword_workbench)

    def ids(**kw):
        r = turn.run(UiRememberParams(thought="budget meeting", tags=["work"], similarity_threshold=0.1, **kw),
                     instance=instance)
        return {c.id for c in r.context if c.id in ("work", "home")}, r.notes

    assert ids()[0] == {"work", "home"}  # tags are stored with the turn, not a filter by default
    kept, notes = ids(filter_tags=True)
    assert kept == {"work"} and "retrieval restricted to memories tagged work" in notes
    with pytest.raises(ValueError, match="filter_tags needs at least one tag"):
        UiRememberParams(thought="x", filter_tags=True)


def test_the_cli_filters_by_tags_too(settings, workbench, instance, monkeypatch):
    from click.testing import CliRunner

    from core.cli import cli

    add(workbench, instance, ("work", "The budget meeting moved to Friday"), tags=["work"])
    add(workbench, instance, ("home", "The budget for the kitchen is tight"), tags=["home"])
    monkeypatch.setenv("DATA_DIR", str(settings.data_dir))
    args = ["--instance", instance, "remember", "What about the budget?", "--tag", "work", "--search-type",
            "vector"]
    done = CliRunner().invoke(cli, [*args, "--filter-tags"])
    assert done.exit_code == 0, done.output
    ids = {c["id"] for c in json.loads(done.stdout)["context"]}
    assert "work" in ids and "home" not in ids
    refused = subprocess.run([sys.executable, "-m", "core.cli", "remember", "hi", "--filter-tags"],
                             capture_output=True, text=True, check=False, timeout=60)
    assert refused.returncode == 2 and refused.stderr.strip().splitlines() == [
        ("error: invalid input — --filter-tags: filter_tags needs at least one tag: give tags, or leave "
         "filter_tags off")]  # the option typed, then the request's own words
