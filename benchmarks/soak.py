"""A soak of `workbench api`: a few concurrent clients for --minutes at a modest rate, sampled every 30 s.

    python -m benchmarks.soak --url http://127.0.0.1:18420 --key KEY --api-pid PID --data-dir DIR \
        --minutes 25 --out /tmp/soak/run1 [--stdio-minutes 10]

The API runs already (`workbench api`, with LLM_BASE_URL on a real or fake LLM: the tests' FakeLLMServer
serves one), with a key for instance "default"; the soak waits for its /readyz. The clients do what an assistant's users do: ui_remember turns on chains that keep coming, retrieval,
memories added, searched and deleted, ratings, past-task searches, chains deleted, a few bad requests
(401, 422, 404), and MCP tool calls through the SDK's own streamable HTTP client, each session opened
and closed after a few calls. With --stdio-minutes, `workbench mcp` runs beside them on the SDK's stdio
client. Every 30 s the sampler writes the API process's RSS, fds and threads, Redis memory and keys by
prefix and the deletion journal's notes, Postgres connections, relation sizes and dead tuples, and the stdio server's RSS and fds to
samples.csv (time, series, value); requests.csv holds every request; summary.csv each series' start,
end and slope per hour; latency.csv p50/p95 per minute per endpoint.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import os
import random
import statistics
import sys
import threading
import time
import uuid
from collections import defaultdict
from pathlib import Path

import httpx
import httpx2
import psycopg
import redis
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

import core
from core.services import EmbeddedPostgres, EmbeddedRedis

ROOT = Path(core.__file__).resolve().parents[1]

INSTANCE = "default"
TOPICS = ("the garden", "the car", "a trip to Lisbon", "the budget", "the dentist", "Maya's birthday",
          "the new laptop", "the book club", "the roof repair", "running training")


class Log:
    """Every request the clients sent: (seconds since start, endpoint, status, ms)."""

    def __init__(self) -> None:
        self.t0 = time.monotonic()
        self.rows: list[tuple[float, str, int, float]] = []
        self.lock = threading.Lock()

    def add(self, endpoint: str, status: int, ms: float) -> None:
        with self.lock:
            self.rows.append((time.monotonic() - self.t0, endpoint, status, ms))


def text(n: int) -> str:
    return f"Note {n} about {random.choice(TOPICS)}: remember detail {random.randint(1, 10**6)} for later."


class HttpClient:
    """One user's assistant on the JSON endpoints: new chains keep coming."""

    def __init__(self, url: str, key: str, log: Log, pause_s: float):
        self.http = httpx.Client(base_url=f"{url}/v1/instances/{INSTANCE}",
                                 headers={"Authorization": f"Bearer {key}"}, timeout=60)
        self.bad = httpx.Client(base_url=f"{url}/v1/instances/{INSTANCE}",
                                headers={"Authorization": "Bearer wb_not_a_key"}, timeout=60)
        self.log, self.pause_s = log, pause_s
        self.chain, self.turn, self.answers, self.memories, self.chains = None, 0, [], [], []

    def call(self, endpoint: str, method: str, path: str, *, client: httpx.Client | None = None, **kw):
        t = time.perf_counter()
        try:
            r = (client or self.http).request(method, path, **kw)
            status = r.status_code
        except httpx.HTTPError:
            r, status = None, 0
        self.log.add(endpoint, status, (time.perf_counter() - t) * 1000)
        return r

    def remember(self) -> None:
        if self.chain is None or self.turn >= random.randint(3, 8):
            self.chain, self.turn = f"soak-{uuid.uuid4().hex[:12]}", 0
            self.chains.append(self.chain)
        self.turn += 1
        r = self.call("remember", "POST", "/remember", json={"thought": text(self.turn), "chain_id": self.chain})
        if r is not None and r.status_code == 200:
            self.answers.append(r.json()["thought2_id"])

    def step(self) -> None:
        roll = random.random()
        if roll < 0.35:
            self.remember()
        elif roll < 0.50:
            self.call("retrieve", "POST", "/retrieve", json={"query": random.choice(TOPICS)})
        elif roll < 0.60:
            r = self.call("memory_add", "POST", "/memories", json={"content": text(0), "kind": "observation"})
            if r is not None and r.status_code == 201:
                self.memories.append(r.json()["id"])
        elif roll < 0.65:
            self.call("memory_search", "POST", "/memories/search", json={"query": random.choice(TOPICS)})
        elif roll < 0.75 and self.answers:
            self.call("feedback", "POST", "/feedback", json={"answer_id": random.choice(self.answers[-50:]),
                                                             "rating": random.choice(["up", "down"])})
        elif roll < 0.78:
            self.call("feedback_summary", "GET", "/feedback/summary")
        elif roll < 0.83:
            self.call("tasks", "POST", "/past-tasks/search", json={"user_id": "u1", "query": "quarterly report"})
        elif roll < 0.86:
            self.call("chains_list", "GET", "/chains")
        elif roll < 0.89 and len(self.chains) > 3:
            self.call("chain_delete", "DELETE", f"/chains/{self.chains.pop(0)}")
        elif roll < 0.92 and self.memories:
            self.call("memory_delete", "DELETE", f"/memories/{self.memories.pop(0)}")
        elif roll < 0.94:
            self.call("bad_401", "POST", "/retrieve", client=self.bad, json={"query": "x"})
        elif roll < 0.96:
            self.call("bad_422", "POST", "/remember", json={"thought": "", "nope": 1})
        elif roll < 0.98:
            self.call("bad_404", "GET", f"/chains/missing-{uuid.uuid4().hex[:8]}")
        else:
            self.remember()
        self.answers, self.memories = self.answers[-200:], self.memories[-200:]

    def run(self, until: float) -> None:
        while time.monotonic() < until:
            self.step()
            time.sleep(random.uniform(0, 2 * self.pause_s))


