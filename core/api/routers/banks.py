"""Memory banks: an agent's step memory per task, compressed into summaries when it fills."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, status

from core import usecases as uc
from core.api.deps import WB, Caller, ReadInstance, WriteInstance, on_path
from core.api.problems import MEDIA_TYPE

router = APIRouter(prefix="/v1/instances/{instance}/banks", tags=["banks"])


@router.get("", response_model=list[uc.BankInfo])
def banks(instance: ReadInstance, wb: WB) -> list[uc.BankInfo]:
    return uc.bank_list(wb, uc.InstanceRequest(instance=instance))


@router.get("/{bank}")
def stats(instance: ReadInstance, bank: str, wb: WB) -> Any:
    """Its settings and counts: live and compressed entries, summaries, compressions."""
    return uc.bank_stats(wb, uc.BankRef(instance=instance, bank=bank))


@router.get("/{bank}/snapshot", response_model=uc.BankSnapshot)
def snapshot(instance: ReadInstance, bank: str, wb: WB) -> uc.BankSnapshot:
    """Every entry (with the summary that compressed it), summary and compression event."""
    return uc.bank_snapshot(wb, uc.BankRef(instance=instance, bank=bank))


@router.post("/{bank}/entries", response_model=uc.AddEntryResult, status_code=status.HTTP_201_CREATED)
def add(instance: WriteInstance, bank: str, body: uc.BankAdd, wb: WB, who: Caller) -> uc.AddEntryResult:
    """Add an entry (the bank is created with the body's settings if new); a full bank compresses its
    oldest half into a summary."""
    return uc.bank_add(wb, on_path(body, instance=instance, bank=bank), caller=who)


@router.post("/{bank}/query", response_model=list[uc.MemoryEntry])
def query(instance: ReadInstance, bank: str, body: uc.MemoryQuery, wb: WB) -> list[uc.MemoryEntry]:
    """Live entries and summaries matching the query, by importance then time."""
    return uc.bank_query(wb, uc.BankQuery(instance=instance, bank=bank, query=body))


@router.delete("/{bank}/entries", response_model=uc.DeletionReport)
def clear(instance: WriteInstance, bank: str, wb: WB) -> uc.DeletionReport:
    """Every entry, summary and event, from every store (the bank and its settings stay)."""
    return uc.bank_clear(wb, uc.BankRef(instance=instance, bank=bank))


@router.delete("/{bank}", response_model=uc.DeletionReport, responses={404: {
    "description": "no bank of that name in the instance (never made, or already deleted)",
    "content": {MEDIA_TYPE: {}}}})
def delete(instance: WriteInstance, bank: str, wb: WB) -> uc.DeletionReport:
    """The bank and everything in it, from every store; 404 when no bank has that name (never made, or
    already deleted)."""
    return uc.bank_delete(wb, uc.BankRef(instance=instance, bank=bank))
