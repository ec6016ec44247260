"""Which format a file is, told from its first bytes (never by reading it whole), and its reader.

A JSONL file is told by the keys of its first lines; a JSON list by the keys of its first items, read
with a streaming parser that stops after them; a CSV by its header. The format most of those first
records fit is chosen: one invalid record at the top is then reported with its place, as every other is,
rather than making the whole file unknown.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any, Literal

import ijson

from core.errors import InvalidInput
from core.importing import chatgpt, claude, locomo, memories, openai_chat, past_tasks, workbench_chain
from core.importing.records import InvalidRecord, Item
from core.importing.source import JsonTooLarge, json_events, open_binary, peek_text

Format = Literal["openai-jsonl", "chatgpt", "claude", "locomo", "memories-jsonl", "memories-csv",
                 "past-tasks", "workbench-chain"]
FORMATS: tuple[str, ...] = Format.__args__
# The workbench's own archive is no record format (it is restored whole, `core.archive`, never read here),
# but it is a format `workbench import` takes: every list of formats shown to a user names it too.
ARCHIVE = "workbench-archive"
IMPORTABLE: tuple[str, ...] = (*FORMATS, ARCHIVE)
Shape = Literal["jsonl", "json", "mem0-results", "chain", "csv", "folder"]
FIRST_ITEM_EVENTS = 5000  # enough to meet the first item's keys, however long its values
FIRST_OBJECT_EVENTS = 1_000_000  # a first JSON line longer than this is not read to its end
DETECT_RECORDS = 20  # the first records whose keys choose the format
DETECT_BYTES = 1 << 20  # of a JSONL file, its first lines are read up to this much
DETECT_EVENTS = 100_000  # of a JSON list, its first items are read up to this many parser events
ITEM_STARTS = ("start_map", "start_array", "string", "number", "boolean", "null")


@dataclass(frozen=True)
class Detected:
    format: Format
    shape: Shape


def detect(path: Path) -> Detected:
    """The file's format and shape; InvalidInput names what was expected when none fits."""
    if path.is_dir():
        return Detected("past-tasks", "folder")
    if not path.is_file():
        raise InvalidInput(f"{path}: no such file or folder")
    head = peek_text(path).lstrip()
    if path.suffix.lower() == ".csv":
        return Detected("memories-csv", "csv")
    if head.startswith("{"):
        top = _first_object(path)
        if special := _object_format(top):
            return special
        found = _most_fit(_line_keys(path) or [set(top)], jsonl=True)
        if found:
            return Detected(found, "jsonl")
        raise _unknown(path, f"JSON objects with the keys {sorted(top)[:8]}")
    if head.startswith("["):
        keys = _item_keys(path)
        found = _most_fit(keys, jsonl=False)
        if found:
            return Detected(found, "json")
        first = sorted(keys[0]) if keys else []
        raise _unknown(path, f"a JSON list whose first item has the keys {first[:8]}")
    header = head.split("\n", 1)[0].lower()
    if "," in header and any(k in header for k in memories.TEXT_FIELDS):
        return Detected("memories-csv", "csv")
    raise _unknown(path, "neither JSON, JSONL nor CSV")


def reader(path: Path, found: Detected, *, include_system: bool = False, user_id: str | None = None,
           task: str | None = None, undated_at: datetime | None = None
           ) -> Callable[[], Iterator[Item | InvalidRecord]]:
    """A function that streams the file's records from the start, each time it is called (the same
    records each time: `undated_at`, the time given to a conversation that has none, is fixed
    here, not read as each pass begins)."""
    chat = {"include_system": include_system}
    tasks = {"user_id": user_id, "task": task}
    readers: dict[tuple[str, str], Callable[[], Iterator[Item | InvalidRecord]]] = {
        ("openai-jsonl", "jsonl"): partial(openai_chat.read, path, undated_at=undated_at, **chat),
        ("openai-jsonl", "json"): partial(openai_chat.read, path, json_list=True, undated_at=undated_at, **chat),
        ("chatgpt", "json"): partial(chatgpt.read, path, undated_at=undated_at, **chat),
        ("claude", "json"): partial(claude.read, path, **chat),
        ("locomo", "json"): partial(locomo.read, path),
        ("memories-jsonl", "jsonl"): partial(memories.read_jsonl, path),
        ("memories-jsonl", "json"): partial(memories.read_json, path),
        ("memories-jsonl", "mem0-results"): partial(memories.read_json, path, prefix="results.item"),
        ("memories-csv", "csv"): partial(memories.read_csv, path),
        ("past-tasks", "folder"): partial(past_tasks.read_folder, path, **tasks),
        ("past-tasks", "jsonl"): partial(past_tasks.read_jsonl, path, **tasks),
        ("workbench-chain", "chain"): partial(workbench_chain.read, path),
    }
    if (found.format, found.shape) not in readers:
        raise InvalidInput(f"{path.name}: a {found.shape} file cannot hold the {found.format} format")
    return readers[(found.format, found.shape)]


