"""Search bounds: `python -m benchmarks.search_bounds [--memories N] [--data-dir DIR] [--json OUT] [--small]`.

Issue 20 asks our hybrid search to be no slower than mem0's vector-only search (p50 ratio ≤ 1.0). This
measures how close each part of ours could bring it: the same questions go, one after another in
rotation, to our search as shipped, to our search with one part left out (never the product's path:
each is a bound, what removing that part entirely would give), and to mem0's `Memory.search`, all in
one process on the same Postgres and embedder, over the speed benchmark's memories (`benchmarks.synth`,
N over five instances, default 10,000) with mem0 holding the same ones (`benchmarks.peer_mem0`). The
parts left out:
- `no_ranking`: the candidates fetched and decoded, not ranked (`core.retrieval.ranking.rank_pool`);
- `no_vectors`: the candidates' stored vectors not sent back (the near-duplicate pass's input);
- `no_word_weights`: the query's own vector searched, not its words' weighed by their idf;
- `no_feedback`: no pseudo-relevance feedback (the text leg's best matches' vectors).
Per variant the p50 and p95 of a top-5 search, the embedding included (cached after the warm-up), and
its p50 over mem0's. With `--data-dir` the memories and mem0's copy are reused when there.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from benchmarks import synth
from benchmarks.common import bench_workbench, machine, percentiles, write_json
from benchmarks.speed import INSTANCES, PREFIX, vacuum

VARIANTS = ("as_shipped", "no_ranking", "no_vectors", "no_word_weights", "no_feedback")


@contextmanager
def left_out(variant: str) -> Iterator[None]:
    """Our search with `variant`'s part left out, for the block's duration (module attributes swapped)."""
    from core.retrieval import hybrid, ranking

    statement, rank = hybrid.candidate_statement, hybrid.rank_pool
    if variant == "no_ranking":
        hybrid.rank_pool = lambda pool, *a, **k: ranking.Ranking([])
    elif variant == "no_vectors":
        def without_vectors(*args, **kwargs):
            stmt, params = statement(*args, **kwargs)
            return stmt.replace(b"m.e, m.context", b"NULL::text, m.context", 1), params
        hybrid.candidate_statement = without_vectors
    elif variant == "no_word_weights":
        hybrid.candidate_statement = lambda embedder, *a, **k: statement(_NoWordVectors(embedder), *a, **k)
    elif variant == "no_feedback":
        hybrid.candidate_statement = lambda embedder, req, *a, **k: statement(
            embedder, req.model_copy(update={"feedback": 0.0}), *a, **k)
    try:
        yield
    finally:
        hybrid.candidate_statement, hybrid.rank_pool = statement, rank


class _NoWordVectors:
    """The embedder, saying it has no static word vectors: the search then uses the query's own vector."""

    def __init__(self, inner):
        self._inner = inner

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def word_vectors(self, words):
        return None


def load(wb, n: int, workdir: Path):
    """N memories in our index and in mem0's, loaded unless a run before left exactly these."""
    from benchmarks.peer_mem0 import Mem0Peer

    def records():
        return synth.records(synth.conversations(n, instances=INSTANCES, prefix=PREFIX))

    wb.index.ensure_vector_index()
    sizes = {f"{PREFIX}-{i}": s for i, s in enumerate(synth.instance_sizes(n, INSTANCES))}
    if {name: wb.index.count(name) for name in sizes} != sizes:
        for name in sizes:
            wb.index.delete_instance(name)
        wb.index.bulk_load(records())
    peer = Mem0Peer(wb.services.postgres_url(), wb.embedder, workdir)
    marker = workdir / f"loaded-{n}"
    if not marker.exists():
        peer.add(records())
        marker.write_text("mem0 holds the memories\n")
    vacuum(wb)
    return peer


def measure(search: Callable[[str, str], None], peer, questions, warmup, variants=VARIANTS) -> dict:
    """Each question to every variant of ours, in an order rotated by one each time, then to mem0."""
    def timed(fn: Callable[[], object]) -> float:
        t = time.perf_counter()
        fn()
        return (time.perf_counter() - t) * 1000

    times: dict[str, list[float]] = {v: [] for v in (*variants, "mem0")}
    for i, (instance, q) in enumerate([*warmup, *questions]):
        for v in variants[i % len(variants):] + variants[: i % len(variants)]:
            with left_out(v):
                ms = timed(lambda: search(instance, q))  # noqa: B023 — called at once
            if i >= len(warmup):
                times[v].append(ms)
        ms = timed(lambda: peer.search(instance, q))  # noqa: B023
        if i >= len(warmup):
            times["mem0"].append(ms)
    mem0 = statistics.median(times["mem0"])
    return {v: percentiles(t, (50, 95)) | {"p50_over_mem0": round(statistics.median(t) / mem0, 3)}
            for v, t in times.items()}


def run(n: int, *, small: bool = False, data_dir: str | None = None) -> dict:
    from core.retrieval.hybrid import SearchRequest, hybrid_search

    os.environ["MEM0_TELEMETRY"] = "False"  # before mem0 is imported
    sizes = [(f"{PREFIX}-{i}", s) for i, s in enumerate(synth.instance_sizes(n, INSTANCES))]
    questions = synth.queries(20 if small else 500, instances=sizes)
    warmup = [w for w in synth.queries(5 if small else 200, instances=sizes, seed=12) if w not in questions]
    with bench_workbench(data_dir) as wb:
        peer = load(wb, n, Path(wb.settings.data_dir) / "mem0-bounds")

        def ours(instance: str, q: str) -> None:
            hybrid_search(wb.search_pool(), wb.embedder, SearchRequest(query=q, instance=instance, top_k=5))

        figures = measure(ours, peer, questions, warmup)
    return {"memories": n, "questions": len(questions), "variants": figures, "machine": machine()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.search_bounds", description=__doc__.split("\n")[0])
    ap.add_argument("--memories", type=int, default=None, help="how many memories (default 10,000)")
    ap.add_argument("--data-dir", help="servers' directory (default: a fresh temporary one, removed after)")
    ap.add_argument("--json", metavar="OUT", help="write the result as JSON to OUT")
    ap.add_argument("--small", action="store_true", help="smoke run: 2,000 memories, 20 questions")
    args = ap.parse_args(argv)
    n = args.memories or (2_000 if args.small else 10_000)
    write_json(run(n, small=args.small, data_dir=args.data_dir), args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
