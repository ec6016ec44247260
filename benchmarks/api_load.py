"""ui_remember over HTTP under load: turns per second and latency with concurrent clients, no LLM.

    python -m benchmarks.api_load --clients 16 --turns 50 --json benchmarks/results/api-load.json

Starts `workbench api` (with `--workers`) on a fresh data directory with embedded Redis and Postgres
(`--data-dir` reuses the embedded servers of another), creates an API key, and runs `--clients` threads
that each send `--turns` turns of a chain of their own, keep-alive, one after another, with the key.
Reports turns/s and p50/p95/p99 latency as the clients saw it, then where the time went: the turn's own
stages as the server timed them (the results' `latency`), the rest of the request (HTTP, JSON, key
and rate checks, waiting for a worker), and the CPU each process used per turn. Last it counts every
acknowledged turn's thoughts in Redis and its user thought in the memory index: none may be lost.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from benchmarks.common import machine, percentiles, write_json
from core import usecases as uc
from core.config import load_settings
from core.runtime import Workbench
from core.services import EmbeddedPostgres, EmbeddedRedis

STAGES = ("embed_ms", "search_ms", "synthesis_ms", "store_ms", "index_ms", "total_ms")
TOPICS = ("the garden", "the car", "a trip to Lisbon", "the budget", "the dentist", "Maya's birthday",
          "the new laptop", "the book club", "the roof repair", "running training")


@dataclass
class Turn:
    client: int
    chain_id: str
    thought1_id: str
    latency_ms: float
    server: dict[str, float]


@dataclass
class LoadRun:
    turns: list[Turn] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    wall_s: float = 0.0


def message(client: int, n: int) -> str:
    topic = TOPICS[(client + n) % len(TOPICS)]
    return f"Note {n} from client {client} about {topic}: remember detail {n * 7 + client} for later."


def run_clients(url: str, instance: str, secret: str | None, *, clients: int, turns: int,
                prefix: str = "load") -> LoadRun:
    """`clients` threads, each sending `turns` ui_remember turns of its own chain; every acknowledged
    turn (HTTP 200) is recorded with its latency and the server's stage times."""
    run, lock = LoadRun(), threading.Lock()
    headers = {"Authorization": f"Bearer {secret}"} if secret else {}
    start = threading.Barrier(clients + 1)

    def client(c: int) -> None:
        chain = f"{prefix}-{c:02d}"
        with httpx.Client(base_url=f"{url}/v1/instances/{instance}", headers=headers, timeout=60) as http:
            start.wait()
            for n in range(1, turns + 1):
                t0 = time.perf_counter()
                try:
                    r = http.post("/remember", json={"thought": message(c, n), "chain_id": chain,
                                                     "thought_number": n, "total_thoughts": turns})
                except httpx.HTTPError as e:
                    with lock:
                        run.errors.append(f"{type(e).__name__}: {e}")
                    continue
                ms = (time.perf_counter() - t0) * 1000
                with lock:
                    if r.status_code == 200:
                        body = r.json()
                        run.turns.append(Turn(c, chain, body["thought1_id"], ms, body["latency"]))
                    else:
                        run.errors.append(f"{r.status_code}: {r.text[:200]}")

    threads = [threading.Thread(target=client, args=(c,)) for c in range(clients)]
    for t in threads:
        t.start()
    start.wait()
    t0 = time.perf_counter()
    for t in threads:
        t.join()
    run.wall_s = time.perf_counter() - t0
    return run


def lost_turns(wb: Workbench, instance: str, run: LoadRun) -> dict[str, int]:
    """Acknowledged turns whose thoughts are missing from Redis, or whose user thought is missing from
    the memory index in Postgres."""
    by_chain: dict[str, set[str]] = {}
    for turn in run.turns:
        by_chain.setdefault(turn.chain_id, set()).add(turn.thought1_id)
    missing_redis = 0
    for chain, ids in by_chain.items():
        thoughts = wb.thoughts.chain_thoughts(instance, chain)
        stored = {t.id for t in thoughts}
        missing_redis += len(ids - stored)
        # Each turn stores three thoughts (question, answer, metrics).
        missing_redis += max(0, 3 * len(ids) - len(thoughts))
    wanted = [t.thought1_id for t in run.turns]
    indexed = {m.id for i in range(0, len(wanted), 500) for m in wb.index.get(instance, wanted[i:i + 500])}
    return {"acknowledged": len(run.turns), "missing_in_redis": missing_redis,
            "missing_in_postgres": len(set(wanted) - indexed)}


def _cpu_s(pids: list[int]) -> float:
    """User + system CPU seconds of these processes so far."""
    tick, total = os.sysconf("SC_CLK_TCK"), 0.0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
        except (OSError, IndexError, ValueError):
            pass
    return total


