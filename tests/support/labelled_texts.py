"""What the text-analysis tests of other languages share (tests/integration/test_cjk_text.py,
test_other_scripts_text.py): memories added by a live add or a bulk import, the ids the text leg finds,
and a labelled set (notes.jsonl, queries.jsonl) evaluated with each leg alone, as `workbench eval --legs`."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from core import usecases as uc
from core.models import MemoryRecord
from core.retrieval.hybrid import SearchRequest, hybrid_search


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
