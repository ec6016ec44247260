"""Memory formation on the pages: which message kinds a profile retrieves (Tune), the history of a fact
(Memory explorer), and the memories a later correction superseded (Chat, and the explorer's hits)."""

from __future__ import annotations

from datetime import datetime

import streamlit as st

from core import usecases as uc
from dashboard.resources import get_workbench
from dashboard.ui import as_plain_line, attempt

KINDS = ["statement", "question", "acknowledgement", "correction", "instruction"]
K = "formation_"


def formation_controls(candidate: uc.FusionProfile, profiles: dict[str, uc.FusionProfile],
                       active: uc.FusionProfile) -> uc.FusionProfile:
    """The candidate profile with what it retrieves, seeded from the profile the controls started from:
    the rankings beside it show the effect."""
    base = profiles.get(st.session_state.get("tune_start"), active)
    if st.session_state.get(K + "base") != base.name:  # a profile was loaded into the controls
        st.session_state[K + "base"] = base.name
        st.session_state[K + "kinds"] = list(KINDS if base.retrieve_kinds is None else base.retrieve_kinds)
        st.session_state[K + "superseded"] = base.include_superseded
    kinds = st.multiselect(
        "Retrieve user messages of kind", KINDS, key=K + "kinds",
        help="Statements and corrections are retrieved through the observations made from them; questions "
             "and acknowledgements (thanks, small talk) stay in the transcript and, by default, are not "
             "retrieved. Memories without a kind (imported memories, benchmark turns) always are.")
    superseded = st.checkbox("Retrieve superseded facts too", key=K + "superseded",
                             help="A fact a later correction replaced is kept but, by default, not retrieved.")
    return candidate.model_copy(update={"retrieve_kinds": kinds, "include_superseded": superseded})


def render_fact_history(instance: str, memory_id: str) -> None:
    """A fact and the corrections through it, oldest first."""
    history = attempt("read the history of this fact", lambda: uc.fact_history(
        get_workbench(), uc.FactHistoryRequest(instance=instance, memory_id=memory_id)))
    if history is None:
        return
    if len(history.facts) < 2:
        st.caption("No correction touched this fact: it is current.")
        return
    for fact in history.facts:
        when = f"said {fact.said_at:%Y-%m-%d %H:%M}"
        state = (f"superseded {fact.superseded_at:%Y-%m-%d %H:%M}" if fact.superseded_at else "current")
        marker = "→" if fact.id == memory_id else "·"
        st.markdown(f"{marker} {as_plain_line(fact.content, 200)} — *{when}, {state}* `{fact.id}`")


def superseded_in(conversation: uc.Conversation) -> dict[str, uc.HistoryFact]:
    """The memories a later correction superseded among those the conversation's answers used (one
    lookup for the whole conversation)."""
    ids = sorted({c.id for m in conversation.messages if m.metrics for c in m.metrics.context})[:1000]
    if not ids:
        return {}
    gone = attempt("check for superseded memories", lambda: uc.superseded_memories(
        get_workbench(), uc.SupersededRequest(instance=conversation.instance, ids=ids)))
    return {f.id: f for f in gone or []}


def superseded_caption(metrics: uc.TurnMetrics | None, superseded: dict[str, uc.HistoryFact]) -> str:
    """Which of an answer's memories were superseded since, or "" when none."""
    gone = [superseded[c.id] for c in (metrics.context if metrics else []) if c.id in superseded]
    if not gone:
        return ""
    return "superseded since by a later message: " + "; ".join(f"“{as_plain_line(f.content, 60)}”" for f in gone)


def superseded_note(at: datetime, by: str | None, content: str = "", *, statement: str | None = None,
                    update: bool = False) -> str:
    """The explorer's mark on a hit whose fact a later correction superseded: when, and what the correction
    says when it is still stored (Markdown; the stored text made inert). A correction said again word for
    word supersedes its earlier self: that is said so, not as a correction by the same words. With
    `statement`, only that statement of the message is superseded: its others stand. `update`: what
    superseded it narrates a change ("We just moved to Denver"), which is no correction."""
    if by and by.casefold().split() == content.casefold().split():
        said = " when the same words were said again (the later copy is current)"
    else:
        said = (" by a later statement" if update else " by a correction") + (
            f": “{as_plain_line(by, 160)}”" if by else "")
    if statement is not None:
        return (f":orange[**Superseded** {at:%Y-%m-%d %H:%M}: “{as_plain_line(statement, 120)}”{said}] · the "
                "message's other statements stand")
    return (f":orange[**Superseded** {at:%Y-%m-%d %H:%M}{said}] · kept for its history, not retrieved unless a "
            "profile asks for superseded facts")
