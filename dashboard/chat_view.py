"""Rendering of a conversation for the Chat page: turns, feedback badges and the "why" expander."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import streamlit as st

from core import usecases as uc
from dashboard.formation_view import superseded_caption, superseded_in
from dashboard.resources import current_instance, get_workbench
from dashboard.ui import (
    MEMORY_ROW_HEIGHT,
    as_plain_line,
    as_plain_markdown,
    humanize_age,
    memory_columns,
    memory_ids,
)


def rating_caption(fb: uc.FeedbackRecord | None) -> str:
    """The user's explicit rating, beside (not inside) the feedback their behaviour gave."""
    if fb is None or fb.rating is None:
        return ""
    text = f"rated {fb.rating}"  # words: the thumbs' icons are beside it, and not every font has emoji
    return text + (f": “{as_plain_line(fb.rating_comment, 120)}”" if fb.rating_comment else "")


def feedback_caption(fb: uc.FeedbackRecord | None) -> str:
    if fb is None:
        return ""
    if fb.continued:
        text = f"feedback {fb.feedback_score:.2f} · follow-up after {fb.time_to_next:.0f} s"
        if fb.corrected:
            text += f" · corrected: “{as_plain_line(fb.corrected, 80)}”"  # the user's own words
        return text + (" · abandoned first" if fb.abandoned else "")
    if fb.abandoned:
        return "abandoned: no follow-up within 10 minutes"
    if fb.origin == "imported":  # no feedback of its own (DESIGN §8); `final`: its conversation ended there
        return ("imported: its conversation ended here" if fb.final
                else "imported: the next message followed it in the export")
    if fb.final:
        return "final answer: no follow-up expected"
    return "awaiting the next turn for feedback"


def memory_caption(metrics: uc.TurnMetrics | None) -> str:
    """Whether the answer drew on memory: how many memories reached the relevance floor, or that none did."""
    if metrics is None:
        return ""
    if metrics.memory == "unavailable":
        return "memory unavailable: retrieval failed for this answer"
    if metrics.memory == "none_matched" or (metrics.memory is None and not metrics.context_items):
        return "no memory matches"
    n = metrics.context_items or 0
    return f"{n} {'memory' if n == 1 else 'memories'} found"


def context_frame(context: list[uc.ContextItem]) -> pd.DataFrame:
    rows = [{
        "content": c.content, "id": c.id, "kind": c.kind, "chain": c.chain_id or "",
        "age": humanize_age(c.age_s),  # when the turn retrieved it: what its recency was computed from
        "semantic": c.semantic, "text": c.text, "recency": c.recency, "speaker": c.speaker,
        "chain score": c.chain, "coverage": c.coverage, "relevance": c.relevance, "combined": c.combined,
    } for c in context]
    return pd.DataFrame(rows, columns=["content", "id", "kind", "chain", "age", "semantic", "text", "recency",
                                       "speaker", "chain score", "coverage", "relevance", "combined"])


# The speaker part adds SPEAKER_WEIGHT to what a speaker the question names said, so the scores built on
# it pass 1; a search by one leg (Search: vector or text) uses neither it nor the chain part.
TOP = f"{1 + uc.SPEAKER_WEIGHT:g}"
HYBRID_ONLY = " Not used (0) in a turn whose Search was vector or text."
# Each paragraph of a message laid out in the direction of its own first letters, as dir="auto" does: a
# Hebrew or Arabic message reads right to left, an English one left to right. Streamlit gives a message's
# Markdown no dir attribute, and the text stays escaped Markdown (never HTML), so a style does it.
MESSAGE_DIRECTION = """<style>
[data-testid="stChatMessage"] [data-testid="stMarkdownContainer"] :is(p, li) {
  unicode-bidi: plaintext; text-align: start;
}
</style>"""


PART_HELP = {"semantic": ("semantic: cosine of the memory to the query expanded by its best keyword matches, "
                          "in [0, 1]"),
             "text": "text: keyword (BM25) match, relative to the best, in [0, 1]",
             "recency": "recency: exp(−age / τ), in [0, 1]",
             "speaker": (f"speaker: 1 when the question names who said the memory, else 0; adds "
                         f"{uc.SPEAKER_WEIGHT} to its relevance and combined score.{HYBRID_ONLY}"),
             "chain score": (f"chain: the best score among the retrieved memories of its chain (weighs "
                             f"{uc.CHAIN_WEIGHT}), in [0, {TOP}] (above 1 through the speaker part)."
                             + HYBRID_ONLY),
             "coverage": ("coverage: the memory's keyword score against an ideal match's (the question's every "
                          "word once), in [0, 1]; relevance reads it instead of text (empty for turns stored "
                          "before it was recorded)"),
             "relevance": ("relevance: what the relevance floor (RELEVANCE_FLOOR) read: semantic and coverage, "
                           "weighed as the profile weighs semantic and text, without recency, plus the speaker "
                           f"part; in [0, {TOP}] (empty for turns stored before it was recorded)"),
             "combined": (f"what the fusion profile ranks by, in [0, {TOP}]: with the speaker and chain "
                          "parts in a hybrid search, the profile's fusion alone in a turn whose Search was "
                          "vector or text")}


