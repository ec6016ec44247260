"""Regenerate the README's benchmark table from `benchmarks/results/*.json`:
`python -m benchmarks.report [--readme README.md] [--results DIR] [--check]`.

Only the text between `<!-- bench:start -->` and `<!-- bench:end -->` is replaced (the markers are added
under a "## Benchmarks" heading when absent). `--check` exits 1 when the README is not current.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import NamedTuple

from benchmarks.common import RESULTS

START, END = "<!-- bench:start -->", "<!-- bench:end -->"
KS = ("R@1", "R@5", "R@10", "R@25")


def _f(v, digits: int = 3) -> str:
    return "–" if v is None else f"{v:.{digits}f}"


def _n(v) -> str:
    return "–" if v is None else f"{v:,.0f}"


def llm_row(main: dict) -> list[str]:
    """MemoryScope with an LLM (`benchmarks.locomo --llm`), a row beside the offline one, when measured."""
    llm = main.get("llm")
    if not llm:
        return []
    return [f"| Memory Workbench + LLM (MemoryScope: time extraction and semantic rank by `{llm['model']}`) | "
            + " | ".join(_f(llm["overall"][k]) for k in KS) + " |"]


def llm_latency(main: dict) -> list[str]:
    """The LLM row's latency and how its LLM calls went, when measured."""
    llm = main.get("llm")
    if not llm:
        return []
    lat = llm["latency_ms"]
    calls = "; ".join(f"{op.replace('_', ' ')} {c['calls']:,} LLM calls, {c['failed']:,} failed"
                      + (f", {c['partial']:,} left memories unscored" if c["partial"] else "")
                      for op, c in llm["llm_calls"].items())
    return [(f"With the LLM (`python -m benchmarks.locomo --llm`, LLM calls included): p50 {lat['p50']} ms, "
             f"p95 {lat['p95']} ms; {calls}.")]


# Issue 21's quality goals: (what, category or None for 1-4, metric, at least).
QUALITY_GOALS = (("R@5", None, "R@5", 0.68), ("R@10", None, "R@10", 0.78),
                 ("multi-hop R@10", "1", "R@10", 0.55), ("open-domain R@10", "3", "R@10", 0.50))


def quality_goals(main: dict) -> str:
    """Issue 21's quality goals beside the figures, each met or not."""
    def figure(category: str | None, metric: str, goal: float) -> str:
        row = main["by_category"].get(category) if category else main["overall"]
        if row is None:
            return "no such question in this run"
        return f"{row[metric]:.3f} " + ("met" if row[metric] >= goal else "**not met**")

    return "Goals (issue 21, offline, categories 1–4): " + "; ".join(
        f"{what} ≥ {goal:.2f}: {figure(cat, metric, goal)}" for what, cat, metric, goal in QUALITY_GOALS) + "."


