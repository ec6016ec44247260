"""Many instances: `python -m benchmarks.many_instances [--instances N] [--memories-each K] [--json OUT]`.

Also `--data-dir DIR` (servers of a directory kept), `--threads T` and `--seconds S`.

A deployment with one instance per end user holds hundreds or thousands of instances, and Postgres holds
each as partitions of its own (`memory`, `memory_term`, `memory_lexeme`). This benchmark builds N instances
of K memories each (default 800 of 20: the speed benchmark's synthetic conversations, `benchmarks.synth`,
by bulk load) and one memory in the shared instance (`SHARED_INSTANCE`), so a search reads two instances'
partitions as in a deployment that shares memories, on embedded Redis and Postgres of its own, offline
embedder, no LLM. It measures:

- `repeated_calls`: each of `stored_counts`, `memory_browse`, `remember` (a turn), `add_memory` and
  `superseded_memories` 14 times in a row on one instance: median and max ms, and the max's call (1-14).
  psycopg prepares a statement at its sixth run on a connection; a statement over a partitioned parent,
  prepared, held every instance's partitions at each run (797 ms at one call of 14 among 800 instances,
  before bf2205b), so a slow call among the 6th-11th is that stall.
- `rotating`: hybrid search (`hybrid_search` on `wb.search_pool()`) p50 / p95, sequential, on one instance
  and rotating over 50, 200 and N instances, with the shared instance and without it (`include_shared`
  false: one instance's partitions), in two rounds of all of them in turn; and the shared instance searched
  alone. A search's statement names its instances' partitions, so each instance has a statement of its
  own, prepared per pool connection, and psycopg keeps 100 a connection: rotating over more than that,
  every search prepares (and plans) its statement again.
- `memory`: after the rotation, each idle search connection's backend memory (the sum of
  `pg_backend_memory_contexts`, with its five largest kinds of context) and its prepared statements,
  beside a new connection's; again after the concurrent runs (`memory_after_concurrent`).
- `concurrent`: T threads (default 6) searching random instances among 50 and among N for S seconds
  (default 15) each: searches/s, p50 / p95, and the machine's CPU time per search (`CpuMeter`).
- `planning`: the search statements of five instances (as `fetch_pool` makes them) on a new connection
  with the search's settings: the server's planning and execution time (`EXPLAIN (ANALYZE, SUMMARY)`), and
  as the client sees it, sent unprepared, prepared at its first run, and prepared again (its plan cached):
  what a search pays when its statement is not prepared on its connection.
- `adds`: `add_memory` p50 / p95 among N instances: into one instance, into a different one each time, and
  into those again.

The searches ask QUERY, as the measurements of the lead's commits did. The shared memory is deleted at the
end, by its rows.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import replace

import psycopg
from pgvector.psycopg import register_vector

from benchmarks import synth
from benchmarks.common import RESULTS, bench_workbench, in_threads, machine, percentiles, write_json
from core import usecases as uc
from core.ids import SHARED_INSTANCE
from core.index.partitions import searched_partitions
from core.retrieval.attributes import attribute_words
from core.retrieval.hybrid import SEARCH_SESSION, SearchRequest, hybrid_search
from core.retrieval.hybrid_sql import candidate_statement, searched_instances, shown_by
from core.retrieval.relations import related_words
from core.services import apply_settings

QUERY = "Where do I live?"
SHARED_TEXT = "The office is closed on public holidays."
REPEATS = 14  # the stall showed at the 6th-11th call of a statement on a connection
ROTATIONS = (50, 200)  # and N
ROUNDS = 2
SKIPPED = 50  # the first searches of a rotation prepare each instance's statement: left out of its figures


def instance_names(prefix: str, n: int) -> list[str]:
    return [f"{prefix}-{i:04d}" for i in range(n)]


def turns_of(names: list[str], each: int) -> Iterator[synth.Turn]:
    """`each` turns for every instance, a conversation of its own (seeded by its position)."""
    for i, name in enumerate(names):
        for turn in synth.conversations(each, instances=1, prefix=name, seed=1000 + i):
            yield replace(turn, instance=name)


def build(wb, names: list[str], each: int) -> dict:
    """The instances not yet there, by one bulk load; each with its partitions analysed by the load."""
    have = set(wb.index.instances())
    missing = [n for n in names if n not in have]
    t = time.perf_counter()
    loaded = wb.index.bulk_load(synth.records(turns_of(missing, each)))
    return {"instances_made": len(missing), "memories_loaded": loaded, "seconds": round(time.perf_counter() - t, 1),
            "instances_in_database": len(wb.index.instances())}


def timed(call: Callable[[], object], times: int) -> list[float]:
    out = []
    for _ in range(times):
        t = time.perf_counter()
        call()
        out.append(round((time.perf_counter() - t) * 1000, 2))
    return out


def summary(ms: list[float]) -> dict:
    worst = max(ms)
    return {"median_ms": round(statistics.median(ms), 2), "max_ms": worst, "max_at_call": ms.index(worst) + 1,
            "ms": ms}


def repeated_calls(wb, instance: str, other: str) -> dict:
    """Each read and write a page or a turn makes, REPEATS times in a row on one instance, after one call of
    each on `other`: the process's first turn that reads a date in its text pays for dateparser's
    timezone patterns (0.2-0.6 s on this machine, once a process), not for the instances."""
    said = iter(synth.conversations(4 * REPEATS, instances=1, prefix="said", seed=5))
    texts = [t.text for t in said][: 2 * REPEATS]
    turn, add = iter(texts[:REPEATS]), iter(texts[REPEATS:])
    ids = ["c000000-0", "c000000-1"]  # the instance's first two memories (`synth.records`' ids)
    calls = {
        "stored_counts": lambda: uc.stored_counts(wb, uc.InstanceRequest(instance=instance)),
        "memory_browse": lambda: uc.memory_browse(wb, uc.MemoryBrowse(instance=instance)),
        "remember": lambda: uc.remember(wb, uc.UiRememberParams(instance=instance, chain_id="many-bench",
                                                                thought=next(turn))),
        "add_memory": lambda: uc.add_memory(wb, uc.AddMemory(instance=instance, content=next(add))),
        "superseded_memories": lambda: uc.superseded_memories(
            wb, uc.SupersededRequest(instance=instance, ids=ids)),
    }
    warm_up(wb, other)
    return {name: summary(timed(call, REPEATS)) for name, call in calls.items()}


def warm_up(wb, instance: str) -> None:
    uc.stored_counts(wb, uc.InstanceRequest(instance=instance))
    uc.memory_browse(wb, uc.MemoryBrowse(instance=instance))
    uc.remember(wb, uc.UiRememberParams(instance=instance, chain_id="many-warm-up",
                                        thought="What did I book yesterday, and what is on next month?"))
    uc.add_memory(wb, uc.AddMemory(instance=instance, content="The bench warmed up on Sunday."))


def search(wb, instance: str, shared: bool) -> None:
    hybrid_search(wb.search_pool(), wb.embedder,
                  SearchRequest(query=QUERY, instance=instance, top_k=5, include_shared=shared))


def rotation_sizes(n: int) -> list[int]:
    return [1, *sorted({min(size, n) for size in ROTATIONS} | {n})]


def rotations(wb, names: list[str], searches: int) -> dict:
    """Searches one after the other over the first `size` instances in turn (every one at least once; the
    first SKIPPED of each run left out), for each size of `rotation_sizes`, with the shared instance and
    without; ROUNDS rounds of all of them in turn, so a busy moment of the machine is not one size's alone."""
    ways = {"with_shared": True, "without_shared": False}
    ms: dict[tuple[str, int], list[float]] = {(way, size): [] for way in ways for size in rotation_sizes(len(names))}
    for _ in range(ROUNDS):
        for way, size in ms:
            count = max(searches, size + SKIPPED)
            ms[(way, size)] += timed_rotation(wb, names[:size], count, ways[way])[SKIPPED:]
    out: dict = {way: [{"instances": size, "searches": len(ms[(way, size)]), **percentiles(ms[(way, size)], (50, 95))}
                       for size in rotation_sizes(len(names))] for way in ways}
    alone = timed_rotation(wb, [SHARED_INSTANCE], searches, False)[SKIPPED:]
    out["shared_instance_alone"] = {"searches": len(alone), **percentiles(alone, (50, 95))}
    return out