def read_profile(name: str | None) -> uc.FusionProfile | None:
    """The profile named by a turn, as it is now; None when it is gone (or a service is down)."""
    if not name:
        return None
    try:
        return uc.get_profile(get_workbench(), uc.ProfileRef(instance=current_instance(), name=name))
    except Exception:  # noqa: BLE001 - deleted since, or a service down: the formulas alone
        return None


def how_scores_add_up(metrics: uc.TurnMetrics, profile_now: uc.FusionProfile | None) -> str:
    """The formulas of the table's scores, so a reader can add a row up from the page: with the fusion the
    turn recorded (its weights, τ and the speaker and chain parts as they were then), or, for a turn stored
    before turns recorded it, the profile of its name as it is now, which says so (saved over since, its
    rows may not add up)."""
    used = metrics.fusion
    if used is not None:
        profile, spk, chn, both_legs = used.profile(), used.speaker_weight, used.chain_weight, used.search_type == "hybrid"
        whose = f"{used.name}'s weights as this turn used them"
    elif profile_now is not None:
        profile, spk, chn, both_legs = profile_now, uc.SPEAKER_WEIGHT, uc.CHAIN_WEIGHT, None
        whose = (f"{profile_now.name}'s weights, the profile as it is now: this turn was stored before turns "
                 "recorded the weights they used, so if the profile was saved over since, its rows may not "
                 "add up")
    else:
        return (f"How the scores add up: own = the profile's fusion + {uc.SPEAKER_WEIGHT}·spk; combined = (own + "
                f"{uc.CHAIN_WEIGHT}·chn) / {1 + uc.CHAIN_WEIGHT:g} in a hybrid search (own alone otherwise); rel = "
                "sem and cov weighed as the profile weighs semantic and text + "
                f"{uc.SPEAKER_WEIGHT}·spk.")
    if both_legs is False:  # one leg searched alone: no speaker or chain part
        spk_part, chain = "", "combined = own (one leg searched alone: no speaker or chain part)"
    else:
        spk_part = f" + {spk:g}·spk"
        chain = f"combined = (own + {chn:g}·chn) / {1 + chn:g}" + (" in a hybrid search (own alone otherwise)"
                                                                   if both_legs is None else "")
    p = profile
    if p.method == "linear":
        own = f"{p.w_sem:.2f}·sem + {p.w_text:.2f}·text + {p.w_rec:.2f}·rec{spk_part}"
        rec = f"; rec = exp(−age / τ), {uc.recency_label(p.tau_s)}"
    else:
        own = (f"({p.w_sem:.2f}/({p.rrf_k} + sem rank) + {p.w_text:.2f}/({p.rrf_k} + text rank) + "
               f"{p.w_rec:.2f}/({p.rrf_k} + age rank))·{p.rrf_k + 1}, reciprocal-rank fusion (the ranks are not "
               f"shown){spk_part}")
        rec = ""
    r_sem, r_text = uc.relevance_weights(p)
    return (f"How the scores add up, with {whose}: own = {own}; {chain}; rel = {r_sem:.3f}·sem + "
            f"{r_text:.3f}·cov{spk_part}{rec}.")


def _ms(ms: float | None, digits: int) -> str:
    return "—" if ms is None else f"{ms:.{digits}f} ms"  # None: a stage older versions did not time


