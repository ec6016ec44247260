"""Memories an assistant adds, searches and forgets directly."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, status

from core import usecases as uc
from core.api.deps import ID_JSON_SCHEMA, WB, Caller, MemoryIdPath, ReadInstance, WriteInstance, on_path
from core.api.problems import documented

router = APIRouter(prefix="/v1/instances/{instance}/memories", tags=["memories"])


class MemorySearch(uc.ExplorerSearch):
    """A search of everything stored in the instance (the path names the instance)."""

    instance: str | None = None


@router.post("", response_model=uc.AddedMemory, status_code=status.HTTP_201_CREATED)
def add(instance: WriteInstance, body: uc.AddMemory, wb: WB, who: Caller) -> uc.AddedMemory:
    """Embed and index a memory; searchable at once. The same `id` again replaces it."""
    return uc.add_memory(wb, on_path(body, instance=instance), caller=who)


@router.post("/search", response_model=uc.SearchOutcome)
def search(instance: ReadInstance, body: MemorySearch, wb: WB) -> uc.SearchOutcome:
    """Hybrid, semantic or full-text search; each hit names its chain or bank."""
    return uc.memory_search(wb, uc.ExplorerSearch(**on_path(body, instance=instance).model_dump()))


@router.delete("/{memory_id}", response_model=uc.DeletionReport, responses={404: documented(
    "nothing in the instance has that id (never there, or already deleted)")})
def delete(instance: WriteInstance, memory_id: MemoryIdPath, wb: WB,
           chain_id: Annotated[str | None, Query(description="the thought's chain, when it is not indexed yet",
                                                 json_schema_extra=ID_JSON_SCHEMA)] = None) -> uc.DeletionReport:
    """One memory from every store: by its id (a thought, an added memory, a bank entry or summary by
    the id the bank returned); `chain_id` finds a thought not indexed yet. A fact formed from a user's
    message ("obs-…") goes from the message too: the whole message when it said nothing else, else the
    fact's words, its other statements kept (the notes say which). 404 when nothing has that id:
    never there, or already deleted (a retry of a deletion that went through gets 404; the MCP tool
    `forget` answers it with a report of zero counts instead)."""
    return uc.memory_delete(wb, uc.MemoryRef(instance=instance, memory_id=memory_id, chain_id=chain_id))
