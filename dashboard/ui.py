"""Small UI helpers shared by the pages: errors as messages, never tracebacks."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import TypeVar

import streamlit as st
from pydantic import ValidationError

from core.errors import ServiceUnavailable, describe

T = TypeVar("T")
log = logging.getLogger("dashboard")


# Told the service a page's call found down ("Redis", "Postgres"): the sidebar adds itself when imported, so
# that it shows the service down in the same run (this module stays below the sidebar, which uses it).
SERVICE_FAILED: list[Callable[[str], None]] = []


def show_error(exc: BaseException, doing: str) -> None:
    """Say what failed and what to do; the traceback goes to the server log only. A service found down
    is shown down in the sidebar too, in the same run (`SERVICE_FAILED`)."""
    info = describe(exc)
    log.warning("%s failed: %s", doing, info.message, exc_info=info.code == "internal")
    advice = " It may work if you retry in a moment." if info.retryable else ""
    st.error(f"**Could not {doing}.** {info.message}{advice}", icon="⚠️")
    if info.code in ("service_unavailable", "timeout") and (service := failed_service(exc)) is not None:
        for told in SERVICE_FAILED:
            told(service)


def failed_service(exc: BaseException) -> str | None:
    """The service whose outage `exc` reports: "Redis", "Postgres" (or the name a ServiceUnavailable
    gives); None for any other failure."""
    import psycopg
    import redis

    if isinstance(exc, ServiceUnavailable):
        return exc.service
    if isinstance(exc, redis.exceptions.ConnectionError | redis.exceptions.TimeoutError):
        return "Redis"
    if isinstance(exc, psycopg.OperationalError):
        return "Postgres"
    return None


def show_invalid(exc: ValidationError, doing: str, labels: dict[str, str]) -> None:
    """A refused input in the page's own words: each field by the label a person sees beside it."""
    parts = []
    for err in exc.errors(include_input=False, include_url=False):
        field = str(err["loc"][0]) if err["loc"] else ""
        msg = err["msg"].removeprefix("Value error, ").replace("String should", "It should")
        parts.append(f"{labels.get(field, field.replace('_', ' ').capitalize() or 'Input')}: {msg}.")
    st.error(f"**Could not {doing}.** " + " ".join(parts), icon="⚠️")


def attempt(doing: str, fn: Callable[[], T]) -> T | None:
    """Run `fn`; on failure show the error and return None."""
    try:
        return fn()
    except Exception as e:  # every failure becomes a message on the page
        show_error(e, doing)
        return None


def plural(n: int, noun: str, nouns: str | None = None) -> str:
    """"1 turn", "5 turns" (`nouns` for an irregular plural)."""
    return f"{n:,} {noun if n == 1 else nouns or noun + 's'}"


def humanize_age(seconds: float) -> str:
    seconds = max(0, int(seconds))
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds // size} {unit}"
    return f"{seconds} s"


# Every character that means something in Streamlit's Markdown: \ (escapes), ` (code), * _ (emphasis),
# [ ] ( ) (links, images), { } (attributes), # (headings), + - . (lists, setext headings, rules),
# = (setext headings), ! (images), | (tables), < > & (HTML, entities), ~ (strikethrough), ^ (footnotes),
# : (emoji shortcodes and colour directives such as :red[...]), $ (LaTeX). CommonMark lets a backslash
# escape any ASCII punctuation, so an escaped character always shows as itself.
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~:$&=^])")


def _escape_markdown(text: str) -> str:
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


def as_plain_markdown(text: str) -> str:
    """Stored text made inert for Markdown, its line breaks kept: it renders as itself, so no link,
    image, HTML, colour, emoji shortcode or formula can come from a memory."""
    return _escape_markdown(text).replace("\n", "  \n")


def one_line(text: object, limit: int | None = None) -> str:
    """`text` on one line (whitespace folded into single spaces), cut to `limit` characters with an
    ellipsis; as it is, for labels Streamlit does not read as Markdown (a select box's options)."""
    line = " ".join(str(text).split())
    if limit and len(line) > limit:
        line = line[: limit - 1].rstrip() + "…"
    return line