def render_why(metrics: uc.TurnMetrics, profile: uc.FusionProfile | None, *, expanded: bool = False) -> None:
    with st.expander("Why this answer: context, model, cost, prompt", expanded=expanded):
        latency = metrics.latency
        cols = st.columns(4)
        cols[0].metric("Model", metrics.model or "—", help=f"heuristic chose {metrics.model_selected or '—'}")
        cols[1].metric("Tokens", f"{metrics.tokens:,}" if metrics.tokens is not None else "—",
                       help="The total the LLM server reported for this turn, prompt and answer together; "
                            "— when the answer is extractive or the server reported no usage.")
        cols[2].metric("Context items", metrics.context_items or 0)
        cols[3].metric("Total", _ms(latency.total_ms if latency else None, 0))
        if latency is not None:
            st.caption(" · ".join(f"{stage.removesuffix('_ms')} {_ms(ms, 1)}"
                                  for stage, ms in latency.model_dump(exclude={"total_ms"}).items()))
        if metrics.prompt_tokens is not None:
            st.caption(metrics.tokens_line())
        for note in metrics.notes:
            st.caption(f"ℹ️ {as_plain_markdown(note)}")  # notes quote user input (e.g. the time hint)
        if metrics.context:
            # Its width fits a chat message (about 850 px at a 1400 px window).
            st.dataframe(context_frame(metrics.context), hide_index=True, width="stretch",
                         column_config=memory_columns(PART_HELP) | {
                             "chain": st.column_config.TextColumn(width=64),
                             "age": st.column_config.TextColumn(width=56, help="its age when the turn retrieved "
                                                                               "it: rec = exp(−age / τ)")},
                         row_height=MEMORY_ROW_HEIGHT)
            memory_ids([c.id for c in metrics.context])
        else:
            st.caption("No memory reached the relevance floor for this turn: the answer says no memory matches."
                       if metrics.memory == "none_matched" else "No memory was retrieved for this turn.")
        st.caption(f"Profile: {metrics.profile or '—'}. {how_scores_add_up(metrics, profile)}")
        render_prompt(metrics)


# The note a turn records when no LLM is configured (core/conversation/turn.py): its prompt was never sent.
NO_LLM_NOTE = "synthesis skipped: no LLM configured"


def prompt_fate(metrics: uc.TurnMetrics) -> str:
    """What became of the turn's prompt, said above it: a prompt on the page must never read as sent to an
    LLM when none was configured, nor as answered when the call failed."""
    if not metrics.prompt:
        return "No prompt was recorded for this turn."
    model = metrics.model_selected or metrics.model or "the LLM"
    if metrics.synthesis == "llm":
        return f"The messages sent to {model}, exactly as sent:"
    if metrics.synthesis == "extractive":
        if any(note.startswith(NO_LLM_NOTE) for note in metrics.notes):
            return ("Not sent: no LLM is configured, so the answer is extractive. The messages an LLM would have "
                    "been sent:")
        return (f"The call to {model} with these messages gave no usable answer (see the notes), so the answer "
                "is extractive:")
    return "The messages of this turn's prompt:"


def render_prompt(metrics: uc.TurnMetrics) -> None:
    """The exact prompt, one code block per message, with what became of it (`prompt_fate`)."""
    st.caption(prompt_fate(metrics))
    for message in metrics.prompt:
        st.markdown(f"**Prompt — {message.role}**")
        # st.code drops one leading and one trailing line break of its text: the added pair is what it
        # drops, so the block (and its copy button) holds the message byte for byte.
        st.code(f"\n{message.content}\n", language=None, wrap_lines=True)


THUMBS = ("down", "up")  # st.feedback("thumbs") gives 0 for thumbs down, 1 for up


def rating_key(answer_id: str) -> str:
    return f"rate_{answer_id}"


def render_conversation(conversation: uc.Conversation,
                        rate: Callable[[str, str], None] | None = None) -> None:
    """The chain's messages; with `rate(answer_id, "up" | "down")`, thumbs under each answer."""
    answers = [m.thought.id for m in conversation.messages if m.role == "assistant"]
    last_answer = answers[-1] if answers else None
    # Each profile the turns name without recording its weights (turns stored before they did), read once
    # per run, as it is now.
    profiles = {name: read_profile(name) for name in {m.metrics.profile for m in conversation.messages
                                                      if m.metrics is not None and m.metrics.fusion is None}}
    superseded = superseded_in(conversation)
    for m in conversation.messages:
        t = m.thought
        if m.role == "user":
            with st.chat_message("user"):
                st.markdown(as_plain_markdown(t.thought))
                if t.tags:
                    st.caption("tags: " + as_plain_markdown(", ".join(t.tags)))
        else:
            with st.chat_message("assistant"):
                st.markdown(as_plain_markdown(t.thought))
                captions = (memory_caption(m.metrics), superseded_caption(m.metrics, superseded),
                            feedback_caption(m.feedback), rating_caption(m.feedback))
                caption = " · ".join(c for c in captions if c)
                if caption:
                    st.caption(caption)
                if rate is not None and m.feedback is not None:
                    stored = m.feedback.rating
                    # Clearing the thumbs keeps the stored rating: only a new thumb replaces it.
                    st.feedback("thumbs", key=rating_key(t.id), default=None if stored is None else
                                THUMBS.index(stored), on_change=_rated, args=(t.id, rate))
                if m.metrics is not None:
                    just_answered = t.id == last_answer and st.session_state.get("just_answered", False)
                    render_why(m.metrics, profiles.get(m.metrics.profile), expanded=just_answered)


def _rated(answer_id: str, rate: Callable[[str, str], None]) -> None:
    value = st.session_state.get(rating_key(answer_id))
    if value is not None:
        rate(answer_id, THUMBS[value])
