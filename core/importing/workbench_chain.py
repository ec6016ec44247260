"""The workbench's own chain export (`workbench chains export`, the Memory explorer's "Export JSON"):

    {"format": "memory-workbench/chain@1", "chain_id", "title", "thoughts": [Thought, ...], "feedback"}

A round trip: the chain comes back under its own chain id, with its user and assistant thoughts at
their times, indexed as live ones (thought ids are made anew: an answer's feedback record is keyed by
its id across instances, so the chain's copy in another instance must not share it; brought back into
the instance it came from, the messages still stored there are found by their ids and not stored twice,
and those the user deleted there are known by their ids too, and left out as deleted). Metrics thoughts
are left out (nothing of the turn is measured again) and, like every import, its answers get no
feedback; the exact copy of a whole instance, feedback included, is the workbench archive's job.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import ijson

from core.importing.chats import RawMessage, build_conversation
from core.importing.records import InvalidRecord, Item, checked, parse_time
from core.importing.source import JsonTooLarge, json_events, json_items, open_binary

FORMAT = "workbench-chain"
MARK = "memory-workbench/chain@1"
ROLES = {"ui_remember:user": "user", "ui_remember:assistant": "assistant"}


def read(path: Path, **_: Any) -> Iterator[Item | InvalidRecord]:
    try:
        head = top_level(path)
    except (ijson.JSONError, JsonTooLarge) as e:
        yield InvalidRecord(where="chain", problem=f"not valid JSON ({' '.join(str(e).split())[:80]})")
        return
    thoughts = []  # one chain: its thoughts fit in memory
    for where, value in json_items(path, "thoughts.item", "thought"):
        if isinstance(value, InvalidRecord):
            yield value
            return
        thoughts.append((where, value))
    yield checked("chain", lambda: chain(head, thoughts))


def chain(head: dict[str, Any], thoughts: list[tuple[str, Any]]):
    raw = [RawMessage(role=ROLES[t["category"]], text=str(t.get("thought") or ""),
                      at=parse_time(t.get("timestamp"), f"{where} timestamp"),
                      source_id=str(t.get("id") or ""))
           for where, t in thoughts if isinstance(t, dict) and t.get("category") in ROLES]
    tags = next((t.get("tags") for _, t in thoughts if isinstance(t, dict) and t.get("tags")), None)
    return build_conversation(FORMAT, str(head.get("chain_id") or ""), str(head.get("title") or ""), raw,
                              started=None, include_system=False, keep_ids=True, tags=tags)


def top_level(path: Path) -> dict[str, Any]:
    """The document's top-level text values (format, chain id, title), read until its thoughts begin."""
    found: dict[str, Any] = {}
    with open_binary(path) as f:
        for prefix, event, value in json_events(f):
            if prefix == "thoughts":
                break
            if "." not in prefix and prefix and event in ("string", "number"):
                found[prefix] = value
    return found
