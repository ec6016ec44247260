"""Retrieval quality on LoCoMo:
`python -m benchmarks.locomo --data PATH [--profile P] [--json OUT] [--small] [--samples IDS] [--no-peers]
[--llm] [--embedder wordllama|minilm]`.

Each conversation goes into its own instance through the product's ingest path (`core.eval`'s LoCoMo
loader: turns as memories, each with its conversation neighbours as context, the session date as
its time; `MemoryIndex.bulk_load`). Each question of categories 1–4 with evidence is answered by the
product's retrieval (`hybrid_search` with the profile, top 25), scored by `core.tuning.evaluate`:
Recall@1/5/10/25 (LoCoMo's own: the fraction of a question's evidence turns in the top k), per
category id and over 1–4. Latency p50/p95 comes from a second pass, one question at a time with its
embedding, asked of the peers too (below). Baselines on the same turns: BM25 alone (`rank_bm25`'s
BM25Okapi over each conversation's turns, lower-cased words), the product's dense leg alone (its vector
leg, cosine order), and the published DRAGON row. Offline embedder (WordLlama, the default; `--embedder minilm` runs every vector
through the `minilm` extra's contextual model instead, to measure what one buys), no LLM. `--small`:
the first 2 conversations, 40 questions each (smoke run).

The peers, in the same run on the same turn texts with the same embedder (`result["peers"]`; `--no-peers`
skips them): mem0's open-source `Memory.search` on the same Postgres (`benchmarks.peer_mem0`) and
LanceDB's embedded hybrid search (`benchmarks.peer_lancedb`), each in a temporary directory under the
servers' directory, removed afterwards. The latency pass asks each question of us and of every peer in
turn (who goes first rotates), each search timed with its embedding, so all meet the same moments of the
machine's speed; a peer's top 25 from that pass is scored by the same function as BM25's. A peer that
cannot run is reported with its reason (`error`) and the run goes on.

`--llm` (`result["llm"]`; null without the flag): with the LLM the settings configure (`LLM_BASE_URL`, or
`GROQ_API_KEY`; without one the command says what to set and exits 2), every question also goes through
the product's MemoryScope flow (`core.usecases.retrieval.retrieve_memory`: time extraction and semantic
rank by the LLM, then fuse_rerank), asked at the question's time, one at a time; its top 25 is scored by
the same function, beside the offline figures, which the flag leaves as they are. It reports the model,
the server's address masked, the recalls, p50/p95 latency, and the LLM calls with those that failed or
scored only part of the memories, as the ops' traces say. No server is called by `make test` (a fake
server at the HTTP layer tests the path). No live figures exist in the repo because no server is
reachable from this machine.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from benchmarks.common import bench_workbench, machine, write_json
from core.config import EmbedderChoice, Settings, load_settings, mask_url
from core.errors import ConfigError, InvalidInput
from core.models import DEFAULT_PROFILE, PRESET_PROFILES, FusionProfile
from core.retrieval.memoryscope import OpTrace, ScopeParams
from core.tuning.datasets import LOCOMO_DOWNLOAD, EvalDataset, EvalQuery, default_locomo_path, load_dataset
from core.tuning.evaluate import evaluate, search_request
from core.tuning.metrics import compute_metrics, metric_names
from core.usecases.retrieval import RetrieveRequest, retrieve_memory

KS = (1, 5, 10, 25)
CATEGORIES = ("1", "2", "3", "4")
# LoCoMo paper (Maharana et al., ACL 2024), Table 3, turn-level retrieval over dialog turns.
DRAGON = {"R@5": 0.567, "R@10": 0.662, "R@25": 0.767, "R@50": 0.827,
          "source": "LoCoMo paper, Table 3 (DRAGON, dialog turns)"}
DEFAULT_DATA_DIR = ".data/bench"
PEERS = ("mem0", "lancedb")
# MemoryScope with the LLM: semantic rank scores 50 memories and keeps 25 (it runs only when it has more
# than it keeps); fuse_rerank keeps those 25 without a floor, which would only drop (scored down to 25).
SCOPE_PARAMS = {"op.retrieve_memory_op.params.top_k": 2 * KS[-1],
                "op.semantic_rank_op.params.output_memory_max_count": KS[-1],
                "op.fuse_rerank_op.params.output_memory_max_count": KS[-1],
                "op.fuse_rerank_op.params.fuse_score_threshold": 0.0}
LLM_OPS = {"extract_time_op": "extract_time", "semantic_rank_op": "semantic_rank"}  # their names in the result
NO_LLM = ("--llm needs an LLM: set LLM_BASE_URL (an OpenAI-compatible server, with LLM_API_KEY and "
          "MODEL_FAST if it needs them) or GROQ_API_KEY, in the environment or .streamlit/secrets.toml")


def recall_rows(table) -> tuple[dict, dict]:
    """(overall, by category) as {"R@k": value} from a MetricsTable."""
    def row(values: dict) -> dict:
        return {f"R@{k}": round(values[f"recall@{k}"], 4) for k in KS}

    by_cat = {r.category: row(r.values) | {"questions": r.queries}
              for r in table.rows if r.category != "overall"}
    overall = next(r for r in table.rows if r.category == "overall")
    return row(overall.values) | {"questions": overall.queries}, by_cat


def score(dataset: EvalDataset, ranked: dict[str, list[str]]) -> tuple[dict, dict]:
    """(overall, by category) recalls of rankings {qid: ids best first}: the scorer of every retriever that
    is not the product (whose `evaluate` goes through the same `compute_metrics` and `recall_rows`)."""
    return recall_rows(compute_metrics({q.qid: q.relevant for q in dataset.queries}, ranked,
                                       {q.qid: q.category for q in dataset.queries}, metric_names(KS)))


def latency_summary(times_ms: list[float]) -> dict:
    times = times_ms[10:] if len(times_ms) > 20 else times_ms  # first queries open connections, warm caches
    return {"p50": round(statistics.median(times), 2),
            "p95": round(sorted(times)[max(0, int(len(times) * 0.95) - 1)], 2), "queries": len(times)}


def bm25_baseline(dataset: EvalDataset) -> dict:
    """BM25Okapi (rank_bm25, defaults k1 1.5, b 0.75) over each conversation's turn texts."""
    from rank_bm25 import BM25Okapi

    def words(text: str) -> list[str]:
        return re.findall(r"[a-z0-9]+", text.lower())

    ranked: dict[str, list[str]] = {}
    for corpus in dataset.corpora:
        ids = [r.id for r in corpus.records]
        bm25 = BM25Okapi([words(r.content) for r in corpus.records])
        for q in (q for q in dataset.queries if q.instance == corpus.instance):
            scores = bm25.get_scores(words(q.query))
            order = sorted(range(len(ids)), key=lambda i: (-scores[i], i))[: KS[-1]]
            ranked[q.qid] = [ids[i] for i in order]
    overall, by_cat = score(dataset, ranked)
    return overall | {"by_category": by_cat}


