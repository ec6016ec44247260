"""The explorer's listing at depth: `python -m benchmarks.explorer_pages [--memories N] [--data-dir DIR]
[--runs R] [--json OUT] [--small]`.

The Memory explorer lists an instance's memories by time a page at a time (`uc.memory_browse`). A page read
by OFFSET reads and skips every row before it, so the last page of a large instance cost a scan of all of
it; read by keyset (the edge row's time and id carried from the page shown) it starts where the page shown
ended. Measured here, through the use case as the page calls it, on one instance of N synthetic conversation
memories (`benchmarks.synth`, loaded by `MemoryIndex.bulk_load` as `benchmarks.speed` loads them, then
VACUUM (ANALYZE)), 20 a page, each figure the median of R calls (ms):
- `first`: page 1; `page_100`: page 100 typed in (no page shown before); `last`: the last page typed in;
- `next_to_100`: page 100 with page 99 shown (the "next" step), `previous_to_99`: page 99 with page 100
  shown; `last_from_first`: the last page with page 1 shown; `middle`: the middle page typed in (the
  farthest from both ends);
- the same for the oldest-first order, and `first`/`last` with a kind filter (`user`);
- `count_ms`: the count of all rows alone, which every page pays for its "page k of n".
With `--data-dir` a data set built before is reused when it holds N memories. `--small`: 2,000 memories,
a smoke run of the path.
"""

from __future__ import annotations

import argparse
import statistics
import time

from benchmarks import synth
from benchmarks.common import RESULTS, bench_workbench, machine, write_json
from benchmarks.speed import vacuum
from core import usecases as uc
from core.admin.explorer import BROWSE_COUNT, MemoryBrowse, _browse_params

PREFIX = "pages"
PAGE_SIZE = 20


def build(wb, n: int, prefix: str) -> dict:
    """The instance loaded, or reused when it holds exactly `n` memories."""
    held = wb.index.count(f"{prefix}-0")
    if held == n:
        return {"reused": True}
    if held:
        raise SystemExit(f"the data directory holds {held:,} memories in {prefix}-0, not {n:,}: name another "
                         "--data-dir")
    t0 = time.perf_counter()
    wb.index.bulk_load(synth.records(synth.conversations(n, instances=1, prefix=prefix)))
    vacuum(wb)
    return {"reused": False, "load_s": round(time.perf_counter() - t0, 1)}


def timed(call, runs: int) -> tuple[float, object]:
    """The median wall time of `runs` calls (ms), and the last call's result."""
    times, out = [], None
    for _ in range(runs):
        t0 = time.perf_counter()
        out = call()
        times.append((time.perf_counter() - t0) * 1000)
    return round(statistics.median(times), 2), out


def browse(wb, instance: str, **kw):
    return uc.memory_browse(wb, MemoryBrowse(instance=instance, page_size=PAGE_SIZE, **kw))


def keyset() -> bool:
    """Whether this version carries the page shown (`MemoryBrowse.shown`): measured before and after."""
    return "shown" in MemoryBrowse.model_fields


def measure_order(wb, instance: str, runs: int, **filters) -> dict:
    out: dict = {}
    first_ms, first = timed(lambda: browse(wb, instance, page=1, **filters), runs)
    pages = first.pages
    out["pages"] = pages
    out["first"] = first_ms
    out["page_100"], p100 = timed(lambda: browse(wb, instance, page=min(100, pages), **filters), runs)
    out["middle"], _ = timed(lambda: browse(wb, instance, page=max(1, pages // 2), **filters), runs)
    out["last"], last = timed(lambda: browse(wb, instance, page=pages, **filters), runs)
    out["last_rows"] = len(last.hits)
    if keyset() and pages >= 100:
        p99 = browse(wb, instance, page=99, **filters)
        out["next_to_100"], nxt = timed(lambda: browse(wb, instance, page=100, shown=p99.mark, **filters), runs)
        out["previous_to_99"], prv = timed(lambda: browse(wb, instance, page=99, shown=p100.mark, **filters), runs)
        out["last_from_first"], _ = timed(lambda: browse(wb, instance, page=pages, shown=first.mark, **filters), runs)
        out["same_as_offset"] = ([h.id for h in nxt.hits] == [h.id for h in p100.hits]
                                 and [h.id for h in prv.hits] == [h.id for h in p99.hits])
    return out


def run(n: int, data_dir: str | None, runs: int, prefix: str = PREFIX) -> dict:
    instance = f"{prefix}-0"
    result: dict = {"memories": n, "page_size": PAGE_SIZE, "runs": runs, "keyset": keyset(), "machine": machine()}
    with bench_workbench(data_dir) as wb:
        result["data"] = build(wb, n, prefix)
        uc.memory_browse(wb, MemoryBrowse(instance=instance))  # the pool warm, the outbox synced
        with wb.pool().connection() as conn:
            params = _browse_params(MemoryBrowse(instance=instance))
            result["count_ms"], _ = timed(lambda: conn.execute(BROWSE_COUNT, params).fetchone(), runs)
        result["newest"] = measure_order(wb, instance, runs)
        result["oldest"] = measure_order(wb, instance, runs, order="oldest")
        result["newest_user"] = measure_order(wb, instance, runs, kinds=["user"])
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.explorer_pages", description=__doc__.split("\n")[0])
    ap.add_argument("--memories", type=int, default=None, help="memories in the instance (default 200,000)")
    ap.add_argument("--data-dir", help="servers' directory, reused when it holds these memories (default: a "
                                       "fresh temporary one, removed after)")
    ap.add_argument("--runs", type=int, default=5, help="calls per figure, the median reported (default 5)")
    ap.add_argument("--json", metavar="OUT", help="default: benchmarks/results/explorer-pages-<memories>.json")
    ap.add_argument("--small", action="store_true", help="smoke run: 2,000 memories, 2 runs")
    args = ap.parse_args(argv)
    n = args.memories or (2_000 if args.small else 200_000)
    runs = 2 if args.small else args.runs
    write_json(run(n, args.data_dir, runs), args.json or str(RESULTS / f"explorer-pages-{n}.json"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
