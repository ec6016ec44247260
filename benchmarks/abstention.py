"""Saying "nothing relevant": calibration of the relevance floor on LoCoMo and labelled notes,
`python -m benchmarks.abstention [--data PATH] [--notes DIR ...] [--json OUT] [--small]`.

A turn hands synthesis nothing when no memory of its top k has a `relevance` (the semantic part and the
share of the query's words a memory holds, without recency, `core.retrieval.fusion`) reaching the floor
(`RELEVANCE_FLOOR`), and the answer says no memory matches; when one does, it hands every memory reaching
the floor, or half of it and `BEST_SHARE` of the best's relevance, the floor itself beside a best stating the
attribute the question asks (`core.retrieval.fusion.handed_by_floor`).
This runs every LoCoMo question through the
product's retrieval (`hybrid_search`, the default profile, top 10, the time of the conversation's last
session as "now") and reads, for each floor of a grid:
- category 5 (adversarial: the question asks about something the conversation does not say): the share
  of questions for which no memory of the top 5 (chat's default `top_k`) passes (abstention);
- categories 1–4: the share of questions for which nothing passes all the same (false abstention), and
  the recall kept: LoCoMo's recall (share of a question's evidence turns in the top k) counting only
  the evidence handed over, and the share of questions with evidence in the top k that keep some handed;
  `R@k_each`: the same with each memory held to the floor itself (the rule until 2026-12-06); `R@k_half`:
  the others held to half the floor alone (the rule until 2026-12-06); `P@k`: the share of the memories
  handed that are evidence (handed precision), `strays@k`: the non-evidence handed per question;
- off-topic: the questions of categories 1–4 asked of the next conversation (about people and events it
  never mentions): the share for which nothing passes.
Then the same for each set of labelled notes (`--notes`, by default tests/data/notes_labelled: 410 short
personal and work notes, 44 questions with their answering notes, 24 that no note answers; and
tests/data/work_notes_labelled: 308 notes and agent steps of a software engineer's work, 55 questions, 25
unanswered), each question searched as a chat turn asking for k searches (`core.tuning.evaluate`'s handed
recall): handed recall, precision and strays at 5 and 10 under the rule, each memory held to the floor and
half the floor alone, the share of answerable questions given nothing, and of unanswered ones; at the
default floor, which answerable questions get nothing and which unanswered ones get something
(`given_nothing`, `unanswered_given`: each query with its best relevance and its answer's rank).
The default floor is the highest of the grid that keeps at least `KEEP` of LoCoMo's recall at top 5 and at
top 10. Offline embedder, no LLM.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from datetime import datetime, timedelta
from pathlib import Path

from benchmarks.common import bench_workbench, machine, write_json
from benchmarks.locomo import DEFAULT_DATA_DIR, small
from core.config import Settings
from core.models import DEFAULT_PROFILE, PRESET_PROFILES, MemoryRecord
from core.retrieval.fusion import OTHERS_SHARE, handed_by_floor
from core.retrieval.hybrid import hybrid_search
from core.tuning.datasets import EvalCorpus, EvalDataset, EvalQuery, default_locomo_path, load_dataset
from core.tuning.evaluate import ensure_loaded, search_request

KS = (5, 10)
KEEP = 0.99  # the share of the recall at top 5 and top 10 the default floor must keep
GRID = [round(i / 100, 2) for i in range(81)]
ADVERSARIAL = "5"
LABELLED = Path(__file__).parents[1] / "tests" / "data"
NOTES = [LABELLED / "notes_labelled", LABELLED / "work_notes_labelled"]
# What each rule hands (`passing`), by the suffix of its figures: the shipped rule, each memory held to the
# floor (until 2026-12-06), the others held to half the floor alone (until 2026-12-06).
RULES = {"": "handed", "_each": "each", "_half": "half"}
# A query's top k as (memory id, relevance, stated), best first (stated: it states the attribute the question asks,
# `ScoreParts.stated`, which the rule reads)
Ranked = dict[str, list[tuple[str, float, bool]]]


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


def retrieved(wb, dataset: EvalDataset, queries: list[EvalQuery], top_k: int = max(KS),
              pool_size: int | None = 50) -> Ranked:
    """Each query's top k as (memory id, relevance), best first by the profile's combined score."""
    profile = PRESET_PROFILES[DEFAULT_PROFILE]
    wb.embedder.embed_batch([q.query for q in queries])  # one batch; the searches hit the cache
    out = {}
    for q in queries:
        found = hybrid_search(wb.search_pool(), wb.embedder, search_request(q, dataset, profile, top_k, pool_size),
                              now=q.now)
        out[q.qid] = [(s.memory.id, s.score.relevance, s.score.stated) for s in found.results]
    return out


def passing(ranked: list[tuple[str, float, bool]], floor: float, rule: str = "handed") -> list[str]:
    """What a turn whose top k is `ranked` hands to synthesis (`handed_by_floor`); with rule "each", the
    memories reaching the floor themselves; with "half", once one reaches it, those reaching half of it."""
    relevance = [r for _, r, _ in ranked]
    if rule == "each":
        return [i for i, r, _ in ranked if r >= floor]
    if rule == "half":
        return [i for i, r, _ in ranked if r >= OTHERS_SHARE * floor] if max(relevance, default=0.0) >= floor else []
    handed = handed_by_floor(relevance, floor, [h for *_, h in ranked])
    return [i for (i, *_), h in zip(ranked, handed, strict=True) if h]


def recall(queries: list[EvalQuery], top: dict[int, Ranked], k: int, floor: float, rule: str = "handed") -> float:
    return _mean(len(set(passing(top[k][q.qid], floor, rule)) & set(q.relevant)) / len(q.relevant) for q in queries)


def precision(queries: list[EvalQuery], top: dict[int, Ranked], k: int, floor: float,
              rule: str = "handed") -> tuple[float, float]:
    """(handed precision, strays): the share of all the memories handed for the questions that answer them,
    and the mean number of memories handed per question that do not."""
    handed = [(passing(top[k][q.qid], floor, rule), set(q.relevant)) for q in queries]
    answers = sum(len(set(h) & relevant) for h, relevant in handed)
    total = sum(len(h) for h, _ in handed)
    return round(answers / total, 4) if total else 0.0, _mean(len(set(h) - relevant) for h, relevant in handed)


def at_floor(floor: float, answerable: list[EvalQuery], adversarial: list[EvalQuery],
             elsewhere: list[EvalQuery], ranked: Ranked) -> dict:
    """The figures of one floor (see the module docstring)."""
    top = {k: {q: r[:k] for q, r in ranked.items()} for k in KS}

    def nothing(queries: list[EvalQuery]) -> float:
        return _share(not passing(top[KS[0]][q.qid], floor) for q in queries)

    row: dict = {"floor": floor, "cat5_abstained": nothing(adversarial), "cat1_4_abstained": nothing(answerable),
                 "off_topic_abstained": nothing(elsewhere)}
    for k in KS:
        for suffix, rule in RULES.items():
            row[f"R@{k}{suffix}"] = recall(answerable, top, k, floor, rule)
            row[f"P@{k}{suffix}"], row[f"strays@{k}{suffix}"] = precision(answerable, top, k, floor, rule)
        hit = [q for q in answerable if {i for i, *_ in top[k][q.qid]} & set(q.relevant)]
        row[f"hits_kept@{k}"] = _share(bool(set(passing(top[k][q.qid], floor)) & set(q.relevant)) for q in hit)
    return row


def notes_name(folder: Path) -> str:
    """The key of a set of labelled notes in the result: its folder's name without "_labelled" ("notes",
    "work_notes")."""
    return folder.name.removesuffix("_labelled")


def notes_dataset(folder: Path) -> tuple[EvalDataset, list[EvalQuery], list[EvalQuery]]:
    """The labelled notes as one evaluation instance (eval-<folder name>), asked a day after the last note:
    (the dataset, its answerable questions, the questions no note answers)."""
    instance = "eval-" + folder.name.replace("_", "-")
    notes = [json.loads(line) for line in (folder / "notes.jsonl").read_text().splitlines() if line.strip()]
    records = [MemoryRecord(instance=instance, id=n["id"], kind=n["kind"], content=n["content"],
                            created_at=datetime.fromisoformat(n["created_at"])) for n in notes]
    now = max(r.created_at for r in records) + timedelta(days=1)
    digest = hashlib.sha256((folder / "notes.jsonl").read_bytes()).hexdigest()[:16]

    def queries(name: str) -> list[EvalQuery]:
        lines = (folder / name).read_text().splitlines()
        return [EvalQuery(qid=f"{name}#{i}", query=d["query"], relevant=d["relevant"], category=d["category"],
                          instance=instance, now=now)
                for i, d in enumerate(json.loads(line) for line in lines if line.strip())]

    dataset = EvalDataset(name=folder.name, kind="jsonl", queries=[],
                          corpora=[EvalCorpus(instance=instance, content_hash=digest, records=records)])
    return dataset, queries("queries.jsonl"), queries("unanswered.jsonl")


def notes_at_floor(floor: float, answerable: list[EvalQuery], unanswered: list[EvalQuery],
                   top: dict[int, Ranked], unanswered_top: Ranked) -> dict:
    row: dict = {"floor": floor,
                 "answerable_abstained": _share(not passing(top[KS[0]][q.qid], floor) for q in answerable),
                 "unanswered_abstained": _share(not passing(unanswered_top[q.qid], floor) for q in unanswered)}
    for k in KS:
        for suffix, rule in RULES.items():
            row[f"handed_R@{k}{suffix}"] = recall(answerable, top, k, floor, rule)
            row[f"handed_P@{k}{suffix}"], row[f"strays@{k}{suffix}"] = precision(answerable, top, k, floor, rule)
            row[f"handed@{k}{suffix}"] = _mean(len(passing(top[k][q.qid], floor, rule)) for q in answerable)
    return row


def notes_result(wb, folder: Path, shipped: float) -> dict:
    """A set of labelled notes, loaded and searched as chat searches for k (its own pool, as the
    evaluation's handed recall is), then read at every floor of the grid."""
    notes_set, asked, unanswered = notes_dataset(folder)
    ensure_loaded(wb, notes_set)
    top = {k: retrieved(wb, notes_set, asked, k, None) for k in KS}
    unanswered_top = retrieved(wb, notes_set, unanswered, KS[0], None)
    grid = [notes_at_floor(f, asked, unanswered, top, unanswered_top) for f in GRID]
    return {"at_default": next(r for r in grid if r["floor"] == shipped), "no_floor": grid[0], "grid": grid,
            "given_nothing": [q for q in near_floor(asked, top, shipped) if not q["handed"]],
            "unanswered_given": [q for q in near_floor(unanswered, {KS[0]: unanswered_top}, shipped) if q["handed"]],
            "notes": len(notes_set.corpora[0].records), "folder": folder.name,
            "questions": {"answerable": len(asked), "unanswered": len(unanswered)}}


def near_floor(queries: list[EvalQuery], top: dict[int, Ranked], floor: float) -> list[dict]:
    """Each question as the default floor judges its turn (top 5): the query, its best relevance, whether
    anything is handed, and the rank of its first answer among the largest k searched (None: not there).
    The answerable questions given nothing and the unanswered ones given something are where a change
    to relevance or the floor acts (benchmarks/README.md, "Saying nothing relevant", 2026-12-07)."""
    widest = top[max(top)]
    out = []
    for q in queries:
        ranked = top[KS[0]][q.qid]
        ids = [i for i, *_ in widest[q.qid]]
        rank = next((n for n, i in enumerate(ids, 1) if i in set(q.relevant)), None)
        out.append({"query": q.query, "best": round(max((r for _, r, _ in ranked), default=0.0), 4),
                    "handed": bool(passing(ranked, floor)), "answer_rank": rank})
    return out


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


def run(data: Path, *, smoke: bool = False, data_dir: str | None = DEFAULT_DATA_DIR,
        notes: list[Path] = NOTES) -> dict:
    dataset = load_dataset(data)
    if smoke:
        dataset = small(dataset)
    answerable = [q for q in dataset.queries if q.category in ("1", "2", "3", "4")]
    adversarial = adversarial_queries(data, dataset, {c.instance for c in dataset.corpora})
    if smoke:
        adversarial = adversarial[:40]
    elsewhere = off_topic(answerable, dataset)
    shipped = Settings.model_fields["relevance_floor"].default
    with bench_workbench(data_dir) as wb:
        ensure_loaded(wb, dataset)
        ranked = retrieved(wb, dataset, answerable + adversarial + elsewhere)
        labelled = {notes_name(folder): notes_result(wb, folder, shipped) for folder in notes}
    rows = [at_floor(f, answerable, adversarial, elsewhere, ranked) for f in GRID]
    chosen = calibrate(rows)
    result = {
        "default_floor": shipped, "at_default": next(r for r in rows if r["floor"] == shipped),
        "calibrated": chosen, "rule": f"highest floor keeping >= {KEEP} of R@5 and R@10 (categories 1-4)",
        "no_floor": rows[0], "grid": rows,
        "questions": {"cat1_4": len(answerable), "cat5": len(adversarial), "off_topic": len(elsewhere)},
        "profile": DEFAULT_PROFILE, "top_k": KS[0], "data": data.name, "conversations": len(dataset.corpora),
        "embedder": "wordllama (offline)", "llm": None, "machine": machine(),
    }
    return result | labelled


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.abstention", description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, help="a LoCoMo-format JSON file (default: ../shared/bench/locomo_dev.json)")
    ap.add_argument("--json", metavar="OUT", help="write the result as JSON to OUT")
    ap.add_argument("--notes", type=Path, nargs="+", default=NOTES,
                    help="folders of labelled notes (notes.jsonl, queries.jsonl, unanswered.jsonl; default "
                    "tests/data/notes_labelled and tests/data/work_notes_labelled), each reported under its "
                    "folder's name without _labelled")
    ap.add_argument("--no-notes", action="store_true", help="LoCoMo alone")
    ap.add_argument("--small", action="store_true", help="smoke run: 2 conversations, 40 questions each")
    ap.add_argument("--data-dir", default=DEFAULT_DATA_DIR,
                    help=f"servers' directory (default {DEFAULT_DATA_DIR}; evaluation instances are reused)")
    args = ap.parse_args(argv)
    data = args.data or default_locomo_path()
    if data is None or not data.is_file():
        print(f"LoCoMo data file not found{f': {data}' if data else ''}; give one with --data", file=sys.stderr)
        return 2
    notes = [] if args.no_notes else args.notes
    if missing := [f for f in notes if not (f / "notes.jsonl").is_file()]:
        print(f"labelled notes not found: {missing[0] / 'notes.jsonl'}; give folders with --notes, or --no-notes",
              file=sys.stderr)
        return 2
    if len({notes_name(f) for f in notes}) < len(notes):
        print("two --notes folders have the same name; give folders with different names", file=sys.stderr)
        return 2
    result = run(data, smoke=args.small, data_dir=args.data_dir, notes=notes)
    write_json(result, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