def as_plain_line(text: object, limit: int | None = None) -> str:
    """`as_plain_markdown` on `one_line`, for labels and captions."""
    return _escape_markdown(one_line(text, limit))


# A ranked memory's score parts as its tables show them (the Chat page's "why", the Tune page's rankings):
# its frame's column, the label and the width in px.
SCORE_PARTS = (("semantic", "sem", 44), ("text", "text", 42), ("recency", "rec", 40), ("speaker", "spk", 40),
               ("chain score", "chn", 42), ("coverage", "cov", 42), ("relevance", "rel", 40))
CONTENT_WIDTH = 280
# Three lines of text: the table wraps a cell's text only in rows taller than 64 px (4rem).
MEMORY_ROW_HEIGHT = 68


def memory_columns(helps: dict[str, str]) -> dict:
    """Column settings of a table of ranked memories (`SCORE_PARTS`, then `combined`, each with its help from
    `helps`): the content column takes what the scores leave (at 120 px, about 20 characters, memories that
    begin alike could not be told apart) and wraps over `MEMORY_ROW_HEIGHT`'s three lines, the full text on
    hover; the parts show 2 decimals. The id column is hidden: `memory_ids` lists the ids under the table."""
    parts = {k: st.column_config.NumberColumn(label, format="%.2f", help=helps[k], width=width)
             for k, label, width in SCORE_PARTS}
    return {"content": st.column_config.TextColumn(width=CONTENT_WIDTH), "id": None,
            "kind": st.column_config.TextColumn(width=86), **parts,
            "combined": st.column_config.NumberColumn("combined", format="%.3f", help=helps["combined"],
                                                      width=66)}


# A table taller than this many rows scrolls inside itself.
ROWS_SHOWN_MOST = 40


def table_height(rows: int, row_height: int = 35) -> int:
    """The height in px of a table that shows its `rows` (up to `ROWS_SHOWN_MOST`) without scrolling, so a
    row further down is not hidden below the first 10: Streamlit's rows are 35 px by default, under a
    header of 35 px, with a border."""
    return row_height * min(rows, ROWS_SHOWN_MOST) + 35 + 3


def memory_ids(ids: list[str]) -> None:
    """The ids of a table of memories, in its order, with a copy button: as a labelled set names them."""
    st.caption("Their memory ids, best first (copy button on the right): for a labelled set, or to find one in "
               "the Memory explorer.")
    st.code("\n".join(ids), language=None)


def confirm_in_dialog(title: str, message: str, *, yes: str, key: str, on_yes: Callable[[], bool],
                      on_close: Callable[[], None]) -> None:
    """Open a modal dialog asking to confirm `message`: seen wherever the page is scrolled. `on_yes` runs
    on `yes` and says whether it succeeded (if not, the dialog stays open with its error); `on_close`
    runs on success, Cancel or dismissing the dialog (clear the pending request there)."""

    @st.dialog(title, on_dismiss=lambda: on_close())
    def ask() -> None:
        st.warning(message, icon=":material/delete:")
        left, right = st.columns(2)
        if left.button(yes, type="primary", key=f"{key}_yes", width="stretch") and on_yes():
            on_close()
            st.rerun()
        if right.button("Cancel", key=f"{key}_no", width="stretch"):
            on_close()
            st.rerun()

    ask()


def confirm(message: str, *, yes: str, key: str, icon: str) -> bool | None:
    """A bordered warning with a `yes` button and Cancel (widget keys `<key>_yes`, `<key>_no`): True once
    confirmed, False once cancelled, None while neither was clicked."""
    with st.container(border=True):
        st.warning(message, icon=icon)
        left, right, _ = st.columns([1, 1, 4])
        if left.button(yes, type="primary", key=f"{key}_yes"):
            return True
        if right.button("Cancel", key=f"{key}_no"):
            return False
    return None
