"""OpenAI chat messages: one conversation per JSONL line, or a JSON list of them.

    {"id"?: str, "created_at"?: time, "title"?: str,
     "messages": [{"role": "user"|"assistant"|"system"|"tool", "content": str | [parts],
                   "timestamp"? | "created_at"?: time}, ...]}

Times are ISO 8601 or Unix seconds. A conversation with no time on itself or its messages (a fine-tuning
file has none) is dated from `undated_at`, the file's time, and the import says so.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

from core.importing.chats import RawMessage, build_conversation
from core.importing.records import InvalidRecord, Item, each, parse_time, text_of
from core.importing.source import json_items, json_lines

FORMAT = "openai"


def read(path: Path, *, include_system: bool = False, json_list: bool = False,
         undated_at: datetime | None = None) -> Iterator[Item | InvalidRecord]:
    """`undated_at`: the time a conversation without any starts at (`source.file_time`)."""
    values = json_items(path, "item", "conversation") if json_list else json_lines(path)
    yield from each(values, partial(conversation, include_system=include_system, undated_at=undated_at))


def conversation(value: Any, *, include_system: bool, undated_at: datetime | None = None):
    if not isinstance(value, dict) or not isinstance(value.get("messages"), list):
        raise TypeError('expected an object with "messages": [{"role", "content"}, ...]')
    started = _time(value, "created_at", "create_time")
    raw = []
    for i, m in enumerate(value["messages"]):
        if not isinstance(m, dict) or "role" not in m:
            raise ValueError(f'messages[{i}] must be an object with "role" and "content"')
        attachments: list[str] = []
        at = _time(m, "timestamp", "created_at", "create_time", field=f"messages[{i}].timestamp")
        raw.append(RawMessage(role=str(m["role"]), text=text_of(m.get("content"), attachments), at=at,
                              source_id=str(m["id"]) if m.get("id") is not None else None,
                              attachments=attachments))
    source_id = str(value["id"]) if value.get("id") not in (None, "") else None
    return build_conversation(FORMAT, source_id, str(value.get("title") or ""), raw, started=started,
                              include_system=include_system, model=value.get("model"), undated_at=undated_at)


def _time(obj: dict, *names: str, field: str | None = None):
    for name in names:
        if obj.get(name) not in (None, ""):
            return parse_time(obj[name], field or name)
    return None
