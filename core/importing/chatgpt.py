"""ChatGPT's data export, `conversations.json`: a JSON list of conversation trees.

Each conversation's `mapping` holds every node ever written, edits and regenerations included, linked by
`parent` / `children`; the branch the user kept ends at `current_node`, so the conversation is that
node's line of parents up to the root (other branches are left out). Times come from each message's
`create_time` (Unix seconds); a conversation whose messages have none (some exports, hand-made files) is
dated from its own `create_time` (else `update_time`), else from the file's time, and the import says so.
System, tool and hidden nodes (custom instructions, tool calls and outputs) are left out unless asked;
`parts` may hold attachments (images, files) besides text: the text is kept and the attachments are named.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

from core.importing.chats import RawMessage, build_conversation
from core.importing.records import InvalidRecord, Item, each, parse_time, text_of
from core.importing.source import json_items

FORMAT = "chatgpt"
MAX_DEPTH = 100_000  # a parent loop in a broken export must not hang the import


def read(path: Path, *, include_system: bool = False, undated_at: datetime | None = None
         ) -> Iterator[Item | InvalidRecord]:
    """`undated_at`: the time a conversation without any starts at (`source.file_time`)."""
    build = partial(conversation, include_system=include_system, undated_at=undated_at)
    yield from each(json_items(path, "item", "conversation"), build)


def conversation(value: Any, *, include_system: bool, undated_at: datetime | None = None):
    if not isinstance(value, dict) or not isinstance(value.get("mapping"), dict):
        raise TypeError('expected a ChatGPT conversation with a "mapping" of nodes')
    mapping = value["mapping"]
    raw, model = [], None
    for node in _kept_branch(mapping, value.get("current_node")):
        message = node.get("message")
        if not isinstance(message, dict):
            continue
        role = str((message.get("author") or {}).get("role", ""))
        meta = message.get("metadata") or {}
        content = message.get("content") or {}
        attachments = [str(a.get("name", "attachment"))[:120] for a in meta.get("attachments") or []
                       if isinstance(a, dict)]
        named: list[str] = []  # the parts' attachments, when the metadata does not name them
        text = text_of(content.get("parts"), named) if "parts" in content else str(content.get("text") or "")
        attachments = attachments or named
        if role == "assistant" and message.get("recipient", "all") != "all":
            role = "tool"  # a call to a tool (browsing, code): not an answer to the user
        hidden = bool(meta.get("is_visually_hidden_from_conversation")) or content.get("content_type") in (
            "user_editable_context", "model_editable_context")
        at = parse_time(message["create_time"], "create_time") if message.get("create_time") else None
        raw.append(RawMessage(role=role, text=text, at=at, source_id=str(message.get("id") or node.get("id")),
                              attachments=attachments, hidden=hidden))
        model = meta.get("model_slug") or model
    started = next((parse_time(value[n], n) for n in ("create_time", "update_time") if value.get(n)), None)
    source_id = value.get("conversation_id") or value.get("id")
    return build_conversation(FORMAT, str(source_id) if source_id else None, str(value.get("title") or ""),
                              raw, started=started, include_system=include_system, model=model,
                              undated_at=undated_at)


def _kept_branch(mapping: dict, current: Any) -> list[dict]:
    """The nodes from the root to `current_node` (or, without one, to the newest leaf)."""
    if current not in mapping:
        leaves = [n for n in mapping.values() if isinstance(n, dict) and not n.get("children")]
        if not leaves:
            raise ValueError("the conversation tree has no current_node and no leaf")
        current = max(leaves, key=lambda n: ((n.get("message") or {}).get("create_time") or 0)).get("id")
    branch, node_id = [], current
    while node_id is not None and node_id in mapping:
        node = mapping[node_id]
        if not isinstance(node, dict) or len(branch) > MAX_DEPTH:
            raise ValueError(f"node {str(node_id)[:40]!r} is not a node, or the tree has a loop")
        branch.append(node)
        node_id = node.get("parent")
    return branch[::-1]
