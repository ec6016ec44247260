"""Claude's data export, `conversations.json`: a JSON list of conversations.

    {"uuid", "name", "created_at", "chat_messages": [{"uuid", "sender": "human"|"assistant",
     "text", "content"?: [{"type": "text", "text"}, ...], "created_at", "attachments"?, "files"?}]}

A message's `content` parts are preferred to its flat `text` when present; attachments and files are
named, their extracted text is not imported as the message.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

from core.importing.chats import RawMessage, build_conversation
from core.importing.records import InvalidRecord, Item, each, parse_time, text_of
from core.importing.source import json_items

FORMAT = "claude"
ROLES = {"human": "user", "assistant": "assistant"}


def read(path: Path, *, include_system: bool = False) -> Iterator[Item | InvalidRecord]:
    build = partial(conversation, include_system=include_system)
    yield from each(json_items(path, "item", "conversation"), build)


def conversation(value: Any, *, include_system: bool):
    if not isinstance(value, dict) or not isinstance(value.get("chat_messages"), list):
        raise TypeError('expected a Claude conversation with "chat_messages"')
    raw = []
    for i, m in enumerate(value["chat_messages"]):
        if not isinstance(m, dict):
            raise TypeError(f"chat_messages[{i}] must be an object")
        attachments = [str(a.get("file_name") or a.get("name") or "attachment")[:120]
                       for a in (m.get("attachments") or []) + (m.get("files") or []) if isinstance(a, dict)]
        parts = m.get("content")
        text = text_of(parts, attachments) if parts else str(m.get("text") or "")
        sender = str(m.get("sender", ""))
        at = parse_time(m["created_at"], f"chat_messages[{i}].created_at") if m.get("created_at") else None
        raw.append(RawMessage(role=ROLES.get(sender, sender), text=text, at=at,
                              source_id=str(m["uuid"]) if m.get("uuid") else None, attachments=attachments))
    started = parse_time(value["created_at"], "created_at") if value.get("created_at") else None
    return build_conversation(FORMAT, str(value["uuid"]) if value.get("uuid") else None,
                              str(value.get("name") or ""), raw, started=started,
                              include_system=include_system)