def timed_rotation(wb, chosen: list[str], count: int, shared: bool) -> list[float]:
    turn = iter(range(count))
    return timed(lambda: search(wb, chosen[next(turn) % len(chosen)], shared), count)


def connections_memory(pool) -> list[dict]:
    """Each idle connection of `pool`: its backend's memory and its prepared statements (all of them taken
    at once, so each is read once)."""
    taken = [pool.getconn() for _ in range(pool.get_stats().get("pool_available", 0))]
    try:
        return [backend_memory(conn) for conn in taken]
    finally:
        for conn in taken:
            pool.putconn(conn)


def fresh_backend_memory(wb) -> dict:
    """A new connection's backend, for what the prepared statements add to the search connections'."""
    with psycopg.connect(wb.services.postgres_url(), autocommit=True) as conn:
        return backend_memory(conn)


def backend_memory(conn) -> dict:
    pid, total = conn.execute("SELECT pg_backend_pid(), sum(total_bytes) FROM pg_backend_memory_contexts").fetchone()
    prepared = conn.execute("SELECT count(*) FROM pg_prepared_statements").fetchone()[0]
    largest = conn.execute("SELECT name, sum(total_bytes) FROM pg_backend_memory_contexts GROUP BY name "
                           "ORDER BY 2 DESC LIMIT 5").fetchall()
    return {"pid": pid, "backend_mb": round(int(total) / 1e6, 1), "prepared_statements": prepared,
            "psycopg_keeps": conn.prepared_max, "largest_contexts_mb": {n: round(int(b) / 1e6, 1) for n, b in largest}}


