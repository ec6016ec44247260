"""The Tune page says what its figures measure and what a set held that is not scored as written (the tuning
report's D2, D5–D7, the metric definitions), the surface opens on each run's best, and saving over a profile
says beforehand what it replaces and where it is active (D3)."""

from __future__ import annotations

import json
import uuid

from core import usecases as uc
from core.retrieval.profiles import ProfileStore
from dashboard.tune_optimise import surface_label
from tests.app.conftest import open_tab
from tests.app.test_tune_page import _optimise_jsonl, app  # noqa: F401  (the page's fixture)
from tests.integration.test_eval_optimise import BETTER_WITH_RECENCY, six_query_jsonl

RANKING = "the fusion ranking that ui_remember (chat) uses, before MemoryScope's fuse_rerank"


def _jsonl(items) -> str:
    return "".join(json.dumps(item) + "\n" for item in items)


def test_the_evaluation_names_repeats_and_unlabelled_queries_and_says_what_it_scores(app, tmp_path):  # noqa: F811
    at = open_tab(app, "Evaluate & optimise")
    queries = [json.loads(line) for line in six_query_jsonl().splitlines()]
    path = tmp_path / "set.jsonl"
    path.write_text(_jsonl([*queries, queries[1], {"query": "what is the meaning of life", "relevant": []}]))
    at.radio(key="tune_eval_source").set_value("Path on the server").run()
    at.text_input(key="tune_eval_path").set_value(str(path)).run()
    assert not at.exception and not at.error, [e.value for e in at.error]  # the set is not refused
    assert any("6 queries without categories" in c.value for c in at.caption), [c.value for c in at.caption]
    assert [w.value for w in at.warning] == [
        f"1 query appears twice (whitespace and letter case aside): {queries[1]['query']!r}; counted once.",
        "1 query has no relevant ids: 'what is the meaning of life'; left out of the scores."]
    (scored,) = [c for c in at.caption if c.value.startswith("Scored on")]
    assert RANKING in scored.value and "not the hit rate" in scored.proto.help
    maximise = at.selectbox(key="tune_eval_opt_metric")
    assert RANKING in maximise.help and "nDCG@k: binary gains" in maximise.help and "MRR@k" in maximise.help
    at.button(key="tune_eval_run").click().run()
    assert not at.exception and not at.error
    metrics = next(d for d in at.dataframe if "category" in d.value.columns)
    assert set(metrics.value.query("category == 'overall'")["queries"]) == {6}
    assert "not the hit rate" in at.selectbox(key="tune_eval_chart_metric").help


def test_the_surface_opens_on_each_runs_best(app, tmp_path):  # noqa: F811
    """The picker kept the previous run's τ slice, where the new best's star is not drawn."""
    at = app
    _optimise_jsonl(at, tmp_path, _jsonl({"query": q, "relevant": [r]} for q, r in BETTER_WITH_RECENCY),
                    "recall@1")
    first = at.session_state["tune_eval_opt"][1].best
    assert at.selectbox(key="tune_eval_surface").value == slice_of(first)
    _optimise_jsonl(at, tmp_path, six_query_jsonl(), "recall@10")
    second = at.session_state["tune_eval_opt"][1].best
    assert slice_of(second) == "linear, half-life 16.6 h (τ 1 d)" != slice_of(first)  # another slice: the test shows something
    assert at.selectbox(key="tune_eval_surface").value == slice_of(second)


def test_save_as_says_beforehand_when_its_name_is_taken(app, tmp_path, workbench):  # noqa: F811
    at = app
    _optimise_jsonl(at, tmp_path, _jsonl({"query": q, "relevant": [r]} for q, r in BETTER_WITH_RECENCY),
                    "recall@1")
    taken = f"taken-{uuid.uuid4().hex[:6]}"
    uc.save_profile(workbench, uc.SaveProfile(profile=uc.FusionProfile(name=taken)))
    at.text_input(key="tune_eval_save_name").set_value(taken).run()
    assert any(w.value.replace("\\", "").startswith(
        f"Saving replaces '{taken}' (semantic 0.60 / text 0.25 / recency 0.15 · linear, half-life 16.6 h (τ 1 d)).")
        for w in at.warning), [w.value for w in at.warning]
    at.button(key="tune_eval_save").click().run()
    assert any(f"It replaced '{taken}'" in s.value.replace("\\", "") for s in at.success), \
        [s.value for s in at.success]


def slice_of(best: uc.FusionProfile) -> str:
    return surface_label(best.method, best.tau_s if best.method == "linear" else best.rrf_k)


def test_saving_over_a_profile_in_use_says_so_before_and_after(app, instance, workbench):  # noqa: F811
    name = f"mine-{uuid.uuid4().hex[:6]}"
    uc.save_profile(workbench, uc.SaveProfile(instance=instance, activate=True, profile=uc.FusionProfile(
        name=name, w_sem=0.6, w_text=0.25, w_rec=0.15, tau_s=604800.0)))
    at = open_tab(app, "Profiles")
    at.text_input(key="tune_prof_name").set_value(name).run()
    assert [w.value.replace("\\", "") for w in at.warning] == [(  # as plain text: Markdown escaped
        f"Saving replaces '{name}' (semantic 0.60 / text 0.25 / recency 0.15 · linear, half-life 4.85 d (τ 1 w)); "
        "it is active in instances: "
        f"{instance}, whose chat retrieves with the new weights at once, and undo cannot bring the old ones "
        "back (save under another name to keep them).")]
    at.button(key="tune_prof_save").click().run()
    assert not at.exception
    (done,) = [s.value for s in at.success]
    assert done.startswith(f"Saved the sliders as {name}. It replaced '{name}' (was semantic 0.60 / text 0.25 / "
                           "recency 0.15 · linear, half-life 4.85 d (τ 1 w))")
    assert ProfileStore(workbench.pool()).get(name).tau_s != 604800.0


def test_a_query_whose_ids_are_all_unknown_is_named(app, tmp_path):  # noqa: F811
    """The user pass U2's finding 5: the query left out is named, beside the ids."""
    queries = [json.loads(line) for line in six_query_jsonl().splitlines()]
    path = tmp_path / "set.jsonl"
    path.write_text(_jsonl([*queries, {"query": "where is the deleted note", "relevant": ["gone-1"]}]))
    at = open_tab(app, "Evaluate & optimise")
    at.radio(key="tune_eval_source").set_value("Path on the server").run()
    at.text_input(key="tune_eval_path").set_value(str(path)).run()
    assert [w.value for w in at.warning] == [
        uc.unknown_ids_note(["gone-1"]),
        "1 query has no relevant id in the instance: 'where is the deleted note'; left out of the scores."]