async def mcp_calls(session: ClientSession, log: Log, prefix: str, state: dict) -> None:
    """A few tool calls of one assistant's session."""
    for _ in range(random.randint(1, 4)):
        roll = random.random()
        if roll < 0.35:
            tool, args = "ui_remember", {"thought": text(1), "chain_id": f"{prefix}-{uuid.uuid4().hex[:10]}"}
        elif roll < 0.55:
            tool, args = "retrieve_memory", {"query": random.choice(TOPICS)}
        elif roll < 0.70:
            tool, args = "add_memory", {"content": text(2)}
        elif roll < 0.80 and state.get("answer"):
            tool, args = "feedback", {"answer_id": state["answer"], "rating": "up"}
        elif roll < 0.87:
            tool, args = "memory_bank_add", {"bank": f"{prefix}-bank", "entry": {"thinking": text(3)}}
        elif roll < 0.92:
            tool, args = "memory_bank_query", {"bank": f"{prefix}-bank", "keywords": ["note"]}
        elif roll < 0.96:
            tool, args = "internal_memory", {"user_id": "u1", "query": "quarterly report"}
        else:
            tool, args = "forget", {"target": "chain", "id": f"{prefix}-gone"}
        t = time.perf_counter()
        try:
            result = await session.call_tool(tool, args)
            status = 500 if result.is_error else 200
            if tool == "ui_remember" and not result.is_error:
                state["answer"] = result.structured_content["thought2_id"]
        except Exception:  # noqa: BLE001 - counted as a failed call
            status = 0
        log.add(f"mcp_{tool}", status, (time.perf_counter() - t) * 1000)


async def mcp_http(url: str, key: str, log: Log, until: float, pause_s: float) -> None:
    """Sessions opened and closed often, as assistants do."""
    state: dict = {}
    while time.monotonic() < until:
        t = time.perf_counter()
        try:
            async with (httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"},
                                           timeout=httpx2.Timeout(60.0)) as client,
                        streamable_http_client(url + "/mcp", http_client=client) as (read, write),
                        ClientSession(read, write) as session):
                await session.initialize()
                log.add("mcp_initialize", 200, (time.perf_counter() - t) * 1000)
                await mcp_calls(session, log, "mcph", state)
        except Exception:  # noqa: BLE001 - counted as a failed session
            log.add("mcp_initialize", 0, (time.perf_counter() - t) * 1000)
        await asyncio.sleep(random.uniform(0, 2 * pause_s))


