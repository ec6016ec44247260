"""Conversation chains: list, read, export, delete; and the instances a caller may use."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Query, Response
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from core import usecases as uc
from core.api.deps import WB, Caller, ChainIdPath, ReadInstance, WriteInstance, query_of
from core.api.problems import documented

router = APIRouter(prefix="/v1/instances", tags=["chains"])


class InstanceList(BaseModel):
    instances: list[str]


@router.get("", response_model=InstanceList)
def instances(wb: WB, who: Caller) -> InstanceList:
    """The instances the caller may use: a key's own scope; the local user's, every instance in use."""
    return InstanceList(instances=sorted(who.instances) if who.instances is not None
                        else uc.instance_names(wb))


@router.get("/{instance}/chains", response_model=uc.ChainPage)
def chains(instance: ReadInstance, wb: WB,
           page: Annotated[int, query_of(uc.ChainList, "page", "the page, from 1")] = 1,
           page_size: Annotated[int, query_of(uc.ChainList, "page_size", "chains a page")] = 20,
           order: Annotated[Literal["newest", "oldest"], Query(description="by last activity")] = "newest",
           title: Annotated[str | None, query_of(uc.ChainList, "title")] = None) -> uc.ChainPage:
    """One page of the instance's chains, by last activity; with `title`, only those whose title contains it
    (case-insensitive), `total` counting them."""
    return uc.chains(wb, uc.ChainList(instance=instance, page=page, page_size=page_size, order=order,
                                      title=title))


NO_CHAIN = {404: documented("no chain with that id in the instance (never made, or already deleted)")}


@router.get("/{instance}/chains/{chain_id}", response_model=uc.Conversation, responses=NO_CHAIN)
def conversation(instance: ReadInstance, chain_id: ChainIdPath, wb: WB) -> uc.Conversation:
    """A chain's messages in order, each answer with its feedback and the metrics of its turn; 404 for a
    chain that is not there (a chain is never empty)."""
    return uc.conversation(wb, uc.ConversationRef(instance=instance, chain_id=chain_id))


@router.get("/{instance}/chains/{chain_id}/export", response_class=JSONResponse, responses={
    200: {"model": uc.ChainDocument, "description": "the export document, as a download"}, **NO_CHAIN})
def export(instance: ReadInstance, chain_id: ChainIdPath, wb: WB) -> Response:
    """The chain's export document itself (format memory-workbench/chain@1), byte for byte what `workbench
    chains export` writes, sent as a file `<chain_id>.json`: `workbench import` reads it back as received."""
    exported = uc.chain_export(wb, uc.ChainRef(instance=instance, chain_id=chain_id))
    return Response(exported.document, media_type="application/json", headers={
        "Content-Disposition": f'attachment; filename="{exported.chain_id}.json"'})


@router.delete("/{instance}/chains/{chain_id}", response_model=uc.DeletionReport, responses=NO_CHAIN)
def delete(instance: WriteInstance, chain_id: ChainIdPath, wb: WB) -> uc.DeletionReport:
    """The chain from every store: thoughts, feedback, queued index writes, served requests, index rows.
    404 when no chain has that id: never made, or already deleted (a retry of a deletion that went
    through gets 404; the MCP tool `forget` answers it with a report of zero counts instead)."""
    return uc.chain_delete(wb, uc.ChainRef(instance=instance, chain_id=chain_id))
