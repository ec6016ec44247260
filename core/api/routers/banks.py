"""Memory banks: an agent's step memory per task, compressed into summaries when it fills."""

from __future__ import annotations

from fastapi import APIRouter, Response, status

from core import usecases as uc
from core.api.deps import WB, BankPath, Caller, ReadInstance, WriteInstance, on_path
from core.api.problems import documented
from core.usecases.bank import BankStats

router = APIRouter(prefix="/v1/instances/{instance}/banks", tags=["banks"])
NO_BANK = {404: documented("no bank of that name in the instance (never made, or already deleted)")}


@router.get("", response_model=list[uc.BankInfo])
def banks(instance: ReadInstance, wb: WB) -> list[uc.BankInfo]:
    """The instance's memory banks, each with its settings and counts."""
    return uc.bank_list(wb, uc.InstanceRequest(instance=instance))


@router.get("/{bank}", response_model=BankStats, responses=NO_BANK)
def stats(instance: ReadInstance, bank: BankPath, wb: WB) -> BankStats:
    """Its settings and counts: live and compressed entries, summaries, compressions."""
    return uc.bank_stats(wb, uc.BankRef(instance=instance, bank=bank))


@router.get("/{bank}/snapshot", response_model=uc.BankSnapshot, responses=NO_BANK)
def snapshot(instance: ReadInstance, bank: BankPath, wb: WB) -> uc.BankSnapshot:
    """Every entry (with the summary that compressed it), summary and compression event."""
    return uc.bank_snapshot(wb, uc.BankRef(instance=instance, bank=bank))


@router.post("/{bank}/entries", response_model=uc.AddEntryResult, status_code=status.HTTP_201_CREATED,
             responses={200: {"description": "the same entry was already stored (a retry): `repeated` is true",
                              "model": uc.AddEntryResult},
                        409: documented("another entry already has this id")})
def add(instance: WriteInstance, bank: BankPath, body: uc.BankAdd, wb: WB, who: Caller,
        response: Response) -> uc.AddEntryResult:
    """Add an entry (the bank is created with the body's settings if new); a full bank compresses its
    oldest half into a summary. Sending an entry with its `id` again is a safe retry: the stored entry
    comes back (200, `repeated`); another entry under a taken id is refused (409)."""
    added = uc.bank_add(wb, on_path(body, instance=instance, bank=bank), caller=who)
    if added.repeated:
        response.status_code = status.HTTP_200_OK
    return added


@router.post("/{bank}/query", response_model=list[uc.MemoryEntry], responses=NO_BANK)
def query(instance: ReadInstance, bank: BankPath, body: uc.MemoryQuery, wb: WB) -> list[uc.MemoryEntry]:
    """Live entries and summaries matching the query, by importance then time."""
    return uc.bank_query(wb, uc.BankQuery(instance=instance, bank=bank, query=body))


@router.delete("/{bank}/entries", response_model=uc.DeletionReport, responses=NO_BANK)
def clear(instance: WriteInstance, bank: BankPath, wb: WB) -> uc.DeletionReport:
    """Every entry, summary and event, from every store (the bank and its settings stay)."""
    return uc.bank_clear(wb, uc.BankRef(instance=instance, bank=bank))


@router.delete("/{bank}", response_model=uc.DeletionReport, responses=NO_BANK)
def delete(instance: WriteInstance, bank: BankPath, wb: WB) -> uc.DeletionReport:
    """The bank and everything in it, from every store; 404 when no bank has that name (never made, or
    already deleted)."""
    return uc.bank_delete(wb, uc.BankRef(instance=instance, bank=bank))
