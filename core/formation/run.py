"""Formation run again over an instance: after an import (imported chains are indexed in bulk, without
formation), or once an LLM is configured (its reading replaces the rules').

A chain is formed again when it holds a user message not formed yet (imported since the last run), one
older rules formed (`observations.RULES`: a data directory kept across versions), or, with an LLM
configured, one the rules formed (`unformed_chains`); every chain when asked (`workbench formation run
--all`). Each such chain's user messages are read again, their
rows rewritten with their kind and their observations (same ids: nothing doubles), observations a message no
longer yields removed, and corrections applied again (choosing the same memory again changes nothing); what an
observation that no longer reads as a correction or an update had superseded is current again (a note says how many).
Running it twice leaves the index as once; the second run forms nothing. Before, every run formed every
chain: after 1 new conversation and 2 new messages in a ChatGPT import of 1,500, it took 29–38 s.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from pydantic import BaseModel

from core.conversation.indexing import empty_reply, mark_memorized, thought_records
from core.conversation.keys import chains_key
from core.conversation.thoughts import CATEGORY_USER
from core.formation.observations import RULES, Formation
from core.formation.supersede import Mended, close_gaps, mend, release, supersede
from core.index.records import ROW_COLUMNS, row_from_tuple

if TYPE_CHECKING:
    from core.runtime import Workbench


class FormationCounts(BaseModel):
    chains: int = 0  # formed in this run
    unchanged: int = 0  # formed before and unchanged since: left as they are
    messages: int = 0
    by_kind: dict[str, int] = {}
    observations: int = 0
    removed: int = 0
    superseded: int = 0
    notes: list[str] = []


def formation_for(wb: Workbench) -> Formation:
    """Formation by the LLM when one is configured, else by the rules."""
    return Formation(wb.index, wb.llm, wb.settings.model_fast)


def turn_formation(wb: Workbench) -> Formation:
    """A turn's formation: by the rules, unless FORMATION_LLM asks for the LLM's reading too (one more
    call per turn, made after the answer was given)."""
    return formation_for(wb) if wb.settings.formation_llm else Formation(wb.index)


# A user message formation has not formed as it would now: never formed (formation records every message's
# kind on its row), or by older rules (`RULES`).
_DUE = ("(NOT metadata ? 'message_kind' OR (metadata->>'formed_by' = 'rules' "
        "AND metadata->>'rules' IS DISTINCT FROM %(rules)s))")


def unformed(wb: Workbench, instance: str) -> bool:
    """Whether some user message of the instance was never formed (imported, and not formed since), or was
    formed by older rules."""
    with wb.pool().connection() as conn:
        return conn.execute(f"SELECT EXISTS (SELECT 1 FROM memory WHERE instance = %(i)s AND kind = 'user' "
                            f"AND {_DUE})", {"i": instance, "rules": RULES}, prepare=False).fetchone()[0]


def unformed_chains(wb: Workbench, instance: str) -> list[str]:
    """The chains to form again, in the order of their last activity: those holding a user message never
    formed or formed by older rules, or, with an LLM configured, one the rules formed (its reading replaces
    theirs; one it failed to read is tried again)."""
    if not wb.index.partition_exists(instance):
        return []
    with wb.pool().connection() as conn:
        due = {r[0] for r in conn.execute(
            f"SELECT DISTINCT chain_id FROM memory WHERE instance = %(i)s AND kind = 'user' AND ({_DUE} OR "
            "(%(llm)s AND metadata->>'formed_by' IS DISTINCT FROM 'llm'))",
            {"i": instance, "llm": wb.llm.configured, "rules": RULES}, prepare=False).fetchall()}
    return [chain for chain in wb.thoughts.r.zrange(chains_key(instance), 0, -1) if chain in due]


def form_instance(wb: Workbench, instance: str, *, chains: list[str] | None = None,
                  progress: Callable[[int, int], None] | None = None) -> FormationCounts:
    """Form the given chains of the instance again, or every one (see the module docstring)."""
    formation = formation_for(wb)
    every = wb.thoughts.r.zcard(chains_key(instance))
    chains = list(wb.thoughts.r.zrange(chains_key(instance), 0, -1)) if chains is None else chains
    counts = FormationCounts(chains=len(chains), unchanged=max(0, every - len(chains)))
    mended: list[Mended] = []
    uncorrected = 0  # memories current again: a correction formed again corrects nothing now
    plain: list[str] = []  # observations formed again that read as no correction or update (`release`)
    told: list = []  # the corrections and updates formed, all chains'
    for done, chain in enumerate(chains, start=1):
        thread = wb.thoughts.chain_thoughts(instance, chain)
        wanted = {t.id for t in thread if t.category == CATEGORY_USER}
        _mark_empty_replies(wb, instance, thread)
        if wanted:
            records, corrections = formation.form(thought_records(thread, wanted), {(instance, chain): thread})
            kept = [r.id for r in records if r.kind == "observation"]
            removed, closed = _remove_stale(wb, instance, chain, kept)
            counts.removed += removed
            mended.append(closed)
            wb.index.add(records)
            mark_memorized(wb.thoughts, [r for r in records if r.kind == "user"])
            formed = supersede(wb.index, corrections)
            counts.superseded += len(formed.pairs)
            uncorrected += formed.current_again
            correcting = {c.observation.id for c in corrections}
            plain += [i for i in kept if i not in correcting]
            told += corrections
            counts.messages += len(wanted)
            counts.observations += len(kept)
            for r in records:
                if r.kind == "user":
                    kind = r.metadata["message_kind"]
                    counts.by_kind[kind] = counts.by_kind.get(kind, 0) + 1
        if progress:
            progress(done, len(chains))
    # What they superseded when older rules read them as corrections is current again: once for the run (a
    # read of the instance's rows each time, not each chain).
    released = release(wb.index, instance, plain)
    if released:  # a correction formed before skipped a fact another observation still hid: applied again
        uncorrected += supersede(wb.index, told).current_again
    # A history a deletion left open (before deletions mended it) closes too.
    mended.append(close_gaps(wb.index, instance))
    counts.notes = (sorted(set(formation.notes)) + Mended(*map(sum, zip(*mended, strict=True))).notes()
                    + _current_again(released, RELEASED) + _current_again(uncorrected, UNCORRECTED))
    return counts


def _current_again(count: int, why: str) -> list[str]:
    """A run's note of the `count` facts it made current again, and `why` ("{it}": it or them)."""
    if not count:
        return []
    one = count == 1
    return [f"{count} {'memory' if one else 'memories'} current again: " + why.format(it="it" if one else "them")]


