"""The Memory explorer's memory-bank view: stats, entries, summaries, compression events, a query
form (a `MemoryQuery`: keywords, tags, importance, dates) and a form to add an entry."""

from __future__ import annotations

from datetime import UTC, datetime, time

import pandas as pd
import streamlit as st

from core import usecases as uc
from dashboard.explorer_views import ask_to_delete
from dashboard.resources import get_workbench
from dashboard.ui import as_plain_line, attempt


def render_bank(instance: str) -> None:
    wb = get_workbench()
    banks = attempt("list memory banks", lambda: uc.bank_list(wb, uc.InstanceRequest(instance=instance)))
    if banks is None:
        return
    names = [b.name for b in banks]
    if msg := st.session_state.pop("xp_bank_msg", None):
        st.success(msg, icon=":material/check_circle:")
    if (wanted := st.session_state.pop("xp_bank_next", None)) in names:
        st.session_state["xp_bank"] = wanted
    if not names:
        st.info("No memory bank in this instance yet. Add an entry below to create one "
                "(or load the demo with `workbench demo load`).")
        _render_add(instance, uc.DEFAULT_BANK, None)
        return
    if st.session_state.get("xp_bank") not in names:
        st.session_state["xp_bank"] = names[0]
    name = st.selectbox("Memory bank", names, key="xp_bank",
                        format_func=lambda n: next(f"{n} · {b.entries} entries, {b.summaries} summaries"
                                                   for b in banks if b.name == n))
    snap = attempt("read the memory bank",
                   lambda: uc.bank_snapshot(wb, uc.BankRef(instance=instance, bank=name)))
    if snap is None:
        return
    s = snap.stats
    cols = st.columns(6)
    cols[0].metric("Live entries", s.live_entries)
    cols[1].metric("Compressed", s.compressed_entries)
    cols[2].metric("Summaries", s.summaries)
    cols[3].metric("Compressions", s.compressions)
    cols[4].metric("Avg importance",
                   f"{s.average_importance:.2f}" if s.average_importance is not None else "—")
    cols[5].metric("Waiting for index", s.pending_index)
    due = min(s.max_entries, s.compression_threshold)
    st.caption(f"Compresses the oldest half when live entries reach {due} "
               f"(max_entries {s.max_entries}, compression_threshold {s.compression_threshold}).")
    titles = {x.id: x.title for x in snap.summaries}
    t_entries, t_summaries, t_events, t_query, t_add = st.tabs(
        ["Entries", "Summaries", "Compression events", "Query", "Add entry"])
    with t_entries:
        st.dataframe(pd.DataFrame([{
            "step": x.entry.step_number, "time": x.entry.timestamp, "skill": x.entry.skill_name,
            "summary": x.entry.summary, "command": x.entry.command, "result": x.entry.result,
            "importance": x.entry.importance, "tags": ", ".join(x.entry.tags),
            "state": f"compressed into: {titles.get(x.compressed_into, x.compressed_into)}"
            if x.compressed_into else "live"} for x in reversed(snap.entries)]),
            hide_index=True, width="stretch")
    with t_summaries:
        if not snap.summaries:
            st.caption("No summary yet: the first compression happens when the thresholds are reached.")
        steps = {x.entry.id: x.entry.step_number for x in snap.entries}
        for x in reversed(snap.summaries):
            with st.expander(as_plain_line(x.title, 100)):
                st.text(x.content)
                src = sorted(steps[i] for i in x.source_entries if i in steps)
                how = "LLM" if x.method == "llm" else "rule-based"
                st.caption(f"{how} summary · importance {x.importance:.2f} · "
                           f"source steps {', '.join(map(str, src)) or '—'}"
                           + (f" · tags: {as_plain_line(', '.join(x.tags))}" if x.tags else ""))
    with t_events:
        if not snap.events:
            st.caption("No compression yet.")
        else:
            st.dataframe(pd.DataFrame([{
                "at": e.at, "entries compressed": e.entries_compressed, "live before": e.live_before,
                "live after": e.live_after, "method": e.method, "model": e.model or "",
                "tokens": e.tokens, "summary": titles.get(e.summary_id or "", "(deleted)"),
                "note": e.note} for e in reversed(snap.events)]), hide_index=True, width="stretch")
    with t_query:
        _render_query(instance, name)
    with t_add:
        _render_add(instance, name, (s.max_entries, s.compression_threshold))
    c1, c2, _ = st.columns([1, 1, 4])
    c1.button("Clear bank", key="xp_bank_clear", on_click=ask_to_delete, args=("bank_clear", name, name))
    c2.button("Delete bank", key="xp_bank_delete", on_click=ask_to_delete, args=("bank", name, name))


