"""Memories an assistant adds and forgets directly (MemoryScope's memory types), and its explicit rating of
an answer."""

from __future__ import annotations

import re
import uuid
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, Literal, get_args

from pydantic import BaseModel, Field, field_validator

from core.access.scope import LOCAL_USER, Principal
from core.admin.deletion import (
    DeletionReport,
    NothingToDelete,
    bank_items_with_own_id,
    delete_bank,
    delete_chain,
    delete_memory,
)
from core.conversation.thoughts import RatingRecord
from core.errors import InvalidInput
from core.formation.relations import with_relations
from core.ids import Id, pg_json
from core.index.records import event_time_of
from core.models import EventTime, MemoryRecord, Metadata, SomeText, Tags
from core.usecases.base import InstanceRequest, new_instance_told

if TYPE_CHECKING:
    from core.runtime import Workbench

__all__ = ["RatingRecord"]

AddableKind = Literal["observation", "insight", "obs_customized", "conversation"]
ADDABLE_KINDS = get_args(AddableKind)


class AddMemory(InstanceRequest):
    """A memory to remember as it is: a fact observed about the user (observation), something inferred
    from several (insight), an observation in the caller's own form (obs_customized), or a line of
    conversation. The same `id` again replaces it (a retry is safe); an id that a message, a bank entry or
    what formation derived from a conversation holds is refused, since replacing its row would leave it
    unfindable by search and by `forget`."""

    content: SomeText = Field(min_length=1, max_length=100_000)
    kind: AddableKind = "observation"
    tags: Tags = []
    event_time: datetime | date | None = Field(None, description="when what it says happened: a date, or a "
                                                                 "date and time (UTC if no zone)")
    metadata: Metadata = {}
    id: Id | None = Field(None, description="default: a new id")

    @field_validator("event_time", mode="before")
    @classmethod
    def _day_alone(cls, v: object) -> object:
        """"2024-03-03" is a day, its hour unknown (as the API's JSON already reads it): not midnight. Text
        that is no ISO date says what to give ("yesterday" got "input is too short")."""
        if not isinstance(v, str):
            return v
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", v.strip()):
            return date.fromisoformat(v.strip())
        try:
            datetime.fromisoformat(v.strip())
        except ValueError:
            raise ValueError(f"{v[:40]!r} is not an ISO date or time: give a day (2024-03-03) or a date and time "
                             "(2024-03-03T10:00:00Z)") from None
        return v

    @field_validator("event_time")
    @classmethod
    def _aware(cls, v: datetime | date | None) -> datetime | date | None:
        return v.replace(tzinfo=UTC) if isinstance(v, datetime) and v.tzinfo is None else v


class AddedMemory(BaseModel):
    instance: str
    id: str
    kind: str
    created_at: datetime
    event_time: EventTime
    notes: list[str] = Field([], description="e.g. that the instance is new: this is its first memory")


def add_memory(wb: Workbench, req: AddMemory, *, caller: Principal = LOCAL_USER) -> AddedMemory:
    """Embed and index the memory; it is searchable at once (hybrid search, MemoryScope, chat). `caller`:
    whose instances the note of a new instance names (`new_instance_note`)."""
    instance = req.instance_in(wb)
    if req.id is not None:
        _check_replaceable(wb, instance, req.id)
    with new_instance_told(wb, instance, caller, index_first=True) as note:
        now = datetime.now(UTC)
        record = MemoryRecord(instance=instance, id=req.id or f"mem-{uuid.uuid4().hex}", kind=req.kind,
                              content=req.content, created_at=now, tags=req.tags,
                              metadata=with_relations(pg_json(req.metadata), req.content),  # "my daughter Inês"
                              event_time=event_time_of(req.event_time) if req.event_time else EventTime())
        wb.index.add([record])
    return AddedMemory(instance=instance, id=record.id, kind=record.kind, created_at=now,
                       event_time=record.event_time, notes=[note] if note else [])


def _check_replaceable(wb: Workbench, instance: str, memory_id: str) -> None:
    """InvalidInput when `memory_id` is a memory that `add_memory` did not add: one of a chain (a message, or
    what formation made of one) or of another kind (a bank entry), or a bank entry's or summary's own id
    (`forget` takes those too: one id naming two things would make a retried forget delete the other)."""
    there = wb.index.get(instance, [memory_id])
    if there and (there[0].chain_id is not None or there[0].kind not in ADDABLE_KINDS):
        row = there[0]
        whose = f" of chain {row.chain_id!r}" if row.chain_id is not None else ""
        raise InvalidInput(f"id {memory_id!r} is a {row.kind} memory{whose}, which add_memory cannot replace: "
                           "leave id out for a new one, or choose another")
    if not there and (items := bank_items_with_own_id(wb, instance, memory_id)):
        raise InvalidInput(f"id {memory_id!r} is the id of {' and of '.join(items)}: leave id out for a new "
                           "one, or choose another")


class Forget(InstanceRequest):
    """What to forget: one memory (by id, a bank entry's or summary's own id included; a thought's chain
    when it is not indexed yet), a whole chain, or a whole memory bank."""

    target: Literal["memory", "chain", "bank"]
    id: Id = Field(description="the memory id (a bank entry's or summary's id too), the chain id, or the "
                               "bank's name")
    chain_id: Id | None = Field(None, description="with target 'memory': the thought's chain")


NOTHING_THERE = "nothing was there to forget (already forgotten, or a mistyped id)"


def forget(wb: Workbench, req: Forget) -> DeletionReport:
    """Remove it from every store, derived copies included; the report says what was removed.

    Idempotent, as a retry after an unknown outcome needs (DESIGN §10): forgetting what is not there is
    no error but a report with every count zero and a note saying nothing was there. The delete use
    cases (`memory_delete`, `chain_delete`, `bank_delete`: the CLI's and the HTTP API's DELETE) raise
    NotFound instead, as a command or a REST resource does."""
    instance = req.instance_in(wb)
    try:
        if req.target == "chain":
            return delete_chain(wb, instance, req.id)
        if req.target == "bank":
            return delete_bank(wb, instance, req.id)
        return delete_memory(wb, instance, req.id, chain_id=req.chain_id)
    except NothingToDelete as e:
        return DeletionReport(target=req.target, instance=instance, id=req.id, notes=[f"{e}: {NOTHING_THERE}"])


class RateAnswer(InstanceRequest):
    """An explicit rating of an answer by the user (or the assistant on their behalf), kept beside the
    feedback their behaviour gives. Rating again replaces the earlier rating."""

    answer_id: Id = Field(description="thought2_id of the ui_remember result")
    rating: Literal["up", "down"]
    comment: str = Field("", max_length=2000)


def rate_answer(wb: Workbench, req: RateAnswer) -> RatingRecord:
    """Store the rating on the answer's feedback record; NotFound if the instance has no such answer."""
    return wb.thoughts.record_rating(req.instance_in(wb), req.answer_id, req.rating, req.comment,
                                     datetime.now(UTC))