def _processes(api: int, data_dir: Path) -> dict[str, list[int]]:
    """The API server with its workers, and the Postgres and Redis servers of `data_dir`, each with its
    child processes (Postgres: a backend per connection)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue

    def tree(root: int | None) -> list[int]:
        if root is None:
            return []
        found = []
        for pid in parents:
            p = pid
            while p in parents and p != root and p > 1:
                p = parents[p]
            if p == root:
                found.append(pid)
        return found

    def pid_file(path: Path) -> int | None:
        try:
            return int(path.read_text().split()[0])
        except (OSError, IndexError, ValueError):
            return None

    return {"api": tree(api), "postgres": tree(pid_file(data_dir / "pg" / "postmaster.pid")),
            "redis": tree(pid_file(data_dir / "redis" / "redis.pid"))}


def start_api(data_dir: Path, workers: int, port: int) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items()
           if k not in ("REDIS_URL", "DATABASE_URL", "GROQ_API_KEY", "LLM_BASE_URL", "OPENAI_API_KEY")}
    env.update({"DATA_DIR": str(data_dir), "EMBEDDER": "wordllama", "API_RATE_LIMIT": "1000000/minute"})
    return subprocess.Popen([sys.executable, "-m", "core.cli", "api", "--port", str(port), "--workers",
                             str(workers)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)


def wait_ready(url: str, proc: subprocess.Popen, timeout: float = 120, *, probe: bool = True) -> None:
    """Until the `workbench api` process answers /readyz (without `probe`: until it listens); RuntimeError
    if it exits or takes too long. The answer counts only once `proc` itself listens on the port: a port
    chosen free may be taken by another server before `proc` binds it (which then exits, "address already
    in use"), and that server's answer said ready for a process that was still starting."""
    deadline = time.monotonic() + timeout
    port = httpx.URL(url).port
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"`workbench api` exited with {proc.returncode}: {proc.stderr.read()[-2000:]}")
        try:
            if listens(proc.pid, port) and (not probe or httpx.get(url + "/readyz", timeout=2).status_code == 200):
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise RuntimeError("`workbench api` did not become ready")


def listens(pid: int, port: int) -> bool:
    """Whether process `pid`, or one of its workers, listens on TCP `port`."""
    import psutil  # the dev and bench extras'

    try:
        family = [psutil.Process(pid)]
        family += family[0].children(recursive=True)
        return any(c.status == psutil.CONN_LISTEN and c.laddr and c.laddr.port == port
                   for p in family for c in p.net_connections(kind="tcp"))
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return False


def summarise(run: LoadRun, cpu: dict[str, float]) -> dict:
    ok = len(run.turns)
    latency = [t.latency_ms for t in run.turns]
    server_total = [t.server["total_ms"] for t in run.turns]
    overhead = [t.latency_ms - t.server["total_ms"] for t in run.turns]
    return {
        "turns": ok, "errors": len(run.errors), "first_errors": run.errors[:3],
        "wall_s": round(run.wall_s, 2), "turns_per_s": round(ok / run.wall_s, 1) if run.wall_s else 0.0,
        "latency_ms": {**percentiles(latency), "mean": round(statistics.fmean(latency), 2) if latency else 0},
        "server_turn_ms": percentiles(server_total),
        "server_stages_p50_ms": {s: round(statistics.median(t.server.get(s) or 0 for t in run.turns), 2)
                                 for s in STAGES} if ok else {},
        "outside_turn_ms": percentiles(overhead),
        "cpu_ms_per_turn": {k: round(v * 1000 / ok, 2) for k, v in cpu.items()} if ok else {},
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--turns", type=int, default=50, help="per client")
    ap.add_argument("--workers", type=int, default=2, help="`workbench api --workers`")
    ap.add_argument("--warmup", type=int, default=5, help="turns per client before measuring")
    ap.add_argument("--port", type=int, default=8711)
    ap.add_argument("--data-dir", default=None, help="use the embedded servers of this DATA_DIR")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()

    fresh = args.data_dir is None
    data_dir = Path(args.data_dir or tempfile.mkdtemp(prefix="wb-apib-"))
    settings = load_settings(data_dir=data_dir, redis_url=None, database_url=None, embedder="wordllama",
                             groq_api_key=None, llm_base_url=None, openai_api_key=None)
    wb = Workbench(settings)
    instance = f"bench-api-{uuid.uuid4().hex[:8]}"
    key = uc.CreateKey(name=f"bench-{uuid.uuid4().hex[:8]}", instances=[instance])
    secret = uc.create_key(wb, key).secret
    url = f"http://127.0.0.1:{args.port}"
    proc = start_api(data_dir, args.workers, args.port)
    try:
        try:
            wait_ready(url, proc)
        except RuntimeError as e:
            raise SystemExit(str(e)) from None
        print(f"warming up: {args.clients} clients x {args.warmup} turns", file=sys.stderr)
        run_clients(url, instance, secret, clients=args.clients, turns=args.warmup, prefix="warmup")
        groups = _processes(proc.pid, data_dir)
        before = {k: _cpu_s(v) for k, v in groups.items()}
        own0 = resource.getrusage(resource.RUSAGE_SELF)
        print(f"measuring: {args.clients} clients x {args.turns} turns", file=sys.stderr)
        run = run_clients(url, instance, secret, clients=args.clients, turns=args.turns)
        own1 = resource.getrusage(resource.RUSAGE_SELF)
        cpu = {k: _cpu_s(groups[k]) - before[k] for k in groups}
        cpu["clients"] = (own1.ru_utime - own0.ru_utime) + (own1.ru_stime - own0.ru_stime)
        result = {"benchmark": "api_load", "machine": machine(), "clients": args.clients,
                  "turns_per_client": args.turns, "workers": args.workers, "llm": None,
                  "embedder": "wordllama", **summarise(run, cpu), "lost": lost_turns(wb, instance, run)}
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
        wb.close()
        if fresh:
            EmbeddedRedis(data_dir).stop()
            EmbeddedPostgres(data_dir).stop()
            shutil.rmtree(data_dir, ignore_errors=True)
    write_json(result, args.json)


if __name__ == "__main__":
    main()
