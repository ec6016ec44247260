"""Hand-made ChatGPT exports (`conversations.json`) for tests: each conversation one line of nodes from
a root, the last one its `current_node`, as the export writes them (times in Unix seconds or null)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

Message = tuple[str, str, float | None]  # (role, text, create_time)


def conversation(title: str, conversation_id: str | None, messages: list[Message], *,
                 create_time: float | None = None, update_time: float | None = None) -> dict[str, Any]:
    ids = [f"{conversation_id or title}-{i}" for i in range(len(messages))]
    mapping: dict[str, Any] = {"root": {"id": "root", "message": None, "parent": None, "children": ids[:1]}}
    for i, (role, text, at) in enumerate(messages):
        mapping[ids[i]] = {
            "id": ids[i], "parent": ids[i - 1] if i else "root", "children": ids[i + 1:i + 2],
            "message": {"id": ids[i], "author": {"role": role, "name": None, "metadata": {}},
                        "create_time": at, "update_time": None, "recipient": "all", "metadata": {},
                        "content": {"content_type": "text", "parts": [text]},
                        "status": "finished_successfully"}}
    found = {"title": title, "create_time": create_time, "update_time": update_time, "mapping": mapping,
             "current_node": ids[-1] if ids else "root"}
    return found | ({"conversation_id": conversation_id, "id": conversation_id} if conversation_id else {})


def write_export(path: Path, conversations: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps(conversations, indent=1), encoding="utf-8")
    return path


def photo_only(found: dict[str, Any], index: int, name: str | None) -> dict[str, Any]:
    """Make message `index` of a `conversation` a photo sent without text, as the export writes it: an
    image part and an empty text part, its file named in the metadata (`name` None: not named)."""
    node = found["mapping"][f"{found.get('conversation_id') or found['title']}-{index}"]
    asset = f"file-{index:04d}photo"
    node["message"]["content"] = {"content_type": "multimodal_text", "parts": [
        {"content_type": "image_asset_pointer", "asset_pointer": f"file-service://{asset}", "size_bytes": 123456,
         "width": 1536, "height": 2048, "fovea": None, "metadata": None}, ""]}
    if name is not None:
        node["message"]["metadata"] = {"attachments": [{"id": asset, "name": name, "mimeType": "image/jpeg"}]}
    return found
