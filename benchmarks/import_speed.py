"""Import speed: `python -m benchmarks.import_speed [--n N] [--json OUT] [--data-dir DIR]`.

Writes N synthetic messages (`benchmarks.synth`: user/assistant conversations of 4–12 turns over a
year; default 100,000) as an OpenAI chat JSONL file, then imports it with `uc.import_file` into a new
instance, on embedded Redis and Postgres of its own with the offline embedder: the streamed validation
pass, then the write pass (thoughts and feedback records in Redis, embeddings, the memory index and its
text postings through the bulk load). Reports messages per second (both passes, and the write pass
alone), the file's size, this process's resident memory before the import and at its peak, and the
peak of Python allocations during the validation pass (tracemalloc): bounded memory means the peaks stay
flat as N grows while the file grows with it. The goal: 2,000 messages per second or more.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import tracemalloc
from itertools import groupby
from pathlib import Path

from benchmarks import synth
from benchmarks.common import RESULTS, bench_workbench, machine, peak_rss_mb, write_json
from core import usecases as uc

GOAL_PER_S = 2000


def write_export(path: Path, n: int) -> int:
    """N messages as OpenAI chat JSONL, one conversation per line, streamed to disk."""
    with path.open("w", encoding="utf-8") as f:
        turns = synth.conversations(n, instances=1, prefix="import")
        for chain, chain_turns in groupby(turns, key=lambda t: t.chain_id):
            messages = [{"role": t.role, "content": t.text, "timestamp": t.at.isoformat()}
                        for t in chain_turns]
            f.write(json.dumps({"id": chain, "messages": messages}) + "\n")
    return path.stat().st_size


def validation_peak(wb, path: Path) -> float:
    """The validation pass alone under tracemalloc: its peak of Python allocations, in MB."""
    tracemalloc.start()
    uc.import_preview(wb, uc.ImportFile(path=path, instance="bench-import"))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return round(peak / 1e6, 2)


def run(n: int, data_dir: str | None) -> dict:
    with tempfile.TemporaryDirectory(prefix="wb-import-") as tmp:
        export = Path(tmp) / "conversations.jsonl"
        size = write_export(export, n)
        with bench_workbench(data_dir) as wb:
            traced_mb = validation_peak(wb, export)
            wb.index.ensure_vector_index()
            wb.embedder.embed_batch(["warm up"])
            rss_before = peak_rss_mb()
            t0 = time.perf_counter()
            result = uc.import_file(wb, uc.ImportFile(path=export, instance=f"bench-import-{n}"))
            seconds = time.perf_counter() - t0
            written = result.outcome.created.messages
            stored = wb.index.count(f"bench-import-{n}")
    per_s = written / seconds
    return {"messages": n, "conversations": result.outcome.created.conversations, "written": written,
            "indexed": stored, "file_mb": round(size / 1e6, 1), "seconds": round(seconds, 2),
            "messages_per_s": round(per_s, 1), "goal_per_s": GOAL_PER_S, "meets_goal": per_s >= GOAL_PER_S,
            "rss_before_import_mb": rss_before, "peak_rss_mb": peak_rss_mb(),
            "validation_traced_peak_mb": traced_mb, "machine": machine()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.import_speed",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=100_000, help="messages to import [100,000]")
    parser.add_argument("--json", default=str(RESULTS / "import-speed.json"),
                        help="where to write the result")
    parser.add_argument("--data-dir", default=None, help="servers' data directory [a fresh temporary one]")
    args = parser.parse_args(argv)
    if args.n < 2:
        parser.error("--n must be 2 or more")
    write_json(run(args.n, args.data_dir), args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
