"""The Memory explorer's views: search, chains, and the confirmation step before any deletion.

Stored text is user content: it is drawn with st.text / st.dataframe, and where it must sit inside
Markdown (labels, captions) it goes through `as_plain_line`, so no link, image, HTML or directive can come
from a memory.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pandas as pd
import streamlit as st

from core import usecases as uc
from dashboard.resources import get_workbench
from dashboard.ui import as_plain_line, attempt, confirm, humanize_age

KINDS = ["user", "assistant", "bank_entry", "bank_summary", "session_summary", "important", "federation",
         "conversation", "observation", "obs_customized", "insight", "turn"]
MODES = {"Hybrid": "hybrid", "Semantic": "vector", "Full-text": "text"}
VIEW_KEY = "xp_view"
def ago(moment: datetime) -> str:
    return humanize_age((datetime.now(UTC) - moment).total_seconds()) + " ago"


# -- navigation and confirmation (callbacks: they run before the widgets are drawn again) ----------

def open_chain(chain_id: str) -> None:
    st.session_state["xp_chain"] = chain_id
    st.session_state[VIEW_KEY] = "Chains"


def close_chain() -> None:
    st.session_state.pop("xp_chain", None)


def ask_to_delete(target: str, ident: str, label: str, chain_id: str | None = None) -> None:
    st.session_state["xp_confirm"] = {"target": target, "id": ident, "label": label, "chain": chain_id}


def render_confirmation(instance: str) -> None:
    pending = st.session_state.get("xp_confirm")
    if not pending:
        if done := st.session_state.pop("xp_done", None):
            st.success(done, icon=":material/check_circle:")
        return
    what = {"chain": "the chain", "memory": "the memory", "bank": "the memory bank",
            "bank_clear": "every entry, summary and compression event of the memory bank"}[pending["target"]]
    effects = {"chain": "its thoughts, feedback, queued index writes and index rows",
               "memory": "it from the thought store, its bank and the memory index",
               "bank": "its entries, summaries, compression events and index rows",
               "bank_clear": "the index rows too; the bank itself stays"}[pending["target"]]
    answer = confirm(f"Delete {what} **{as_plain_line(pending['label'], 80)}**? This removes {effects}. "
                     "It cannot be undone.", yes="Yes, delete", key="xp_confirm", icon=":material/delete:")
    if answer is not None:
        st.session_state.pop("xp_confirm", None)
    if answer:
        report = attempt("delete", lambda: _delete(instance, pending))
        if report is not None:
            st.session_state["xp_done"] = report
            if pending["target"] == "chain" and st.session_state.get("xp_chain") == pending["id"]:
                st.session_state.pop("xp_chain", None)
            st.rerun()
    elif answer is False:
        st.rerun()


def _delete(instance: str, pending: dict) -> str:
    wb = get_workbench()
    target, ident = pending["target"], pending["id"]
    if target == "chain":
        r = uc.chain_delete(wb, uc.ChainRef(instance=instance, chain_id=ident))
        return (f"Chain {ident} deleted: {r.thoughts} thoughts, {r.feedback} feedback records, "
                f"{r.index_rows} index rows, {r.outbox} queued index writes.")
    if target == "memory":
        r = uc.memory_delete(wb, uc.MemoryRef(instance=instance, memory_id=ident,
                                              chain_id=pending.get("chain")))
        counts = f"{r.thoughts} thoughts, {r.bank_rows} bank rows, {r.index_rows} index rows"
        return " ".join([f"Memory deleted ({counts})."] + r.notes)
    if target == "bank":
        r = uc.bank_delete(wb, uc.BankRef(instance=instance, bank=ident))
        return f"Memory bank {ident} deleted: {r.bank_rows} entries and summaries, {r.index_rows} index rows."
    n = uc.bank_clear(wb, uc.BankRef(instance=instance, bank=ident))
    return f"Memory bank {ident} cleared: {n} entries removed."


# -- search ------------------------------------------------------------------------------------------

def _restore_search_inputs() -> None:
    """Put the last search back into the form: Streamlit drops a widget's state while its view is hidden."""
    last = st.session_state.get("xp_search")
    if not last or "xp_q" in st.session_state:
        return
    mode = next((label for label, value in MODES.items() if value == last["mode"]), "Hybrid")
    st.session_state.update({"xp_q": last["query"], "xp_mode": mode, "xp_kinds": last["kinds"],
                             "xp_chain_filter": last["chain_id"] or "", "xp_tags": ", ".join(last["tags"]),
                             "xp_from": last["date_from"], "xp_to": last["date_to"]})


