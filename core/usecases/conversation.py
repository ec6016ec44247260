"""Conversation: a ui_remember turn, its chains and their transcripts, and the abandonment sweep."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Literal

import psycopg
from pydantic import BaseModel

from core.access.scope import LOCAL_USER, Principal
from core.admin.upkeep import Upkeep, upkeep
from core.conversation.feedback import ABANDON_AFTER_S
from core.conversation.indexing import sync_before_search
from core.conversation.metrics import ContextItem, Origin, TurnMetrics
from core.conversation.thoughts import (
    CATEGORY_ASSISTANT,
    CATEGORY_METRICS,
    CATEGORY_USER,
    FeedbackRecord,
    Thought,
)
from core.conversation.turn import AnswerRestarts, Remember, Synthesising, UiRememberParams, UiRememberResult
from core.errors import NotFound, ProviderError, ServiceUnavailable, outage
from core.formation.summaries import summarise_quiet
from core.ids import Id, validate_id
from core.retrieval import timeparse
from core.usecases.base import InstanceRequest, new_instance_told

if TYPE_CHECKING:
    from core.runtime import Workbench

# For the front ends: the sweep's threshold, and the categories of a turn's user and assistant thoughts.
__all__ = ["ABANDON_AFTER_S", "CATEGORY_ASSISTANT", "CATEGORY_USER", "AnswerRestarts", "ContextItem",
           "FeedbackRecord", "Synthesising", "Thought", "TurnMetrics"]


# The origin of a turn made by a program using the core as a library: every front end passes its own.
PROGRAM = Origin(source="python")


def remember(wb: Workbench, req: UiRememberParams, *, origin: Origin | None = None,
             clock: Callable[[], datetime] | None = None, caller: Principal = LOCAL_USER) -> UiRememberResult:
    """One ui_remember turn: retrieve, synthesise, store the three thoughts, score the previous answer.
    `origin`: the front end (and API key) it came through, recorded with the turn (none: a program of
    its own, `PROGRAM`, counted under the source "python"); `caller`: whose
    instances a first turn in a new instance names (`new_instance_note`). The thoughts still queued for the
    memory index are indexed before it retrieves (`sync_before_search`; without Postgres the turn goes on,
    degraded)."""
    sync_before_search(wb, turn=True)
    with _new_instance_told(wb, req, caller) as notes:
        return _as_asked(req, Remember(wb, clock=clock, origin=origin or PROGRAM).run(req, notes=notes))


@contextmanager
def _new_instance_told(wb: Workbench, req: UiRememberParams, caller: Principal) -> Iterator[list[str]]:
    """The turn's first notes (`new_instance_told`: a turn that fails gives its claim up)."""
    with new_instance_told(wb, validate_id(req.instance or wb.settings.instance, "instance"), caller) as note:
        yield [note] if note else []


def _as_asked(req: UiRememberParams, result: UiRememberResult) -> UiRememberResult:
    """The result without its prompt when the request said `include_prompt` false (the turn stored it)."""
    if req.include_prompt is not False:
        return result
    return result.model_copy(update={"prompt": [], "notes": [
        *result.notes, "prompt left out of the result (include_prompt=false); the turn's metrics thought keeps it"]})


def remember_stream(wb: Workbench, req: UiRememberParams, *, origin: Origin | None = None,
                    caller: Principal = LOCAL_USER) -> Iterator[str | UiRememberResult]:
    """The same turn, yielding the answer's text (`str` pieces) as it is produced and then the result.

    Two markers come among the pieces, as empty strings (joining the pieces is unaffected by them), told
    apart by their type. `Synthesising` (`.model`, `.timeout_s`): the LLM is being asked, for at most
    `timeout_s` seconds (a place to show "waiting for <model>…"). `AnswerRestarts` (`.reason`): the LLM's
    answer broke off mid-way, so discard the text shown so far; the pieces after it are the whole
    (extractive) answer, the one `result.answer` holds."""
    sync_before_search(wb, turn=True)
    with _new_instance_told(wb, req, caller) as notes:
        for part in Remember(wb, origin=origin or PROGRAM).stream(req, notes=notes):
            yield part if isinstance(part, str) else _as_asked(req, part)