def _render_query(instance: str, name: str) -> None:
    with st.form("xp_bank_query"):
        c1, c2, c3 = st.columns([3, 2, 1])
        keywords = c1.text_input("Keywords (comma-separated, any matches)", key="xp_bq_kw")
        min_imp = c2.slider("Minimum importance", 0.0, 1.0, 0.0, 0.05, key="xp_bq_min")
        max_results = c3.number_input("Max results", 1, 1000, 10, key="xp_bq_max")
        c4, c5, c6 = st.columns(3)
        tags = c4.text_input("Tags (comma-separated, any)", key="xp_bq_tags")
        d_from = c5.date_input("From", value=None, key="xp_bq_from")
        d_to = c6.date_input("To", value=None, key="xp_bq_to")
        go = st.form_submit_button("Query bank")
    if not go:
        return
    q = attempt("read the query", lambda: uc.MemoryQuery(
        keywords=_split(keywords), min_importance=min_imp, max_results=int(max_results), tags=_split(tags),
        date_from=datetime.combine(d_from, time.min, UTC) if d_from else None,
        date_to=datetime.combine(d_to, time.max, UTC) if d_to else None))
    found = attempt("query the memory bank", lambda: uc.bank_query(
        get_workbench(), uc.BankQuery(instance=instance, bank=name, query=q))) if q else None
    if found is None:
        return
    if not found:
        st.info("No live entry or summary matches.")
        return
    st.dataframe(pd.DataFrame([{
        "importance": e.importance, "time": e.timestamp,
        "what": "summary" if e.skill_name == uc.SUMMARY_SKILL else f"step {e.step_number}",
        "summary": e.summary, "command": e.command, "result": e.result, "tags": ", ".join(e.tags)}
        for e in found]), hide_index=True, width="stretch")


def _render_add(instance: str, name: str, settings: tuple[int, int] | None) -> None:
    max_entries, threshold = settings or (6, 6)
    with st.form("xp_bank_add", clear_on_submit=True):
        c1, c2 = st.columns(2)
        bank_name = c1.text_input("Bank", value=name, key="xp_ba_bank", help="A new name creates a new bank.")
        skill = c2.text_input("Skill", value="CommandSkill", key="xp_ba_skill")
        thinking = st.text_area("Thinking", key="xp_ba_thinking", height=80)
        c3, c4 = st.columns(2)
        command = c3.text_input("Command", key="xp_ba_command")
        result = c4.text_input("Result", key="xp_ba_result")
        c5, c6, c7, c8 = st.columns(4)
        importance = c5.slider("Importance", 0.0, 1.0, 0.5, 0.05, key="xp_ba_importance")
        tags = c6.text_input("Tags (comma-separated)", key="xp_ba_tags")
        max_e = c7.number_input("max_entries", 2, 100_000, max_entries, key="xp_ba_max")
        thr = c8.number_input("compression_threshold", 2, 100_000, threshold, key="xp_ba_thr")
        add = st.form_submit_button("Add entry", type="primary")
    if not add:
        return
    wb = get_workbench()

    def run():
        entry = uc.MemoryEntry(skill_name=skill, thinking=thinking, command=command, result=result,
                               importance=importance, tags=_split(tags))
        return uc.bank_add(wb, uc.BankAdd(instance=instance, bank=bank_name.strip(), entry=entry,
                                          max_entries=int(max_e), compression_threshold=int(thr)))

    done = attempt("add the entry", run)
    if done is None:
        return
    msg = f"Stored as step {done.entry.step_number} of bank {as_plain_line(bank_name.strip())}."
    if done.compression:
        msg += f" The {done.compression.entries_compressed} oldest entries were compressed into a summary."
    # Shown after a rerun, so the stats and tables above include the new entry.
    st.session_state["xp_bank_msg"] = " ".join([msg] + [as_plain_line(n) + "." for n in done.notes])
    st.session_state["xp_bank_next"] = bank_name.strip()
    st.rerun()


def _split(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]
