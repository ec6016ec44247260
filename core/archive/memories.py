"""The memory index of an instance in and out of an archive: every row, every column but the text index
(made again from the content) and the vector (kept only when asked, as the bytes of its float32s).

A restored row gets a vector of the active embedder unless the archive holds one made by that same
model, which is then stored as it is (byte for byte). Rows already in the target are left alone.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from itertools import islice
from typing import TYPE_CHECKING, Any

import numpy as np

from core.archive.ids import IdMap
from core.index.bulk_load import BulkLoader
from core.index.records import embedding_text
from core.models import EventTime, MemoryContext, MemoryRecord

if TYPE_CHECKING:
    from core.runtime import Workbench

BATCH = 500


def encode_vector(vec: Any) -> str | None:
    """A vector as read (a numpy array, or pgvector's `Vector` from a server-side cursor) as text."""
    if vec is None:
        return None
    values = vec.to_numpy() if hasattr(vec, "to_numpy") else vec
    return base64.b64encode(np.asarray(values, dtype="<f4").tobytes()).decode()


def decode_vector(text: str) -> np.ndarray:
    return np.frombuffer(base64.b64decode(text), dtype="<f4").astype(np.float32)


def export_memories(wb: Workbench, instance: str, with_vectors: bool) -> Iterator[dict[str, Any]]:
    with wb.pool().connection() as conn, conn.transaction(), conn.cursor(name="archive_memories") as cur:
        cur.itersize = BATCH
        cur.execute("SELECT to_jsonb(m) - 'tsv' - 'embedding', m.embedding FROM memory m "
                    "WHERE m.instance = %s ORDER BY m.id", (instance,))
        for row, vec in cur:
            if with_vectors and vec is not None:
                row["vector"] = encode_vector(vec)
            yield row


def _record(row: dict[str, Any], ids: IdMap) -> MemoryRecord:
    return MemoryRecord(
        instance=ids.target, id=ids.row_id(row["kind"], row["id"], row["metadata"]), kind=row["kind"],
        content=row["content"],
        created_at=row["created_at"], chain_id=row["chain_id"],
        event_time=EventTime(year=row["ev_year"], month=row["ev_month"], day=row["ev_day"],
                             hour=row["ev_hour"], weekday=row["ev_weekday"]),
        tags=row["tags"], metadata=ids.row_metadata(row["metadata"]),
        context=MemoryContext(**(row["context"] or {})))


def restore_memories(wb: Workbench, rows: Iterator[dict[str, Any]], ids: IdMap,
                     step: Any = None) -> int:
    """Write the rows the target lacks, a batch at a time; `step(n)` after each batch. Returns how many
    were written. Through the bulk loader: into a new instance, its indexes are built once at the end
    (row by row, 10,000 rows took 50 s; see `core.index.bulk_load`)."""
    created = 0
    model = wb.embedder.name
    wb.index.ensure_vector_index()
    loader = BulkLoader(wb.index)
    try:
        while batch := list(islice(rows, BATCH)):
            records = [(_record(row, ids), row) for row in batch]
            have = {r.id for r in wb.index.get(ids.target, [rec.id for rec, _ in records])}
            todo = [(rec, row) for rec, row in records if rec.id not in have]
            if todo:
                loader.write([rec for rec, _ in todo], _vectors(wb, todo, model))
                created += len(todo)
            if step:
                step(len(batch))
    except BaseException:
        loader.abort()
        raise
    loader.finish()
    return created


def _vectors(wb: Workbench, todo: list[tuple[MemoryRecord, dict[str, Any]]], model: str) -> list[np.ndarray]:
    """The archived vector of each row when the active model made it, else a new one."""
    kept = [decode_vector(row["vector"]) if row.get("vector") and row.get("embedding_model") == model else None
            for _, row in todo]
    missing = [i for i, vec in enumerate(kept) if vec is None]
    if missing:
        made = wb.embedder.embed_batch([embedding_text(todo[i][0]) for i in missing])
        for i, vec in zip(missing, made, strict=True):
            kept[i] = np.asarray(vec, dtype=np.float32)
    return kept
