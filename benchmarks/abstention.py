"""Saying "nothing relevant": calibration of the relevance floor on LoCoMo,
`python -m benchmarks.abstention [--data PATH] [--json OUT] [--small]`.

A turn hands synthesis only the memories whose `relevance` (the semantic part and the share of the
query's words a memory holds, without recency, `core.retrieval.fusion`) reaches the floor
(`RELEVANCE_FLOOR`); when none does, the answer says no memory matches. This runs every LoCoMo question
through the product's retrieval (`hybrid_search`, the default profile, top 10, the time of the
conversation's last session as "now") and reads, for each floor of a grid:
- category 5 (adversarial: the question asks about something the conversation does not say): the share
  of questions for which no memory of the top 5 (chat's default `top_k`) passes (abstention);
- categories 1–4: the share of questions for which nothing passes all the same (false abstention), and
  the recall kept: LoCoMo's recall (share of a question's evidence turns in the top k) counting only
  evidence above the floor, and the share of questions with evidence in the top k that keep some above it;
- off-topic: the questions of categories 1–4 asked of the next conversation (about people and events it
  never mentions): the share for which nothing passes.
The default floor is the highest of the grid that keeps at least `KEEP` of the recall at top 5 and at
top 10. Offline embedder, no LLM.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from benchmarks.common import bench_workbench, machine, write_json
from benchmarks.locomo import DEFAULT_DATA_DIR, small
from core.config import Settings
from core.models import DEFAULT_PROFILE, PRESET_PROFILES
from core.retrieval.hybrid import hybrid_search
from core.tuning.datasets import EvalDataset, EvalQuery, default_locomo_path, load_dataset
from core.tuning.evaluate import ensure_loaded, search_request

KS = (5, 10)
KEEP = 0.99  # the share of the recall at top 5 and top 10 the default floor must keep
GRID = [round(i / 100, 2) for i in range(81)]
ADVERSARIAL = "5"


def adversarial_queries(data: Path, dataset: EvalDataset, samples: set[str] | None = None) -> list[EvalQuery]:
    """LoCoMo's category 5 questions (which the evaluation loader leaves out), each against its
    conversation's instance, asked at the time of the conversation's last session."""
    corpora = {c.records[0].metadata["sample_id"]: c for c in dataset.corpora if c.records}
    out = []
    for sample in json.loads(data.read_text()):
        corpus = corpora.get(str(sample.get("sample_id")))
        if corpus is None or (samples is not None and corpus.instance not in samples):
            continue
        now = max(r.created_at for r in corpus.records)
        out += [EvalQuery(qid=f"{sample['sample_id']}#{i}", query=qa["question"], relevant=[],
                          category=ADVERSARIAL, instance=corpus.instance, now=now)
                for i, qa in enumerate(sample.get("qa", []))
                if str(qa.get("category")) == ADVERSARIAL and str(qa.get("question", "")).strip()]
    return out


def off_topic(answerable: list[EvalQuery], dataset: EvalDataset) -> list[EvalQuery]:
    """Each question asked of the next conversation instead of its own (no evidence there)."""
    instances = [c.instance for c in dataset.corpora]
    if len(instances) < 2:
        return []
    moved = {a: instances[(i + 1) % len(instances)] for i, a in enumerate(instances)}
    return [q.model_copy(update={"qid": f"{q.qid}@next", "instance": moved[q.instance], "relevant": []})
            for q in answerable]


def retrieved(wb, dataset: EvalDataset, queries: list[EvalQuery]) -> dict[str, list[tuple[str, float]]]:
    """Each query's top 10 as (memory id, relevance), best first by the profile's combined score."""
    profile = PRESET_PROFILES[DEFAULT_PROFILE]
    wb.embedder.embed_batch([q.query for q in queries])  # one batch; the searches hit the cache
    out = {}
    for q in queries:
        found = hybrid_search(wb.search_pool(), wb.embedder, search_request(q, dataset, profile, max(KS), 50),
                              now=q.now)
        out[q.qid] = [(s.memory.id, s.score.relevance) for s in found.results]
    return out


def at_floor(floor: float, answerable: list[EvalQuery], adversarial: list[EvalQuery],
             elsewhere: list[EvalQuery], ranked: dict[str, list[tuple[str, float]]]) -> dict:
    """The figures of one floor (see the module docstring)."""
    def passing(qid: str, k: int) -> list[str]:
        return [i for i, relevance in ranked[qid][:k] if relevance >= floor]

    row: dict = {"floor": floor,
                 "cat5_abstained": _share(not passing(q.qid, KS[0]) for q in adversarial),
                 "cat1_4_abstained": _share(not passing(q.qid, KS[0]) for q in answerable),
                 "off_topic_abstained": _share(not passing(q.qid, KS[0]) for q in elsewhere)}
    for k in KS:
        row[f"R@{k}"] = _mean(len(set(passing(q.qid, k)) & set(q.relevant)) / len(q.relevant) for q in answerable)
        hit = [q for q in answerable if {i for i, _ in ranked[q.qid][:k]} & set(q.relevant)]
        row[f"hits_kept@{k}"] = _share(bool(set(passing(q.qid, k)) & set(q.relevant)) for q in hit)
    return row


def _share(flags) -> float:
    flags = list(flags)
    return round(sum(flags) / len(flags), 4) if flags else 0.0


def _mean(values) -> float:
    values = list(values)
    return round(sum(values) / len(values), 4) if values else 0.0


def calibrate(rows: list[dict]) -> dict:
    """The highest floor keeping at least KEEP of the recall at every k (the grid starts at 0: no floor)."""
    base = rows[0]
    kept = [r for r in rows if all(r[f"R@{k}"] >= KEEP * base[f"R@{k}"] for k in KS)]
    return max(kept, key=lambda r: r["floor"])


def run(data: Path, *, smoke: bool = False, data_dir: str | None = DEFAULT_DATA_DIR) -> dict:
    dataset = load_dataset(data)
    if smoke:
        dataset = small(dataset)
    answerable = [q for q in dataset.queries if q.category in ("1", "2", "3", "4")]
    adversarial = adversarial_queries(data, dataset, {c.instance for c in dataset.corpora})
    if smoke:
        adversarial = adversarial[:40]
    elsewhere = off_topic(answerable, dataset)
    with bench_workbench(data_dir) as wb:
        ensure_loaded(wb, dataset)
        ranked = retrieved(wb, dataset, answerable + adversarial + elsewhere)
    rows = [at_floor(f, answerable, adversarial, elsewhere, ranked) for f in GRID]
    chosen = calibrate(rows)
    shipped = Settings.model_fields["relevance_floor"].default
    return {
        "default_floor": shipped, "at_default": next(r for r in rows if r["floor"] == shipped),
        "calibrated": chosen, "rule": f"highest floor keeping >= {KEEP} of R@5 and R@10 (categories 1-4)",
        "no_floor": rows[0], "grid": rows,
        "questions": {"cat1_4": len(answerable), "cat5": len(adversarial), "off_topic": len(elsewhere)},
        "profile": DEFAULT_PROFILE, "top_k": KS[0], "data": data.name, "conversations": len(dataset.corpora),
        "embedder": "wordllama (offline)", "llm": None, "machine": machine(),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.abstention", description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, help="a LoCoMo-format JSON file (default: ../shared/bench/locomo_dev.json)")
    ap.add_argument("--json", metavar="OUT", help="write the result as JSON to OUT")
    ap.add_argument("--small", action="store_true", help="smoke run: 2 conversations, 40 questions each")
    ap.add_argument("--data-dir", default=DEFAULT_DATA_DIR,
                    help=f"servers' directory (default {DEFAULT_DATA_DIR}; evaluation instances are reused)")
    args = ap.parse_args(argv)
    data = args.data or default_locomo_path()
    if data is None or not data.is_file():
        print(f"LoCoMo data file not found{f': {data}' if data else ''}; give one with --data", file=sys.stderr)
        return 2
    result = run(data, smoke=args.small, data_dir=args.data_dir)
    write_json(result, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
