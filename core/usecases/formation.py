"""Memory formation: re-running it over an instance, and the history of a fact (its supersessions)."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from core.formation.run import FormationCounts, form_instance, unformed_chains
from core.formation.summaries import LLMUse, summarise_instance, unsummarised
from core.formation.supersede import fact_history as _fact_history
from core.formation.supersede import superseded_among, superseded_at
from core.ids import Id
from core.usecases.base import InstanceRequest, Progress

if TYPE_CHECKING:
    from core.runtime import Workbench


class FormationRun(InstanceRequest):
    """Form an instance's conversations (`workbench formation run`): those with messages not formed yet,
    or, with `every_chain`, all of them again (`--all`)."""

    every_chain: bool = False


class FormationResult(FormationCounts):
    instance: str
    summaries: int = 0
    # "llm" or "rules" when one read every message formed, else "llm and rules" (the notes say why the
    # rules stood in for the LLM); with no message formed, the one that would have read them
    formed_by: str
    read_by: dict[str, int] = Field(default_factory=dict)  # of the messages formed: {"llm": n, "rules": m}


def formation_run(wb: Workbench, req: FormationRun, *, progress: Progress | None = None) -> FormationResult:
    """Classify the user messages not formed yet (imported since the last run; with `every_chain`, every
    one) and those of their chains, rewrite their observations, apply their corrections, then summarise
    the chains that ended or went quiet and whose summary is not current: those just formed, those that
    gained or lost a message, and those a correction superseded since (with `every_chain`, every one is
    looked at). Idempotent: a second run forms nothing and changes nothing."""
    instance = req.instance_in(wb)
    formed = None if req.every_chain else unformed_chains(wb, instance)
    counts = form_instance(wb, instance, chains=formed, progress=progress and (lambda d, t: progress(d, t, "chains")))
    due = None if formed is None else set(formed) | set(unsummarised(wb, instance))
    use = LLMUse()
    summaries = summarise_instance(wb, instance, chains=due, use=use,
                                   progress=progress and (lambda d, t: progress(d, t, "summaries")))
    counts.notes += [note] if (note := use.note()) else []
    read_by = _read_by(wb, instance, formed) if counts.messages else {}
    return FormationResult(instance=instance, summaries=summaries, formed_by=_formed_by(wb, read_by),
                           read_by=read_by, **counts.model_dump())


def _read_by(wb: Workbench, instance: str, chains: list[str] | None) -> dict[str, int]:
    """Who read the user messages of the chains just formed (all of them when None), as their rows
    record it: with an LLM configured, the rules still read those it failed on."""
    with wb.pool().connection() as conn:
        found = conn.execute(
            "SELECT metadata->>'formed_by', count(*) FROM memory WHERE instance = %(i)s AND kind = 'user' "
            "AND metadata ? 'formed_by' AND (%(all)s OR chain_id = ANY(%(chains)s)) GROUP BY 1",
            {"i": instance, "all": chains is None, "chains": chains or []}, prepare=False).fetchall()
    return {"llm": 0, "rules": 0} | dict(found)


def _formed_by(wb: Workbench, read_by: dict[str, int]) -> str:
    readers = [who for who in ("llm", "rules") if read_by.get(who)]
    if not readers:
        return "llm" if wb.llm.configured else "rules"
    return " and ".join(readers)


class FactHistoryRequest(InstanceRequest):
    memory_id: Id


class HistoryFact(BaseModel):
    id: str
    kind: str
    content: str
    chain_id: str | None
    said_at: datetime
    superseded_at: datetime | None = None
    superseded_by: str | None = None


class FactHistory(BaseModel):
    instance: str
    memory_id: str
    facts: list[HistoryFact]  # oldest first; the last is the current fact


def _fact(r) -> HistoryFact:
    return HistoryFact(id=r.id, kind=r.kind, content=r.content, chain_id=r.chain_id, said_at=r.created_at,
                       superseded_at=superseded_at(r), superseded_by=r.metadata.get("superseded_by"))


def fact_history(wb: Workbench, req: FactHistoryRequest) -> FactHistory:
    """The chain of supersessions a memory belongs to (just the memory when nothing corrected it)."""
    instance = req.instance_in(wb)
    rows = _fact_history(wb.index, instance, req.memory_id) if wb.index.partition_exists(instance) else []
    return FactHistory(instance=instance, memory_id=req.memory_id, facts=[_fact(r) for r in rows])


class SupersededRequest(InstanceRequest):
    ids: list[Id] = Field(max_length=1000)


def superseded_memories(wb: Workbench, req: SupersededRequest) -> list[HistoryFact]:
    """Those of the given memories a correction has superseded since (the Chat page marks them under the
    answers that used them)."""
    instance = req.instance_in(wb)
    if not req.ids or not wb.index.partition_exists(instance):
        return []
    return [_fact(r) for r in superseded_among(wb.index, instance, req.ids)]
