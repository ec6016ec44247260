"""Pieces of the Feedback page: KPI tiles with their change, and one turn's transcript.

Stored text (questions, answers, memories, corrections) is shown with `st.text` or in dataframes, so
nothing a user typed is rendered as Markdown or HTML.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pandas as pd
import streamlit as st

from core import usecases as uc
from dashboard.chat_view import render_prompt
from dashboard.ui import as_plain_line, as_plain_markdown, plural


def _pct(v: float | None) -> str:
    return "—" if v is None else f"{100 * v:.1f}%"


def _delta(cur: float | None, prev: float | None, fmt: Callable[[float], str]) -> str | None:
    if cur is None or prev is None:
        return None
    return fmt(cur - prev)


NO_EARLIER_DATA = "no earlier data"
BOTH = (f"An answer whose follow-up came {int(uc.ABANDON_AFTER_S // 60)} minutes or more later is both continued "
        "and abandoned, so the continue and abandon rates can add up to more than 100%.")


# Six tiles and their 0.5rem gaps fit the page of a 1,400 px window; "Correction rate", "2,165" and "no earlier
# data" show whole at this width.
TILE_PX = 148


def _metrics(tiles: list[tuple], prev: uc.FeedbackSummary, period: str) -> None:
    """One bordered tile each; the change is "no earlier data" when the previous period had no answers, or
    only imported ones, which carry no feedback (a change against nothing would read as if everything
    were new).

    Tiles of one width in a row that wraps: six columns shared the row whatever its width, and in a
    1,100 px window beside the sidebar every value was cut to "0.…", "2,…" and every label to "Mea…"."""
    empty = prev.answers == prev.imported
    row = st.container(horizontal=True, gap="xsmall")
    for label, value, delta, color, help_text in tiles:
        still = empty or _unchanged(delta)
        row.metric(label, value, NO_EARLIER_DATA if empty else delta, delta_color="off" if still else color,
                   delta_arrow="off" if still else "auto", help=f"{help_text} Change: against {period}.",
                   border=True, width=TILE_PX)


def _unchanged(delta: str | None) -> bool:
    """A change that reads as none ("+0 s", "+0.0 pp", "+0.000"): Streamlit drew it as a rise, with an
    up arrow, in red on the tiles where less is better."""
    number = delta and re.match(r"[+-]?\d[\d,]*(?:\.\d+)?", delta)
    return bool(number) and float(number.group().replace(",", "")) == 0


def render_tiles(cur: uc.FeedbackSummary, prev: uc.FeedbackSummary, period: str) -> None:
    """Six tiles; each delta is the change against the previous period of the same length."""
    pp = lambda d: f"{100 * d:+.1f} pp"  # noqa: E731  (percentage points)
    ci = (f"95% interval {cur.ci_low:.3f}–{cur.ci_high:.3f} over {cur.scored} scored answers"
          if cur.ci_low is not None else f"{cur.scored} scored answers: too few for an interval")
    tiles = [
        ("Mean score", "—" if cur.mean_score is None else f"{cur.mean_score:.3f}",
         _delta(cur.mean_score, prev.mean_score, lambda d: f"{d:+.3f}"), "normal",
         f"Mean feedback_score of answers that got a follow-up. {ci}."),
        ("Answers", f"{cur.answers:,}", _delta(cur.answers, prev.answers, lambda d: f"{d:+,.0f}"), "off",
         f"{cur.scored} scored, {cur.abandoned} abandoned, {cur.final} ended (no follow-up expected), "
         f"{cur.pending} awaiting a follow-up"
         + (f", {cur.imported} imported (no follow-up data, in no rate)." if cur.imported else ".")),
        ("Continue rate", _pct(cur.continue_rate), _delta(cur.continue_rate, prev.continue_rate, pp), "normal",
         "Share of the answers given here (not imported), ended ones included, the user followed up in the "
         f"same conversation. Without ended answers: {_pct(cur.continue_rate_excl_ended)}. {BOTH}"),
        ("Abandon rate", _pct(cur.abandon_rate), _delta(cur.abandon_rate, prev.abandon_rate, pp), "inverse",
         "Share of the answers given here (not imported), ended ones included, whose next turn came 10 "
         f"minutes or more later, or never. Without ended answers: {_pct(cur.abandon_rate_excl_ended)}. {BOTH}"),
        ("Correction rate", _pct(cur.correction_rate), _delta(cur.correction_rate, prev.correction_rate, pp),
         "inverse", "Share of the answers given here (not imported), ended ones included, whose follow-up read "
         f"as a correction (actually, wrong, no, …). Without ended answers: {_pct(cur.correction_rate_excl_ended)}."),
        # "Reply time", not "Median reply time": a sixth of the page, the tile cut that at a 1500 px window.
        ("Reply time", "—" if cur.time_to_next_s["p50"] is None else f"{cur.time_to_next_s['p50']:.0f} s",
         _delta(cur.time_to_next_s["p50"], prev.time_to_next_s["p50"], lambda d: f"{d:+.0f} s"), "inverse",
         "Median seconds between an answer and the user's next turn (p75 "
         f"{cur.time_to_next_s['p75'] or 0:.0f} s, p90 {cur.time_to_next_s['p90'] or 0:.0f} s)."),
    ]
    _metrics(tiles, prev, period)
    given = cur.answers - cur.imported
    over = (f"the {given:,} answers given here, not the {plural(cur.imported, 'imported answer')}, which carry no "
            "follow-up data of their own;" if cur.imported else f"all {cur.answers:,} answers,")
    st.caption(f"Rates are over {over} {cur.final:,} of them ended (given with "
               "next_thought_needed = false: no follow-up was expected, so they are never abandoned). Without "
               f"the ended answers: continue {_pct(cur.continue_rate_excl_ended)}, abandon "
               f"{_pct(cur.abandon_rate_excl_ended)}, correction {_pct(cur.correction_rate_excl_ended)}. "
               + BOTH)


def render_rating_tiles(cur: uc.FeedbackSummary, prev: uc.FeedbackSummary, period: str) -> None:
    """The explicit ratings (thumbs up or down), a signal of their own: they are not part of the score
    above, which comes from what the user did next."""
    def pp(d: float) -> str:  # percentage points
        return f"{100 * d:+.1f} pp"

    def count(d: float) -> str:
        return f"{d:+,.0f}"

    rated_share = cur.rated / cur.answers if cur.answers else None
    prev_share = prev.rated / prev.answers if prev.answers else None
    tiles = [
        ("Rated up", _pct(cur.rated_up_share), _delta(cur.rated_up_share, prev.rated_up_share, pp), "normal",
         f"Share of rated answers the user rated up: {cur.rated_up} of n={cur.rated}."),
        ("Thumbs up", f"{cur.rated_up:,}", _delta(cur.rated_up, prev.rated_up, count), "normal",
         "Answers the user rated up (the Chat page's thumbs, or an assistant's rate_answer)."),
        ("Thumbs down", f"{cur.rated_down:,}", _delta(cur.rated_down, prev.rated_down, count), "inverse",
         "Answers the user rated down; “Only rated down” below lists them with their comments."),
        ("Answers rated", _pct(rated_share), _delta(rated_share, prev_share, pp), "off",
         f"{cur.rated} of {cur.answers} answers have an explicit rating."),
    ]
    st.caption("Explicit ratings: what users said of an answer with a thumb, beside what they did next.")
    _metrics(tiles, prev, period)


def render_transcript(t: uc.Transcript, model_label: Callable[[str], str]) -> None:
    """The turn as the user lived it: question, answer (with what it drew on), then what came next."""
    answer, fb, x = t.answer, t.feedback, t.described()
    st.caption(f"Conversation {answer.chain_id} · answered {answer.timestamp:%Y-%m-%d %H:%M:%S} UTC")
    with st.chat_message("user"):
        st.caption("User turn")
        st.text(t.question.thought if t.question else "(the user turn is no longer stored)")
    with st.chat_message("assistant"):
        via = as_plain_line((x.source or "unknown source") + (f" with key {x.key}" if x.key else ""))
        st.caption(f"Answer · routed to {model_label(x.model_selected or x.model or '—')} · "
                   f"synthesis {x.synthesis or '—'} · profile {x.profile or '—'}"
                   + (f" · {tokens}" if (tokens := x.tokens_line()) else "") + f" · via {via}")
        st.text(answer.thought)
        if fb and fb.rating:
            when = f" at {fb.rated_at:%Y-%m-%d %H:%M:%S} UTC" if fb.rated_at else ""
            st.caption(f"Rated {fb.rating} by the user{when}"
                       + (", saying:" if fb.rating_comment else ""))
            if fb.rating_comment:
                st.text(fb.rating_comment)
        items = x.context_items if x.context_items is not None else len(x.context)
        # The memories handed to synthesis, those the prompt lists: retrieval may have found more, which the
        # relevance floor or the token cap left out (the notes below say how many).
        with st.expander(f"Context: {plural(items, 'memory', 'memories')} in the prompt"):
            if x.context:
                # relevance: the score the prompt gives each memory.
                shown = ["content", "kind", "relevance", "combined", "semantic", "text", "recency"]
                # Four decimals: a day-old memory's recency printed as 0.0000000000000001.
                scores = {name: st.column_config.NumberColumn(format="%.4f") for name in shown[2:]}
                st.dataframe(pd.DataFrame([c.model_dump() for c in x.context])[shown], hide_index=True,
                             width="stretch", column_config=scores)
            elif t.metrics is None:
                st.caption("The metrics thought of this turn is missing, so its context is unknown.")
            else:
                st.caption("No memory was passed to synthesis for this turn, or its texts were not recorded.")
        if t.metrics is not None:
            with st.expander("Prompt: the exact messages, and the turn's notes"):
                for note in x.notes:
                    st.caption(f"ℹ️ {as_plain_markdown(note)}")  # notes quote user input
                render_prompt(x)
    if t.next_turn is not None:
        with st.chat_message("user"):
            if fb and fb.corrected:
                label = "Correction"
            elif fb and fb.continued:
                label = "Follow-up"
            else:
                label = "Next turn"
            timing = f" after {fb.time_to_next:.0f} s" if fb and fb.time_to_next is not None else ""
            score = f" · feedback score {fb.feedback_score:.2f}" if fb and fb.feedback_score is not None else ""
            late = " · came back after the answer was marked abandoned" if fb and fb.abandoned else ""
            st.caption(f"{label}{timing}{score}{late}")
            st.text(t.next_turn.thought)
    elif fb and fb.abandoned:
        st.info("No follow-up: the user left, and the answer was marked abandoned after 10 minutes.")
    elif fb and fb.origin == "imported":
        st.info("Imported answer: its conversation ended here in the export it came from.")
    elif fb and fb.final:
        st.info("Final answer: the user said no follow-up was needed.")
    else:
        st.info("No follow-up yet.")
