"""`workbench eval` and `workbench profiles save` as a user tuning retrieval reads them (the tuning report's
D2–D8): what the figures score and how each metric is defined, a labelled set's repeated queries and queries
without relevant ids named (not counted twice, not rejecting the set), `--save-as` that saved nothing
exiting 1, and saving over a profile saying what it replaced and where it is active."""

from __future__ import annotations

import json
import uuid

import pytest

from core import usecases as uc
from core.index.memory_index import MemoryIndex
from tests.integration.test_eval_optimise import BETTER_WITH_RECENCY, demo_records, six_query_jsonl
from tests.support.cli import in_process_cli

RANKING = "scored on the fusion ranking that ui_remember (chat) uses, before MemoryScope's fuse_rerank"


@pytest.fixture
def cli(settings, workbench, instance, monkeypatch):
    MemoryIndex(workbench.pool(), workbench.embedder).add(demo_records(instance))
    return in_process_cli(settings, workbench, monkeypatch)


def test_help_says_what_the_figures_score_and_how_each_metric_is_defined(cli):
    code, out, _ = cli("eval", "--help")
    text = " ".join(out.split())
    assert code == 0 and f"Figures are {RANKING}" in text
    assert "recall@k: the share of a query's relevant ids found in its top k" in text and "not the hit rate" in text
    assert "nDCG@k: binary gains" in text
    assert "The table's MRR is cut at its largest k" in text and '"mrr" without @k is not cut' in text


def test_a_repeated_query_and_one_without_relevant_ids_are_named_not_counted_twice_or_refused(cli, workbench,
                                                                                              instance, tmp_path):
    data, report = tmp_path / "set.jsonl", tmp_path / "r.json"
    queries = [json.loads(line) for line in six_query_jsonl().splitlines()]
    data.write_text("".join(json.dumps(q) + "\n" for q in [*queries, queries[0],
                                                            {"query": "what is the meaning of life", "relevant": []}]))
    code, out, err = cli("eval", "--data", str(data), "--instance", instance, "--json", str(report))
    assert code == 0, err
    lines = out.splitlines()
    assert ": 6 queries," in lines[0] and lines[1] == (
        "scored on the fusion ranking that ui_remember (chat) uses, before MemoryScope's fuse_rerank (its type "
        "ratios, time ratio and score threshold change no figure)")
    assert (f"1 query appears twice (whitespace and letter case aside): {queries[0]['query']!r}; counted once."
            in lines)
    assert "1 query has no relevant ids: 'what is the meaning of life'; left out of the scores." in lines
    assert "left out: 1 query with no relevant ids; 1 repeated query (counted once)" in out
    written = json.loads(report.read_text())
    assert written["evaluation"]["ranking"].startswith("the fusion ranking that ui_remember (chat) uses")
    assert written["evaluation"]["table"]["rows"][-1]["queries"] == 6
    assert "not the hit rate" in written["definitions"]["recall@1"] and set(written["definitions"]) == set(
        written["evaluation"]["table"]["metrics"])
    assert len(written["set_notes"]) == 2
    # The same figures as the set without the repeat: the repeat is not weighed twice.
    clean = tmp_path / "clean.jsonl"
    clean.write_text(six_query_jsonl())
    same = uc.tune(workbench, uc.TuneRequest(instance=instance, source=clean)).evaluation
    assert written["evaluation"]["table"]["rows"][-1]["values"] == same.table.rows[-1].values


def test_save_as_that_saves_nothing_exits_1_with_one_line_on_stderr(cli, instance, tmp_path):
    data = tmp_path / "six.jsonl"
    data.write_text(six_query_jsonl())
    name = f"x-{uuid.uuid4().hex[:8]}"
    code, out, err = cli("eval", "--data", str(data), "--instance", instance, "--optimise", "--save-as", name)
    assert code == 1 and err.splitlines() == [f"not saved as {name!r}: only a recommended profile is saved"]
    assert "No profile is reliably better than balanced-default on these 6 queries" in out
    code, _, err = cli("profiles", "activate", name, "--instance", instance)
    assert code == 2 and f"no fusion profile named {name!r}" in err  # indeed not there


def test_saving_over_a_profile_says_what_it_replaced_and_where_it_is_active(cli, instance, tmp_path):
    name = f"recent-{uuid.uuid4().hex[:8]}"
    code, _, err = cli("--instance", instance, "profiles", "save", name, "--w-sem", "0.6", "--w-text", "0.25",
                       "--w-rec", "0.15", "--tau", "604800", "--activate")
    assert code == 0 and err == ""  # a new name: nothing replaced
    code, out, err = cli("--instance", instance, "profiles", "save", name, "--w-sem", "0.1", "--w-text", "0.1",
                         "--w-rec", "0.8", "--tau", "3600")
    assert code == 0 and json.loads(out)["w_rec"] == 0.8
    assert err.splitlines() == [(
        f"note: replaced {name!r} (was semantic 0.60 / text 0.25 / recency 0.15 · linear, half-life 4.85 d "
        f"(τ 1 w)); it is active in instances: {instance}, "
        "whose chat retrieves with the new weights at once, and undo cannot bring the old ones back (save them "
        "again to restore them).")]
    # The optimiser's --save-as says so too when it replaces one.
    data = tmp_path / "better.jsonl"
    data.write_text("".join(json.dumps({"query": q, "relevant": [r]}) + "\n" for q, r in BETTER_WITH_RECENCY))
    code, out, err = cli("eval", "--data", str(data), "--instance", instance, "--profile", "balanced-default",
                         "--optimise", "--metric", "recall@1", "--save-as", name)
    assert code == 0, err
    assert (f"note: replaced {name!r} (was semantic 0.10 / text 0.10 / recency 0.80 · linear, half-life 41.6 min "
            f"(τ 1 h)); it is active in instances: {instance}") in out