Search = Callable[[EvalQuery], list[str]]  # a retriever's ids for a question, best first


def asked_in_turn(dataset: EvalDataset, retrievers: dict[str, Search], *,
                  optional: frozenset[str] = frozenset()) -> tuple[dict, dict, dict]:
    """Each question asked of every retriever in turn, the one that goes first rotating from question to
    question, each search timed with its embedding: ({name: {qid: ids}}, {name: times in ms}, {name: why it
    left the pass}). A whole pass of one after a whole pass of another compares them across minutes in which
    this machine's speed moves by more than their difference; in turn, they meet the same moments. An
    `optional` retriever whose search raises leaves the pass (its reason kept); another's error propagates."""
    ranked: dict[str, dict[str, list[str]]] = {name: {} for name in retrievers}
    times: dict[str, list[float]] = {name: [] for name in retrievers}
    failed: dict[str, str] = {}
    names = list(retrievers)
    for i, q in enumerate(dataset.queries):
        for name in names[i % len(names):] + names[:i % len(names)]:
            if name in failed:
                continue
            t = time.perf_counter()
            try:
                ranked[name][q.qid] = retrievers[name](q)
            except Exception as e:  # an optional peer's failure is reported, not fatal
                if name not in optional:
                    raise
                failed[name] = _why(e)
                continue
            times[name].append((time.perf_counter() - t) * 1000)
    return ranked, times, failed


def _why(e: BaseException) -> str:
    cause = f" ({e.__cause__})" if e.__cause__ else ""
    return f"{type(e).__name__}: {e}{cause}"


@contextmanager
def mem0_peer(wb, dataset: EvalDataset, workdir: Path) -> Iterator[tuple[str, Search]]:
    """mem0 on the same Postgres: one user per conversation, so a question searches its conversation only.
    Its threshold is 0, so its ranking is scored down to the 25th memory (a floor drops, never reorders)."""
    from benchmarks.peer_mem0 import NAME, Mem0Peer

    peer = Mem0Peer(wb.services.postgres_url(), wb.embedder.uncached, workdir,
                    collection=f"locomo_mem0_{uuid.uuid4().hex[:8]}", hnsw=False)
    try:
        peer.add(r for c in dataset.corpora for r in c.records)
        yield NAME, lambda q: peer.search(q.instance, q.query, KS[-1], 0.0)
    finally:
        peer.drop()


