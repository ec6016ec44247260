"""The Memory explorer's views: search, chains, and the confirmation step before any deletion.

Stored text is user content: it is drawn with st.text / st.dataframe, and where it must sit inside
Markdown (labels, captions) it goes through `as_plain_line`, so no link, image, HTML or directive can come
from a memory.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pandas as pd
import streamlit as st
from pydantic import ValidationError

from core import usecases as uc
from dashboard.formation_view import render_fact_history, superseded_note
from dashboard.labelling import mark_control, marks_caption, query_marks
from dashboard.resources import get_workbench
from dashboard.ui import (
    as_plain_line,
    attempt,
    confirm_in_dialog,
    humanize_age,
    one_line,
    plural,
    show_invalid,
)

KINDS = ["user", "assistant", "bank_entry", "bank_summary", "session_summary", "important", "federation",
         "conversation", "observation", "obs_customized", "insight", "turn"]
MODES = {"Hybrid": "hybrid", "Semantic": "vector", "Full-text": "text"}
VIEW_KEY = "xp_view"
TOP_K, TOP_K_MAX = 20, 200  # a search's hits at first, and at most ("Show the best … hits")
FOLD_AT = 1_500  # characters of a memory shown before "Show all": a 10,000-character one filled 3 screens
SEARCH_LABELS = {"query": "Search stored memory", "chain_id": "Chain id", "tags": "Tags", "kinds": "Kinds",
                 "date_from": "From", "date_to": "To"}  # for a refused search, in the form's words
def ago(moment: datetime) -> str:
    return humanize_age((datetime.now(UTC) - moment).total_seconds()) + " ago"


# -- navigation and confirmation (callbacks: they run before the widgets are drawn again) ----------

def open_chain(chain_id: str, came_from: str | None = None) -> None:
    """Show the chain at the top of the Chains view, scrolled into sight once; `came_from` the view to go
    back to (a search hit's "Open chain": the search)."""
    st.session_state["xp_chain"] = chain_id
    st.session_state["xp_chain_from"] = came_from
    st.session_state["xp_chain_scroll"] = True
    st.session_state[VIEW_KEY] = "Chains"


def close_chain() -> None:
    st.session_state.pop("xp_chain", None)


def back_to(view: str) -> None:
    close_chain()
    st.session_state[VIEW_KEY] = view


def ask_to_delete(target: str, ident: str, label: str, chain_id: str | None = None, turns: int | None = None,
                  stores: str | None = None) -> None:
    """Ask to delete; `stores`: where a memory is kept, as the dialog says what deleting removes."""
    st.session_state["xp_confirm"] = {"target": target, "id": ident, "label": label, "chain": chain_id,
                                      "turns": turns, "stores": stores}


# The memory index's kinds of a chain's messages, which the thought store holds too.
MESSAGE_KINDS = ("user", "assistant")


def memory_stores(kind: str, bank: str | None) -> str:
    """Where a memory of `kind` is kept, in the words of the delete dialog: a message in the thought store, a
    bank's entry or summary in its bank, and each in the memory index (an observation or a session summary
    there alone)."""
    if bank:
        return f"the memory bank {as_plain_line(bank)} and the memory index"
    return "the thought store and the memory index" if kind in MESSAGE_KINDS else "the memory index"


def render_confirmation(instance: str) -> None:
    """The outcome of the last deletion, and the dialog of the one asked for (a dialog, so it is seen
    however far down the page the Delete button was)."""
    if done := st.session_state.pop("xp_done", None):  # once, in words; what else it did behind "Details"
        st.success(done["message"], icon=":material/check_circle:")
        if done["details"]:
            with st.expander("Details: what else the deletion changed, and the files on disk"):
                for line in done["details"]:
                    st.caption(as_plain_line(line))
    pending = st.session_state.get("xp_confirm")
    if not pending:
        return
    what = {"chain": "the chain", "memory": "the memory", "bank": "the memory bank",
            "bank_clear": "every entry, summary and compression event of the memory bank"}[pending["target"]]
    effects = {"chain": "its thoughts, feedback, queued index writes and index rows",
               "memory": f"it from {pending.get('stores') or 'every store that holds it'}",
               "bank": "its entries, summaries, compression events and index rows",
               "bank_clear": "the index rows too; the bank itself stays"}[pending["target"]]

    def delete() -> bool:
        report = attempt("delete", lambda: _delete(instance, pending))
        if report is None:
            return False
        st.session_state["xp_done"] = report
        if pending["target"] == "chain" and st.session_state.get("xp_chain") == pending["id"]:
            st.session_state.pop("xp_chain", None)
        return True

    confirm_in_dialog("Delete?", f"Delete {what} **{as_plain_line(pending['label'], 80)}**? This removes "
                      f"{effects}. It cannot be undone.", yes="Yes, delete", key="xp_confirm", on_yes=delete,
                      on_close=lambda: st.session_state.pop("xp_confirm", None))


def _sentences(notes: list[str]) -> list[str]:
    """A report's notes ("1 memory … current again") as sentences."""
    return [n[:1].upper() + n[1:] + ("" if n.endswith(".") else ".") for n in notes]


def _delete(instance: str, pending: dict) -> dict:
    """Delete what `pending` names; the outcome as the page shows it: `message`, what was deleted and how much,
    in the user's words (Markdown, stored text made inert), and `details`, the report's notes (fact
    histories mended, the chain's id refused for a while, what the files on disk still hold), for the
    "Details" expander."""
    wb = get_workbench()
    target, ident = pending["target"], pending["id"]
    what = f"“{as_plain_line(pending['label'], 60)}”"
    if target == "chain":
        r = uc.chain_delete(wb, uc.ChainRef(instance=instance, chain_id=ident))
        turns = pending.get("turns")
        counts = _and([plural(turns, "turn") if turns else plural(r.thoughts, "thought"),
                       plural(r.feedback, "feedback record"),
                       plural(r.index_rows, "indexed memory", "indexed memories")])
        message = f"Deleted the conversation {what} (chain {as_plain_line(ident)}): {counts}."
    elif target == "memory":
        r = uc.memory_delete(wb, uc.MemoryRef(instance=instance, memory_id=ident,
                                              chain_id=pending.get("chain")))
        counts = _and([plural(r.thoughts, "message") if r.thoughts else "",
                       plural(r.bank_rows, "bank entry", "bank entries") if r.bank_rows else "",
                       plural(r.index_rows, "indexed memory", "indexed memories")])
        message = f"Deleted the memory {what}: {counts}."
    elif target == "bank":
        r = uc.bank_delete(wb, uc.BankRef(instance=instance, bank=ident))
        rows = plural(r.bank_rows, "entry and summary", "entries and summaries")
        message = (f"Deleted the memory bank {as_plain_line(ident)}: {rows}, "
                   f"{plural(r.index_rows, 'indexed memory', 'indexed memories')}.")
    else:
        r = uc.bank_clear(wb, uc.BankRef(instance=instance, bank=ident))
        rows = plural(r.bank_rows, "entry and summary", "entries and summaries")
        message = (f"Emptied the memory bank {as_plain_line(ident)}: {rows}, "
                   f"{plural(r.index_rows, 'indexed memory', 'indexed memories')}.")
    if r.copies:
        message += (f" The same text was in {plural(r.copies, 'other record')} (a repeat, or an answer quoting "
                    "it): each now reads “[deleted]”.")
    if r.marks:  # the labelled set's figures change with them: said where it is read, not behind Details
        message += (f" {plural(r.marks, 'relevance mark')} of the Tune page's labelled set named it: removed, so "
                    "the set's figures change.")
    return {"message": message, "details": _sentences(r.notes)}


def _and(parts: list[str]) -> str:
    """"a, b and c" of the parts given (empty ones left out)."""
    parts = [p for p in parts if p]
    return ", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else "".join(parts)


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
        query = st.text_input("Search stored memory", key="xp_q", max_chars=uc.QUERY_MAX_CHARS,
                              placeholder="a word or a phrase, e.g. lisbon, or a memory's id; empty: list by time")
        st.caption(uc.limit_caption("Searches", uc.QUERY_MAX_CHARS) + " Leave it empty to list every memory the "
                   "filters keep, by time, a page at a time.")
        c1, c2, c3 = st.columns([2, 3, 2])
        mode = c1.radio("Search", list(MODES), horizontal=True, key="xp_mode",
                        help="Full-text: memories that contain words of the query. Semantic: memories "
                             "close in meaning (vector similarity). Hybrid: either, ranked by both.")
        kinds = c2.multiselect("Kinds", KINDS, key="xp_kinds", placeholder="all kinds")
        chain = c3.text_input("Chain id", key="xp_chain_filter", placeholder="any chain")
        c4, c5, c6 = st.columns([2, 2, 2])
        tags = c4.text_input("Tags (comma-separated, any)", key="xp_tags")
        date_from = c5.date_input("From", value=None, key="xp_from")
        date_to = c6.date_input("To", value=None, key="xp_to")
        submitted = st.form_submit_button("Search", type="primary")
    if submitted:
        st.session_state["xp_search"] = {
            "query": query, "instance": instance, "mode": MODES[mode], "kinds": kinds, "chain_id": chain or None,
            "tags": [t.strip() for t in tags.split(",") if t.strip()], "date_from": date_from, "date_to": date_to}
        st.session_state["xp_top_k"] = TOP_K  # a new search starts with the first hits again
        st.session_state["xp_list_page"] = 1
    params = st.session_state.get("xp_search")
    if not params:
        _render_recent(instance)
        return
    params = {**params, "instance": instance}
    if not params["query"].strip():
        render_listing(instance, params)
        return
    try:
        req = uc.ExplorerSearch(**params, top_k=st.session_state.get("xp_top_k", TOP_K))
    except ValidationError as e:
        show_invalid(e, "search", SEARCH_LABELS)
        return
    out = attempt("search", lambda: uc.memory_search(get_workbench(), req))
    if out is None:
        return
    if not out.hits:
        st.info("Nothing found. Try another word, another mode, or fewer filters.")
        return
    capped = f" · the search stopped at {req.top_k}: more may match" if out.capped else ""
    st.caption(f"{hits_count(out)} for “{as_plain_line(req.query, 80)}” · {_why_shown(req, out)} · "
               f"{out.search_ms:.0f} ms{capped}")
    st.caption(how_scores_add_up(out))
    marks = query_marks(instance, req.query)
    marks_caption(marks)
    st.download_button(f"Download these {plural(len(out.hits), 'hit')} (JSON lines)",
                       data=uc.hits_export(out.hits).document, file_name=f"{instance}-search.jsonl",
                       mime="application/jsonl", key="xp_hits_download", icon=":material/download:")
    for i, hit in enumerate(out.hits):
        _render_hit(i, hit, lambda where, memory_id: mark_control(where, instance, req.query, memory_id, marks),
                    speaker_and_chain=out.speaker_and_chain)
    if out.capped and req.top_k < TOP_K_MAX:
        more = min(TOP_K_MAX, req.top_k * 2 if req.top_k < 100 else TOP_K_MAX)
        st.button(f"Show the best {more} hits", key="xp_more", on_click=st.session_state.__setitem__,
                  args=("xp_top_k", more), help="The search stops at the best hits it was asked for; more may "
                                                "match. Or narrow it by kind, chain, tags or days.")


def hits_count(out) -> str:
    """"12 hits" when the search found fewer than it was asked for (all that match); "the best 20 hits" when
    it stopped at that number: the count is then the search's size, not the matches'."""
    return ("the best " if out.capped else "") + plural(len(out.hits), "hit")


def how_scores_add_up(out: uc.SearchOutcome) -> str:
    """The formula of the hits' scores with the weights they were scored with, in the words of each hit's
    `score_caption`, so a reader can add a hit up from the page."""
    p = out.fusion
    if p.method == "linear":
        own = f"{p.w_sem:.2f}·semantic + {p.w_text:.2f}·text + {p.w_rec:.2f}·recency"
        recency = f"; recency = exp(−age / τ), {uc.recency_label(p.tau_s)}"
    else:
        own = (f"reciprocal-rank fusion of the semantic, text and age ranks (weights {p.w_sem:.2f}, {p.w_text:.2f}, "
               f"{p.w_rec:.2f}, k {p.rrf_k}; the ranks are not shown)")
        recency = ""
    if not out.speaker_and_chain:
        return f"How a score adds up: score = {own} (one leg searched alone: no speaker or chain part){recency}."
    return (f"How a score adds up: own = {own} + {uc.SPEAKER_WEIGHT:g}·speaker; score = (own + "
            f"{uc.CHAIN_WEIGHT:g}·chain) / {1 + uc.CHAIN_WEIGHT:g}, where chain is the best own score among the "
            f"results from the same chain{recency}.")


def score_caption(hit, *, speaker_and_chain: bool = True) -> str:
    """Every part of the hit's score: "score 0.541 (semantic 0.55, text 0.00, recency 0.00, speaker 0,
    chain 0.78)"; the speaker and chain parts only where they count (a hybrid search)."""
    parts = [f"semantic {hit.semantic:.2f}", f"text {hit.text:.2f}", f"recency {hit.recency:.2f}"]
    if speaker_and_chain:
        parts += [f"speaker {hit.speaker:g}", f"chain {hit.chain:.2f}"]
    return f"score {hit.score:.3f} ({', '.join(parts)})"


def _why_shown(req, out) -> str:
    """What each mode's hits have in common, in words true of every hit shown; the memory the query names by
    its id (`named`, the first hit) is shown whatever it says."""
    if not out.named:
        return _why_found(req, out, out.hits)
    others = out.hits[1:]
    if not others:
        return "it is the memory with this id"
    return f"the first is the memory with this id; the others: {_why_found(req, out, others)}"


def _why_found(req, out, hits) -> str:
    left_out = f"; {plural(out.left_out, 'other result')} did not match" if out.left_out else ""
    if req.mode == "text":
        return f"each has words of the query, in its text or in the messages next to it{left_out}"
    close = f"semantically close (cosine above {out.min_similarity:.2f})"
    if req.mode == "vector":
        return f"each is {close}{left_out}"
    words = sum(1 for h in hits if h.text)
    # A message is searched with its neighbours' words, as text mode says: a hit may hold them only there.
    return (f"with words of the query, in its text or in the messages next to it: {words}, only {close}: "
            f"{len(hits) - words}{left_out}")


def _render_recent(instance: str) -> None:
    """Before any search: the newest memories, so the page shows what is stored."""
    recent = attempt("list the newest memories", lambda: uc.recent(
        get_workbench(), uc.RecentRequest(instance=instance, limit=10)))
    if recent is None:
        return
    if not recent:
        st.info("Nothing is stored in this instance yet. Chat on the Chat page, import a conversation, or "
                "load the demo with `workbench demo load`.")
        return
    st.caption(f"The {plural(len(recent), 'newest memory', 'newest memories')} of this instance. Search to find "
               "thoughts, bank entries, summaries and every other indexed memory (shared ones too).")
    for i, hit in enumerate(recent):
        _render_hit(i, hit)


def _render_hit(i: int, hit, mark: Callable[[Any, str], None] | None = None, *,
                speaker_and_chain: bool = True) -> None:
    """One memory; with `mark(where, memory_id)`, its Relevant / Not relevant control beside its id. The text
    takes the box's whole width, the id and the actions a row under it that wraps: in a column of their own,
    an 800-pixel window cut the buttons to "O…" and "D…" and the id and the marks in half."""
    with st.container(border=True):
        if hit.bank:
            origin = f"bank **{as_plain_line(hit.bank)}**"
        elif hit.chain_id:
            title = (as_plain_line(hit.chain_title, 60) if hit.chain_title
                     else "chain no longer in the thought store")
            origin = f"chain **{as_plain_line(hit.chain_id)}** — {title}"
        else:
            origin = "no chain"
        shared = f" · shared from {as_plain_line(hit.instance)}" if hit.shared else ""
        gone = " · :orange-badge[superseded]" if hit.superseded_at else ""
        when = f"{hit.created_at.astimezone(UTC):%Y-%m-%d %H:%M} UTC ({ago(hit.created_at)})"
        st.markdown(f"`{hit.kind}` · {origin} · {when}{shared}{gone}")
        render_content(st, hit.content)
        if hit.superseded_at:  # an outdated fact must not read as current
            st.caption(superseded_note(hit.superseded_at, hit.superseded_by_content, hit.content,
                                       update=hit.superseded_by_update))
        for part in hit.superseded_statements:  # the message's other statements stand
            st.caption(superseded_note(part.superseded_at, part.superseded_by_content, part.statement,
                                       statement=part.statement, update=part.superseded_by_update))
        parts = [score_caption(hit, speaker_and_chain=speaker_and_chain)] if hit.score is not None else []
        parts += [f"tags: {as_plain_line(', '.join(hit.tags))}"] if hit.tags else []
        if parts:
            st.caption(" · ".join(parts))
        bar = st.container(horizontal=True, vertical_alignment="center")
        bar.code(hit.id, language=None, width="content")  # its copy button: the id for a labelled set or a command
        if mark is not None:
            mark(bar, hit.id)
        if hit.chain_id and not hit.bank:
            bar.button("Open chain", key=f"xp_hit_open_{i}", on_click=open_chain, args=(hit.chain_id, "Search"))
        if not hit.shared:  # a shared item belongs to the shared instance: delete it from there
            bar.button("Delete", key=f"xp_hit_del_{i}", on_click=ask_to_delete,
                       args=("memory", hit.id, hit.content), kwargs={"stores": memory_stores(hit.kind, hit.bank)})
        if hit.kind == "observation":  # a fact a correction may have replaced, or that replaced another
            bar.button("History", key=f"xp_hit_hist_{i}", on_click=st.session_state.__setitem__,
                       args=("xp_history", hit.id), help="the corrections through this fact")
        if st.session_state.get("xp_history") == hit.id:
            render_fact_history(hit.instance, hit.id)


def render_content(where, content: str) -> None:
    """A memory's text as it is stored (st.text: no Markdown, no HTML); past FOLD_AT characters, its start, and
    the whole behind "Show all", so one long memory does not push every other hit screens down."""
    if len(content) <= FOLD_AT:
        where.text(content)
        return
    where.text(content[:FOLD_AT].rstrip() + " …")
    with where.expander(f"Show all {len(content):,} characters"):
        st.text(content)


# -- a listing: no words, every memory the filters keep, by time ----------------------------------

LIST_MARK = "xp_list_mark"  # where the page of the listing shown began and ended (`MemoryPage.mark`)


def render_listing(instance: str, params: dict) -> None:
    """The memories the form's filters keep, newest or oldest first, a page at a time, with their true count
    (`uc.memory_browse`), and the whole selection as a download."""
    c1, c2, c3 = st.columns([3, 1, 1], vertical_alignment="bottom")
    order = c1.radio("Order", ["newest", "oldest"], horizontal=True, key="xp_list_order", on_change=_first_list_page,
                     format_func=lambda o: {"newest": "Newest first", "oldest": "Oldest first"}[o])
    size = c2.selectbox("Per page", [10, 20, 50, 100], index=1, key="xp_list_size", on_change=_first_list_page)
    page_no = c3.number_input("Page", min_value=1, value=1, step=1, key="xp_list_page",
                              help="The first and the last page, and the pages next to the one shown, are read "
                                   "straight from where they start; a page typed in far from them is reached "
                                   "by reading past the memories in between.")
    try:
        req = uc.MemoryBrowse(instance=instance, kinds=params["kinds"], chain_id=params["chain_id"],
                              tags=params["tags"], date_from=params["date_from"], date_to=params["date_to"],
                              order=order, page=int(page_no), page_size=size,
                              shown=st.session_state.get(LIST_MARK))
    except ValidationError as e:
        show_invalid(e, "list the memories", SEARCH_LABELS)
        return
    page = attempt("list the memories", lambda: uc.memory_browse(get_workbench(), req))
    if page is None:
        return
    if page.mark is not None:  # the next page, the previous one or this one again: read from its edge
        st.session_state[LIST_MARK] = page.mark
    kept = _filters_said(req)
    if not page.total:
        st.info(f"No memory {kept}." if kept else "Nothing is stored in this instance yet.")
        return
    if not page.hits:
        st.info(f"Page {page.page} is past the last page ({page.pages}) of "
                f"{plural(page.total, 'memory', 'memories')}{' ' + kept if kept else ''}.")
        return
    first = (page.page - 1) * page.page_size + 1
    st.caption(f"{plural(page.total, 'memory', 'memories')}{' ' + kept if kept else ''} · "
               f"{first:,}–{first + len(page.hits) - 1:,} shown, page {page.page} of {page.pages:,}, "
               f"{'newest' if page.order == 'newest' else 'oldest'} first · leave the search box empty to "
               "list, type words to search")
    _render_listing_export(req, page.total)
    for i, hit in enumerate(page.hits):
        _render_hit(i, hit)


def _first_list_page() -> None:
    st.session_state["xp_list_page"] = 1


def _filters_said(req) -> str:
    """The listing's filters in words ("of kind user, in chain c1, from 2025-03-01"), or ""."""
    days = " ".join(p for p in [f"from {req.date_from}" if req.date_from else "",
                                 f"to {req.date_to}" if req.date_to else ""] if p)
    parts = [f"of kind {', '.join(req.kinds)}" if req.kinds else "",
             f"in chain {as_plain_line(req.chain_id)}" if req.chain_id else "",
             f"tagged {as_plain_line(', '.join(req.tags))}" if req.tags else "", days]
    return ", ".join(p for p in parts if p)


def _render_listing_export(req, total: int) -> None:
    """Every memory of the listing (all its pages), prepared on request: a whole selection is read only
    when asked for."""
    held = "xp_list_export"
    selection = req.model_dump(exclude={"page", "page_size", "shown"})
    if st.button(f"Prepare a download of all {plural(total, 'memory', 'memories')} listed (JSON lines)",
                 key="xp_list_prepare", icon=":material/download:"):
        out = attempt("export the memories", lambda: uc.memory_export(get_workbench(), req))
        if out is not None:
            st.session_state[held] = (selection, out)
    prepared = st.session_state.get(held)
    if prepared is None or prepared[0] != selection:
        return
    out = prepared[1]
    cut = (f" (the first {out.exported:,} of {out.matched:,}: narrow the filters, or export the whole instance)"
           if out.exported < out.matched else "")
    st.download_button(f"Download {plural(out.exported, 'memory', 'memories')}{cut}", data=out.document,
                       file_name=f"{req.instance}-memories.jsonl", mime="application/jsonl", key="xp_list_download")


# -- chains ------------------------------------------------------------------------------------------

def render_chains(instance: str) -> None:
    """The open chain first, where the eye is after "Open chain"; then the instance's chains a page at a time,
    found by a part of their title."""
    if chain_id := st.session_state.get("xp_chain"):
        _render_chain(instance, chain_id)
        st.divider()
    wb = get_workbench()
    c0, c1, c2, c3 = st.columns([3, 2, 1, 1], vertical_alignment="bottom")
    title = c0.text_input("Title contains", key="xp_title_filter", max_chars=uc.TITLE_FILTER_MAX_CHARS,
                          placeholder="part of a title, e.g. kyoto", on_change=_first_page,
                          help="Lists only the chains whose title contains this, ignoring case.")
    order = c1.radio("Order", ["newest", "oldest"], horizontal=True, key="xp_order",
                     format_func=lambda o: {"newest": "Latest activity first",
                                            "oldest": "Oldest activity first"}[o])
    size = c2.selectbox("Per page", [10, 20, 50], index=1, key="xp_page_size", on_change=_first_page)
    page_no = c3.number_input("Page", min_value=1, value=1, step=1, key="xp_page")
    page = attempt("list chains", lambda: uc.chains(wb, uc.ChainList(
        instance=instance, page=int(page_no), page_size=size, order=order, title=title.strip() or None)))
    if page is None:
        return
    matching = f" with “{as_plain_line(page.title, 60)}” in the title" if page.title else ""
    if not page.total:
        st.info(f"No chain has “{as_plain_line(page.title, 60)}” in its title." if page.title
                else "No conversation chains in this instance yet. Chat on the Chat page to create one.")
    elif not page.chains:
        st.info(f"Page {page.page} is past the last page ({page.pages}) of {plural(page.total, 'chain')}{matching}.")
    else:
        st.caption(f"Page {page.page} of {page.pages} · {plural(page.total, 'chain')}{matching}")
        st.dataframe(pd.DataFrame([{"chain": c.chain_id, "title": c.title, "turns": c.turns,
                                    "last activity": c.last_at, "started": c.created_at}
                                   for c in page.chains]),
                     hide_index=True, width="stretch")
        ids = [c.chain_id for c in page.chains]
        titles = {c.chain_id: c.title for c in page.chains}
        st.selectbox("Open a chain of this page", ids, index=None, key="xp_chain_pick",
                     format_func=lambda c: f"{one_line(titles.get(c, ''), 70)} ({c})",
                     placeholder="choose a chain",
                     on_change=lambda: open_chain(st.session_state["xp_chain_pick"])
                     if st.session_state.get("xp_chain_pick") else None)


def _first_page() -> None:
    st.session_state["xp_page"] = 1


# Brings the open chain into sight once, after "Open chain": the view changed under the pointer, and the
# page kept its scroll position, so a chain opened from a hit far down the results was drawn out of view.
# It scrolls again while the run goes on (the rest of the view, drawn after it, moved it: the browser keeps
# the scroll position of what was in view), until the run ended and the chain stayed put, for at most 5 s;
# and never once the user scrolled. No stored text in it: only the container's key.
SCROLL_TO_CHAIN = """<script>
(() => {
  const started = Date.now();
  let still = 0, moved = false;
  const stop = () => { moved = true; };
  ['wheel', 'touchmove', 'keydown', 'mousedown'].forEach(e => addEventListener(e, stop, {once: true}));
  const go = () => {
    if (moved || Date.now() - started > 5000) return;
    const box = document.querySelector('.st-key-xp_open_chain');
    const idle = document.querySelector('[data-testid="stApp"]')?.dataset.testScriptState === 'notRunning';
    if (box) {
      const top = box.getBoundingClientRect().top;
      if (Math.abs(top) > 1) { box.scrollIntoView({block: 'start'}); still = 0; } else if (idle) { still++; }
    }
    if (still < 5) setTimeout(go, 50);
  };
  go();
})();
</script>"""


def _render_chain(instance: str, chain_id: str) -> None:
    wb = get_workbench()
    detail = attempt("read the chain",
                     lambda: uc.chain(wb, uc.ChainRef(instance=instance, chain_id=chain_id)))
    if detail is None:
        st.button("Close", key="xp_chain_close_missing", on_click=close_chain)
        return
    if st.session_state.pop("xp_chain_scroll", False):
        st.html(SCROLL_TO_CHAIN, unsafe_allow_javascript=True)
    came_from = st.session_state.get("xp_chain_from")
    with st.container(border=True, key="xp_open_chain"):
        st.subheader(as_plain_line(detail.title or chain_id, 100))
        turns = sum(1 for t in detail.thoughts if t.category == uc.CATEGORY_USER)
        indexed = ("rows in the memory index not counted" if detail.indexed is None
                   else f"{plural(detail.indexed, 'row')} in the memory index")
        st.caption(f"chain {as_plain_line(chain_id)} · {plural(turns, 'turn')} · {indexed}")
        if detail.index_note:  # Postgres down or hung: the chain is Redis's, shown all the same
            st.warning(detail.index_note, icon=":material/database:")
        bar = st.container(horizontal=True)
        if came_from:
            bar.button(f"Back to the {came_from.lower()}", key="xp_chain_back", icon=":material/arrow_back:",
                       on_click=back_to, args=(came_from,))
        bar.button("Close", key="xp_chain_close", on_click=close_chain, help="Back to the list of chains")
        export = uc.chain_export(wb, uc.ChainRef(instance=instance, chain_id=chain_id))
        bar.download_button("Export JSON", data=export.document,
                            file_name=f"{chain_id}.json",
                            mime="application/json", key="xp_export")
        # Not the primary (filled) button: the view's main action is reading the chain, not deleting it.
        bar.button("Delete chain", key="xp_chain_delete", icon=":material/delete:", on_click=ask_to_delete,
                   args=("chain", chain_id, detail.title or chain_id, None, turns))
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
                         args=("memory", t.id, t.thought, chain_id),
                         kwargs={"stores": "the thought store and the memory index"})