# Why: `release` found that what had superseded them reads as no correction now; or a correction formed again
# corrects nothing under these rules ("Não, o meu irmão e a Ana vieram jantar.", `supersede`).
RELEASED = "what had superseded {it} no longer reads as a correction or a change"
UNCORRECTED = "the correction that had superseded {it} corrects nothing under these rules"


def _remove_stale(wb: Workbench, instance: str, chain: str, kept: list[str]) -> tuple[int, Mended]:
    """Remove the observations of the chain's messages that their new reading no longer yields, and close
    the fact histories through them (one was a correction, or a fact corrected): how many, and `mend`'s."""
    if not wb.index.partition_exists(instance):
        return 0, Mended()
    with wb.index.pool.connection() as conn:
        rows = conn.execute(
            "DELETE FROM memory WHERE instance = %s AND chain_id = %s AND kind = 'observation' "
            f"AND metadata ? 'source_thought' AND id <> ALL(%s) RETURNING {ROW_COLUMNS}",
            (instance, chain, kept), prepare=False).fetchall()
    removed = {r.id: r for r in map(row_from_tuple, rows)}
    return len(removed), mend(wb.index, instance, removed)


def _mark_empty_replies(wb: Workbench, instance: str, thread: list) -> None:
    """The assistant's replies that say nothing, indexed before they were marked acknowledgements
    (`core.conversation.indexing.empty_reply`, 2026-12-07): their rows written again, marked, so that a
    directory kept across versions stops handing "Noted." to synthesis. Only rows in the index and unmarked."""
    replies = {t.id for t in thread if empty_reply(t)}
    unmarked = {r.id for r in wb.index.get(instance, list(replies)) if r.metadata.get("message_kind") is None} \
        if replies else set()
    if unmarked:
        wb.index.add(thought_records(thread, unmarked))
