"""What every chat format shares: from the source's messages to an `ImportedConversation`.

Each reader turns its format's messages into `RawMessage`s; `build_conversation` then applies the
rules once: system and tool messages are left out unless asked (kept, they are stored as user thoughts
marked "[system]" / "[tool]"), empty and hidden messages are left out, and every message gets a time.

A user message that is an attachment alone (a photo sent without a word) is kept as a line naming it,
"[photo: IMG_4032.jpeg]" or "[file: notes.pdf]": the answer after it refers to it, and without it two
answers would follow each other. One whose attachment has no name (an export that gives only its kind,
"image_asset_pointer", "image_url") is left out: there is nothing to show of it. The import counts both.
Like a kept system message, such a line moves no other message's place or time, and is no part of the
content hash that knows a conversation without an id: a file imported before it was kept imports again
onto the same chain, adding the line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import PurePosixPath

from core.importing.records import ImportedConversation, ImportedMessage, content_id

STEP = timedelta(milliseconds=1)
TICK = timedelta(microseconds=1)  # the finest step a datetime takes
ASIDES = ("system", "tool", "function", "developer")  # left out unless system messages are kept
# A file's name, as exports give an attachment's: a stem and an extension (not a kind like "image_url").
FILE_NAME = re.compile(r"[^/\\]*[^/\\.]\.[A-Za-z0-9]{1,8}")
PHOTO_SUFFIXES = {".jpg", ".jpeg", ".png", ".gif", ".webp", ".heic", ".heif", ".bmp", ".tif", ".tiff", ".avif"}


@dataclass
class RawMessage:
    role: str
    text: str
    at: datetime | None
    source_id: str | None = None
    attachments: list[str] = field(default_factory=list)
    hidden: bool = False


def build_conversation(fmt: str, source_id: str | None, title: str, raw: list[RawMessage], *,
                       started: datetime | None, include_system: bool, model: str | None = None,
                       tags: list[str] | None = None, keep_ids: bool = False,
                       undated_at: datetime | None = None) -> ImportedConversation:
    """The conversation as a chain will store it. ValueError says what makes it unusable.

    A user or assistant message without a time of its own is given its predecessor's time (or the
    conversation's start) plus a millisecond; one stamped at or before its predecessor is moved to just
    after it, so the chain keeps the source's order. Other times are kept as the source wrote them. A
    conversation with no time at all, on itself or its messages, starts at `undated_at` (the file's
    time), when given.

    Kept system and tool messages move no other message's time, as they move no other message's place:
    the user and assistant messages get the same times whether they are kept or not, so a file imported
    again with them kept adds them between the messages already stored (`_aside_time`)."""
    kept: list[tuple[RawMessage, str, str, str]] = []  # (message, text, role, place)
    said = 0  # user and assistant messages so far: a message without an id of its own is known by its place
    marked = unnamed = 0  # user messages that were an attachment alone: kept as a line naming it, left out
    for n, m in enumerate(raw):
        role = m.role
        if role in ASIDES:
            if not include_system:
                continue
            # Known by its place among all messages, so keeping these or not moves no other message's place.
            text, role, place = f"[{'tool' if role == 'function' else role}] {m.text}", "user", f"system-{n}"
        else:
            text, place = m.text, str(said)
        if m.hidden:
            continue
        if not text.strip():
            if role != "user" or not m.attachments:
                continue
            line = attachment_line(m.attachments)
            marked, unnamed = marked + (line is not None), unnamed + (line is None)
            if line is None:
                continue
            text, place = line, f"attachment-{n}"  # known by its place among all, as a system message is
        if role not in ("user", "assistant"):
            raise ValueError(f"message role {role!r:.30} is not user, assistant, system or tool")
        kept.append((m, text, role, place))
        said += not _aside(place)
    if all(k[3].startswith("attachment-") for k in kept):
        raise ValueError("no user or assistant message with text (empty, hidden, system or tool only)")
    # The user and assistant messages are timed first, as if the others were not kept (a conversation of
    # system messages alone is timed by them).
    anchors = ([i for i, k in enumerate(kept) if not _aside(k[3])]
               or [i for i, k in enumerate(kept) if not k[3].startswith("attachment-")])
    dated_by = ("messages" if any(kept[i][0].at is not None for i in anchors) else
                "conversation" if started is not None else "file")
    if dated_by == "file":
        started = undated_at
    times: list[datetime | None] = [None] * len(kept)
    previous = started
    for n, i in enumerate(anchors):
        at = kept[i][0].at
        if at is None and previous is None:
            raise ValueError("no timestamp: give the conversation a created_at or each message a timestamp")
        if at is None and n == 0:
            at = previous
        elif at is None or (previous is not None and at <= previous and n > 0):
            at = previous + STEP
        times[i] = previous = at
    after, left = None, 0  # going backwards: the next user or assistant message's time, the asides before it
    bounds: list[tuple[datetime | None, int]] = [(None, 0)] * len(kept)
    for i in range(len(kept) - 1, -1, -1):
        if times[i] is not None:
            after, left = times[i], 0
        else:
            left += 1
            bounds[i] = (after, left)
    before: datetime | None = None
    for i, (m, *_) in enumerate(kept):
        if times[i] is None:
            times[i] = _aside_time(m.at, before, *bounds[i], started=started)
        before = times[i]
    messages = [ImportedMessage(role=role, content=text, at=at, source_id=m.source_id, place=place,
                                attachments=m.attachments)
                for (m, text, role, place), at in zip(kept, times, strict=True)]
    # The content's hash (its id when the source gives none) holds the times the source gave, never the
    # file's: the same file imported again, or a copy of it, finds the same chain.
    ident = source_id or content_id([[role, text, at.isoformat() if dated_by != "file" else None]
                                     for (_, text, role, place), at in zip(kept, times, strict=True)
                                     if not place.startswith("attachment-")])
    first = next((m.content for m in messages if m.role == "user" and not _aside(m.place)),
                 messages[0].content)
    return ImportedConversation(format=fmt, source_id=ident, title=(title or first).strip()[:120],
                                messages=messages, model=model, tags=tags or [], keep_ids=keep_ids,
                                dated_by=dated_by, attachment_only=marked, attachment_only_left_out=unnamed)


def _aside(place: str) -> bool:
    """A kept system or tool message, or an attachment's line: known by its place among all messages,
    and timed between the others (`_aside_time`)."""
    return place.startswith(("system-", "attachment-"))


def attachment_line(names: list[str]) -> str | None:
    """The line standing for a user message that was attachments alone ("[photo: IMG_4032.jpeg]"), or
    None when none of them is named (a kind such as "image_url" is no name)."""
    named = [n.strip() for n in names if FILE_NAME.fullmatch(n.strip())]
    if not named:
        return None
    return " ".join(f"[{'photo' if PurePosixPath(n).suffix.lower() in PHOTO_SUFFIXES else 'file'}: {n}]"
                    for n in named)


def _aside_time(own: datetime | None, before: datetime | None, after: datetime | None, left: int, *,
                started: datetime | None) -> datetime:
    """The time of a kept system or tool message: strictly after the message `before` it and before the
    next user or assistant message (`after`), `left` system or tool messages counting this one still to
    fit in between. Its own time where it fits; else just after its predecessor (a millisecond, or less
    where the gap is narrower); first of all, at the conversation's start, or just before the first
    message."""
    if own is not None and (before is None or own > before) and (after is None or own < after):
        return own
    if before is not None:
        return before + (STEP if after is None else max(min(STEP, (after - before) / (left + 1)), TICK))
    if started is not None and (after is None or started < after):
        return started
    # Before the first user or assistant message, and the conversation's start is not: just before it.
    # (`after` is a time here: the messages timed first hold one, and this message comes before them.)
    return after - STEP * left