def quality(results: dict[str, dict]) -> list[str]:
    main = results.get("locomo")
    if not main:
        return [("No LoCoMo result yet: run "
                 "`python -m benchmarks.locomo --json benchmarks/results/locomo.json`.")]
    b = main["baselines"]
    profile = main["profile"]["name"]
    contextual = [r for name, r in sorted(results.items())
                  if name.startswith("locomo-") and r.get("embedder", "").startswith("minilm")]
    peers = main.get("peers") or {}
    shown = {"mem0": "mem0", "lancedb": "LanceDB"}
    peer_rows = {"mem0": "mem0 `Memory.search` (open source, pgvector, `infer=False`, same turns)",
                 "lancedb": "LanceDB hybrid search (full-text index + vectors, RRFReranker, same turns)"}
    lines = [
        (f"**Retrieval quality** — LoCoMo (`{main['data']}`: {main['conversations']} conversations, "
        f"{main['overall']['questions']:,} questions of categories 1–4), offline embedder, no LLM"
        + (" except in the row that names one" if main.get("llm") else "") + "; "
        "LoCoMo's recall (share of a question's evidence turns in the top k):"),
        "",
        "| retriever | R@1 | R@5 | R@10 | R@25 |",
        "|---|---|---|---|---|",
        f"| **Memory Workbench** (`{profile}` profile) | "
        + " | ".join(_f(main["overall"][k]) for k in KS) + " |",
        *llm_row(main),
        "| BM25 alone (rank_bm25, same turns) | " + " | ".join(_f(b["bm25"][k]) for k in KS) + " |",
        "| dense leg alone (wordllama, same turns) | " + " | ".join(_f(b["dense"][k]) for k in KS) + " |",
        *("| Memory Workbench, every vector by MiniLM (`--embedder minilm`, the `minilm` extra) | "
          + " | ".join(_f(r["overall"][k]) for k in KS) + " |" for r in contextual),
        *(f"| {peer_rows.get(n, n)} | "
          + ("not run | – | – | –" if "error" in r else " | ".join(_f(r["overall"][k]) for k in KS))
          + " |" for n, r in peers.items()),
        "| DRAGON (published, LoCoMo paper Table 3) | – | "
        + " | ".join(_f(b["dragon"].get(k)) for k in KS[1:]) + " |",
    ]
    for name, r in sorted(results.items()):
        if name.startswith("locomo-") and r.get("samples"):
            lines.append(f"| Memory Workbench on {', '.join(r['samples'])} only | "
                         + " | ".join(_f(r["overall"][k]) for k in KS) + " |")
    lines += ["", "| category (LoCoMo id) | questions | R@1 | R@5 | R@10 | R@25 | BM25 R@10 | dense R@10 |",
              "|---|---|---|---|---|---|---|---|"]
    names = {"1": "1 multi-hop", "2": "2 temporal", "3": "3 open-domain", "4": "4 single-hop"}
    for cat, row in main["by_category"].items():
        lines.append(f"| {names.get(cat, cat)} | {row['questions']} | " + " | ".join(_f(row[k]) for k in KS)
                     + f" | {_f(b['bm25']['by_category'][cat]['R@10'])}"
                     + f" | {_f(b['dense']['by_category'][cat]['R@10'])} |")
    lines += ["", quality_goals(main)]
    lines += [(f"With MiniLM, a contextual embedder, for every vector: multi-hop R@10 "
               f"{_f(r['by_category']['1']['R@10'])}, open-domain {_f(r['by_category']['3']['R@10'])}, "
               f"query p50 {r['latency_ms']['p50']} ms (`python -m benchmarks.locomo --embedder minilm --no-peers "
               "--json benchmarks/results/locomo-minilm.json`).") for r in contextual
              if {"1", "3"} <= set(r["by_category"])]
    lat = main["latency_ms"]
    in_turn = ", each question asked of us and of every peer in turn" if peers else ""
    lines += ["", (f"Query latency (top 25, one query at a time, embedding included{in_turn}): p50 {lat['p50']} "
              f"ms, p95 {lat['p95']} ms."), *llm_latency(main)]
    ran = {n: r for n, r in peers.items() if "error" not in r}
    if peers:
        lines.append("The peers, in the same pass: " + "; ".join(
            f"{shown.get(n, n)} p50 {r['latency_ms']['p50']} ms, p95 {r['latency_ms']['p95']} ms" if n in ran
            else f"{shown.get(n, n)} not run ({r['error']})" for n, r in peers.items()) + ".")
        goal = "Goal (issue 21): our R@5 at least 1.3× the best peer's, at a p50 no higher than that peer's"
        if ran:
            name, best = max(ran.items(), key=lambda kv: kv[1]["overall"]["R@5"])
            ours, theirs = main["overall"]["R@5"], best["overall"]["R@5"]
            met = ours >= 1.3 * theirs and lat["p50"] <= best["latency_ms"]["p50"]
            lines.append(f"{goal}: R@5 {ours:.3f} against {shown.get(name, name)}'s {theirs:.3f} ("
                         + (f"{ours / theirs:.2f}×" if theirs else "theirs is 0")
                         + f"), p50 {lat['p50']} against {best['latency_ms']['p50']} ms: "
                         + ("met." if met else "**not met**."))
        else:
            lines.append(f"{goal}: not measured (no peer ran).")
    return lines + documents(results.get("documents"))