def shaped(path: Path, fmt: str) -> Detected:
    """The format the user named, with the shape the file has."""
    if fmt not in FORMATS:
        raise InvalidInput(f"unknown format {fmt!r}: use one of auto, {', '.join(IMPORTABLE)}")
    if path.is_dir():
        return Detected(fmt, "folder")  # type: ignore[arg-type]
    head = peek_text(path).lstrip()
    if fmt == "memories-csv":
        return Detected(fmt, "csv")
    if head.startswith("["):
        return Detected(fmt, "json")  # type: ignore[arg-type]
    if head.startswith("{") and (special := _object_format(_first_object(path))) and special.format == fmt:
        return special
    return Detected(fmt, "jsonl")  # type: ignore[arg-type]


def _object_format(top: dict[str, Any]) -> Detected | None:
    """A file that is one JSON object: mem0's memories, or a chain the workbench exported (else None:
    JSON lines)."""
    if top.get("format") == workbench_chain.MARK:
        return Detected("workbench-chain", "chain")
    if "results" in top:
        return Detected("memories-jsonl", "mem0-results")
    return None


def _format_of(keys: set[str], *, jsonl: bool) -> Format | None:
    if "messages" in keys:
        return "openai-jsonl"
    if "mapping" in keys and not jsonl:
        return "chatgpt"
    if "chat_messages" in keys and not jsonl:
        return "claude"
    if "conversation" in keys and not jsonl:
        return "locomo"
    if "production" in keys or ("text" in keys and "user_id" in keys and "task" in keys):
        return "past-tasks" if jsonl else None
    if keys & set(memories.TEXT_FIELDS):
        return "memories-jsonl"
    return None


def _most_fit(records: Iterable[set[str]], *, jsonl: bool) -> Format | None:
    """The format most of the records' keys fit (the first met, of two as many); None when none fits."""
    fits = Counter(found for keys in records if (found := _format_of(keys, jsonl=jsonl)))
    return fits.most_common(1)[0][0] if fits else None


def _line_keys(path: Path) -> list[set[str]]:
    """The keys of those of the first `DETECT_RECORDS` lines that are JSON objects, read up to
    `DETECT_BYTES`: a line longer than what is left ends them ([] when it is the first, which
    `_first_object` reads however long)."""
    found, left, lines = [], DETECT_BYTES, 0
    with open_binary(path) as f:
        while lines < DETECT_RECORDS and left > 0 and (raw := f.readline(left)):
            left -= len(raw)
            if not raw.endswith(b"\n") and left <= 0:
                break
            if not raw.strip():
                continue
            lines += 1
            try:
                value = json.loads(raw)
            except (ValueError, RecursionError):
                continue
            if isinstance(value, dict):
                found.append(set(value))
    return found


def _item_keys(path: Path) -> list[set[str]]:
    """The keys of each of the list's first `DETECT_RECORDS` items (none, of an item that is no object),
    read up to `DETECT_EVENTS` parser events (the first item's up to `FIRST_ITEM_EVENTS`, however long)."""
    items: list[set[str]] = []
    with open_binary(path) as f:
        try:
            for n, (prefix, event, value) in enumerate(json_events(f)):
                if prefix == "item" and event in ITEM_STARTS:
                    if len(items) == DETECT_RECORDS:
                        break
                    items.append(set())
                elif prefix == "item" and event == "map_key":
                    items[-1].add(value)
                elif n > (DETECT_EVENTS if len(items) > 1 else FIRST_ITEM_EVENTS):
                    break
        except (ijson.JSONError, JsonTooLarge) as e:
            if not any(items):
                raise InvalidInput(f"{path.name}: not valid JSON ({' '.join(str(e).split())[:80]})") from None
    return items


def _first_object(path: Path) -> dict[str, Any]:
    """The first JSON object's keys with their text or number values (None for a list or an object),
    read as a stream up to its end, or up to mem0's "results" list or a chain export's mark, which say
    enough (however long the first line is)."""
    found: dict[str, Any] = {}
    with open_binary(path) as f:
        try:
            for n, (prefix, event, value) in enumerate(json_events(f, multiple_values=True)):
                if prefix == "" and event == "map_key":
                    found[value] = None
                elif prefix in found and event in ("string", "number"):
                    found[prefix] = value
                if (prefix, event) == ("", "end_map") or "results" in found or n > FIRST_OBJECT_EVENTS \
                        or found.get("format") == workbench_chain.MARK:
                    break
        except (ijson.JSONError, JsonTooLarge) as e:
            if not found:
                raise InvalidInput(f"{path.name}: not valid JSON ({' '.join(str(e).split())[:80]})") from None
    return found


def _unknown(path: Path, what: str) -> InvalidInput:
    return InvalidInput(f"{path.name}: unknown format ({what}); give --format, one of {', '.join(IMPORTABLE)}")
