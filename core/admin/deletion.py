"""Deleting what is stored: a chain, a single memory, a memory bank — in every store that holds it.

Redis is cleaned first (thoughts, chain indexes, feedback, queued outbox entries, served-request
results), then Postgres (memory-index rows). In that order a sync that reads the outbox later finds
nothing of the chain to re-index, and the last step removes what an earlier sync had indexed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel

import core.bank.db as bank_db
from core.bank.index_ids import BANK_KINDS, ENTRY_KIND, bank_item_of, entry_index_id, summary_index_id
from core.errors import NotFound
from core.ids import validate_id

if TYPE_CHECKING:
    from core.runtime import Workbench

THOUGHT_KINDS = ("user", "assistant")


class DeletionReport(BaseModel):
    target: Literal["chain", "memory", "bank"]
    instance: str
    id: str
    thoughts: int = 0  # thought hashes removed from Redis
    feedback: int = 0  # feedback hashes removed
    outbox: int = 0  # queued index writes dropped
    requests: int = 0  # served-request results removed
    index_rows: int = 0  # memory-index rows removed
    bank_rows: int = 0  # memory-bank entries / summaries removed
    notes: list[str] = []

    @property
    def removed_anything(self) -> bool:
        return any((self.thoughts, self.feedback, self.outbox, self.requests, self.index_rows,
                    self.bank_rows))


def delete_chain(wb: Workbench, instance: str, chain_id: str) -> DeletionReport:
    """Remove a chain: its thoughts, indexes, feedback hashes, outbox entries and index rows."""
    validate_id(instance, "instance")
    validate_id(chain_id, "chain_id")
    store = wb.thoughts
    report = DeletionReport(target="chain", instance=instance, id=chain_id)
    ids = [t.id for t in store.chain_thoughts(instance, chain_id)]
    report.feedback = len(store.answers_with_feedback(ids))
    report.thoughts = store.delete_chain(instance, chain_id)
    report.outbox = store.outbox_drop(instance, chain_id)
    report.requests = store.delete_requests(instance, chain_id)
    report.index_rows = wb.index.delete_chain(instance, chain_id)
    if not report.removed_anything:
        raise NotFound(f"no chain {chain_id!r} in instance {instance!r}")
    return report


def delete_memory(wb: Workbench, instance: str, memory_id: str, *, chain_id: str | None = None
                  ) -> DeletionReport:
    """Remove one memory: its index row; a thought from Redis too (found through its index row, or in
    `chain_id` when it is not indexed yet); a bank entry or summary from its bank.

    Deleting a bank summary deletes the entries it compressed (it is what stands for them).
    """
    validate_id(instance, "instance")
    validate_id(memory_id, "memory id")
    if chain_id is not None:
        validate_id(chain_id, "chain_id")
    report = DeletionReport(target="memory", instance=instance, id=memory_id)
    rows = wb.index.get(instance, [memory_id])
    row = rows[0] if rows else None
    chain = row.chain_id if row is not None and row.kind in THOUGHT_KINDS else chain_id
    if chain:
        store = wb.thoughts
        had_feedback = bool(store.answers_with_feedback([memory_id]))
        gone = store.delete_thought(instance, chain, memory_id)
        report.thoughts = len(gone)
        report.feedback = int(had_feedback and bool(gone))
        if gone and not store.chain_meta(instance, chain):
            report.notes.append(f"chain {chain} had nothing else left and was removed")
            report.index_rows += wb.index.delete_chain(instance, chain)
        report.index_rows += wb.index.delete(instance, gone or [memory_id])
    elif (row is not None and row.kind in BANK_KINDS) or bank_item_of(memory_id) is not None:
        _delete_bank_item(wb, instance, memory_id, report)
    elif row is not None:
        report.index_rows = wb.index.delete(instance, [memory_id])
    if not report.removed_anything:
        raise NotFound(f"no memory {memory_id!r} in instance {instance!r}")
    return report


def _delete_bank_item(wb: Workbench, instance: str, index_id: str, report: DeletionReport) -> None:
    kind, item_id = bank_item_of(index_id)
    with wb.pool().connection() as conn, conn.transaction():
        bank = bank_db.owner_of(conn, instance, kind, item_id)
        if bank is not None:
            bank_db.lock_existing(conn, instance, bank)
        if kind == ENTRY_KIND:
            gone = [item_id] if bank_db.delete_entry(conn, instance, item_id) else []
            index_ids = [entry_index_id(i) for i in gone]
        else:
            entries = bank_db.delete_summary(conn, instance, item_id)
            gone = ([item_id] if bank is not None else []) + entries
            index_ids = [summary_index_id(item_id)] + [entry_index_id(i) for i in entries]
            if entries:
                report.notes.append(f"{len(entries)} entries compressed into this summary were deleted "
                                    "with it")
    report.bank_rows = len(gone)
    report.index_rows = wb.index.delete(instance, list(dict.fromkeys(index_ids + [index_id])))


def delete_bank(wb: Workbench, instance: str, name: str) -> DeletionReport:
    """Remove a memory bank with its entries, summaries, compression events and index rows."""
    validate_id(instance, "instance")
    validate_id(name, "bank name")
    report = DeletionReport(target="bank", instance=instance, id=name)
    with wb.pool().connection() as conn, conn.transaction():
        if not bank_db.lock_existing(conn, instance, name):
            raise NotFound(f"no memory bank named {name!r} in instance {instance!r}")
        stats = bank_db.stats_row(conn, instance, name)
        bank_db.drop(conn, instance, name)
        report.index_rows = bank_db.delete_index_rows(conn, instance, name)
    report.bank_rows = stats["total_entries"] + stats["summaries"]
    return report
