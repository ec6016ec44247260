"""Found on the dashboard: a JSONL line's JSON error said "at at the end of the line"; an evaluation set
without categories was scored under a category "all" beside "overall"."""

from __future__ import annotations

from core.importing import source
from core.tuning.datasets import UNCATEGORISED, load_dataset
from core.tuning.metrics import OVERALL, compute_metrics


def test_a_json_error_ending_in_at_says_it_once(tmp_path):
    broken = tmp_path / "broken.jsonl"
    broken.write_bytes(b'{"messages": [{"role": "user", "content": "half a line\n'
                       b'{"content": "tab\there"}\n{"content": "x"} "y"\n')
    problems = [(where, found.problem) for where, found in source.json_lines(broken)]
    assert problems == [
        ("line 1", "not valid JSON (Invalid control character at the end of the line)"),
        ("line 2", "not valid JSON (Invalid control character at character 17)"),
        ("line 3", "not valid JSON (Extra data at character 18)")]


def test_a_set_without_categories_is_scored_overall_only():
    ds = load_dataset(b'{"query": "dog?", "relevant": ["m1"]}\n{"query": "cat?", "relevant": ["m2"]}\n',
                      instance="inst")
    assert {q.category for q in ds.queries} == {UNCATEGORISED} and ds.categories == []
    table = compute_metrics({q.qid: q.relevant for q in ds.queries}, {"q1": ["m1"], "q2": ["m3", "m2"]},
                            {q.qid: q.category for q in ds.queries}, ["recall@1"])
    assert [(r.category, r.queries, r.values["recall@1"]) for r in table.rows] == [(OVERALL, 2, 0.5)]


def test_uncategorised_queries_beside_categorised_ones_read_as_such():
    ds = load_dataset(b'{"query": "dog?", "relevant": ["m1"], "category": "pets"}\n'
                      b'{"query": "cat?", "relevant": ["m2"]}\n', instance="inst")
    assert ds.categories == [UNCATEGORISED, "pets"]
    table = compute_metrics({q.qid: q.relevant for q in ds.queries}, {"q1": ["m1"], "q2": ["m2"]},
                            {q.qid: q.category for q in ds.queries}, ["recall@1"])
    assert [(r.category, r.queries) for r in table.rows] == [("pets", 1), (UNCATEGORISED, 1), (OVERALL, 2)]
    assert UNCATEGORISED == "(none)"
