"""Documents: `python -m benchmarks.documents [--status FILE] [--json OUT] [--data-dir DIR] [--limit N]`.

Retrieval over real prose that is not dialogue: issue 21 asks that the retrieval tuned on LoCoMo's
conversations holds for other kinds of memory too. Offline and on every Debian or Ubuntu machine, the
installed packages' descriptions are such a set (`/var/lib/dpkg/status`, or `--status`): each package's
long description (20 words or more; a text two packages share is kept once) is a memory, and its one-line
synopsis is the question, whose answer is that one memory. The synopsis was written for the package
(“fast, scalable, distributed revision control system”), not made of the description's words, so it
tests both legs. The set depends on what the machine has installed: its size and a digest of it are in the
result, so two runs are compared only on the same set.

Each question goes through `hybrid_search` with the default profile: hybrid, the text leg alone and the
vector leg alone, with near-duplicates kept (descriptions of a library and of its `-dev` package are
near-twins, and the product's rule that a near-duplicate gives way to the better one would count the
twin as a miss), and hybrid as shipped (near-duplicates give way) beside them. BM25 alone (`rank_bm25`'s
BM25Okapi over lower-cased words, as in `benchmarks.locomo`) is the baseline. Reported: R@1, R@5, R@10
and MRR@10 of the package's description.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from benchmarks.common import RESULTS, bench_workbench, machine, write_json
from core.models import MemoryRecord
from core.retrieval.hybrid import SearchRequest, hybrid_search

STATUS = Path("/var/lib/dpkg/status")
INSTANCE = "documents"
MIN_WORDS = 20
TOP = 10
_PACKAGE = re.compile(r"^Package: (\S+)$", re.MULTILINE)
_DESCRIPTION = re.compile(r"^Description: (.+)\n((?: .*\n?)*)", re.MULTILINE)


def packages(status: Path) -> list[tuple[str, str, str]]:
    """(memory id, synopsis, long description) of each installed package with a description of its own."""
    out: list[tuple[str, str, str]] = []
    seen_texts: set[str] = set()
    seen_questions: set[str] = set()
    for block in status.read_text(encoding="utf-8", errors="replace").split("\n\n"):
        name, described = _PACKAGE.search(block), _DESCRIPTION.search(block)
        if not (name and described):
            continue
        synopsis = described.group(1).strip()
        lines = (line.strip() for line in described.group(2).splitlines())
        body = " ".join(line for line in lines if line and line != ".")
        if len(body.split()) < MIN_WORDS or body in seen_texts or synopsis in seen_questions:
            continue
        seen_texts.add(body)
        seen_questions.add(synopsis)
        out.append((re.sub(r"[^A-Za-z0-9._-]", "_", name.group(1)), synopsis, body))
    return out


def scores(ranks: list[int | None]) -> dict[str, float]:
    """R@k (the share of questions whose memory is in the top k) and MRR@10, from each question's rank."""
    n = len(ranks)
    found = {k: sum(r is not None and r <= k for r in ranks) / n for k in (1, 5, 10)}
    mrr = sum(1 / r for r in ranks if r is not None and r <= TOP) / n
    return {"R@1": round(found[1], 4), "R@5": round(found[5], 4), "R@10": round(found[10], 4),
            "MRR@10": round(mrr, 4)}


def rank_of(ids: list[str], wanted: str) -> int | None:
    return ids.index(wanted) + 1 if wanted in ids else None


def bm25_ranks(docs: list[tuple[str, str, str]]) -> list[int | None]:
    from rank_bm25 import BM25Okapi

    def words(text: str) -> list[str]:
        return re.findall(r"[a-z0-9]+", text.lower())

    bm25 = BM25Okapi([words(body) for _, _, body in docs])
    out = []
    for i, (_, synopsis, _) in enumerate(docs):
        got = bm25.get_scores(words(synopsis))
        order = sorted(range(len(docs)), key=lambda j: (-got[j], j))[:TOP]
        out.append(order.index(i) + 1 if i in order else None)
    return out


def run(status: Path, data_dir: str | None, *, limit: int | None = None, instance: str = INSTANCE) -> dict:
    docs = packages(status)[:limit]
    if not docs:
        raise SystemExit(f"error: {status} holds no package description of {MIN_WORDS} words or more")
    digest = hashlib.sha256("\n".join(f"{i}\t{s}\t{b}" for i, s, b in docs).encode()).hexdigest()[:16]
    start = datetime(2025, 1, 1, tzinfo=UTC)
    result: dict = {"status": str(status), "documents": len(docs), "set_digest": digest, "machine": machine()}
    with bench_workbench(data_dir) as wb:
        wb.index.ensure_vector_index()
        wb.index.bulk_load(MemoryRecord(instance=instance, id=ident, kind="observation", content=body,
                                        created_at=start + timedelta(minutes=i))
                           for i, (ident, _, body) in enumerate(docs))
        pool, embedder = wb.search_pool(), wb.embedder

        def ranks(search_type: str, **shown) -> list[int | None]:
            return [rank_of([r.memory.id for r in hybrid_search(pool, embedder, SearchRequest(
                query=synopsis, instance=instance, top_k=TOP, search_type=search_type, **shown)).results], ident)
                for ident, synopsis, _ in docs]

        kept = {"distinct": False, "near_duplicate": 1.0}
        result |= {"hybrid": scores(ranks("hybrid", **kept)), "text_leg": scores(ranks("text", **kept)),
                   "vector_leg": scores(ranks("vector", **kept)), "hybrid_as_shipped": scores(ranks("hybrid")),
                   "bm25": scores(bm25_ranks(docs))}
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.documents", description=__doc__.split("\n")[0])
    parser.add_argument("--status", type=Path, default=STATUS, help=f"dpkg's status file [{STATUS}]")
    parser.add_argument("--json", default=str(RESULTS / "documents.json"), help="where to write the result")
    parser.add_argument("--data-dir", default=None, help="servers' data directory [a fresh temporary one]")
    parser.add_argument("--limit", type=int, default=None, help="the first N descriptions only")
    args = parser.parse_args(argv)
    if not args.status.is_file():
        print(f"error: {args.status}: no such file; this benchmark reads the package descriptions of a Debian "
              "or Ubuntu system (give another with --status)", file=sys.stderr)
        return 2
    write_json(run(args.status, args.data_dir, limit=args.limit), args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
