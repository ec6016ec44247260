"""Speed and scale: `python -m benchmarks.speed --memories N [--json OUT] [--full] [--small]`.

On embedded Redis and Postgres of its own (a fresh temporary directory), with the offline embedder and
no LLM, for N synthetic conversation memories over five instances (`benchmarks.synth`; the first
instance holds half):
- ingest: `MemoryIndex.bulk_load` of all N, embeddings included, memories per second, each with the
  three messages before it as context, as `sync_index` indexes ui_remember's thoughts; 1,000 more
  into the largest instance, which already has its indexes (`ingest_existing_per_s`); and up to
  10,000 as a conversation import, each with three neighbours on both sides (`ingest_context_per_s`);
  then VACUUM (ANALYZE), as autovacuum would;
- hybrid retrieval: `hybrid_search` (top 5, the shipped default profile) for distinct questions, the
  query's embedding included, instances drawn in proportion to their size; p50, p95, p99;
- a ui_remember turn without an LLM (`Remember.run`, retrieval + storing + indexing): p50;
- the Feedback page's aggregation (`load_feedback`, then every aggregate the page draws) over 10,000
  answers written as ui_remember writes them;
- this process's peak resident memory;
- the peer, mem0 (`benchmarks.peer_mem0`), on the same Postgres with the same memories, embedder and
  questions, asked in turn with ours (each question to us, then to it) in a second pass: its search
  p50, ours in that pass, and our p50 over its p50.
`--full` runs N = 1,000,000; `--small` is the quick smoke run (2,000 memories, few queries).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import synth
from benchmarks.common import CpuMeter, bench_workbench, machine, peak_rss_mb, percentiles, write_json
from core.retrieval.hybrid import SearchRequest, hybrid_search

INSTANCES = 5
PREFIX = "bench"


def measure_ingest(wb, n: int, prefix: str) -> dict:
    """Bulk loads timed from records a caller hands over: the synthetic turns are made up and written to
    a file first (making up 100,000 turns' text takes 1.4 s of this process), then read back a line at a
    time and made into records as the load runs, as an import reads its file. `ingest_cpu` is the
    machine's CPU time over the first load (`CpuMeter`): what the work costs, whatever overlaps."""
    with tempfile.TemporaryDirectory(prefix="turns-", dir=wb.settings.data_dir) as files:
        return _timed_loads(wb, n, prefix, Path(files))


def _timed_loads(wb, n: int, prefix: str, files: Path) -> dict:
    main = synth.write_turns(synth.conversations(n, instances=INSTANCES, prefix=prefix), files / "main")
    # 1,000 more for the largest instance: its partition and indexes exist, so rows go in one by one.
    extra = min(1000, max(100, n // 20))
    more = synth.write_turns(
        synth.conversations(extra, instances=1, prefix=prefix, seed=99, chain_prefix="x"), files / "more")
    # A conversation import: each memory with its neighbours as context (as the LoCoMo benchmark loads
    # turns), so several times more text to analyse and index per memory; into an instance of its own.
    ctx_n = min(n, 10_000)
    imported = synth.write_turns(synth.conversations(ctx_n, instances=1, prefix=f"{prefix}-import", seed=5),
                                 files / "import")
    meter = CpuMeter()
    loaded = wb.index.bulk_load(synth.records(synth.read_turns(main)))
    cpu = meter.read(loaded)
    t1 = time.perf_counter()
    wb.index.bulk_load(synth.records(synth.read_turns(more)))
    existing = time.perf_counter() - t1
    t2 = time.perf_counter()
    wb.index.bulk_load(synth.records(synth.read_turns(imported), context="both"))
    with_context = time.perf_counter() - t2
    return {"ingest_per_s": round(loaded / cpu["wall_s"], 1), "ingest_seconds": cpu["wall_s"],
            "ingest_cpu": cpu, "ingest_existing_per_s": round(extra / existing, 1),
            "ingest_context_per_s": round(ctx_n / with_context, 1), "ingest_context_memories": ctx_n}


def measure_queries(wb, questions: list[tuple[str, str]], warmup: list[tuple[str, str]], peer=None) -> dict:
    """Our hybrid search alone over every question, as a deployment runs it (the figure its budget is
    about: p50 ≤ 5 ms, p95 ≤ 15 ms at 100,000 memories). Then, when there is a peer, ours and the peer's
    question by question in turn, so both see the same machine and each other's effect on its caches;
    the ratio comes from that second pass."""
    def ours(instance: str, q: str) -> tuple[float, float, float]:
        t = time.perf_counter()
        found = hybrid_search(wb.search_pool(), wb.embedder, SearchRequest(query=q, instance=instance, top_k=5))
        return (time.perf_counter() - t) * 1000, found.embed_ms, found.search_ms

    def theirs(instance: str, q: str) -> float:
        t = time.perf_counter()
        peer.search(instance, q)
        return (time.perf_counter() - t) * 1000

    for instance, q in warmup:  # connections, prepared statements, caches
        ours(instance, q)
        if peer is not None:
            theirs(instance, q)
    runs = [ours(instance, q) for instance, q in questions]
    out = {"hybrid_ms": percentiles([r[0] for r in runs]),
           "hybrid_parts_p50_ms": {"embed": round(statistics.median(r[1] for r in runs), 3),
                                   "search": round(statistics.median(r[2] for r in runs), 3)},
           "queries": len(questions)}
    if peer is not None:
        ours_times, peer_times = [], []
        for instance, q in questions:
            ours_times.append(ours(instance, q)[0])
            peer_times.append(theirs(instance, q))
        out["peer_search_ms"] = percentiles(peer_times, (50, 95))
        out["ours_in_turn_ms"] = percentiles(ours_times, (50, 95))
    return out


def measure_turns(wb, questions: list[str], instance: str) -> dict:
    from core.conversation.turn import Remember, UiRememberParams

    remember = Remember(wb)
    times = []
    for i, q in enumerate(questions):
        t = time.perf_counter()
        remember.run(UiRememberParams(thought=q, chain_id=f"bench-turns-{i // 4}"), instance=instance)
        times.append((time.perf_counter() - t) * 1000)
    times = times[3:]  # the first turns open connections and load the token counter
    return {"turn_ms": percentiles(times, (50, 95)), "turns": len(times)}


def measure_feedback(wb, records: int) -> dict:
    """The Feedback page's data path: load the instance's answers, then what the page draws."""
    from benchmarks.feedback_load import INSTANCE, write
    from core.analytics import latency_table, load_feedback, lowest_scored, summarize, summarize_by

    for chain in wb.thoughts.r.zrange(f"chains:{INSTANCE}", 0, -1):  # a previous run's answers
        wb.thoughts.delete_chain(INSTANCE, chain)
    write(wb, records)
    times = []
    for _ in range(5):
        t = time.perf_counter()
        frame = load_feedback(wb.thoughts, INSTANCE)
        summarize(frame)
        for by in ("day", "model", "profile"):
            summarize_by(frame, by)
        latency_table(frame)
        lowest_scored(frame, 50)
        times.append((time.perf_counter() - t) * 1000)
    return {"feedback_ms": {"p50": round(statistics.median(times), 1)}, "feedback_records": len(frame)}


def load_peer(wb, n: int, workdir: Path, prefix: str) -> tuple[object | None, dict]:
    """mem0 with the same memories; (None, why) when it cannot run."""
    from benchmarks.peer_mem0 import NAME, Mem0Peer

    try:
        peer = Mem0Peer(wb.services.postgres_url(), wb.embedder, workdir)
    except Exception as e:  # noqa: BLE001 — the peer is optional: any failure is reported, not fatal
        return None, {"name": NAME, "error": f"{type(e).__name__}: {e}"}
    added, seconds = peer.add(synth.records(synth.conversations(n, instances=INSTANCES, prefix=prefix)))
    return peer, {"name": NAME, "ingest_per_s": round(added / seconds, 1)}


def vacuum(wb) -> None:
    """What autovacuum does shortly after a large load (visibility map, planner statistics), done now so
    queries are measured in the steady state rather than in the minutes after the load."""
    with wb.pool().connection() as conn:
        conn.execute("VACUUM (ANALYZE)")


def run(n: int, *, small: bool = False, peer: bool = True, data_dir: str | None = None,
        prefix: str = PREFIX) -> dict:
    sizes = [(f"{prefix}-{i}", s) for i, s in enumerate(synth.instance_sizes(n, INSTANCES))]
    qs = synth.queries(30 if small else 500, instances=sizes)
    # Warm-up: the steady state of a running service (its index pages in the buffer cache), not the
    # first minutes after a restart: 300 other questions (none of the measured ones), for us and the
    # peer alike.
    warm = [w for w in synth.queries(10 if small else 300, instances=sizes, seed=12) if w not in qs]
    result: dict = {"memories": n, "instances": dict(sizes), "machine": machine()}
    with bench_workbench(data_dir) as wb:
        wb.index.ensure_vector_index()  # servers started and schema in place: not counted as ingest
        result |= measure_ingest(wb, n, prefix)
        vacuum(wb)
        result |= measure_turns(wb, [q for _, q in qs[: 8 if small else 43]], sizes[0][0])
        result |= measure_feedback(wb, 200 if small else 10_000)
        result["peak_rss_mb"] = peak_rss_mb()  # before the peer shares this process
        competitor = None
        if peer:
            competitor, result["peer"] = load_peer(wb, n, Path(wb.settings.data_dir) / "mem0", prefix)
            vacuum(wb)
        result |= measure_queries(wb, qs, warm, competitor)
        if "peer_search_ms" in result:
            result["peer"]["search_ms"] = result.pop("peer_search_ms")
            result["peer"]["ours_in_turn_ms"] = result.pop("ours_in_turn_ms")
            ours, theirs = result["peer"]["ours_in_turn_ms"]["p50"], result["peer"]["search_ms"]["p50"]
            result["peer"]["p50_ratio_ours_over_peer"] = round(ours / theirs, 4)
            result["peer"]["times_faster"] = round(theirs / ours, 2)
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.speed", description=__doc__.split("\n")[0])
    ap.add_argument("--memories", type=int, default=None, help="how many memories (10000, 100000, ...)")
    ap.add_argument("--json", metavar="OUT", help="write the result as JSON to OUT")
    ap.add_argument("--full", action="store_true", help="1,000,000 memories")
    ap.add_argument("--small", action="store_true", help="smoke run: 2,000 memories, few queries")
    ap.add_argument("--no-peer", action="store_true", help="skip the mem0 peer")
    ap.add_argument("--data-dir", help="servers' directory (default: a fresh temporary one, removed after)")
    args = ap.parse_args(argv)
    n = args.memories or (1_000_000 if args.full else 2_000 if args.small else None)
    if n is None:
        ap.error("give --memories N (e.g. 10000 or 100000), --full or --small")
    write_json(run(n, small=args.small, peer=not args.no_peer, data_dir=args.data_dir), args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
