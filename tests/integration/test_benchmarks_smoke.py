"""Smoke runs of the benchmarks (`--small`) on the session's servers: they run end to end and write the
JSON the issue fixes. Figures are not asserted: benchmarks measure, tests do not time."""

from __future__ import annotations

import importlib.util
import json
import uuid
from pathlib import Path

import pytest

from benchmarks import (
    corrections,
    dashboard_elements,
    dashboard_scale,
    documents,
    floors,
    live_adds,
    locomo,
    long_memories,
    many_instances,
    report,
    search_bounds,
    speed,
)
from benchmarks.browser import CHROMIUM

LOCOMO_KEYS = {"overall", "by_category", "baselines", "latency_ms"}
RECALLS = {"R@1", "R@5", "R@10", "R@25"}


def tiny_locomo(sample_id: str) -> dict:
    """A LoCoMo-shaped sample with the format's pitfalls: an extra date key without a session, a
    malformed evidence id, an integer answer, an adversarial question, an image query field."""
    turns = [("Ana", "I adopted a puppy named Miso last weekend!"), ("Ben", "Cute! What breed is Miso?"),
             ("Ana", "A shiba inu. She loves the park by the river."), ("Ben", "I started pottery classes."),
             ("Ana", "Pottery sounds relaxing. Where are the classes?"), ("Ben", "At the studio on Elm street.")]
    later = [("Ben", "My first bowl came out of the kiln today."), ("Ana", "Miso chewed my running shoes."),
             ("Ben", "Ha! Is she going to puppy school?"), ("Ana", "Yes, every Saturday morning.")]

    def session(n: int, rows) -> list[dict]:
        out = []
        for i, (speaker, text) in enumerate(rows, start=1):
            turn = {"speaker": speaker, "dia_id": f"D{n}:{i}", "text": text}
            if i == 3:
                turn |= {"img_url": ["x.jpg"], "blip_caption": "a photo of a dog in a park", "query": "shiba"}
            out.append(turn)
        return out

    return {
        "sample_id": sample_id,
        "conversation": {"speaker_a": "Ana", "speaker_b": "Ben", "session_1": session(1, turns),
                         "session_1_date_time": "1:56 pm on 8 May, 2023", "session_2": session(2, later),
                         "session_2_date_time": "10:00 am on 20 May, 2023",
                         "session_3_date_time": "9:00 am on 1 June, 2023"},
        "qa": [
            {"question": "What breed is Ana's puppy?", "answer": "shiba inu", "evidence": ["D1:3"], "category": 4},
            {"question": "When did Ana adopt Miso?", "answer": "the weekend before 8 May 2023",
             "evidence": ["D1:1"], "category": 2},
            {"question": "What hobbies does Ben have?", "answer": "pottery", "evidence": ["D1:4; D2:1"],
             "category": 1},
            {"question": "Would Miso like a dog park?", "answer": "likely yes", "evidence": ["D:1:3"],
             "category": 3},
            {"question": "How many classes a week?", "answer": 1, "evidence": ["D2:4"], "category": 4},
            {"question": "What did Ben bake?", "adversarial_answer": "bread", "evidence": [], "category": 5},
        ],
    }


@pytest.fixture
def locomo_file(tmp_path):
    path = tmp_path / "tiny_locomo.json"
    tag = uuid.uuid4().hex[:8]  # fresh conversations, so this run loads its own instances
    path.write_text(json.dumps([tiny_locomo(f"tiny-a-{tag}"), tiny_locomo(f"tiny-b-{tag}")]))
    return path


def test_locomo_small_writes_the_issue_json(locomo_file, data_dir, tmp_path):
    out = tmp_path / "locomo.json"
    assert locomo.main(["--data", str(locomo_file), "--small", "--json", str(out), "--data-dir", str(data_dir)]) == 0
    result = json.loads(out.read_text())
    assert LOCOMO_KEYS <= set(result)
    assert RECALLS <= set(result["overall"])
    assert set(result["by_category"]) == {"1", "2", "3", "4"}  # category 5 left out
    assert {"bm25", "dense", "dragon"} <= set(result["baselines"])
    assert RECALLS <= set(result["baselines"]["bm25"]) and RECALLS <= set(result["baselines"]["dense"])
    assert {"p50", "p95"} <= set(result["latency_ms"])
    assert all(0 <= result["overall"][k] <= 1 for k in RECALLS)
    assert result["overall"]["R@25"] == 1.0  # 10 turns a conversation: every evidence turn is in the top 25


