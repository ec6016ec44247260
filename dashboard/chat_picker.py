"""The Chat page's conversation picker: a page of chains at a time (Newer / Older), found by a part of their
title, and the open conversation kept by the page rather than by the picker.

Why the page keeps it: the browser sends a select box's choice back as its label, and Streamlit maps the
label back to an option through the options of the run at hand. A chain picked on one page of the list and
offered on the next one under another label (its bare id: its title was only known on its own page) came
back as a label that no option had, and the label went to the turn as its chain id ("chain_id must be 1–128
characters … got 'Where do I live? (fix-city2)'"). So the open chain id lives in `OPEN_KEY`, changed only by
a pick among the options the user saw (`_picked`) or by a turn that started a new chain; the picker is set
from it before each run draws it, and offers it, under the label it was first shown with, on every page.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import streamlit as st

from core import usecases as uc
from dashboard.ui import as_plain_line, attempt, humanize_age, one_line, plural

PAGE_SIZE = 15
NEW_CHAIN = "+ New conversation"
PICKER_KEY = "chat_chain_select"
FILTER_KEY = "chat_title_filter"
PAGE_KEY = "chat_page"
OPEN_KEY = "chat_open_chain"  # (instance, chain id) of the open conversation; None or absent: a new one
OFFERED_KEY = "chat_offered"  # the chain ids the picker offered on the last run
LABELS_KEY = "chat_labels"  # chain id -> its label as first shown in this session


@dataclass
class Picked:
    chain_id: str | None  # the open conversation (None: a message starts a new one)
    listing: uc.ChainPage | None  # the page of chains listed (None: the listing failed, and said so)
    watched: uc.ChainList  # what the page's watcher re-reads to see chains made or continued elsewhere
    summary: uc.ChainSummary | None  # the open chain's, when it is on the page listed


def chain_label(title: str, chain_id: str) -> str:
    return f"{one_line(title, 60)} ({chain_id})"


def conversation_caption(conversation: uc.Conversation, summary: uc.ChainSummary | None) -> str:
    """"3 turns · last activity 2 min ago": from the listing when the chain is on the page listed, else from
    its messages (it stays open while other pages of the list are shown)."""
    if summary is not None:
        turns, age = summary.turns, summary.age_seconds
    else:
        last = max(m.thought.timestamp for m in conversation.messages)
        turns, age = conversation.user_turns, (datetime.now(UTC) - last).total_seconds()
    return f"{plural(turns, 'turn')} · last activity {humanize_age(age)} ago"


def open_chain(instance: str, chain_id: str | None, title: str | None = None) -> None:
    """Open `chain_id` (None: a new conversation) from the next run on; `title` labels it in the picker
    until a page of the list shows it."""
    st.session_state[OPEN_KEY] = (instance, chain_id) if chain_id else None
    if chain_id and title is not None:
        st.session_state.setdefault(LABELS_KEY, {}).setdefault(chain_id, chain_label(title, chain_id))


def _picked(instance: str) -> None:
    """The user picked an option: open it. Only an option the picker offered counts; a value that is none of
    them (a label the browser kept from an earlier list) changes nothing."""
    value = st.session_state.get(PICKER_KEY)
    if value == NEW_CHAIN:
        open_chain(instance, None)
    elif value in st.session_state.get(OFFERED_KEY, ()):
        open_chain(instance, value)


def _filtered() -> None:
    st.session_state[PAGE_KEY] = 0  # the matches start on their first page


def render_picker(wb, instance: str) -> Picked:
    """The picker, the title filter and Newer / Older; returns the open conversation and the page listed."""
    page = st.session_state.setdefault(PAGE_KEY, 0)
    opened = st.session_state.get(OPEN_KEY)
    open_id = opened[1] if opened and opened[0] == instance else None  # another instance's chain: none
    left, middle, newer, older = st.columns([5, 3, 1, 1], vertical_alignment="bottom")
    title = middle.text_input("Find by title", key=FILTER_KEY, max_chars=uc.TITLE_FILTER_MAX_CHARS,
                              placeholder="part of a title", on_change=_filtered,
                              help="Lists only the conversations whose title contains this, ignoring case.")
    request = uc.ChainList(instance=instance, page=page + 1, page_size=PAGE_SIZE, title=title.strip() or None)
    listing = attempt("list conversations", lambda: uc.chains(wb, request))
    if listing and page and not listing.chains:  # chains deleted elsewhere emptied this page: show the last
        st.session_state[PAGE_KEY] = listing.pages - 1
        st.rerun()
    chains = listing.chains if listing else []
    # Labels must not change between reruns: the browser sends the choice back as its label. So a chain keeps
    # the label it was first shown with in this session (not an age or a turn count that ticks).
    known: dict[str, str] = st.session_state.setdefault(LABELS_KEY, {})
    for c in chains:
        known.setdefault(c.chain_id, chain_label(c.title, c.chain_id))
    ids = [c.chain_id for c in chains]
    if open_id and open_id not in ids:
        ids.insert(0, open_id)  # open, and not on this page: offered first, so it stays picked
    st.session_state[OFFERED_KEY] = ids
    st.session_state[PICKER_KEY] = open_id or NEW_CHAIN  # set before the widget is drawn, as the page keeps it
    left.selectbox("Conversation", [NEW_CHAIN, *ids], format_func=lambda c: known.get(c, c), key=PICKER_KEY,
                   on_change=_picked, args=(instance,))
    total = listing.total if listing else 0
    if newer.button("Newer", disabled=page == 0, width="stretch"):
        st.session_state[PAGE_KEY] = page - 1
        st.rerun()
    if older.button("Older", disabled=(page + 1) * PAGE_SIZE >= total, width="stretch"):
        st.session_state[PAGE_KEY] = page + 1
        st.rerun()
    if listing and listing.title:
        said = as_plain_line(listing.title, 60)
        if total:
            whose = "its title" if total == 1 else "their titles"
            st.caption(f"{plural(total, 'conversation has', 'conversations have')} “{said}” in {whose} · page "
                       f"{listing.page} of {listing.pages}")
        else:
            st.caption(f"No conversation title has “{said}” in it.")
    # The watcher re-reads this to see chains made or continued elsewhere: the page listed, or, while a
    # filter is on (it reads every title), the newest page of all chains, whose first chain and total
    # change at any turn or new chain anywhere.
    watched = request if request.title is None else uc.ChainList(instance=instance, page=1, page_size=PAGE_SIZE)
    summary = next((c for c in chains if c.chain_id == open_id), None)
    return Picked(chain_id=open_id, listing=listing, watched=watched, summary=summary)
