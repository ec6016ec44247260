"""Rendering of a conversation for the Chat page: turns, feedback badges and the "why" expander."""

from __future__ import annotations

from datetime import UTC, datetime

import pandas as pd
import streamlit as st

from core.conversation.thoughts import CATEGORY_ASSISTANT, CATEGORY_METRICS, CATEGORY_USER, FeedbackRecord, Thought
from dashboard.ui import as_plain_markdown, humanize_age


def feedback_caption(fb: FeedbackRecord | None) -> str:
    if fb is None:
        return ""
    if fb.continued:
        text = f"feedback {fb.feedback_score:.2f} · follow-up after {fb.time_to_next:.0f} s"
        if fb.corrected:
            text += f" · corrected: “{as_plain_markdown(fb.corrected[:80])}”"  # the user's own words
        return text + (" · abandoned first" if fb.abandoned else "")
    if fb.abandoned:
        return "abandoned: no follow-up within 10 minutes"
    if fb.final:
        return "final answer: no follow-up expected"
    return "awaiting the next turn for feedback"


def context_frame(context: list[dict], now: datetime) -> pd.DataFrame:
    rows = [{
        "content": c["content"], "kind": c["kind"], "chain": c.get("chain_id") or "",
        "age": humanize_age((now - datetime.fromisoformat(c["created_at"])).total_seconds()),
        "semantic": c["semantic"], "text": c["text"], "recency": c["recency"], "combined": c["combined"],
    } for c in context]
    return pd.DataFrame(rows, columns=["content", "kind", "chain", "age", "semantic", "text", "recency",
                                       "combined"])


def render_why(metrics: Thought, *, expanded: bool = False) -> None:
    x = metrics.extra
    with st.expander("Why this answer: context, model, cost, prompt", expanded=expanded):
        latency = x.get("latency") or {}
        cols = st.columns(4)
        cols[0].metric("Model", x.get("model", "—"), help=f"heuristic chose {x.get('model_selected', '—')}")
        cols[1].metric("Tokens", x.get("tokens") or "—")
        cols[2].metric("Context items", x.get("context_items", 0))
        cols[3].metric("Total", f"{latency.get('total_ms', 0):.0f} ms")
        st.caption(" · ".join(f"{stage.removesuffix('_ms')} {latency.get(stage, 0):.1f} ms"
                              for stage in ("embed_ms", "search_ms", "synthesis_ms", "store_ms", "index_ms")))
        for note in x.get("notes") or []:
            st.caption(f"ℹ️ {as_plain_markdown(note)}")  # notes quote user input (e.g. the time hint)
        context = x.get("context") or []
        if context:
            st.dataframe(context_frame(context, datetime.now(UTC)), hide_index=True, width="stretch",
                         column_config={k: st.column_config.ProgressColumn(k, min_value=0.0, max_value=1.0,
                                                                           format="%.3f")
                                        for k in ("semantic", "text", "recency", "combined")})
        else:
            st.caption("No memory was retrieved for this turn.")
        st.caption(f"Profile: {x.get('profile', '—')}")
        for message in x.get("prompt") or []:
            st.markdown(f"**Prompt — {message['role']}**")
            st.code(message["content"], language=None, wrap_lines=True)


def render_conversation(thoughts: list[Thought], feedback: dict[str, FeedbackRecord]) -> None:
    metrics_by_answer = {t.extra.get("answer_id"): t for t in thoughts if t.category == CATEGORY_METRICS}
    answers = [t for t in thoughts if t.category == CATEGORY_ASSISTANT]
    last_answer = answers[-1].id if answers else None
    for t in thoughts:
        if t.category == CATEGORY_USER:
            with st.chat_message("user"):
                st.markdown(as_plain_markdown(t.thought))
                if t.tags:
                    st.caption("tags: " + as_plain_markdown(", ".join(t.tags)))
        elif t.category == CATEGORY_ASSISTANT:
            with st.chat_message("assistant"):
                st.markdown(as_plain_markdown(t.thought))
                caption = feedback_caption(feedback.get(t.id))
                if caption:
                    st.caption(caption)
                if (m := metrics_by_answer.get(t.id)) is not None:
                    render_why(m, expanded=t.id == last_answer and st.session_state.get("just_answered", False))