def concurrent(wb, names: list[str], size: int, threads: int, seconds: float, shared: bool) -> dict:
    """`threads` threads searching random instances among the first `size` for `seconds`."""
    chosen = names[:size]
    picks = [random.Random(k) for k in range(threads)]
    every, cpu = in_threads(threads, seconds, lambda k, _: search(wb, picks[k].choice(chosen), shared))
    cpu["per_search_ms"] = cpu.pop("per_memory_ms")
    return {"instances": size, "threads": threads, "searches": len(every),
            "searches_per_s": round(len(every) / cpu["wall_s"], 1), **percentiles(every, (50, 95)), "cpu": cpu}


def search_statement(wb, instance: str, shared: bool) -> tuple[bytes, list, int]:
    """The first statement a search of QUERY on `instance` sends (`fetch_pool`'s), and the partitions it
    reads."""
    req = SearchRequest(query=QUERY, instance=instance, top_k=5, include_shared=shared)
    partitions = searched_partitions(wb.pool(), searched_instances(instance, shared))
    asks = attribute_words(QUERY)
    with wb.search_pool().connection() as conn:
        related = related_words(conn, QUERY, partitions) + asks
    stmt, params = candidate_statement(wb.embedder, req, wb.embedder.embed(QUERY), partitions,
                                       shown_by(req.profile), 0, related, bool(asks))
    return stmt, params, len(partitions)


def planning(wb, instances: list[str], shared: bool) -> dict:
    """The search statements of `instances` on a connection of their own with the search's settings
    (`SEARCH_SESSION`): the server's planning and execution time, then as the client sees it, unprepared
    (planned at every run), prepared at its first run, and prepared again (its plan cached). Medians over
    the instances, of 3 runs each but the first prepared one."""
    explained, unprepared, first, prepared, partitions = [], [], [], [], 0
    with psycopg.connect(wb.services.postgres_url(), autocommit=True) as conn:
        register_vector(conn)
        apply_settings(conn, SEARCH_SESSION)
        for instance in instances:
            stmt, params, partitions = search_statement(wb, instance, shared)

            def send(prepare: bool, stmt=stmt, params=params) -> None:
                psycopg.RawCursor(conn).execute(stmt, params, binary=True, prepare=prepare).fetchall()

            explained += [explain(conn, stmt, params) for _ in range(3)]
            unprepared += timed(lambda: send(False), 3)
            runs = timed(lambda: send(True), 4)
            first.append(runs[0])
            prepared += runs[1:]
    return {"partitions": partitions, "instances": len(instances),
            "planning_ms": round(statistics.median(p for p, _ in explained), 2),
            "execution_ms": round(statistics.median(e for _, e in explained), 2),
            "unprepared_ms": round(statistics.median(unprepared), 2),
            "first_prepared_ms": round(statistics.median(first), 2),
            "prepared_ms": round(statistics.median(prepared), 2)}


