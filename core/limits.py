"""The input limits, defined once: the use-case models enforce them and every front end states them
beside its input (`max_chars` and a caption), so the Chat page, the explorer, the past-task search and
the served front ends agree on what fits."""

from __future__ import annotations

MESSAGE_MAX_CHARS = 20_000  # a chat message: the thought of a ui_remember turn
QUERY_MAX_CHARS = 2_000  # a search: the explorer's, the past-task search's
TITLE_FILTER_MAX_CHARS = 120  # a chain title filter: a title is its first message's first 120


def limit_caption(what: str, max_chars: int) -> str:
    """The sentence shown beside an input with this limit: `limit_caption("Messages", 20_000)`."""
    return f"{what} up to {max_chars:,} characters."