def render_search(instance: str) -> None:
    _restore_search_inputs()
    with st.form("xp_search_form"):
        query = st.text_input("Search stored memory", key="xp_q",
                              placeholder="a word or a phrase, e.g. lisbon")
        c1, c2, c3 = st.columns([2, 3, 2])
        mode = c1.radio("Search", list(MODES), horizontal=True, key="xp_mode",
                        help="Semantic = vector similarity; Full-text = Postgres text search; "
                        "Hybrid = both, fused")
        kinds = c2.multiselect("Kinds", KINDS, key="xp_kinds", placeholder="all kinds")
        chain = c3.text_input("Chain id", key="xp_chain_filter", placeholder="any chain")
        c4, c5, c6 = st.columns([2, 2, 2])
        tags = c4.text_input("Tags (comma-separated, any)", key="xp_tags")
        date_from = c5.date_input("From", value=None, key="xp_from")
        date_to = c6.date_input("To", value=None, key="xp_to")
        submitted = st.form_submit_button("Search", type="primary")
    if submitted:
        st.session_state["xp_search"] = dict(
            query=query, instance=instance, mode=MODES[mode], kinds=kinds, chain_id=chain or None,
            tags=[t.strip() for t in tags.split(",") if t.strip()], date_from=date_from, date_to=date_to)
    params = st.session_state.get("xp_search")
    if not params:
        st.caption("Search finds thoughts, bank entries and summaries, and every other indexed memory of "
                   "this instance (and shared ones).")
        return
    params = {**params, "instance": instance}
    req = attempt("read the search", lambda: uc.ExplorerSearch(**params))
    out = attempt("search", lambda: uc.memory_search(get_workbench(), req)) if req else None
    if out is None:
        return
    if not out.hits:
        st.info("Nothing found. Try another word, the Semantic mode, or fewer filters.")
        return
    matched = sum(1 for h in out.hits if h.text > 0)
    verb = "contains" if matched == 1 else "contain"
    st.caption(f"{len(out.hits)} hits for “{as_plain_line(req.query, 80)}” · {matched} {verb} its words, "
               f"the others are only semantically close · {out.candidates} candidates · "
               f"{out.search_ms:.0f} ms")
    for i, hit in enumerate(out.hits):
        _render_hit(i, hit)


def _render_hit(i: int, hit) -> None:
    with st.container(border=True):
        left, right = st.columns([6, 1])
        if hit.bank:
            origin = f"bank **{as_plain_line(hit.bank)}**"
        elif hit.chain_id:
            title = (as_plain_line(hit.chain_title, 60) if hit.chain_title
                     else "chain no longer in the thought store")
            origin = f"chain **{as_plain_line(hit.chain_id)}** — {title}"
        else:
            origin = "no chain"
        shared = f" · shared from {as_plain_line(hit.instance)}" if hit.shared else ""
        left.markdown(f"`{hit.kind}` · {origin} · {ago(hit.created_at)}{shared}")
        left.text(hit.content)
        left.caption(f"score {hit.score:.3f} (semantic {hit.semantic:.2f}, text {hit.text:.2f})"
                     + (f" · tags: {as_plain_line(', '.join(hit.tags))}" if hit.tags else ""))
        if hit.chain_id and not hit.bank:
            right.button("Open chain", key=f"xp_hit_open_{i}", on_click=open_chain, args=(hit.chain_id,))
        if not hit.shared:  # a shared item belongs to the shared instance: delete it from there
            right.button("Delete", key=f"xp_hit_del_{i}", on_click=ask_to_delete,
                         args=("memory", hit.id, hit.content[:60]))