def test_locomo_without_its_file_says_where_to_get_it(tmp_path, capsys):
    assert locomo.main(["--data", str(tmp_path / "locomo10.json")]) == 2
    assert "snap-research/LoCoMo" in capsys.readouterr().err


def test_speed_small_writes_the_issue_json(data_dir, tmp_path):
    out = tmp_path / "speed.json"
    result = speed.run(2_000, small=True, peer=False, data_dir=str(data_dir), prefix=f"sm-{uuid.uuid4().hex[:6]}")
    out.write_text(json.dumps(result))
    assert result["memories"] == 2_000
    assert result["ingest_per_s"] > 0 and result["ingest_context_per_s"] > 0
    assert result["ingest_cpu"]["cpu_s"] > 0 and result["ingest_cpu"]["ceiling_per_s"] > 0
    assert {"p50", "p95", "p99"} <= set(result["hybrid_ms"])
    assert "p50" in result["turn_ms"] and result["peak_rss_mb"] > 0
    assert result["feedback_records"] == 200


def test_long_memories_small_measures_each_leg_and_finds_the_documents(data_dir):
    result = long_memories.run(500, 20, str(data_dir), instance=f"long-{uuid.uuid4().hex[:6]}")
    assert result["memories"] == 500 and result["ingest_per_s"] > 0 and result["postings_per_memory"] > 50
    assert result["top_k"] == 5  # timed as the chat benchmark's searches, with the top 10 beside it
    for timed in ("hybrid", "hybrid_top10"):
        assert {"p50", "p95", "p99"} <= set(result[f"{timed}_ms"]) and {"embed", "sql", "rank"} <= set(
            result[f"{timed}_parts_p50_ms"])
    assert "p50" in result["text_leg_ms"] and "p50" in result["vector_leg_ms"]
    assert result["recall_at_10"] >= 0.5  # each question names ten of its document's subject words


def test_documents_scores_each_leg_on_package_descriptions(data_dir, tmp_path):
    subjects = ["compression library", "font family", "revision control", "image decoder", "mail transfer agent",
                "spell checker", "audio mixer", "disk partition editor"]
    status = tmp_path / "status"
    status.write_text("\n\n".join(
        f"Package: pkg-{i}\nStatus: install ok installed\nDescription: {s} for the desktop\n "
        + f"This {s} is one of several {s} tools; it handles the {s} work of a system.\n .\n "
        + " ".join(f"word{i}x{k}" for k in range(12)) for i, s in enumerate(subjects)) + "\n")
    status.write_text(status.read_text() + "\nPackage: short\nDescription: too short\n only a few words\n")
    result = documents.run(status, str(data_dir), instance=f"docs-{uuid.uuid4().hex[:6]}")
    assert result["documents"] == len(subjects)  # the short one is left out
    for part in ("hybrid", "text_leg", "vector_leg", "hybrid_as_shipped", "bm25"):
        assert set(result[part]) == {"R@1", "R@5", "R@10", "MRR@10"}
    assert result["hybrid"]["R@1"] == 1.0 and result["bm25"]["R@1"] == 1.0
    assert documents.main(["--status", str(tmp_path / "missing")]) == 2


def test_floors_small_times_each_part_of_a_load_and_of_a_query(data_dir):
    result = floors.run(1_000, str(data_dir), prefix=f"floor-{uuid.uuid4().hex[:6]}")
    assert set(result["ingest_parts_s"]) == {"embed", "rows", "hnsw", "postings_index"}
    assert all(v > 0 for v in result["ingest_parts_per_s"].values())
    assert result["postings_per_memory"] > 10  # the rows part writes their postings as a load does
    assert set(result["query_parts_p50_ms"]) == {"round_trip", "embed", "hnsw_scan", "posting_lists"}


