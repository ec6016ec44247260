"""What the tuning tools say beside their figures: a JSONL set's repeated queries counted once and its queries
without relevant ids left out, each named (they were counted twice, or rejected the whole set); the
optimiser's verdict spelling out τ and rrf k (it read "X is better than X" when only τ differed); and what
the figures measure (the ranking, each metric), in the one text every front end shows."""

from __future__ import annotations

import json

import numpy as np
import pytest

from core.errors import InvalidInput
from core.models import PRESET_PROFILES, FusionProfile
from core.retrieval.profile_text import describe_profile, duration, named_profile, recency_label, tau_label
from core.tuning.datasets import (
    REPEATED_REASON,
    UNLABELLED_REASON,
    counted,
    load_dataset,
    load_jsonl,
    set_notes,
)
from core.tuning.measures import RANKING, definition, help_paragraphs
from core.tuning.metrics import compute_metrics
from core.tuning.verdict import paired_spread, verdict

DEFAULT = PRESET_PROFILES["balanced-default"]


def lines(*items: dict) -> str:
    return "".join(json.dumps(item) + "\n" for item in items)


def test_a_repeated_query_is_named_and_counted_once():
    ds = load_jsonl(lines({"query": "where did I park the car?", "relevant": ["m001"]},
                          {"query": "what food do I not eat", "relevant": ["m010", "m012"]},
                          {"query": "where  did I park the car? ", "relevant": ["m001"]}), instance="i")
    assert [q.query for q in ds.queries] == ["where did I park the car?", "what food do I not eat"]
    assert ds.repeated == {"where did I park the car?": 2} and ds.skipped == {REPEATED_REASON: 1}
    assert set_notes(ds) == [("1 query appears twice (whitespace and letter case aside): 'where did I park the "
                              "car?'; counted once.")]
    # Counted once in every mean: the repeated query weighs as much as the other, not twice as much.
    table = compute_metrics({q.qid: q.relevant for q in ds.queries}, {q.qid: [] for q in ds.queries},
                            {q.qid: q.category for q in ds.queries}, ["recall@1"])
    assert table.rows[-1].queries == 2


def test_a_repeated_query_keeps_the_relevant_ids_of_all_its_lines():
    ds = load_jsonl(lines({"query": "a", "relevant": ["m1"], "category": "x"},
                          {"query": "a", "relevant": ["m2", "m1"], "category": "y"},
                          {"query": "a", "relevant": ["m3"]}, {"query": "b", "relevant": ["m4"]},
                          {"query": "b", "relevant": ["m4"]}), instance="i")
    a = ds.queries[0]
    assert (a.relevant, a.category, a.qid) == (["m1", "m2", "m3"], "x", "q1")
    assert ds.repeated == {"a": 3, "b": 2}
    assert set_notes(ds) == [("2 queries appear more than once (whitespace and letter case aside): 'a' (3×), "
                              "'b' (2×); each counted once."),
                             ("1 repeated query is written with more than one category; it is counted in its "
                              "first line's: 'a' in 'x'.")]


def test_a_query_with_no_relevant_ids_is_left_out_with_a_note_not_the_whole_set_rejected():
    ds = load_jsonl(lines({"query": "where did I park the car?", "relevant": ["m001"]},
                          {"query": "what is the meaning of life", "relevant": [], "category": "facts"}),
                    instance="i")
    assert [q.query for q in ds.queries] == ["where did I park the car?"]
    assert ds.unlabelled == ["what is the meaning of life"] and ds.skipped == {UNLABELLED_REASON: 1}
    assert set_notes(ds) == [("1 query has no relevant ids: 'what is the meaning of life'; left out of the "
                              "scores.")]
    assert ds.left_out_queries == {UNLABELLED_REASON: ["what is the meaning of life"]}  # the texts it counts
    clean = load_jsonl(lines({"query": "q", "relevant": ["m1"]}), instance="i")
    assert set_notes(clean) == [] and clean.skipped == {}


def test_a_set_without_any_relevant_id_is_still_refused_and_a_missing_list_too():
    with pytest.raises(InvalidInput, match="nothing to score: none of its 2 queries has a relevant id"):
        load_jsonl(lines({"query": "a", "relevant": []}, {"query": "b", "relevant": []}), instance="i")
    with pytest.raises(InvalidInput, match="line 1: .*relevant"):
        load_jsonl(lines({"query": "a"}), instance="i")


def test_tau_reads_as_the_tune_page_writes_it():
    assert [tau_label(t) for t in (3600, 86400, 7 * 86400, 30 * 86400, 365 * 86400)] == \
        ["1 h", "1 d", "1 w", "30 d", "1 y"]
    assert (tau_label(5400), tau_label(14 * 86400), tau_label(12345)) == ("90 min", "2 w", "12,345 s")
    assert (tau_label(15_581.38), tau_label(2.5)) == ("15,581 s", "2.5 s")  # a τ made from a half-life


def test_recency_reads_as_a_half_life_in_its_best_unit_then_tau():
    """One reading of a profile's recency everywhere: half-life = τ · ln 2, three significant figures."""
    assert duration(89) == "89 s" and duration(90) == "1.5 min" and duration(3 * 3600) == "3 h"
    assert duration(47 * 3600) == "47 h" and duration(2 * 86400) == "2 d" and duration(400 * 86400) == "1.1 y"
    assert [recency_label(t) for t in (3600, 86400, 7 * 86400, 30 * 86400, 365 * 86400)] == [
        "half-life 41.6 min (τ 1 h)", "half-life 16.6 h (τ 1 d)", "half-life 4.85 d (τ 1 w)",
        "half-life 20.8 d (τ 30 d)", "half-life 253 d (τ 1 y)"]
    three_hours = 3 * 3600 / np.log(2)  # what the Tune page's half-life control makes of "3 hours"
    assert recency_label(three_hours) == "half-life 3 h (τ 15,581 s)"


