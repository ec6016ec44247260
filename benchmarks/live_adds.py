"""Live adds: `python -m benchmarks.live_adds [--memories N] [--writers W] [--seconds S] [--json OUT]`.

How fast memories go into an instance that is already large, as a deployed assistant adds them: one
memory per statement through `uc.add_memory` (embedded, then indexed with its text postings and its
HNSW insertion, searchable at once), from W writers at once (default 4), for S seconds (default 20).
The instance first gets N memories by bulk load (default 100,000; issue 20's goal is set at 1,000,000,
whose largest instance holds 500,000: `--memories 500000`). On embedded Redis and Postgres of its own,
offline embedder, no LLM. Reported: adds per second over all writers, each add's latency p50 / p95,
and the same with one writer, so what concurrency buys shows; with each, the machine's CPU time per add
(`cpu`, `benchmarks.common.CpuMeter`: this process's Python and the servers') and the most adds a second
that CPU time allows on this machine's cores, every core busy. The goal: 1,000 adds/s or more.

With `--floor`, the same writers again without the parts an add cannot do without (never the product's
path): `without_graph`, rows written under another model name, which the model's partial HNSW index
leaves out (no graph insertion); `without_graph_or_postings`, also with the text postings' trigger
disabled; and that with one writer. What remains is the embedding, the row with its other indexes, the
commit and this process's Python, which four threads share.
"""

from __future__ import annotations

import argparse
import sys

from benchmarks import synth
from benchmarks.common import RESULTS, bench_workbench, in_threads, machine, percentiles, write_json
from core import usecases as uc

GOAL_PER_S = 1000


def statements(n: int, seed: int) -> list[str]:
    """`n` distinct statements, as users make them (the speed benchmark's user turns)."""
    turns = synth.conversations(n * 3, instances=1, prefix="live", seed=seed)
    texts = list(dict.fromkeys(t.text for t in turns if t.role == "user"))
    return (texts * (n // max(1, len(texts)) + 1))[:n]


def writers(wb, instance: str, count: int, seconds: float, seed: int) -> dict:
    """`count` threads adding memories until `seconds` have passed."""
    texts = statements(20_000, seed)

    def add(k: int, i: int) -> None:
        uc.add_memory(wb, uc.AddMemory(instance=instance, content=texts[(k + i * count) % len(texts)]))

    every, cpu = in_threads(count, seconds, add)
    return {"writers": count, "adds": len(every), "adds_per_s": round(len(every) / cpu["wall_s"], 1),
            "add_ms": percentiles(every, (50, 95)), "cpu": cpu}


class _OutOfGraph:
    """The embedder under another model name: rows it names fall outside the model's HNSW index."""

    def __init__(self, inner):
        self.inner, self.name, self.dim = inner, inner.name + "-floor", inner.dim

    def embed_batch(self, texts):
        return self.inner.embed_batch(texts)


def floor(wb, instance: str, count: int, seconds: float) -> dict:
    """The writers without the graph insertion, then without the postings too (see the docstring)."""
    out, real = {}, wb.index.embedder
    wb.index.embedder = _OutOfGraph(real)
    try:
        out["without_graph"] = writers(wb, instance, count, seconds, seed=23)
        with wb.pool().connection() as conn:
            conn.execute("ALTER TABLE memory DISABLE TRIGGER memory_text_ins")
        out["without_graph_or_postings"] = writers(wb, instance, count, seconds, seed=24)
        out["without_graph_or_postings_one_writer"] = writers(wb, instance, 1, seconds / 2, seed=25)
    finally:
        wb.index.embedder = real
        with wb.pool().connection() as conn:
            conn.execute("ALTER TABLE memory ENABLE TRIGGER memory_text_ins")
    return out


def run(n: int, count: int, seconds: float, data_dir: str | None, prefix: str = "live",
        with_floor: bool = False) -> dict:
    instance = f"{prefix}-0"
    result: dict = {"memories": n, "machine": machine(), "goal_per_s": GOAL_PER_S}
    with bench_workbench(data_dir) as wb:
        wb.index.ensure_vector_index()
        wb.index.bulk_load(synth.records(synth.conversations(n, instances=1, prefix=prefix)))
        with wb.pool().connection() as conn:
            conn.execute("VACUUM (ANALYZE)")
        result["one_writer"] = writers(wb, instance, 1, seconds / 2, seed=21)
        result |= writers(wb, instance, count, seconds, seed=22)
        if with_floor:
            result["floor"] = floor(wb, instance, count, seconds)
    result["meets_goal"] = result["adds_per_s"] >= GOAL_PER_S
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.live_adds", description=__doc__.split("\n")[0])
    ap.add_argument("--memories", type=int, default=100_000, help="memories in the instance first [100,000]")
    ap.add_argument("--writers", type=int, default=4, help="writers at once [4]")
    ap.add_argument("--seconds", type=float, default=20.0, help="how long they write [20]")
    ap.add_argument("--json", default=None, help=f"where to write the result [{RESULTS}/live-adds-N.json]")
    ap.add_argument("--data-dir", default=None, help="servers' directory [a fresh temporary one]")
    ap.add_argument("--floor", action="store_true", help="then the same writers without the graph insertion, "
                                                        "and without the text postings too")
    args = ap.parse_args(argv)
    if args.memories < 100 or args.writers < 1 or args.seconds <= 0:
        ap.error("--memories must be 100 or more, --writers 1 or more, --seconds above 0")
    out = args.json or str(RESULTS / f"live-adds-{args.memories}.json")
    write_json(run(args.memories, args.writers, args.seconds, args.data_dir, with_floor=args.floor), out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