async def mcp_stdio(data_dir: Path, errlog, log: Log, until: float, pause_s: float, pid_box: list) -> None:
    """One `workbench mcp` for the whole run, on the SDK's stdio client."""
    env = {**os.environ, "DATA_DIR": str(data_dir)}
    params = StdioServerParameters(command=sys.executable, args=["-m", "core.cli", "mcp"], env=env,
                                   cwd=str(ROOT))
    state: dict = {}
    async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        pid_box.append(child_pid("mcp"))
        while time.monotonic() < until:
            await mcp_calls(session, log, "mcps", state)
            await asyncio.sleep(random.uniform(0, 2 * pause_s))


def run_stdio(args, log: Log, until: float, pid_box: list) -> None:
    with (args.out / "mcp-stdio.log").open("w") as errlog:
        asyncio.run(mcp_stdio(args.data_dir, errlog, log, until, args.pause * 2, pid_box))


def child_pid(word: str) -> int | None:
    """This process's child whose command line holds `word`."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            cmd = (entry / "cmdline").read_bytes().split(b"\0")
        except (OSError, IndexError, ValueError):
            continue
        if ppid == os.getpid() and word.encode() in cmd:
            return int(entry.name)
    return None


def wait_ready(url: str, timeout_s: float = 120) -> None:
    """The API answers /readyz (its first request starts the embedded servers the sampler reads)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if httpx.get(url + "/readyz", timeout=30).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(1)
    sys.exit(f"{url}/readyz did not answer 200 within {timeout_s:.0f} s: start `workbench api` first")


# -- sampling -----------------------------------------------------------------------------------------

def process_figures(pid: int | None, name: str) -> dict[str, float]:
    if pid is None:
        return {}
    try:
        status = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines())
        return {f"{name}.rss_kb": int(status["VmRSS"].split()[0]), f"{name}.threads": int(status["Threads"]),
                f"{name}.fds": len(os.listdir(f"/proc/{pid}/fd"))}
    except OSError:
        return {}


def redis_figures(r: redis.Redis) -> dict[str, float]:
    out: dict[str, float] = {"redis.used_memory": r.info("memory")["used_memory"], "redis.keys": r.dbsize(),
                             "redis.deletion_notes": 0}
    prefixes: dict[str, int] = defaultdict(int)
    for key in r.scan_iter(count=1000):
        prefixes[key.split(b":", 1)[0].decode()] += 1
        if key.startswith(b"deleting:"):  # one hash, its fields the deletions' notes (`core.admin.deletion`)
            out["redis.deletion_notes"] = out.get("redis.deletion_notes", 0) + r.hlen(key)
    for p, n in prefixes.items():
        out[f"redis.prefix.{p}"] = n
    return out


PG_SQL = {
    "conn": "SELECT coalesce(nullif(application_name, ''), backend_type) || '/' || coalesce(state, '-'), count(*) "
            "FROM pg_stat_activity GROUP BY 1",
    "size": "SELECT c.relname, pg_relation_size(c.oid) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast') AND c.relkind IN ('r', 'i')",
    "dead": "SELECT relname, n_dead_tup FROM pg_stat_user_tables",
    "live": "SELECT relname, n_live_tup FROM pg_stat_user_tables",
}


def pg_figures(conn: psycopg.Connection) -> dict[str, float]:
    out: dict[str, float] = {}
    for kind, sql in PG_SQL.items():
        for name, value in conn.execute(sql).fetchall():
            out[f"pg.{kind}.{name}"] = value
    out["pg.db_size"] = conn.execute("SELECT pg_database_size(current_database())").fetchone()[0]
    return out