def test_one_text_describes_a_profile_and_the_verdict_uses_it():
    assert describe_profile(DEFAULT) == ("semantic 0.60 / text 0.25 / recency 0.15 · linear, half-life 16.6 h "
                                         "(τ 1 d)")
    assert named_profile(DEFAULT) == f"balanced-default ({describe_profile(DEFAULT)})"
    rrf = FusionProfile(name="r", method="rrf", w_sem=0.5, w_text=0.5, w_rec=0.0, rrf_k=20)
    assert describe_profile(rrf) == "semantic 0.50 / text 0.50 / recency 0.00 · rrf, k 20"  # rrf reads no τ


def test_the_verdict_spells_out_tau_and_rrf_k_so_it_never_reads_x_beats_x():
    """The report's case: the best differs from balanced-default by τ alone (1 w against 1 d)."""
    week = DEFAULT.model_copy(update={"name": "tuned", "tau_s": 7 * 86400.0})
    spread = paired_spread(np.ones(20), np.zeros(20))
    said = verdict(spread, "recall@5", week, 1.0, DEFAULT, 0.45)
    assert said.startswith("Recommended: semantic 0.60 / text 0.25 / recency 0.15 · linear, half-life 4.85 d "
                           "(τ 1 w) is better than balanced-default (semantic 0.60 / text 0.25 / recency 0.15 · "
                           "linear, half-life 16.6 h (τ 1 d)) on these 20 queries: recall@5 1.000 against 0.450")
    rrf = FusionProfile(name="r", method="rrf", w_sem=0.5, w_text=0.5, w_rec=0.0, rrf_k=20)
    noise = paired_spread(np.r_[1.0, np.zeros(5)], np.zeros(6))
    said = verdict(noise, "recall@10", rrf, 0.5, DEFAULT, 0.4)
    assert "The best one found (semantic 0.50 / text 0.50 / recency 0.00 · rrf, k 20) scores recall@10" in said
    assert f"against 0.400 for {named_profile(DEFAULT)}: " in said
    assert said.startswith("No profile is reliably better than balanced-default on these 6 queries.")


def test_what_the_figures_measure_is_one_text():
    assert "before MemoryScope's fuse_rerank" in RANKING and "ui_remember" in RANKING
    assert "share of a query's relevant ids" in definition("recall@5") and "not the hit rate" in definition("recall@5")
    assert "binary gains" in definition("ndcg@10")
    assert "cut at its largest k" in definition("mrr@25") == definition("mrr")
    assert definition("precision@3") == ""
    assert help_paragraphs()[0].startswith(f"Figures are scored on {RANKING}")


def test_queries_differing_only_in_letter_case_are_one_query_and_a_second_category_is_named():
    """The tuning report's L5: "Who owns …" and "who owns …" weigh once, and the category kept is said."""
    ds = load_jsonl(lines({"query": "Who owns the billing service", "relevant": ["t1"], "category": "multi"},
                          {"query": "who owns the billing service", "relevant": ["t2"], "category": "single"}),
                    instance="i")
    assert len(ds.queries) == 1 and ds.queries[0].relevant == ["t1", "t2"] and ds.queries[0].category == "multi"
    assert ds.repeated == {"Who owns the billing service": 2}
    assert ds.recategorised == {"Who owns the billing service": "multi"}
    assert set_notes(ds)[1] == ("1 repeated query is written with more than one category; it is counted in its "
                                "first line's: 'Who owns the billing service' in 'multi'.")


def test_a_json_list_of_labelled_queries_is_read_as_its_jsonl_would_be():
    """The tuning report's L4: a JSON list of {query, relevant} objects is the same set as its JSONL."""
    items = [{"query": "who owns billing", "relevant": ["t1"]}, {"query": "redis evictions", "relevant": ["t2"],
                                                                "category": "ops"}]
    listed = load_dataset(json.dumps(items).encode(), instance="i", name="set")
    assert listed.model_dump() == load_dataset(lines(*items).encode(), instance="i", name="set").model_dump()
    with pytest.raises(InvalidInput, match=r"item 2: .*relevant: Field required"):
        load_dataset(json.dumps([items[0], {"query": "x"}]).encode(), instance="i")
    with pytest.raises(InvalidInput, match=r"neither LoCoMo samples .* nor labelled queries .*write one such "
                                           r"object per line \(JSONL\), or a JSON list of them"):
        load_dataset(b'[{"question": "x"}]', instance="i")


@pytest.mark.parametrize(("n", "reason", "said"), [
    (1, UNLABELLED_REASON, "1 query with no relevant ids"),
    (2, UNLABELLED_REASON, "2 queries with no relevant ids"),
    (1, REPEATED_REASON, "1 repeated query (counted once)"),
    (1, "relevant ids not in the instance (dropped)", "1 relevant id not in the instance (dropped)"),
    (1, "queries whose relevant ids are all unknown", "1 query whose relevant ids are all unknown"),
    (1, "questions without usable evidence", "1 question without usable evidence"),
])
def test_each_reason_a_set_left_out_is_counted_in_good_grammar(n, reason, said):
    """The tuning report's L3: "1 queries", "1 relevant ids … (dropped)" read right."""
    assert counted(n, reason) == said


def test_one_unknown_id_is_said_in_the_singular():
    """The tuning report's L3: "1 id is not in this instance: t27-1. It was left out", not "They were"."""
    from core.usecases.tuning import unknown_ids_note

    assert unknown_ids_note(["t27-1"]) == "1 id is not in this instance: t27-1. It was left out of the scores."
    assert unknown_ids_note(["a", "b"]).endswith("They were left out of the scores.")
