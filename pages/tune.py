"""Tune retrieval: move the fusion weights and MemoryScope parameters, watch the ranking change, follow the
pipeline step by step, measure profiles on labelled queries and save the best one."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core import usecases as uc
from dashboard.formation_view import formation_controls
from dashboard.labelling import KS as LABELLED_KS
from dashboard.labelling import labelled_set_panel
from dashboard.read_message_view import read_message_step
from dashboard.resources import current_instance, get_workbench
from dashboard.tune_controls import op_controls, profile_controls
from dashboard.tune_eval import KS, evaluation_panel
from dashboard.tune_profiles import active_line, profiles_panel
from dashboard.ui import MEMORY_ROW_HEIGHT, as_plain_line, attempt, memory_columns, memory_ids, table_height

st.title("Tune retrieval")
st.caption("Fusion weights, recency and MemoryScope's rerank: see rankings change, measure them on labelled "
           "queries, and save the profile the live system uses.")

wb = get_workbench()
instance = current_instance()
listing = attempt("read the fusion profiles",
                  lambda: uc.list_profiles(wb, uc.InstanceRequest(instance=instance)))
if listing is None:
    st.stop()
profiles = {p.name: p for p in listing.profiles}
active = profiles[listing.active]
active_line(instance, listing)

query = st.text_input("Query", "What did I eat yesterday?", key="tune_query",
                      help="Searched in the instance chosen in the sidebar.")
left, right = st.columns([1, 3.2], gap="small")
with left, st.container(border=True):
    st.markdown("**Candidate profile**")
    candidate = attempt("read the controls", lambda: profile_controls(profiles, active))
    candidate = candidate and formation_controls(candidate, profiles, active)
    st.markdown("**Retrieval and rerank**")
    controls = attempt("read the op parameters", lambda: op_controls(max(KS)))
if candidate is None or controls is None:
    st.stop()
params, shown, pool = controls

# The speaker part adds SPEAKER_WEIGHT to what a speaker the query names said, so scores built on it pass 1.
TOP = f"{1 + uc.SPEAKER_WEIGHT:g}"
HYBRID_ONLY = " Not used (0) when one leg is searched alone, as the evaluation's leg-alone rows are."
PART_HELP = {"semantic": "semantic: cosine to the query expanded by its best keyword matches, in [0, 1]",
             "text": "text: keyword (BM25) match, relative to the pool's best, in [0, 1]",
             "recency": "recency: exp(−age / τ), in [0, 1]",
             "speaker": (f"speaker: 1 when the query names who said it, else 0; adds {uc.SPEAKER_WEIGHT} to its "
                         f"relevance and combined score.{HYBRID_ONLY}"),
             "chain score": (f"chain: the best score of its chain, weighing {uc.CHAIN_WEIGHT}; in [0, {TOP}] "
                             f"(above 1 through the speaker part).{HYBRID_ONLY}"),
             "coverage": ("coverage: its keyword score against an ideal match's (the query's every word once), "
                          "in [0, 1]; relevance reads it instead of text"),
             "relevance": ("relevance: what the relevance floor (RELEVANCE_FLOOR) reads: semantic and coverage, "
                           "weighed as the profile weighs semantic and text, without recency, plus the speaker "
                           f"part; in [0, {TOP}]"),
             "combined": (f"what the profile ranks by, in [0, {TOP}] (above 1 through the speaker part); when the "
                          "query names a time, a memory of then ranks with a boost on top of it, as the note "
                          "above the table says")}
# The content narrower than chat's (280 px): the candidate's table, with its Δ, fits a 1400 px window.
RANKING_COLUMNS = memory_columns(PART_HELP) | {
    "content": st.column_config.TextColumn(width=240),
    "rank": st.column_config.NumberColumn("#", width=28),
    "change": st.column_config.TextColumn("Δ", width=36, help="Rank change against the active profile"),
    "in_chat": st.column_config.CheckboxColumn("chat", width=44, help="Handed to synthesis by a chat turn: "
                                               "when a row's relevance (rel) reaches RELEVANCE_FLOOR, the rows "
                                               f"reaching half of it and {uc.BEST_SHARE:g} of the best's (the floor "
                                               "itself beside a best stating the attribute the query asks)")}


def _below_floor_note(rows, floor: float, others: float) -> None:
    if below := [r for r in rows if r.below_floor]:
        ranks = ", ".join(f"{r.rank} (rel {r.relevance:.2f})" for r in below)
        best = max(rows, key=lambda r: r.relevance)
        why = (f"no relevance reaches the floor {floor:.2f} (RELEVANCE_FLOOR)" if len(below) == len(rows) else
               f"relevance under the floor {floor:.2f} (RELEVANCE_FLOOR), which the others need beside a best "
               f"match (rank {best.rank}) that states the attribute the query asks, of whom it asks it"
               if best.stated else
               f"relevance under {others:.2f}, what the others need once one reaches the floor {floor:.2f} "
               f"(RELEVANCE_FLOOR): half of it and {uc.BEST_SHARE:g} of the best's relevance, at most the floor")
        st.caption(f"Rank {ranks}: {why}, so a chat turn leaves them out of its context.")


def _ranking_table(rows, with_change: bool) -> None:
    """The rows as the Chat page's "why" table shows a turn's memories (`memory_columns`), their ids
    listed under it."""
    frame = pd.DataFrame([r.model_dump() for r in rows])
    if frame.empty:
        st.info("No memory matches this query in this instance.")
        return
    frame["in_chat"] = ~frame["below_floor"]
    frame = frame.rename(columns={"chain": "chain score"})
    cols = ["rank", *(["change"] if with_change else []), "content", "semantic", "text", "recency", "speaker",
            "chain score", "coverage", "relevance", "combined", "in_chat", "kind", "id"]
    st.dataframe(frame[cols], hide_index=True, width="stretch", column_config=RANKING_COLUMNS,
                 row_height=MEMORY_ROW_HEIGHT, height=table_height(len(frame), MEMORY_ROW_HEIGHT))
    memory_ids(list(frame["id"]))


def _trace_step(i: int, t: uc.OpTrace) -> None:
    badge = {"ran": ":green[ran]", "skipped": ":orange[skipped]", "fallback": ":blue[fallback]"}[t.status]
    with st.expander(f"{i}. **{t.op}** — {badge} · in {t.input_size} → out {t.output_size} · {t.ms:.1f} ms",
                     expanded=t.op in ("extract_time_op", "fuse_rerank_op")):
        if t.note:
            st.caption(t.note)
        if isinstance(t.output, list) and t.output and isinstance(t.output[0], dict):
            frame = pd.DataFrame(t.output)
            first = [c for c in frame.columns if c not in ("id", "content", "formatted")]
            st.dataframe(frame[first + [c for c in ("content", "id") if c in frame.columns]], hide_index=True,
                         width="stretch",
                         column_config={"content": st.column_config.TextColumn(width="large")})
        elif isinstance(t.output, str):
            st.container(border=True).text(t.output or "(empty)")
        elif t.output is not None:
            st.json(t.output)
        st.caption("parameters")
        st.json(t.params, expanded=False)


def _rankings(comparison: uc.Comparison | None, result: uc.ScopeResult | None, instance: str,
              shown: int, scope_pool: int) -> None:
    if comparison is not None:
        st.caption(f"{comparison.candidates} candidates from both legs in **{instance}** "
                   f"({uc.pool_label(comparison.pool_size, shown)}); the top {shown} of each profile. Semantic, "
                   f"text and recency lie in [0, 1]; the speaker part adds "
                   f"{uc.SPEAKER_WEIGHT} to what a speaker the query names said, so *chain* and *combined* "
                   f"(what the profile ranks by) reach up to {TOP}.")
        if comparison.time_note:  # as a chat turn's reason line says it: the pool is a search for that many
            # The rows are in that order, not combined's: a row of then may stand above one of higher combined.
            st.caption(as_plain_line(f"As chat ranks: {comparison.time_note}. The tables are in that order: "
                                     "combined plus the boost of a memory of then, which the table does not "
                                     "show, so a row of then may stand above one of a higher combined."))
        p = comparison.active
        st.markdown(f"**Active: {p.name}** · {uc.describe_profile(p)}")
        _ranking_table(comparison.active_rows, with_change=False)
        _below_floor_note(comparison.active_rows, comparison.relevance_floor, comparison.active_others_floor)
        p = comparison.candidate
        st.markdown(f"**Candidate** · {uc.describe_profile(p)}")
        _ranking_table(comparison.candidate_rows, with_change=True)
        _below_floor_note(comparison.candidate_rows, comparison.relevance_floor, comparison.candidate_others_floor)
    if result is not None:
        st.markdown(f"**MemoryScope output with the candidate profile** ({result.total_ms:.0f} ms; "
                    f"retrieve_memory's pool_size: {scope_pool} candidates per leg)")
        if result.formatted:
            # Plain text, not st.code: the code block's highlighter costs a new tab ~0.25 s to load.
            st.container(border=True).text("\n".join(result.formatted))
        else:
            st.info("fuse_rerank kept nothing: lower fuse_score_threshold or raise top_k.")


# The tabs run lazily (`on_change="rerun"`): only the open one's content is computed and drawn, so a moved
# slider reruns the rankings without the evaluation, profiles and labelled-set panels or read_message (a run
# of the page at 1,000,000 memories: 471 -> 133 ms, median of 8). Their widgets keep their values while
# hidden (`persist_state="page"`).
TABS = ["Rankings", "Pipeline trace", "Evaluate & optimise", "Profiles", "Labelled set"]
with right:
    tab_rank, tab_trace, tab_eval, tab_profiles, tab_labels = st.tabs(TABS, key="tune_tab", on_change="rerun")
    comparison, result = None, None
    if not query.strip():
        tab_rank.info("Type a query to see the rankings.")
    elif tab_rank.open or tab_trace.open:
        rp = params.retrieve_memory_op
        if tab_rank.open:
            comparison = attempt("rank the candidates", lambda: uc.compare(
                wb, uc.CompareRequest(instance=instance, query=query, active=active, candidate=candidate,
                                      pool_size=pool, similarity_threshold=rp.similarity_threshold,
                                      rows=shown)))
        result = attempt("run the MemoryScope pipeline", lambda: uc.retrieve_memory(wb, uc.RetrieveRequest(
            instance=instance, query=query, profile=candidate, params=params)))
    if tab_rank.open:
        with tab_rank:
            _rankings(comparison, result, instance, shown, params.retrieve_memory_op.pool_size)
    if tab_trace.open:
        with tab_trace:
            if result is not None:
                hint = result.time_hint
                st.markdown(f"Query at **{result.timestamp:%Y-%m-%d %H:%M:%S} UTC** · extracted time: "
                            + (f"`{hint.parts}` from “{hint.expression}” ({hint.source})" if hint else "none"))
                for i, t in enumerate(result.trace, start=1):
                    _trace_step(i, t)
            st.divider()  # read_message works on a chain, apart from the query's flow above
            read_message_step(instance, params.read_message_op, _trace_step)
    if tab_eval.open:
        with tab_eval:
            evaluation_panel(instance, active, candidate, params, pool)
    if tab_profiles.open:
        with tab_profiles:
            profiles_panel(instance, listing, candidate)
    if tab_labels.open:
        with tab_labels:
            labelled_set_panel(instance, active, candidate, uc.evaluation_pool(LABELLED_KS, pool))