def sample(args, log: Log, stdio_pid: list, until: float, stop: threading.Event) -> None:
    r = redis.Redis.from_url(EmbeddedRedis(args.data_dir).url)
    conn = psycopg.connect(EmbeddedPostgres(args.data_dir).url, autocommit=True, application_name="soak-sampler")
    out = args.out / "samples.csv"
    with out.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["t_s", "series", "value"])
        while True:
            t = round(time.monotonic() - log.t0)
            figures = {**process_figures(args.api_pid, "api"), **process_figures(stdio_pid[0] if stdio_pid else None,
                                                                                  "mcp_stdio")}
            figures.update(redis_figures(r))
            figures.update(pg_figures(conn))
            if args.api_log and args.api_log.exists():
                figures["api.log_bytes"] = args.api_log.stat().st_size
            with log.lock:
                figures["driver.requests"] = len(log.rows)
            for name, value in sorted(figures.items()):
                w.writerow([t, name, value])
            f.flush()
            if stop.wait(args.every) or time.monotonic() > until + args.every:
                break
    conn.close()


# -- reports -----------------------------------------------------------------------------------------

def slope_per_hour(points: list[tuple[float, float]]) -> float:
    """Least-squares slope of value over time, per hour."""
    if len(points) < 2:
        return 0.0
    mt = statistics.fmean(t for t, _ in points)
    mv = statistics.fmean(v for _, v in points)
    den = sum((t - mt) ** 2 for t, _ in points)
    return 0.0 if den == 0 else 3600 * sum((t - mt) * (v - mv) for t, v in points) / den


def write_reports(out: Path, log: Log) -> None:
    with (out / "requests.csv").open("w", newline="") as f:
        csv.writer(f).writerows([("t_s", "endpoint", "status", "ms"), *log.rows])
    buckets: dict[tuple[int, str], list[float]] = defaultdict(list)
    for t, endpoint, status, ms in log.rows:
        buckets[(int(t // 60), endpoint)].append(ms)
    with (out / "latency.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["minute", "endpoint", "n", "p50_ms", "p95_ms"])
        for (minute, endpoint), ms in sorted(buckets.items()):
            q = statistics.quantiles(ms, n=20) if len(ms) > 1 else [ms[0]] * 19
            w.writerow([minute, endpoint, len(ms), round(statistics.median(ms), 1), round(q[18], 1)])
    series: dict[str, list[tuple[float, float]]] = defaultdict(list)
    with (out / "samples.csv").open() as f:
        for row in csv.DictReader(f):
            series[row["series"]].append((float(row["t_s"]), float(row["value"])))
    with (out / "summary.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["series", "n", "start", "end", "slope_per_hour"])
        for name, points in sorted(series.items()):
            w.writerow([name, len(points), points[0][1], points[-1][1], round(slope_per_hour(points), 1)])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--url", required=True)
    p.add_argument("--key", required=True)
    p.add_argument("--api-pid", type=int, required=True)
    p.add_argument("--api-log", type=Path)
    p.add_argument("--data-dir", type=Path, required=True)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--minutes", type=float, default=25)
    p.add_argument("--stdio-minutes", type=float, default=0)
    p.add_argument("--clients", type=int, default=3)
    p.add_argument("--pause", type=float, default=0.5, help="mean seconds between one client's requests")
    p.add_argument("--every", type=float, default=30)
    args = p.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    wait_ready(args.url)
    log = Log()
    until = log.t0 + args.minutes * 60
    stdio_pid: list = []
    stop = threading.Event()
    threads = [threading.Thread(target=HttpClient(args.url, args.key, log, args.pause).run, args=(until,))
               for _ in range(args.clients)]
    threads.append(threading.Thread(target=lambda: asyncio.run(mcp_http(args.url, args.key, log, until,
                                                                        args.pause * 2))))
    if args.stdio_minutes:
        stdio_until = log.t0 + args.stdio_minutes * 60
        threads.append(threading.Thread(target=run_stdio, args=(args, log, stdio_until, stdio_pid)))
    sampler = threading.Thread(target=sample, args=(args, log, stdio_pid, until, stop))
    sampler.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    time.sleep(1)
    stop.set()
    sampler.join()
    write_reports(args.out, log)
    print(f"{len(log.rows)} requests in {args.minutes} min; reports in {args.out}")


if __name__ == "__main__":
    main()
