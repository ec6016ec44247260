"""Memories kept by another system: JSONL, a JSON list (or mem0's `{"results": [...]}`), or CSV.

    {"content": str, "kind"?: observation|insight|obs_customized|conversation, "tags"?: [str] | "a, b",
     "created_at"?: time, "event_time"?: time, "metadata"?: {...}, "id"?: str}

mem0's exported memories read as the same: `memory` is the content, `user_id` (also `agent_id`,
`run_id`) goes into the metadata and a `user:<id>` tag. A memory without an id is known by a hash of
its content and times, so importing it again finds it. In CSV, `tags` are separated by commas or
semicolons and `metadata` is a JSON object.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import IO, Any

from core.importing.records import (
    IMPORTED_KINDS,
    ImportedMemory,
    InvalidRecord,
    Item,
    checked,
    content_id,
    each,
    parse_time,
)
from core.importing.source import json_items, json_lines, open_binary

TEXT_FIELDS = ("content", "memory", "text")
OWNERS = ("user_id", "agent_id", "run_id")


def read_jsonl(path: Path, **_: Any) -> Iterator[Item | InvalidRecord]:
    yield from each(json_lines(path), memory)


def read_json(path: Path, *, prefix: str = "item", **_: Any) -> Iterator[Item | InvalidRecord]:
    yield from each(json_items(path, prefix, "memory"), memory)


def read_csv(path: Path, **_: Any) -> Iterator[Item | InvalidRecord]:
    with open_binary(path) as f:
        delimiter = _delimiter(f)
        rows = csv.DictReader(io.TextIOWrapper(f, encoding="utf-8", newline=""), delimiter=delimiter)
        try:
            for row in rows:
                where = f"line {rows.line_num}"
                yield checked(where, partial(_csv_memory, row))
        except (UnicodeDecodeError, csv.Error) as e:
            where = f"line {rows.line_num + 1}"
            yield InvalidRecord(where=where, problem=f"not readable as UTF-8 CSV ({str(e)[:80]}); nothing "
                                                     "after this point can be read")


def _delimiter(f: IO[bytes]) -> str:
    """"," or, for a file whose header is separated by semicolons (as a spreadsheet set to a European locale
    saves CSV) and names the text's column only so, ";": every row was "content is missing", with no word
    of the separator. The file is left where it was."""
    start = f.tell()
    header = f.readline(1 << 16).decode("utf-8", "replace").lower()
    f.seek(start)
    names = {n.strip().strip('"') for n in header.split(",")}
    by_semicolon = {n.strip().strip('"') for n in header.split(";")}
    return ";" if not names & set(TEXT_FIELDS) and by_semicolon & set(TEXT_FIELDS) else ","


def memory(value: Any) -> ImportedMemory:
    if not isinstance(value, dict):
        raise TypeError('expected an object with "content" (or mem0\'s "memory")')
    content = next((value[k] for k in TEXT_FIELDS if isinstance(value.get(k), str)), None)
    if content is None:
        given = next((k for k in TEXT_FIELDS if value.get(k) is not None), None)
        if given is not None:  # there, but a number, a list or an object: "missing" was untrue
            raise ValueError(f'"{given}" is {_json_type(value[given])}, not text: each memory\'s text must be '
                             'a JSON string (in quotes)')
        raise ValueError('"content" (or "memory") is missing: each memory needs its text')
    metadata = value.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise TypeError("metadata must be a JSON object")
    tags = value.get("tags") or []
    if isinstance(tags, str):
        tags = [t.strip() for t in tags.replace(";", ",").split(",") if t.strip()]
    elif not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise ValueError('"tags" must be a list of texts (["work", "travel"]) or one text ("work, travel"), '
                         f"not {_json_type(tags)}")
    owners = {k: str(value[k]) for k in OWNERS if value.get(k)}
    tags = [*tags, *(f"{k.removesuffix('_id')}:{v}"[:64] for k, v in owners.items())]
    created = _time(value, "created_at", "timestamp")
    event = _time(value, "event_time", "event_at")
    source_id = value.get("id")
    if source_id not in (None, ""):
        metadata = {**metadata, "source_id": str(source_id)}
    kind = value.get("kind") or "observation"
    if kind not in IMPORTED_KINDS:  # said with the file's own field name, not the model's
        raise ValueError(f'"kind" {kind!r} is not one of {", ".join(IMPORTED_KINDS)}: change it, or leave '
                         "it out for an observation")
    return ImportedMemory(
        memory_kind=kind, content=content, created_at=created,
        event_time=event, tags=tags, metadata={**metadata, **owners},
        id=str(source_id) if source_id not in (None, "") else f"mem-{content_id([content, str(created)])}")


def _json_type(value: Any) -> str:
    """What a JSON value is, in the file's own terms ("a number", "a list")."""
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, int | float):
        return f"a number ({value})"
    if isinstance(value, list):
        return "a list" if all(isinstance(v, str) for v in value) else "a list holding more than texts"
    if isinstance(value, dict):
        return "an object"
    return "text" if isinstance(value, str) else "null"


def _time(value: dict, *names: str):
    for name in names:
        if value.get(name) not in (None, ""):
            return parse_time(value[name], name)
    return None


def _csv_memory(row: dict[str | None, Any]) -> ImportedMemory:
    return memory(_csv_values(row))


def _csv_values(row: dict[str | None, Any]) -> dict[str, Any]:
    if None in row:
        raise ValueError("more values than the header names: quote values holding commas")
    out: dict[str, Any] = {k.strip(): v for k, v in row.items() if k and v not in (None, "")}
    if isinstance(out.get("metadata"), str):
        try:
            out["metadata"] = json.loads(out["metadata"])
        except ValueError as e:
            raise ValueError("metadata must be a JSON object, e.g. {\"source\": \"notes\"}") from e
    return out