# -- chains ------------------------------------------------------------------------------------------

def render_chains(instance: str) -> None:
    wb = get_workbench()
    c1, c2, c3 = st.columns([2, 1, 1])
    order = c1.radio("Order", ["newest", "oldest"], horizontal=True, key="xp_order",
                     format_func=lambda o: {"newest": "Latest activity first",
                                            "oldest": "Oldest activity first"}[o])
    size = c2.selectbox("Per page", [10, 20, 50], index=1, key="xp_page_size")
    page_no = c3.number_input("Page", min_value=1, value=1, step=1, key="xp_page")
    page = attempt("list chains", lambda: uc.chains(wb, uc.ChainList(instance=instance, page=int(page_no),
                                                                     page_size=size, order=order)))
    if page is None:
        return
    if not page.total:
        st.info("No conversation chains in this instance yet. Chat on the Chat page to create one.")
    else:
        st.caption(f"Page {page.page} of {page.pages} · {page.total} chains")
        st.dataframe(pd.DataFrame([{"chain": c.chain_id, "title": c.title, "turns": c.turns,
                                    "last activity": c.last_at, "started": c.created_at}
                                   for c in page.chains]),
                     hide_index=True, width="stretch")
        ids = [c.chain_id for c in page.chains]
        titles = {c.chain_id: c.title for c in page.chains}
        st.selectbox("Open a chain of this page", ids, index=None, key="xp_chain_pick",
                     format_func=lambda c: f"{titles.get(c, '')[:70]} ({c})", placeholder="choose a chain",
                     on_change=lambda: open_chain(st.session_state["xp_chain_pick"])
                     if st.session_state.get("xp_chain_pick") else None)
    if chain_id := st.session_state.get("xp_chain"):
        _render_chain(instance, chain_id)


def _render_chain(instance: str, chain_id: str) -> None:
    wb = get_workbench()
    detail = attempt("read the chain",
                     lambda: uc.chain(wb, uc.ChainRef(instance=instance, chain_id=chain_id)))
    if detail is None:
        st.button("Close", key="xp_chain_close_missing", on_click=close_chain)
        return
    with st.container(border=True):
        st.subheader(as_plain_line(detail.title or chain_id, 100))
        st.caption(f"chain {as_plain_line(chain_id)} · {len(detail.thoughts)} thoughts · {detail.indexed} "
                   "rows in the memory index")
        b1, b2, b3, _ = st.columns([1, 1, 1, 3])
        export = uc.chain_export(wb, uc.ChainRef(instance=instance, chain_id=chain_id))
        b1.download_button("Export JSON", data=export.document,
                           file_name=f"{chain_id}.json",
                           mime="application/json", key="xp_export")
        b2.button("Delete chain", key="xp_chain_delete", type="primary", on_click=ask_to_delete,
                  args=("chain", chain_id, detail.title or chain_id))
        b3.button("Close", key="xp_chain_close", on_click=close_chain)
        for t in detail.thoughts:
            if t.category not in (uc.CATEGORY_USER, uc.CATEGORY_ASSISTANT):
                continue
            who = "User" if t.category == uc.CATEGORY_USER else "Assistant"
            meta = [who, t.timestamp.strftime("%Y-%m-%d %H:%M"), ago(t.timestamp)]
            if t.category == uc.CATEGORY_ASSISTANT:
                meta.append(str(t.extra.get("model", "")))
                if (fb := detail.feedback.get(t.id)) and fb.feedback_score is not None:
                    meta.append(f"feedback {fb.feedback_score:.2f}")
            left, right = st.columns([8, 1])
            left.caption(" · ".join(as_plain_line(m) for m in meta if m))
            left.text(t.thought)
            right.button("Delete", key=f"xp_thought_del_{t.id}", on_click=ask_to_delete,
                         args=("memory", t.id, t.thought[:60], chain_id))
