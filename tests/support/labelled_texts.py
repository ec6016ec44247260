"""What the text-analysis tests share (tests/integration/test_cjk_text.py, test_other_scripts_text.py,
test_multilingual_text.py, test_text_vectors.py): memories added by a live add or a bulk import, the ids the
text leg finds, a labelled set (notes.jsonl, queries.jsonl) evaluated with each leg alone, as `workbench eval
--legs`, and what an upgrade test reads of a row: its postings' words and its version."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from core import usecases as uc
from core.models import MemoryRecord
from core.retrieval.hybrid import SearchRequest, hybrid_search


def indexed_words(db, id_: str) -> set[str]:
    """The lexemes of the postings of the row(s) with this id."""
    return {r[0] for r in db.execute("SELECT lexeme FROM memory_term WHERE id = %s", (id_,))}


def row_version(db, id_: str) -> str:
    """The row's xmin: it changes when the row is written again."""
    return db.execute("SELECT xmin::text FROM memory WHERE id = %s", (id_,)).fetchone()[0]


def text_hits(wb, instance: str, query: str, top_k: int = 3) -> list[str]:
    """The ids the text leg alone finds for `query`, best first."""
    found = hybrid_search(wb.search_pool(), wb.embedder,
                          SearchRequest(query=query, instance=instance, top_k=top_k, search_type="text"))
    return [s.memory.id for s in found.results]


def add(wb, instance: str, texts: list[str], load: str) -> None:
    """`texts` as observations m0, m1, …, by a "live add" or a "bulk import"."""
    records = [MemoryRecord(instance=instance, id=f"m{i}", kind="observation", content=text,
                            created_at=datetime.now(UTC)) for i, text in enumerate(texts)]
    (wb.index.add if load == "live add" else wb.index.bulk_load)(records)


def evaluated(wb, instance: str, folder: Path):
    """The labelled set in `folder` loaded into `instance` and evaluated with each leg alone beside the
    hybrid ranking: (the text leg's report, the whole report)."""
    notes = [json.loads(line) for line in (folder / "notes.jsonl").read_text(encoding="utf-8").splitlines()]
    wb.index.bulk_load([MemoryRecord(instance=instance, id=n["id"], kind=n["kind"], content=n["content"],
                                     created_at=datetime.fromisoformat(n["created_at"])) for n in notes])
    report = uc.tune(wb, uc.TuneRequest(source=folder / "queries.jsonl", instance=instance, ks=[1, 5], legs=True))
    return next(r for r in report.legs if r.search_type == "text"), report