@contextmanager
def lancedb_peer(wb, dataset: EvalDataset, workdir: Path) -> Iterator[tuple[str, Search]]:
    from benchmarks.peer_lancedb import NAME, LanceDBPeer

    peer = LanceDBPeer(wb.embedder.uncached, workdir)
    peer.add(r for c in dataset.corpora for r in c.records)
    yield NAME, lambda q: peer.search(q.instance, q.query, KS[-1])


def in_turn_with_peers(wb, dataset: EvalDataset, profile: FusionProfile,
                       names: tuple[str, ...] = PEERS) -> tuple[dict, dict]:
    """Our latency and each named peer's figures (recalls by its own ranking, latency), from one pass that
    asks every retriever each question in turn (`asked_in_turn`); a peer that cannot be set up or whose
    search fails is reported under `error` with its reason, and the pass goes on without it."""
    from core.retrieval.hybrid import hybrid_search

    embedder = getattr(wb.embedder, "inner", wb.embedder)  # the uncached model, as for a new question

    def ours(q: EvalQuery) -> list[str]:
        found = hybrid_search(wb.search_pool(), embedder, search_request(q, dataset, profile, KS[-1], 50), now=q.now)
        return [r.memory.id for r in found.results]

    opened = {"mem0": mem0_peer, "lancedb": lancedb_peer}
    shown: dict[str, str] = {}  # each peer's name as the report shows it
    failed: dict[str, str] = {}  # why a peer could not be set up, or left the pass
    retrievers: dict[str, Search] = {"ours": ours}
    with ExitStack() as stack:
        for name in names:
            workdir = stack.enter_context(tempfile.TemporaryDirectory(prefix=f"{name}-", dir=wb.settings.data_dir))
            try:
                shown[name], retrievers[name] = stack.enter_context(opened[name](wb, dataset, Path(workdir)))
            except Exception as e:  # noqa: BLE001 — a peer is optional: its failure is reported, not fatal
                failed[name] = _why(e)
        ranked, times, left = asked_in_turn(dataset, retrievers, optional=frozenset(names))
    failed |= left
    peers = {name: {"error": failed[name]} if name in failed
             else {"name": shown[name]} | figures(dataset, ranked[name], times[name]) for name in names}
    return latency_summary(times["ours"]), peers


def figures(dataset: EvalDataset, ranked: dict[str, list[str]], times: list[float]) -> dict:
    """A retriever's recalls by its own rankings ({qid: ids}) and its latency."""
    overall, by_cat = score(dataset, ranked)
    return {"overall": overall, "by_category": by_cat, "latency_ms": latency_summary(times)}


def scope_params(q: EvalQuery) -> ScopeParams:
    """`SCOPE_PARAMS`, with set_query's timestamp at the question's time: the time extraction reads "last
    week" from it, and recency is measured from it, as for the offline figures."""
    at = {} if q.now is None else {"op.set_query_op.params.timestamp": int(q.now.timestamp())}
    return ScopeParams.from_flat(SCOPE_PARAMS | at)


def llm_outcome(step: OpTrace) -> str | None:
    """What an op's trace says of its LLM call: "ok"; "partial" (semantic rank's reply left memories
    unscored, which rank after the scored); "failed" (after the client's retries: time extraction used the
    rule-based parser, semantic rank kept the retrieval order); None when it made no call."""
    if step.op not in LLM_OPS:
        return None
    note = step.note or ""
    if step.status == "ran":
        return "partial" if "unscored" in note else "ok"
    return "failed" if note.startswith(("LLM failed", "semantic rank failed")) else None


def llm_calls(traces: list[list[OpTrace]]) -> dict:
    """Per LLM op: the calls made (one per op asking; the client's retries not counted), failed, partial."""
    out = {LLM_OPS[op]: {"calls": 0, "failed": 0, "partial": 0} for op in LLM_OPS}
    for step in (step for trace in traces for step in trace):
        outcome = llm_outcome(step)
        if outcome is not None:
            counts = out[LLM_OPS[step.op]]
            counts["calls"] += 1
            if outcome != "ok":
                counts[outcome] += 1
    return out


def llm_address(settings: Settings) -> str:
    """The LLM server's address as it may be shown (credentials masked)."""
    return mask_url(settings.llm_base_url or settings.groq_base_url or "https://api.groq.com")


def memoryscope_figures(wb, dataset: EvalDataset, profile: FusionProfile) -> dict:
    """Every question through the product's MemoryScope flow with the configured LLM, in a pass of its own
    (`asked_in_turn` with it alone): its recalls, its latency (LLM calls included; the query embeddings are
    those the offline pass cached) and the LLM's calls as the ops' traces tell them."""
    traces: list[list[OpTrace]] = []

    def search(q: EvalQuery) -> list[str]:
        result = retrieve_memory(wb, RetrieveRequest(instance=q.instance, query=q.query, profile=profile,
                                                     params=scope_params(q)))
        traces.append(result.trace)
        return [m.memory.id for m in result.memories]

    ranked, times, _ = asked_in_turn(dataset, {"memoryscope": search})
    settings = wb.settings
    return ({"provider": settings.llm_provider, "model": settings.model_fast, "base_url": llm_address(settings),
             "params": SCOPE_PARAMS} | figures(dataset, ranked["memoryscope"], times["memoryscope"])
            | {"llm_calls": llm_calls(traces)})


