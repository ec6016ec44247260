"""Memory banks: an agent's step memory per task, compressed into summaries when it fills."""

from __future__ import annotations

from pydantic import Field, model_validator

from core.access.scope import LOCAL_USER, Principal
from core.admin.deletion import DeletionReport, bank_items_with_own_id, clear_bank, delete_bank
from core.bank.agent import StepContext, StepOutcome, TaskMemory
from core.bank import (DEFAULT_BANK, SUMMARY_SKILL, AddEntryResult, BankConfig, BankInfo, BankSnapshot, BankStats,
                       MemoryBank, MemoryEntry, MemoryQuery, list_banks)
from core.bank.index_ids import SUMMARY_KIND
from core.errors import InvalidInput, NotFound
from core.ids import Id
from core.runtime import Workbench
from core.usecases.base import InstanceRequest, new_instance_told

# For the front ends: the default bank's name, and the skill name that marks a summary among entries; for an
# agent's loop, the helper that hands each step the bank's relevant memories and records it after.
__all__ = ["DEFAULT_BANK", "SUMMARY_SKILL", "StepContext", "StepOutcome", "TaskMemory", "default_bank"]


class BankRef(InstanceRequest):
    bank: Id = Field(DEFAULT_BANK, description="the memory bank's name (one bank per task)")


def _open(wb: Workbench, req: BankRef) -> MemoryBank:
    return MemoryBank.open(wb, req.instance_in(wb), req.bank)


class BankAdd(BankRef):
    """An entry to add. A setting given becomes the bank's; one left out keeps the bank's own (6 for a new
    bank): an add without them reset a bank made with 10 and 10 to 6 and 6, and it compressed early."""

    entry: MemoryEntry
    # The bank's own bounds (BankConfig): a request the bank would take is never refused here.
    max_entries: int | None = Field(None, ge=2, le=100_000, description="default: the bank's own (6 for a new one)")
    compression_threshold: int | None = Field(None, ge=2, le=100_000,
                                              description="default: the bank's own (6 for a new one)")


def bank_add(wb: Workbench, req: BankAdd, *, caller: Principal = LOCAL_USER) -> AddEntryResult:
    """Store the entry. An id given is refused when it is already another memory's or a summary's (the
    bank refuses another entry's): `forget` finds an entry by its id, and one id naming two things would
    make a retried forget delete the other. `caller`: whose instances the note of a new instance names."""
    instance = req.instance_in(wb)
    if "id" in req.entry.model_fields_set:
        _check_unused(wb, instance, req.entry.id)
    with new_instance_told(wb, instance, caller, index_first=True) as note:
        try:
            stored = MemoryBank.open(wb, instance, req.bank).config
        except NotFound:
            stored = BankConfig()
        bank = MemoryBank(wb, instance, req.bank,
                          max_entries=req.max_entries or stored.max_entries,
                          compression_threshold=req.compression_threshold or stored.compression_threshold)
        added = bank.add_entry(req.entry)
    return added.model_copy(update={"notes": [note, *added.notes]}) if note else added


def _check_unused(wb: Workbench, instance: str, entry_id: str) -> None:
    taken = [f"a memory of kind {row.kind}" for row in wb.index.get(instance, [entry_id])]
    taken += [item for item, kind in bank_items_with_own_id(wb, instance, entry_id).items() if kind == SUMMARY_KIND]
    if taken:
        raise InvalidInput(f"entry.id: {entry_id!r} is already the id of {taken[0]} in instance {instance!r}; "
                           "leave id out for a new one, or choose another")


class BankQuery(BankRef, MemoryQuery):
    """A query of a bank: the query's fields beside the bank's name, as the HTTP API's body holds them and
    the MCP tool takes them (an assistant sent `keywords` beside `bank`, and was refused while they went
    inside `query`). `query`, a MemoryQuery or its fields as an object, is still read as those fields."""

    @model_validator(mode="before")
    @classmethod
    def _fields_of_query(cls, data: object) -> object:
        if not isinstance(data, dict) or "query" not in data:
            return data
        query = data["query"]
        if isinstance(query, MemoryQuery):
            query = query.model_dump(exclude_unset=True)
        if not isinstance(query, dict):  # a ValueError, which pydantic reports as invalid input
            fields = ", ".join(MemoryQuery.model_fields)
            raise ValueError(f"query: give the query's fields ({fields}) beside bank, not in query")  # noqa: TRY004
        if twice := sorted(set(query) & set(data)):
            raise ValueError(f"{', '.join(twice)}: given both in query and beside it; give it once, beside bank")
        return {**{k: v for k, v in data.items() if k != "query"}, **query}


def bank_query(wb: Workbench, req: BankQuery) -> list[MemoryEntry]:
    """Live entries and summaries matching the query (`req` is one), by importance then time."""
    return _open(wb, req).get_relevant_memories(req)


def bank_stats(wb: Workbench, req: BankRef) -> BankStats:
    return _open(wb, req).stats()


def bank_snapshot(wb: Workbench, req: BankRef) -> BankSnapshot:
    """Every entry (with the summary that compressed it), summary and compression event."""
    return _open(wb, req).snapshot()


def bank_clear(wb: Workbench, req: BankRef) -> DeletionReport:
    """Remove every entry, summary and event of the bank from every store, as a deletion does (the bank
    and its settings stay)."""
    return clear_bank(wb, req.instance_in(wb), req.bank)


def bank_list(wb: Workbench, req: InstanceRequest) -> list[BankInfo]:
    return list_banks(wb, req.instance_in(wb))


def bank_delete(wb: Workbench, req: BankRef) -> DeletionReport:
    """The bank and everything in it, from every store."""
    return delete_bank(wb, req.instance_in(wb), req.bank)


def default_bank(name: str = DEFAULT_BANK, *, max_entries: int = 6,
                 compression_threshold: int = 6) -> MemoryBank:
    """A memory bank of the INSTANCE setting for a caller without a Workbench (a script, an agent's
    tool), on a Workbench built from the settings: `default_bank()` is the bank with the default
    settings. Nothing connects until the bank is first used."""
    return MemoryBank(Workbench(), None, name, max_entries=max_entries,
                      compression_threshold=compression_threshold)
