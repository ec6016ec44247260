"""Conversation chains: list, read, export, delete; and the instances a caller may use."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter
from pydantic import BaseModel

from core import usecases as uc
from core.api.deps import WB, Caller, ReadInstance, WriteInstance

router = APIRouter(prefix="/v1/instances", tags=["chains"])


class InstanceList(BaseModel):
    instances: list[str]


@router.get("", response_model=InstanceList)
def instances(wb: WB, who: Caller) -> InstanceList:
    """The instances the caller may use: a key's own scope; the local user's, every instance in use."""
    return InstanceList(instances=sorted(who.instances) if who.instances is not None
                        else uc.instance_names(wb))


@router.get("/{instance}/chains", response_model=uc.ChainPage)
def chains(instance: ReadInstance, wb: WB, page: int = 1, page_size: int = 20,
           order: Literal["newest", "oldest"] = "newest") -> uc.ChainPage:
    """One page of the instance's chains, by last activity."""
    return uc.chains(wb, uc.ChainList(instance=instance, page=page, page_size=page_size, order=order))


@router.get("/{instance}/chains/{chain_id}", response_model=uc.Conversation)
def conversation(instance: ReadInstance, chain_id: str, wb: WB) -> uc.Conversation:
    """A chain's messages in order, each answer with its feedback and the metrics of its turn (no
    messages: the chain is new or deleted)."""
    return uc.conversation(wb, uc.ConversationRef(instance=instance, chain_id=chain_id))


@router.get("/{instance}/chains/{chain_id}/export", response_model=uc.ChainExport)
def export(instance: ReadInstance, chain_id: str, wb: WB) -> uc.ChainExport:
    """The chain as one JSON document (`document`, format memory-workbench/chain@1)."""
    return uc.chain_export(wb, uc.ChainRef(instance=instance, chain_id=chain_id))


@router.delete("/{instance}/chains/{chain_id}", response_model=uc.DeletionReport)
def delete(instance: WriteInstance, chain_id: str, wb: WB) -> uc.DeletionReport:
    """The chain from every store: thoughts, feedback, queued index writes, served requests, index rows."""
    return uc.chain_delete(wb, uc.ChainRef(instance=instance, chain_id=chain_id))