def small(dataset: EvalDataset) -> EvalDataset:
    keep = {c.instance for c in dataset.corpora[:2]}
    per: dict[str, int] = {}
    queries = []
    for q in dataset.queries:
        if q.instance in keep and per.get(q.instance, 0) < 40:
            per[q.instance] = per.get(q.instance, 0) + 1
            queries.append(q)
    return dataset.model_copy(update={"corpora": dataset.corpora[:2], "queries": queries})


def run(data: Path, profile_name: str = DEFAULT_PROFILE, *, smoke: bool = False,
        samples: list[str] | None = None, data_dir: str | None = DEFAULT_DATA_DIR,
        peer_names: tuple[str, ...] = PEERS, llm: bool = False,
        embedder: EmbedderChoice = "wordllama") -> dict:
    """The offline figures, and with `llm` MemoryScope's with the configured LLM under "llm"."""
    dataset = load_dataset(data, samples=samples)
    dataset = dataset.model_copy(update={"queries": [q for q in dataset.queries if q.category in CATEGORIES]})
    if smoke:
        dataset = small(dataset)
    with bench_workbench(data_dir, llm=llm, embedder=embedder) as wb:
        profile = PRESET_PROFILES.get(profile_name) or wb.profiles.get(profile_name)
        report = evaluate(wb, dataset, profile, KS)
        overall, by_cat = recall_rows(report.table)
        dense_profile = FusionProfile(name="dense-leg-alone", w_sem=1.0, w_text=0.0, w_rec=0.0)
        dense = evaluate(wb, dataset, dense_profile, KS, search_type="vector")
        dense_overall, dense_cat = recall_rows(dense.table)
        lat, peer_results = in_turn_with_peers(wb, dataset, profile, peer_names)
        with_llm = memoryscope_figures(wb, dataset, profile) if llm else None
    return {
        "overall": overall, "by_category": by_cat,
        "baselines": {"bm25": bm25_baseline(dataset), "dense": dense_overall | {"by_category": dense_cat},
                      "dragon": DRAGON},
        "latency_ms": lat,
        "peers": peer_results,
        "profile": profile.model_dump(), "data": data.name, "conversations": len(dataset.corpora),
        "samples": samples, "skipped": dataset.skipped, "embedder": f"{embedder} (offline)", "llm": with_llm,
        "machine": machine(),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.locomo", description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path,
                    help="a LoCoMo-format JSON file (default: ../shared/bench/locomo_dev.json)")
    ap.add_argument("--profile", default=DEFAULT_PROFILE, help="fusion profile (preset or saved name)")
    ap.add_argument("--json", metavar="OUT", help="write the result as JSON to OUT")
    ap.add_argument("--small", action="store_true", help="smoke run: 2 conversations, 40 questions each")
    ap.add_argument("--samples", help="comma-separated sample ids to keep (e.g. a held-out split)")
    ap.add_argument("--data-dir", default=DEFAULT_DATA_DIR,
                    help=f"servers' directory (default {DEFAULT_DATA_DIR}; evaluation instances are reused)")
    ap.add_argument("--no-peers", action="store_true", help="skip the peers (mem0, LanceDB)")
    ap.add_argument("--llm", action="store_true",
                    help="also run MemoryScope with the configured LLM (LLM_BASE_URL or GROQ_API_KEY)")
    ap.add_argument("--embedder", choices=("wordllama", "minilm"), default="wordllama",
                    help="the offline embedder (minilm: the `minilm` extra, a contextual model)")
    args = ap.parse_args(argv)
    if args.llm and load_settings().llm_provider == "none":
        print(NO_LLM, file=sys.stderr)
        return 2
    data = args.data or default_locomo_path()
    if data is None or not data.is_file():
        print(f"LoCoMo data file not found{f': {data}' if data else ''}.\n"
              f"Download LoCoMo from {LOCOMO_DOWNLOAD}, then run:\n"
              "  python -m benchmarks.locomo --data path/to/locomo10.json", file=sys.stderr)
        return 2
    try:
        result = run(data, args.profile, smoke=args.small, data_dir=args.data_dir,
                     samples=args.samples.split(",") if args.samples else None,
                     peer_names=() if args.no_peers else PEERS, llm=args.llm,
                     embedder=args.embedder)
    except (ConfigError, InvalidInput) as e:  # a missing extra or model, a file not in the format
        print(f"error: {e}", file=sys.stderr)
        return 2
    write_json(result, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