def test_live_adds_small_counts_each_writers_adds(data_dir):
    result = live_adds.run(300, 2, 1.0, str(data_dir), prefix=f"live-{uuid.uuid4().hex[:6]}", with_floor=True)
    assert result["writers"] == 2 and result["adds"] > 0 and result["adds_per_s"] > 0
    assert result["one_writer"]["writers"] == 1 and {"p50", "p95"} <= set(result["add_ms"])
    assert result["cpu"]["per_memory_ms"] > 0 and result["one_writer"]["cpu"]["ceiling_per_s"] > 0
    assert all(part["adds"] > 0 for part in result["floor"].values()) and len(result["floor"]) == 3


@pytest.mark.e2e
@pytest.mark.bench_smoke  # `make bench-smoke`: minutes in Chromium, out of `make test`
def test_dashboard_elements_small_times_each_element_beside_the_floor(tmp_path):
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is missing: install Debian's chromium (make browser; CI does)")
    out = tmp_path / "elements.json"
    assert dashboard_elements.main(["--small", "--json", str(out)]) == 0
    variants = json.loads(out.read_text())["variants"]
    assert {"floor", "table of two rows", "sidebar and navigation"} <= set(variants)
    assert all(len(v["times_ms"]) == 1 and v["median_ms"] > 0 for v in variants.values())
    assert variants["floor"]["added_ms"] == 0


@pytest.mark.e2e
@pytest.mark.bench_smoke  # `make bench-smoke`: minutes in Chromium, out of `make test`
def test_dashboard_scale_small_opens_every_page_in_chromium(data_dir, tmp_path):
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is missing: install Debian's chromium (make browser; CI does)")
    out = tmp_path / "dashboard.json"
    assert dashboard_scale.main(["--small", "--data-dir", str(data_dir), "--json", str(out)]) == 0
    result = json.loads(out.read_text())
    assert result["memories"] == 2_000 and result["answers"] == 200 and result["runs"] == 1
    assert set(result["pages"]) == {"Overview", "Chat", "Past tasks", "Memory explorer", "Import",
                                    "Tune retrieval", "Feedback", "API keys"}
    assert not any(page["exception"] for page in result["pages"].values())
    assert all(len(page["runs_ms"]) == 1 and page["median_ms"] > 0 and page["empty_cache_ms"] > 0
               and 0 < page["script_median_ms"] < page["median_ms"] for page in result["pages"].values())
    assert result["floor"]["median_ms"] > 0 and result["slowest"]["page"] in result["pages"]
    in_app = result["in_app"]  # each page reached again by a click in the sidebar of one open tab
    assert set(in_app["pages"]) == set(result["pages"])
    assert all(len(page["runs_ms"]) == 1 and page["median_ms"] > 0 and not page["exception"]
               and "not_idle" not in page for page in in_app["pages"].values())
    assert len(in_app["floor"]["runs_ms"]) == 2 and in_app["slowest"]["page"] in in_app["pages"]


def test_search_bounds_small_times_each_variant_beside_mem0(tmp_path):
    if importlib.util.find_spec("mem0") is None:  # not imported here: mem0 reads its telemetry setting then
        pytest.skip("mem0 is not installed; it comes with the bench extra: pip install -e '.[bench]'")
    out = tmp_path / "bounds.json"
    assert search_bounds.main(["--small", "--json", str(out)]) == 0
    variants = json.loads(out.read_text())["variants"]
    assert set(variants) == {*search_bounds.VARIANTS, "mem0"} and variants["mem0"]["p50_over_mem0"] == 1.0
    assert all(v["p50"] > 0 and v["p95"] >= v["p50"] for v in variants.values())


