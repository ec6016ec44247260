"""Which format a file is, told from its first bytes (never by reading it whole), and its reader.

A JSONL file is told by the keys of its first lines; a JSON list by the keys of its first items, read
with a streaming parser that stops after them; a CSV by its header. The format most of those first
records fit is chosen: one invalid record at the top is then reported with its place, as every other is,
rather than making the whole file unknown.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import zipfile
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from pathlib import Path, PurePosixPath
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
    if (why := not_importable(path)) is not None:
        raise InvalidInput(why)
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


def not_importable(path: Path) -> str | None:
    """Why `path` cannot be read as an import file or folder, in one line naming it; None when it can be
    opened as one. /dev/null, a FIFO and a loop of symbolic links were all "no such file or folder"."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        if path.is_symlink():
            return f"{path}: a symbolic link to {os.readlink(path)!r}, which does not exist"
        return f"{path}: no such file or folder"
    except OSError as e:  # a loop of symbolic links, a name too long, a folder on the way not readable
        return f"cannot read {path}: {e.strerror or type(e).__name__}"
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    what = ("a FIFO (named pipe)" if stat.S_ISFIFO(mode) else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
            else "a socket" if stat.S_ISSOCK(mode) else "not a regular file")
    return f"{path}: {what}, not a file: give the path of the exported file (or of a folder of past tasks)"


# A zip users download as is: ChatGPT's data export (conversations.json beside chat.html, user.json, …).
ZIPPED_EXPORTS = ("conversations.json",)
MAX_UNZIPPED_EXPANSION = 200  # a member expanding more than this is a zip bomb, not an export


def zipped_export(path: Path) -> zipfile.ZipInfo | None:
    """The export inside a zip that is no workbench archive (ChatGPT's data export: its conversations.json,
    at the top or in one folder), or None: not such a zip. InvalidInput for a zip without one."""
    try:
        with path.open("rb") as f:
            if f.read(4) != b"PK\x03\x04":
                return None
        with zipfile.ZipFile(path) as z:
            infos = z.infolist()
    except (OSError, zipfile.BadZipFile, ValueError):
        return None
    found = [i for i in infos if PurePosixPath(i.filename).name in ZIPPED_EXPORTS
             and len(PurePosixPath(i.filename).parts) <= 2 and not i.is_dir()]
    if not found:
        raise InvalidInput(f"{path.name}: a zip archive holding no conversations.json (of a ChatGPT export), and "
                           "not a Memory Workbench archive: unzip it and import the export file it holds")
    info = min(found, key=lambda i: len(i.filename))
    if info.file_size > 1 << 20 and info.file_size > MAX_UNZIPPED_EXPANSION * max(info.compress_size, 1):
        raise InvalidInput(f"{path.name}: its {info.filename[:60]!r} would expand to {info.file_size:,} bytes, "
                           f"{info.file_size // max(info.compress_size, 1):,} times its size, as a zip bomb does; "
                           "nothing was read")
    return info


def unzip_export(path: Path, info: zipfile.ZipInfo, folder: Path) -> Path:
    """The export `zipped_export` found, copied out as a stream into `folder` (the caller's private temporary
    folder), dated as the zip dates it: the file the import reads, whose hash is the unzipped file's own, so
    importing the zip or the file it holds is the same import."""
    out = folder / PurePosixPath(info.filename).name
    try:
        with zipfile.ZipFile(path) as z, z.open(info) as src, open(out, "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
    except (zipfile.BadZipFile, EOFError, zlib.error) as e:
        raise InvalidInput(f"{path.name}: the zip is damaged or truncated ({type(e).__name__}): download the "
                           "export again") from None
    except OSError as e:
        raise InvalidInput(f"{path.name}: could not unzip {info.filename} into {folder} "
                           f"({e.strerror or type(e).__name__}): unzip it yourself and import "
                           f"{PurePosixPath(info.filename).name}") from None
    try:
        when = datetime(*info.date_time).timestamp()
        os.utime(out, (when, when))
    except (ValueError, OverflowError, OSError):
        pass
    return out


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
        takes = [SHAPES_SAID[shape] for fmt, shape in readers if fmt == found.format]
        raise InvalidInput(f"{path.name}: --format {found.format} reads {' or '.join(takes)}, and this is "
                           f"{SHAPES_SAID[found.shape]}: leave --format out to tell the format from the file, or "
                           f"give one that reads it ({', '.join(f for f in FORMATS if (f, found.shape) in readers)})")
    return readers[(found.format, found.shape)]


# What a file of each shape is, as a message names it.
SHAPES_SAID: dict[str, str] = {"jsonl": "JSON lines (an object a line)", "json": "a JSON list",
                               "mem0-results": 'mem0\'s {"results": [...]}',
                               "chain": "a chain exported by `workbench chains export`", "csv": "a CSV file",
                               "folder": "a folder"}


def shaped(path: Path, fmt: str) -> Detected:
    """The format the user named, with the shape the file has."""
    if fmt not in FORMATS:
        raise InvalidInput(f"unknown format {fmt!r}: use one of auto, {', '.join(IMPORTABLE)}")
    if path.is_dir():
        return Detected(fmt, "folder")  # type: ignore[arg-type]
    if (why := not_importable(path)) is not None:
        raise InvalidInput(why)
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
