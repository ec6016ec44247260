"""What every chat format shares: from the source's messages to an `ImportedConversation`.

Each reader turns its format's messages into `RawMessage`s; `build_conversation` then applies the
rules once: system and tool messages are left out unless asked (kept, they are stored as user thoughts
marked "[system]" / "[tool]"), empty and hidden messages are left out, and every message gets a time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from core.importing.records import ImportedConversation, ImportedMessage, content_id

STEP = timedelta(milliseconds=1)


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
                       tags: list[str] | None = None, keep_ids: bool = False) -> ImportedConversation:
    """The conversation as a chain will store it. ValueError says what makes it unusable.

    A message without a time of its own is given its predecessor's time (or the conversation's start)
    plus a millisecond; a message stamped before its predecessor is moved to just after it, so the
    chain keeps the source's order. Other times are kept as the source wrote them."""
    messages: list[ImportedMessage] = []
    previous = started
    said = 0  # user and assistant messages so far: a message without an id of its own is known by its place
    for n, m in enumerate(raw):
        role = m.role
        if role in ("system", "tool", "function", "developer"):
            if not include_system:
                continue
            # Known by its place among all messages, so keeping these or not moves no other message's place.
            text, role, place = f"[{'tool' if role == 'function' else role}] {m.text}", "user", f"system-{n}"
        else:
            text, place = m.text, str(said)
        if m.hidden or not text.strip():
            continue
        if role not in ("user", "assistant"):
            raise ValueError(f"message role {role!r:.30} is not user, assistant, system or tool")
        at = m.at
        if at is None and previous is None:
            raise ValueError("no timestamp: give the conversation a created_at or each message a timestamp")
        if at is None and not messages:
            at = previous
        elif at is None or (previous is not None and at <= previous and messages):
            at = previous + STEP
        messages.append(ImportedMessage(role=role, content=text, at=at, source_id=m.source_id, place=place,
                                        attachments=m.attachments))
        previous = at
        said += not place.startswith("system-")
    if not messages:
        raise ValueError("no user or assistant message with text (empty, hidden, system or tool only)")
    ident = source_id or content_id([[m.role, m.content, m.at.isoformat()] for m in messages])
    first = next((m.content for m in messages if m.role == "user" and not m.place.startswith("system-")),
                 messages[0].content)
    return ImportedConversation(format=fmt, source_id=ident, title=(title or first).strip()[:120],
                                messages=messages, model=model, tags=tags or [], keep_ids=keep_ids)