def test_report_fills_the_readme_between_its_markers(locomo_file, data_dir, tmp_path):
    results = tmp_path / "results"
    results.mkdir()
    locomo.main(["--data", str(locomo_file), "--small", "--json", str(results / "locomo.json"),
                 "--data-dir", str(data_dir)])
    (results / "speed-2000.json").write_text(json.dumps({
        "memories": 2000, "ingest_per_s": 1.0, "ingest_context_per_s": 1.0, "turn_ms": {"p50": 1.0},
        "hybrid_ms": {"p50": 1.0, "p95": 2.0, "p99": 3.0}, "feedback_ms": {"p50": 1.0}, "peak_rss_mb": 1.0,
        "peer": {"name": "mem0", "search_ms": {"p50": 10.0}, "ours_in_turn_ms": {"p50": 1.0},
                 "p50_ratio_ours_over_peer": 0.1,
                 "times_faster": 10.0}, "machine": {"cpu": "x", "cores": 2, "ram_gb": 1, "python": "3",
                                                    "os": "y", "date": "z"}}))
    readme = tmp_path / "README.md"
    readme.write_text("# Title\n\nIntro.\n\n## Benchmarks\n\n<!-- bench:start -->old<!-- bench:end -->\n\n## Next\n")
    args = ["--readme", str(readme), "--results", str(results)]
    assert report.main([*args, "--check"]) == 1
    assert report.main(args) == 0
    text = readme.read_text()
    assert text.startswith("# Title\n\nIntro.\n\n## Benchmarks\n\n<!-- bench:start -->") and "## Next" in text
    assert "BM25 alone" in text and "DRAGON" in text and "| 2,000 |" in text and ">old<" not in text
    assert "| 10.0 / 1.0 | 0.10 (ours 10.0× faster) |" in text
    assert report.main([*args, "--check"]) == 0


def test_corrections_scores_each_correction_by_the_fact_it_names(workbench, instance):
    from datetime import UTC, datetime, timedelta

    from core import usecases as uc
    from tests.support.clock import Clock

    clock = Clock(datetime.now(UTC) - timedelta(hours=1))
    for chain, text in (("a", "Got it. " + corrections.TOPICS[2][1][0]), ("b", "When is the race?"),
                        ("b", "Actually, the race is on 25 May."), ("b", "That's not right, Nara is on the Thursday.")):
        clock.advance(30)
        uc.remember(workbench, uc.UiRememberParams(thought=text, chain_id=chain, instance=instance), clock=clock)
    result = corrections.score(workbench, instance)
    assert {k: result[k] for k in ("corrections", "right", "wrong", "missed", "rightly none")} == {
        "corrections": 2, "right": 1, "wrong": 0, "missed": 0, "rightly none": 1}


def test_corrections_scores_the_supersession_cases(workbench, instance):
    """The cases of tests/data/supersessions.jsonl, each formed in an instance of its own: a comparison with
    the user supersedes nothing, a contrast that names the old fact supersedes it."""
    cases = [c for c in corrections.load_cases() if c["later"].startswith(("Tomás had", "Update: actually"))]
    result = corrections.score_cases(workbench, cases, prefix=instance)
    assert {k: result[k] for k in ("cases", "right", "wrong", "missed", "rightly none")} == {
        "cases": 2, "right": 1, "wrong": 0, "missed": 0, "rightly none": 1}


def test_many_instances_small_measures_each_part_among_its_instances(data_dir):
    result = many_instances.run(12, 3, str(data_dir), prefix=f"many-{uuid.uuid4().hex[:6]}", seconds=0.5,
                                searches=60)
    assert result["build"]["instances_made"] == 12 and result["build"]["memories_loaded"] == 36
    assert set(result["repeated_calls"]) == {"stored_counts", "memory_browse", "remember", "add_memory",
                                             "superseded_memories"}
    assert all(len(c["ms"]) == 14 and 1 <= c["max_at_call"] <= 14 for c in result["repeated_calls"].values())
    rotating = result["rotating"]
    assert [r["instances"] for r in rotating["with_shared"]] == [r["instances"] for r in rotating["without_shared"]] == [1, 12]
    assert all({"p50", "p95"} <= set(r) for r in [*rotating["with_shared"], rotating["shared_instance_alone"]])
    assert result["memory"]["search_connections"] and result["memory"]["fresh_connection"]["backend_mb"] > 0
    assert all(c["searches"] > 0 and c["cpu"]["per_search_ms"] > 0
               for c in result["concurrent"]["with_shared"] + result["concurrent"]["without_shared"])
    assert result["planning"]["with_shared"]["partitions"] == 2 and result["planning"]["without_shared"]["partitions"] == 1
    assert all(p["planning_ms"] > 0 and p["prepared_ms"] > 0 for p in result["planning"].values())
    assert set(result["adds"]) == {"one_instance", "a_different_instance_each", "those_instances_again"}