class SweepResult(BaseModel):
    instance: str
    abandoned_marked: int
    summarised: int = 0
    note: str | None = None


def sweep_instance(wb: Workbench, req: InstanceRequest) -> SweepResult:
    """Mark the instance's answers with no follow-up for 600 s as abandoned (`mark_abandoned`), and
    summarise the chains that went quiet (`summarise_quiet_chains`)."""
    marked = mark_abandoned(wb, req)
    return summarise_quiet_chains(wb, req).model_copy(update={"abandoned_marked": marked})


def mark_abandoned(wb: Workbench, req: InstanceRequest) -> int:
    """The sweep's first part: the instance's answers with no follow-up for 600 s marked abandoned (one
    pass in Redis, quick enough for a page to wait for). Returns how many."""
    return wb.thoughts.sweep_abandoned(req.instance_in(wb))


def summarise_quiet_chains(wb: Workbench, req: InstanceRequest) -> SweepResult:
    """The sweep's second part: the chains that went quiet summarised, a few at a time (left to a later
    sweep while Postgres is down). Each summary is an embedding and a write, so the Chat page runs this
    part in the background."""
    instance = req.instance_in(wb)
    try:
        summarised = summarise_quiet(wb, instance)
    except (psycopg.Error, ServiceUnavailable, ProviderError) as e:  # ProviderError: the embedder's
        reason = e if isinstance(e, ProviderError) else outage(e, "Postgres")
        return SweepResult(instance=instance, abandoned_marked=0,
                           note=f"session summaries deferred to a later sweep: {reason}")
    return SweepResult(instance=instance, abandoned_marked=0, summarised=summarised)


def warm_up_in_background() -> threading.Thread:
    """What a server's first turns would wait for, made ready in a daemon thread, so the server starts and
    answers meanwhile: dateparser's patterns, 0.2-0.6 s of the first turn that names a date
    (`core.retrieval.timeparse.warm_up`)."""
    thread = threading.Thread(target=timeparse.warm_up, name="turn-warm-up", daemon=True)
    thread.start()
    return thread


def sweep(wb: Workbench, *, summarise: bool = True) -> Upkeep:
    """Every instance's abandonment sweep, then the thoughts still queued for the memory index, then (with
    `summarise`) every instance's quiet chains summarised."""
    return upkeep(wb, summarise=summarise)


class ConversationRef(InstanceRequest):
    chain_id: Id


class ConversationMessage(BaseModel):
    """One message of a conversation; an answer comes with its feedback and the metrics of its turn (what
    was retrieved and why, the prompt, the stage times)."""

    role: Literal["user", "assistant"]
    thought: Thought
    feedback: FeedbackRecord | None = None
    metrics: TurnMetrics | None = None


class Conversation(BaseModel):
    instance: str
    chain_id: str
    messages: list[ConversationMessage]

    @property
    def user_turns(self) -> int:
        return sum(1 for m in self.messages if m.role == "user")


def conversation(wb: Workbench, req: ConversationRef) -> Conversation:
    """A chain as the Chat page shows it: its messages in order, each answer with its feedback and metrics.
    NotFound for a chain with no thoughts (never made, or deleted): a chain is never empty, and a read
    says so as export and delete do."""
    instance = req.instance_in(wb)
    thoughts = wb.thoughts.chain_thoughts(instance, req.chain_id)
    if not thoughts:
        raise NotFound(f"no chain {req.chain_id!r} in instance {instance!r} (it may have been deleted)")
    answers = [t.id for t in thoughts if t.category == CATEGORY_ASSISTANT]
    feedback = wb.thoughts.feedback(answers) if answers else {}
    metrics = (TurnMetrics.from_fields(t.to_hash()) for t in thoughts if t.category == CATEGORY_METRICS)
    by_answer = {m.answer_id: m for m in metrics}
    messages = [ConversationMessage(role="user", thought=t) if t.category == CATEGORY_USER else
                ConversationMessage(role="assistant", thought=t, feedback=feedback.get(t.id),
                                    metrics=by_answer.get(t.id))
                for t in thoughts if t.category in (CATEGORY_USER, CATEGORY_ASSISTANT)]
    return Conversation(instance=instance, chain_id=req.chain_id, messages=messages)