def documents(r: dict | None) -> list[str]:
    """Memories that are not dialogue: the machine's package descriptions (`benchmarks.documents`)."""
    if not r:
        return []
    row = lambda name, d: f"| {name} | " + " | ".join(_f(d[k]) for k in ("R@1", "R@5", "R@10", "MRR@10")) + " |"
    return ["", (f"**Documents, not dialogue** — {r['documents']:,} package descriptions of this machine's Debian "
                 "(each package's synopsis asks for its long description; `python -m benchmarks.documents`), same "
                 "profile and embedder:"), "",
            "| retriever | R@1 | R@5 | R@10 | MRR@10 |", "|---|---|---|---|---|",
            row("**Memory Workbench**, near-duplicates kept", r["hybrid"]),
            row("Memory Workbench as shipped (a near-duplicate gives way to the better one)", r["hybrid_as_shipped"]),
            row("text leg alone", r["text_leg"]), row("vector leg alone", r["vector_leg"]),
            row("BM25 alone (rank_bm25, same texts)", r["bm25"])]


def speed(results: dict[str, dict]) -> list[str]:
    runs = sorted((r for n, r in results.items() if n.startswith("speed-")), key=lambda r: r["memories"])
    if not runs:
        return [("No speed result yet: run `python -m benchmarks.speed --memories 100000 "
                "--json benchmarks/results/speed-100000.json`.")]
    lines = [
        ("**Speed and scale** — synthetic conversations over five instances (the first holds half), "
        "embedded Postgres 16 + pgvector and Redis, offline embedder, no LLM:"),
        "",
        ("| memories | ingest /s | ingest, conversation import /s | hybrid p50 / p95 / p99 ms "
         "| ui_remember turn p50 ms | feedback page data (10,000 answers) ms | peak RSS MB "
         "| asked in turn, p50 ms: mem0 / ours | ours / mem0 |"),
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in runs:
        h, peer = r["hybrid_ms"], r.get("peer") or {}
        ratio = peer.get("p50_ratio_ours_over_peer")
        lines.append(
            f"| {r['memories']:,} | {_n(r['ingest_per_s'])} | {_n(r.get('ingest_context_per_s'))} | "
            f"{h['p50']:.1f} / {h['p95']:.1f} / {h['p99']:.1f} | {r['turn_ms']['p50']:.1f} | "
            f"{r['feedback_ms']['p50']:.0f} | {r['peak_rss_mb']:.0f} | "
            f"{_f(peer.get('search_ms', {}).get('p50'), 1)} / "
            f"{_f((peer.get('ours_in_turn_ms') or {}).get('p50'), 1)} | "
            + (_ratio(ratio) if ratio else "–") + " |")
    lines += ["", ("Ingest is timed from records handed over as an import hands them: the synthetic turns "
                   "are made up and written to a file first, then read back and made into records while the "
                   "load runs (before 2026-12-04, making up their text and three copies of each record were "
                   "timed with it). Hybrid retrieval is ours alone, question after question, embedding "
                   "included; then each question goes to us and to mem0 in turn (same Postgres, embedder and "
                   "memories), and the ratio is of that pass.")]
    return lines


def _ratio(ratio: float) -> str:
    """The ratio, and which is faster by how much: to two places under 1.1×, where one place reads 1.0×."""
    who, times = ("ours", 1 / ratio) if ratio < 1 else ("mem0", ratio)
    return f"{ratio:.2f} ({who} {times:.{2 if times < 1.1 else 1}f}× faster)"


def long_memories(results: dict[str, dict]) -> list[str]:
    r = results.get("long-memories")
    if not r:
        return []
    h, parts = r["hybrid_ms"], r["hybrid_parts_p50_ms"]
    return ["", (f"**Long memories** — {r['memories']:,} documents of 100–400 words ({r['postings_per_memory']:.0f} "
                 f"postings each), questions of 15–25 words (`python -m benchmarks.long_memories`): ingest "
                 f"{_n(r['ingest_per_s'])}/s; hybrid search for the top {r.get('top_k', 10)}, p50 / p95 / p99 "
                 f"{h['p50']:.1f} / {h['p95']:.1f} / {h['p99']:.1f} ms (embedding {parts['embed']:.1f}, SQL "
                 f"{parts['sql']:.1f}, ranking {parts['rank']:.1f} ms at p50){long_top10(r)}; text leg alone p50 "
                 f"{r['text_leg_ms']['p50']:.1f} ms, vector "
                 f"leg alone {r['vector_leg_ms']['p50']:.1f} ms; the document asked about is in the top 5 for "
                 f"{r['recall_at_5']:.0%} of questions, in the top 10 for {r['recall_at_10']:.0%}.")]


def long_top10(r: dict) -> str:
    """The same questions searched for their top 10, in turn with the timed top 5 (runs from 2026-12-06)."""
    if "hybrid_top10_ms" not in r:
        return ""
    h, parts = r["hybrid_top10_ms"], r["hybrid_top10_parts_p50_ms"]
    return (f"; for the top 10, asked in turn: {h['p50']:.1f} / {h['p95']:.1f} / {h['p99']:.1f} ms (SQL "
            f"{parts['sql']:.1f}, ranking {parts['rank']:.1f} ms at p50)")


class Goal(NamedTuple):
    """A row of the goals table: the goal, the figure (None: not measured), its bound, whether the figure
    must be at most the bound (else at least), its unit, the floor measured, and what would reach it
    (shown only when the goal is not met)."""

    goal: str
    value: float | None
    bound: float
    at_most: bool
    unit: str
    floor: str = ""
    reach: str = ""


def goals(results: dict[str, dict]) -> list[str]:
    """Issue 20's goals (and issue 15's import goal) beside the figures and, where measured, the floor."""
    speed = {r["memories"]: r for n, r in results.items() if n.startswith("speed-")}
    floors, long, imp = results.get("floors"), results.get("long-memories"), results.get("import-speed")
    rows: list[Goal] = []
    long_k = f" (top {long.get('top_k', 10)})" if long else ""

    def at(n: int, path: tuple[str, ...]):
        r = speed.get(n)
        for key in path:
            r = (r or {}).get(key)
        return r

    live = max((r for n, r in results.items() if n.startswith("live-adds-")), key=lambda r: r["memories"],
               default=None)
    dash = results.get("dashboard-1000000")
    q = (floors or {}).get("query_parts_p50_ms")
    query_floor = (f"round trip {q['round_trip']:.2f} + embedding {q['embed']:.2f} + one HNSW scan "
                   f"{q['hnsw_scan']:.2f} + posting lists {q['posting_lists']:.2f} ms") if q else ""
    ing = (floors or {}).get("ingest_parts_per_s")
    ingest_floor = cpu_ceiling(at(100_000, ("ingest_cpu",)), "a memory") + (
        f"alone: embedding {ing['embed']:,}/s, the rows with their text vectors and postings {ing['rows']:,}/s, "
        f"HNSW build {ing['hnsw']:,}/s, the postings' index {ing['postings_index']:,}/s" if ing else "")
    rows += [Goal("100,000: hybrid p50 ≤ 4 ms", at(100_000, ("hybrid_ms", "p50")), 4, True, " ms", query_floor),
             Goal("100,000: hybrid p95 ≤ 8 ms", at(100_000, ("hybrid_ms", "p95")), 8, True, " ms"),
             Goal("100,000: ours / mem0 p50 ≤ 1.0", at(100_000, ("peer", "p50_ratio_ours_over_peer")), 1.0, True,
                  "", ratio_floor(q, at(100_000, ("peer", "search_ms", "p50"))) + search_bounds(results)),
             Goal("100,000: bulk ingest ≥ 5,000/s", at(100_000, ("ingest_per_s",)), 5000, False, "/s", ingest_floor,
                  cpu_reach(at(100_000, ("ingest_cpu",)), 5000, "a memory")),
             Goal("1,000,000: hybrid p50 ≤ 8 ms", at(1_000_000, ("hybrid_ms", "p50")), 8, True, " ms"),
             Goal("1,000,000: hybrid p95 ≤ 15 ms", at(1_000_000, ("hybrid_ms", "p95")), 15, True, " ms"),
             Goal("1,000,000: ui_remember turn p50 ≤ 30 ms", at(1_000_000, ("turn_ms", "p50")), 30, True, " ms"),
             *([Goal((f"live adds, {live['writers']} writers, into an instance of {live['memories']:,} ≥ 1,000/s "
                      "(the goal is set at 500,000 of 1,000,000)"), live["adds_per_s"], 1000, False, "/s",
                     (cpu_ceiling(live.get("cpu"), "an add")
                      + f"one writer: {live['one_writer']['adds_per_s']:,.0f}/s, p50 "
                      f"{live['one_writer']['add_ms']['p50']:.1f} ms an add" + live_floor(results)),
                     cpu_reach(live.get("cpu"), 1000, "an add"))] if live else []),
             Goal("1,000,000: peak RSS ≤ 600 MB", at(1_000_000, ("peak_rss_mb",)), 600, True, " MB"),
             Goal(f"long memories: hybrid p50 ≤ 8 ms{long_k}", (long or {}).get("hybrid_ms", {}).get("p50"), 8,
                  True, " ms", "; ".join(filter(None, (long_legs(long), long_beside(long, "p50")))),
                  long_reach(long, 8)),
             Goal(f"long memories: hybrid p95 ≤ 20 ms{long_k}", (long or {}).get("hybrid_ms", {}).get("p95"), 20,
                  True, " ms", long_beside(long, "p95")),
             Goal("import of 100,000 messages ≥ 2,000/s", (imp or {}).get("messages_per_s"), 2000, False, "/s",
                  "", import_reach(imp)),
             *dashboard_rows(dash, results.get("dashboard-elements"))]
    lines = ["", "**Goals** (issue 20, and issue 15's import) beside the figures above:", "",
             ("| goal | measured | | floor on this machine (each part alone, `python -m benchmarks.floors`) "
              "| what would reach it |"),
             "|---|---|---|---|---|"]
    for goal, value, bound, at_most, unit, floor, reach in rows:
        if value is None:
            lines.append(f"| {goal} | not measured | – | {floor} | |")
            continue
        ok = value <= bound if at_most else value >= bound
        shown = f"{value:,.0f}{unit}" if unit in ("/s", " MB") else f"{value:.2f}{unit}"
        lines.append(f"| {goal} | {shown} | {'met' if ok else '**not met**'} | {floor} | {'' if ok else reach} |")
    if not live:
        lines += ["", ("Not measured by a benchmark yet: live adds with 4 writers into the largest instance "
                      "(goal ≥ 1,000/s).")]
    return lines


def cpu_ceiling(cpu: dict | None, each: str) -> str:
    """What the work's own CPU time allows (`benchmarks.common.CpuMeter`): its CPU time per item and the
    rate that would keep every core busy with nothing else, where the run measured it."""
    if not cpu or not cpu.get("ceiling_per_s"):
        return ""
    return (f"CPU time {cpu['per_memory_ms']:.2f} ms {each} (this process and the servers): at most "
            f"{cpu['ceiling_per_s']:,}/s with both cores busy (the run kept them {cpu['busy']:.0%} busy); ")


def cpu_reach(cpu: dict | None, goal_per_s: float, each: str) -> str:
    """A rate bound by CPU time: how many cores the goal needs at the run's CPU time per item, and the CPU
    time per item that would reach it on this machine's cores."""
    if not cpu or not cpu.get("per_memory_ms"):
        return ""
    cores, per_ms = cpu.get("cores") or 2, cpu["per_memory_ms"]
    needed = goal_per_s * per_ms / 1000
    limit = cores * 1000 / goal_per_s
    return (f"{goal_per_s:,.0f}/s at this CPU time is {needed:.1f} cores' work: {math.ceil(needed)} cores kept "
            f"busy, or on this machine's {cores}, {limit:.2f} ms of CPU {each} ({per_ms / limit:.1f}× less than "
            "now)")


def dashboard_reach(dash: dict | None, elements: dict | None = None) -> str:
    """The new tab's floor against the goal: Streamlit's own page, before any of ours runs; when that is
    within the goal, what the slowest page adds to it and where; with `elements` (`benchmarks.
    dashboard_elements`), what the sidebar and one table or chart add to Streamlit's empty page."""
    if not dash:
        return ""
    goal, floor = dash["goal_ms"] / 1000, dash["floor"]["median_ms"] / 1000
    clicks = " (reached by a click, every page is within the goal)" if (dash.get("in_app") or {}).get(
        "within_goal") else ""
    if floor > goal:
        return (f"a front end other than Streamlit's: its empty page alone takes {floor:.2f} s in a new tab here "
                f"(its scripts and the session's start){clicks}")
    name = dash["slowest"]["page"]
    page, empty = dash["pages"][name], dash["floor"]
    return (f"a page drawn within the {goal - floor:.2f} s that Streamlit's empty page ({floor:.2f} s) leaves: "
            f"{name} adds {page['median_ms'] / 1000 - floor:.2f} s, most of it after its script starts "
            f"({page['script_median_ms'] / 1000:.2f} s against the empty page's "
            f"{empty['script_median_ms'] / 1000:.2f} s), where the tab loads and draws its elements"
            f"{element_costs(elements)}{clicks}")


def element_costs(elements: dict | None) -> str:
    """What Streamlit's elements add to its empty page in a new tab, measured apart from the dashboard."""
    if not elements:
        return ""
    v = elements["variants"]

    def s(name: str, key: str = "added_ms") -> str:
        return f"{v[name][key] / 1000:.2f} s"

    return (f"; Streamlit alone, in a run of its own (`python -m benchmarks.dashboard_elements`): the empty page "
            f"{s('floor', 'median_ms')}, with the sidebar and navigation {s('sidebar and navigation', 'median_ms')}"
            f", and one table adds {s('table of two rows')}, one chart {s('chart of three points')}")


def import_reach(imp: dict | None) -> str:
    """The import's two parts, one after the other (benchmarks/README.md, "Import speed")."""
    if not imp:
        return ""
    return ("a shorter load or attach: the rows are written as fast as this process makes them (the file, "
            "Redis, embedding), then the instance's indexes are built over all of them (the HNSW graph, the "
            "postings' index) with nothing left to overlap (benchmarks/README.md, \"Import speed\")")


def long_reach(long: dict | None, goal_ms: float) -> str:
    """What the long search's p50 is made of, and which part would have to give the difference."""
    if not long or "hybrid_parts_p50_ms" not in long:
        return ""
    parts, over = long["hybrid_parts_p50_ms"], long["hybrid_ms"]["p50"] - goal_ms
    return (f"{over:.2f} ms less at p50: the SQL statement ({parts['sql']:.2f} ms, most of it the text leg "
            f"reading each question word's postings) or the ranking ({parts['rank']:.2f} ms), or a faster "
            "core (benchmarks/README.md, \"Long memories\")")


def ratio_floor(q: dict | None, peer_p50: float | None) -> str:
    """The query's floor (its parts alone) against the peer's p50: what the rest of ours would have to fit."""
    if not q or peer_p50 is None:
        return ""
    return (f"our floor, those parts alone: {sum(q.values()):.2f} ms, against mem0's {peer_p50:.2f} ms; the "
            "rest is the statement's other parts and the candidates read and ranked in Python")


def search_bounds(results: dict[str, dict]) -> str:
    """Each part's most possible gain (`benchmarks.search_bounds`): ours over mem0 with that part left out."""
    r = max((r for n, r in results.items() if n.startswith("search-bounds-")), key=lambda r: r["memories"],
            default=None)
    if not r:
        return ""
    v = r["variants"]
    return (f"; each part left out, at {r['memories']:,} memories ({r['machine']['date']}, as shipped "
            f"{v['as_shipped']['p50_over_mem0']:.2f}): the ranking in Python {v['no_ranking']['p50_over_mem0']:.2f}, "
            f"the vectors sent back {v['no_vectors']['p50_over_mem0']:.2f}, the word weights "
            f"{v['no_word_weights']['p50_over_mem0']:.2f} (`python -m benchmarks.search_bounds`)")


def long_legs(long: dict | None) -> str:
    """The long-memory run's legs, each searched alone, beside its hybrid p50: the hybrid runs both, the
    text leg first (its best matches refine the query's vector)."""
    if not long or "text_leg_ms" not in long:
        return ""
    parts = long["hybrid_parts_p50_ms"]
    return (f"each leg alone, a whole search: text {long['text_leg_ms']['p50']:.2f} ms, vector "
            f"{long['vector_leg_ms']['p50']:.2f} ms; the hybrid runs both in one statement, the text leg "
            f"first (p50: embedding {parts['embed']:.2f}, SQL {parts['sql']:.2f}, ranking {parts['rank']:.2f} ms)")


def long_beside(long: dict | None, stat: str) -> str:
    """The top 10's figure beside the timed top 5's, when the run asked both."""
    if not long or "hybrid_top10_ms" not in long:
        return ""
    return f"the top 10, asked in turn: {long['hybrid_top10_ms'][stat]:.2f} ms"


def live_floor(results: dict[str, dict]) -> str:
    """The live adds without their index work (`live_adds --floor`), where a run measured it."""
    for name, r in sorted(results.items()):
        bare = (r.get("floor") or {}).get("without_graph_or_postings") if name.startswith("live-adds-") else None
        if bare:
            return (f"; into {r['memories']:,}, without the graph insertion and the postings: "
                    f"{bare['adds_per_s']:,.0f}/s")
    return ""


def dashboard_rows(dash: dict | None, elements: dict | None = None) -> list[Goal]:
    """The dashboard's goal, each page opened in a new tab and, where measured, reached by a click in the
    sidebar: the slowest page's median in seconds, named; the floor is Streamlit alone, the same way."""
    goal = "dashboard at 1,000,000 memories and 100,000 answers: every page idle ≤ 1 s (median of 3)"
    if not dash:
        return [Goal(goal, None, 1.0, True, " s")]
    rows = [Goal(goal + ", opened in a new tab", dash["slowest"]["median_ms"] / 1000, 1.0, True,
                 f" s ({dash['slowest']['page']})",
                 f"Streamlit alone, an empty page opened the same way: {dash['floor']['median_ms'] / 1000:.2f} s",
                 dashboard_reach(dash, elements))]
    if in_app := dash.get("in_app"):
        rows.append(Goal(goal + ", reached by a click in the sidebar", in_app["slowest"]["median_ms"] / 1000, 1.0,
                         True, f" s ({in_app['slowest']['page']})",
                         ("Streamlit alone, a click between two empty pages: "
                          f"{in_app['floor']['median_ms'] / 1000:.2f} s")))
    return rows


def http_load(results: dict[str, dict]) -> list[str]:
    r = results.get("api-load")
    if not r:
        return []
    lat, lost = r["latency_ms"], r["lost"]
    missing = lost["missing_in_redis"] + lost["missing_in_postgres"]
    return ["", (f"**ui_remember over HTTP** — {r['clients']} concurrent clients × "
                f"{r['turns_per_client']} turns with an API key, `workbench api --workers {r['workers']}`, "
                f"no LLM: **{r['turns_per_s']:.1f} turns/s**, latency p50 / p95 / p99 {lat['p50']:.0f} / "
                f"{lat['p95']:.0f} / {lat['p99']:.0f} ms; "
                f"{missing} of {lost['acknowledged']:,} acknowledged turns missing from Redis or Postgres "
                "afterwards. `python -m benchmarks.api_load --json benchmarks/results/api-load.json`.")]


def many_instances(results: dict[str, dict]) -> list[str]:
    r = results.get("many-instances")
    if not r:
        return []
    slowest = max(r["repeated_calls"].items(), key=lambda item: item[1]["max_ms"])
    rotating = {row["instances"]: row for row in r["rotating"]["with_shared"]}
    busy = {row["instances"]: row for row in r["concurrent"]["with_shared"]}
    few, n = min(busy), r["instances"]
    return ["", (f"**Many instances** — {n:,} instances of {r['memories_each']} memories and one shared "
                 f"memory: five use cases called 14 times in a row, the slowest call {slowest[1]['max_ms']:.1f} ms "
                 f"({slowest[0]}, call {slowest[1]['max_at_call']}); hybrid search p50 "
                 f"{rotating[1]['p50']:.1f} ms on one instance, {rotating[n]['p50']:.1f} ms rotating over all "
                 f"(each instance's statement planned again, {r['planning']['with_shared']['planning_ms']:.1f} ms, "
                 f"once a connection keeps 100); 6 threads: {busy[few]['searches_per_s']:.0f} searches/s among "
                 f"{few}, {busy[n]['searches_per_s']:.0f}/s among {n:,}. "
                 "`python -m benchmarks.many_instances`.")]


def machine_line(results: dict[str, dict]) -> str:
    """Each machine and day the results were measured on, with the results of each (by file name)."""
    by_machine: dict[str, list[str]] = {}
    for name, r in results.items():
        if m := r.get("machine"):
            key = (f"{m['cpu']}, {m['cores']} cores, {m['ram_gb']} GB RAM, Python {m['python']}, {m['os']} "
                   f"({m['date']})")
            by_machine.setdefault(key, []).append(f"`{name}`")
    return "Measured on " + "; ".join(f"{key}: {', '.join(names)}" for key, names in by_machine.items()) + "."


def render(results: dict[str, dict]) -> str:
    lines = [START, *quality(results), "", *speed(results), *long_memories(results), *goals(results),
             *http_load(results), *many_instances(results), "", machine_line(results),
             ("Regenerate with `python -m benchmarks.report`; how the figures are measured and what "
              "limits them: [benchmarks/README.md](benchmarks/README.md)."), END]
    return "\n".join(lines)


def load(results_dir: Path) -> dict[str, dict]:
    return {p.stem: json.loads(p.read_text()) for p in sorted(results_dir.glob("*.json"))}


def update(readme: Path, block: str) -> str:
    text = readme.read_text() if readme.exists() else "# Memory Workbench\n"
    if START in text and END in text:
        head, rest = text.split(START, 1)
        return head + block + rest.split(END, 1)[1]
    if "## Benchmarks" in text:
        head, rest = text.split("## Benchmarks", 1)
        return head + "## Benchmarks\n\n" + block + "\n" + rest
    return text.rstrip("\n") + "\n\n## Benchmarks\n\n" + block + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.report", description=__doc__.split("\n")[0])
    ap.add_argument("--readme", type=Path, default=Path(__file__).resolve().parents[1] / "README.md")
    ap.add_argument("--results", type=Path, default=RESULTS)
    ap.add_argument("--check", action="store_true", help="exit 1 if the README table is not current")
    args = ap.parse_args(argv)
    new = update(args.readme, render(load(args.results)))
    if args.check:
        current = args.readme.read_text() if args.readme.exists() else ""
        return 0 if current == new else 1
    args.readme.write_text(new)
    print(f"updated {args.readme}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