def explain(conn, stmt: bytes, params: list) -> tuple[float, float]:
    """(planning, execution) ms of one `EXPLAIN (ANALYZE, SUMMARY)` of the statement, unprepared."""
    rows = psycopg.RawCursor(conn).execute(b"EXPLAIN (ANALYZE, SUMMARY, TIMING OFF) " + stmt, params,
                                           prepare=False).fetchall()
    times = {line.split(":")[0]: float(line.split(":")[1].split()[0]) for (line,) in rows if " Time:" in line}
    return times["Planning Time"], times["Execution Time"]


def adds(wb, names: list[str], count: int) -> dict:
    """`add_memory` into one instance `count` times (the first 10 left out); into a different instance each
    time, `count` instances spread over all; and into those instances again, in the same order."""
    texts = iter(t.text for t in synth.conversations(6 * count + 40, instances=1, prefix="add", seed=9))

    def add(instance: str) -> None:
        uc.add_memory(wb, uc.AddMemory(instance=instance, content=next(texts)))

    one = timed(lambda: add(names[-1]), count + 10)[10:]
    step = max(1, len(names) // count)
    spread = [names[(i * step) % len(names)] for i in range(count)]
    out = {"one_instance": one}
    for label in ("a_different_instance_each", "those_instances_again"):
        turn = iter(spread)
        out[label] = timed(lambda turn=turn: add(next(turn)), count)
    return {label: {"adds": len(ms), **percentiles(ms, (50, 95))} for label, ms in out.items()}


def run(n: int, each: int, data_dir: str | None = None, *, prefix: str = "many", threads: int = 6,
        seconds: float = 15.0, searches: int = 400) -> dict:
    """The whole benchmark (see the module's docstring). The shared memory it adds is deleted at the end,
    by its rows, so a data directory given keeps no trace of it in other instances' searches."""
    names = instance_names(prefix, n)
    result: dict = {"instances": n, "memories_each": each, "query": QUERY, "machine": machine()}
    with bench_workbench(data_dir) as wb:
        result["build"] = build(wb, names, each)
        shared = uc.add_memory(wb, uc.AddMemory(instance=SHARED_INSTANCE, content=SHARED_TEXT))
        try:
            result |= measure(wb, names, threads, seconds, searches)
        finally:
            wb.index.delete(SHARED_INSTANCE, [shared.id])
    return result


def measure(wb, names: list[str], threads: int, seconds: float, searches: int) -> dict:
    n = len(names)
    out: dict = {"repeated_calls": repeated_calls(wb, names[n // 2], names[0])}
    out["rotating"] = rotations(wb, names, searches)
    out["memory"] = {"fresh_connection": fresh_backend_memory(wb), "search_connections": connections_memory(wb.search_pool())}
    out["concurrent"] = {"with_shared": [concurrent(wb, names, size, threads, seconds, True)
                                         for size in sorted({min(50, n), n})],
                         "without_shared": [concurrent(wb, names, n, threads, seconds, False)]}
    out["memory_after_concurrent"] = connections_memory(wb.search_pool())
    out["planning"] = {f"{way}_shared": planning(wb, names[1:6], shared)
                       for way, shared in (("with", True), ("without", False))}
    out["adds"] = adds(wb, names, 60)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.many_instances", description=__doc__.split("\n")[0])
    ap.add_argument("--instances", type=int, default=800, help="instances to build [800]")
    ap.add_argument("--memories-each", type=int, default=20, help="memories in each instance [20]")
    ap.add_argument("--threads", type=int, default=6, help="concurrent searchers [6]")
    ap.add_argument("--seconds", type=float, default=15.0, help="how long each concurrent run lasts [15]")
    ap.add_argument("--json", default=None, help=f"where to write the result [{RESULTS}/many-instances.json]")
    ap.add_argument("--data-dir", default=None, help="servers' directory [a fresh temporary one]")
    args = ap.parse_args(argv)
    if args.instances < 2 or args.memories_each < 2 or args.threads < 1 or args.seconds <= 0:
        ap.error("--instances and --memories-each must be 2 or more, --threads 1 or more, --seconds above 0")
    out = args.json or str(RESULTS / "many-instances.json")
    write_json(run(args.instances, args.memories_each, args.data_dir, threads=args.threads, seconds=args.seconds),
               out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
