"""What the benchmarks share: the machine they ran on, percentiles, and a Workbench on servers of
their own (never the user's data directory or external servers)."""

from __future__ import annotations

import json
import os
import platform
import resource
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import psutil

from core.config import EmbedderChoice, load_settings
from core.runtime import Workbench
from core.services import EmbeddedPostgres, EmbeddedRedis

RESULTS = Path(__file__).parent / "results"


def machine() -> dict:
    """CPU model, cores, RAM and Python version, as the README table shows them."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    ram_gb = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                ram_gb = round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "ram_gb": ram_gb, "python": platform.python_version(),
            "os": f"{platform.system()} {platform.release()}", "date": datetime.now(UTC).strftime("%Y-%m-%d")}


def percentiles(values_ms: list[float], qs=(50, 95, 99)) -> dict[str, float]:
    if not values_ms:
        return {f"p{q}": 0.0 for q in qs}
    return {f"p{q}": round(float(np.percentile(values_ms, q)), 3) for q in qs}


def peak_rss_mb() -> float:
    """This process's peak resident memory (Linux reports KiB)."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


class CpuMeter:
    """The CPU time a stretch of work took: this process's, and the machine's (every process: ours,
    Postgres's, Redis's), over the wall-clock time. On a machine doing nothing else the machine's share
    is the work's: no arrangement of that work takes less than `cpu_s / cores` seconds here, so
    `ceiling_per_s` is the most it could do a second with every core busy."""

    def __init__(self) -> None:
        self.wall0, self.proc0, self.all0 = time.perf_counter(), _process_cpu_s(), _machine_cpu_s()

    def read(self, per: int) -> dict:
        """The figures so far; `per_memory_ms` and `ceiling_per_s` for `per` memories."""
        wall = round(time.perf_counter() - self.wall0, 2)
        proc, total = round(_process_cpu_s() - self.proc0, 2), round(_machine_cpu_s() - self.all0, 2)
        cores = os.cpu_count() or 1
        return {"wall_s": wall, "cores": cores, "cpu_s": total, "this_process_cpu_s": proc,
                "busy": round(total / (wall * cores), 3) if wall else None,
                "per_memory_ms": round(1000 * total / max(1, per), 3),
                "ceiling_per_s": round(per * cores / total) if total > 0 else None}


def in_threads(count: int, seconds: float, call: Callable[[int, int], object]) -> tuple[list[float], dict]:
    """`count` threads, each making `call(k, i)` (thread k's i-th call) until `seconds` have passed: every
    call's ms, and the CPU time they took together (`CpuMeter`, per call)."""
    latencies: list[list[float]] = [[] for _ in range(count)]
    stop = time.perf_counter() + seconds

    def work(k: int) -> None:
        i = 0
        while time.perf_counter() < stop:
            t = time.perf_counter()
            call(k, i)
            latencies[k].append((time.perf_counter() - t) * 1000)
            i += 1

    meter = CpuMeter()
    threads = [threading.Thread(target=work, args=(k,)) for k in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    every = [ms for per in latencies for ms in per]
    return every, meter.read(len(every))


def _process_cpu_s() -> float:
    t = os.times()
    return t.user + t.system


def _machine_cpu_s() -> float:
    t = psutil.cpu_times()
    return t.user + t.system + getattr(t, "irq", 0.0) + getattr(t, "softirq", 0.0)


@contextmanager
def bench_workbench(data_dir: str | None = None, *, keep: bool = False, llm: bool = False,
                    embedder: EmbedderChoice = "wordllama") -> Iterator[Workbench]:
    """A Workbench on embedded Redis and Postgres in `data_dir` (a fresh temporary one by default, removed
    afterwards), with the offline embedder (`embedder`: WordLlama unless a benchmark asks for MiniLM) and no
    LLM whatever the environment says; with `llm`, the LLM the environment or the secrets file configures
    (`benchmarks.locomo --llm`)."""
    fresh = data_dir is None
    path = Path(data_dir or tempfile.mkdtemp(prefix="wb-bench-"))  # short: Unix socket paths are limited
    no_llm = {} if llm else {"groq_api_key": None, "llm_base_url": None}
    settings = load_settings(data_dir=path, redis_url=None, database_url=None, embedder=embedder,
                             openai_api_key=None, **no_llm)
    wb = Workbench(settings)
    try:
        yield wb
    finally:
        wb.close()
        if fresh and not keep:
            EmbeddedRedis(path).stop()
            EmbeddedPostgres(path).stop()
            shutil.rmtree(path, ignore_errors=True)


def write_json(result: dict, out: str | None) -> None:
    text = json.dumps(result, indent=2)
    if out:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).write_text(text + "\n")
    print(text)