def test_profiles_and_eval_read_a_profile_one_way(cli, instance, tmp_path):
    """One reading of a profile (weights, method, recency as a half-life then τ) in `profiles list|save|
    activate` and in `eval`'s heading and optimiser line, as on the Tune page (τ in seconds before, in one
    place, half-life in hours or days in others)."""
    name = f"week-{uuid.uuid4().hex[:8]}"
    week = "semantic 0.60 / text 0.25 / recency 0.15 · linear, half-life 4.85 d (τ 1 w)"
    code, out, err = cli("--instance", instance, "profiles", "save", name, "--w-sem", "0.6", "--w-text", "0.25",
                         "--w-rec", "0.15", "--tau", "604800")
    assert code == 0, err
    saved = json.loads(out)
    assert saved["described"] == week == uc.describe_profile(uc.FusionProfile(**{
        k: v for k, v in saved.items() if k != "described"}))
    code, out, err = cli("--instance", instance, "profiles", "activate", name)
    assert code == 0 and json.loads(out)["described"] == week
    code, out, err = cli("--instance", instance, "profiles", "list")
    listed = {p["name"]: p["described"] for p in json.loads(out)["profiles"]}
    assert listed[name] == week
    assert listed["balanced-default"] == ("semantic 0.60 / text 0.25 / recency 0.15 · linear, half-life 16.6 h "
                                          "(τ 1 d)")

    data = tmp_path / "six.jsonl"
    data.write_text(six_query_jsonl())
    code, out, err = cli("eval", "--data", str(data), "--instance", instance, "--profile", "balanced-default",
                         "--optimise")
    assert code == 0, err
    assert out.splitlines()[0].startswith(f"six (jsonl), profile balanced-default ({listed['balanced-default']}): ")
    (best,) = [line for line in out.splitlines() if line.startswith("optimiser: ")]
    assert "; best semantic " in best and ("half-life " in best or "· rrf, k " in best) and "tau_s=" not in best


def test_eval_shows_each_leg_alone_beside_the_profile_as_the_tune_page_does(cli, instance, tmp_path):
    """The tuning report's M5: `--legs` gives the text leg alone and the dense leg alone, and the one summary
    line the page shows."""
    data = tmp_path / "set.jsonl"
    data.write_text(six_query_jsonl())
    code, out, err = cli("eval", "--data", str(data), "--instance", instance, "--k", "1,10", "--legs")
    assert code == 0, err
    assert "set (jsonl), text leg alone (BM25): 6 queries" in out
    assert "set (jsonl), dense leg alone (cosine): 6 queries" in out
    summary = next(line for line in out.splitlines() if line.startswith("Overall recall@10: balanced-default"))
    assert "text leg alone (BM25)" in summary and "dense leg alone (cosine)" in summary
    assert "handed to chat: floor" in summary


def test_a_cut_off_past_the_search_limit_names_k_and_one_past_the_pool_is_noted(cli, instance, tmp_path):
    """The tuning report's L1: the error names --k and its limit, not an internal field; a cut-off deeper
    than any ranking went says so beside the figures."""
    data = tmp_path / "set.jsonl"
    data.write_text(six_query_jsonl())
    code, _, err = cli("eval", "--data", str(data), "--instance", instance, "--k", "1,5,100000")
    assert code == 2 and "--k" in err and "100000 is more than 1,000" in err and "top_k" not in err
    code, out, err = cli("eval", "--data", str(data), "--instance", instance, "--k", "1,300", "--pool-size", "2")
    assert code == 0, err
    note = next(line for line in out.splitlines() if line.startswith("note: Cut-off 300 goes deeper"))
    assert "the pool size 2 (candidates from each leg) limits them: raise it (--pool-size)" in note


def test_a_profile_name_differing_from_a_preset_only_in_case_is_refused_and_show_prints_one(cli, instance):
    """The tuning report's L6 and L9."""
    code, _, err = cli("profiles", "save", "Balanced-Default", "--w-sem", "0.5", "--w-text", "0.3", "--w-rec", "0.2")
    assert code != 0 and "differs from the shipped preset 'balanced-default' only in letter case" in err
    name = f"mine-{uuid.uuid4().hex[:6]}"
    code, _, err = cli("profiles", "save", name, "--w-sem", "0.5", "--w-text", "0.3", "--w-rec", "0.2")
    assert code == 0, err
    code, _, err = cli("profiles", "save", name.upper(), "--w-sem", "0.5", "--w-text", "0.3", "--w-rec", "0.2")
    assert code != 0 and f"differs from the saved profile {name!r} only in letter case" in err
    code, out, err = cli("profiles", "show", name)
    shown = json.loads(out)
    assert code == 0 and shown["name"] == name and shown["w_text"] == 0.3 and shown["preset"] is False
    assert shown["described"].startswith("semantic 0.50 / text 0.30 / recency 0.20")
    code, _, err = cli("profiles", "show", "no-such-profile")
    assert code != 0 and "no fusion profile named 'no-such-profile'; known profiles: balanced-default" in err
