"""A window of answers as a person writes its bounds (`workbench feedback summary --since`, the HTTP API's
`?since=`, the MCP tool's `since`): read as every window is read (`core.retrieval.timeparse.read_window`),
and refused when it starts in the future.

Answers are given now, never later: a window that starts after now holds none, and saying "no answers in
this period" of it read as a quiet period, not as the mistyped date it was ("in 3 days", next year's date
for this year's). An `until` after now is fine: it means up to now.
"""

from __future__ import annotations

from datetime import UTC, datetime

from core.errors import InvalidInput
from core.retrieval.timeparse import read_window

START_HELP = "give a start up to now ('today', '7 days ago', 'last week') or leave it out"


def future_start(start: datetime | None, written: str | None = None, now: datetime | None = None) -> str | None:
    """Why a window of answers starting at `start` (as `written`, when it was text) is refused; None when
    it starts at or before now (a time without a zone is UTC)."""
    if start is None:
        return None
    start = start if start.tzinfo else start.replace(tzinfo=UTC)
    if start <= (now or datetime.now(UTC)):
        return None
    said = f"{written!r} ({start:%Y-%m-%d %H:%M} UTC)" if written else f"{start:%Y-%m-%d %H:%M} UTC"
    return f"{said} is in the future, and answers are only counted up to now: {START_HELP}"


def read_answer_window(since: str | None, until: str | None, names: tuple[str, str] = ("since", "until")
                       ) -> tuple[datetime | None, datetime | None]:
    """The window's two bounds (`read_window`: None open, refused the wrong way round), refused when it
    starts in the future; `names` as the front end calls them (the CLI's "--since", the API's "since")."""
    start, stop = read_window(since, until, names)
    if (why := future_start(start, since)) is not None:
        raise InvalidInput(f"{names[0]}: {why}")
    return start, stop
