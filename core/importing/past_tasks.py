"""Past tasks (the texts produced for each user): a folder of Markdown or text files for one user and
task type, or a JSONL of produced texts, one per line:

    {"user_id": str, "production" | "text": str, "task"?: str, "title"?: str, "created_at"?: time,
     "source_key" | "id"?: str}

A file's name (a line's `source_key`) identifies its text, as in `workbench tasks ingest`.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

from core.importing.records import (
    ImportedPastTask,
    InvalidRecord,
    Item,
    checked,
    content_id,
    each,
    parse_time,
)
from core.importing.source import MAX_VALUE_BYTES, json_lines
from core.past_tasks.store import TEXT_SUFFIXES, text_from_file

DEFAULT_TASK = "note"


def read_folder(path: Path, *, user_id: str | None = None, task: str | None = None, **_: Any
                ) -> Iterator[Item | InvalidRecord]:
    files = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in TEXT_SUFFIXES)
    if not files:
        yield InvalidRecord(where=path.name,
                            problem=f"no Markdown or text files ({', '.join(TEXT_SUFFIXES)}) in the folder")
    root = path.resolve()
    for file in files:
        if not file.resolve().is_relative_to(root):  # a link out of the folder: ~/.ssh/id_rsa, say
            yield InvalidRecord(where=str(file.relative_to(path)),
                                problem="a link to a file outside the folder: not read (copy the file in)")
            continue
        yield checked(str(file.relative_to(path)), partial(_from_file, path, file, user_id, task))


def _from_file(root: Path, file: Path, user_id: str | None, task: str | None) -> ImportedPastTask:
    if not user_id:
        raise ValueError("a folder of past tasks is one user's: give the user (--user on the command line)")
    if file.stat().st_size > MAX_VALUE_BYTES:  # never read whole into memory
        raise ValueError(f"longer than {MAX_VALUE_BYTES >> 20} MB, which no produced text is: not read")
    try:
        content = file.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ValueError("not UTF-8 text: save the file as UTF-8") from None
    title, production = text_from_file(file.name, content)
    return ImportedPastTask(user_id=user_id, task=task or DEFAULT_TASK, title=title, production=production,
                            source_key=str(file.relative_to(root)))


def read_jsonl(path: Path, *, user_id: str | None = None, task: str | None = None, **_: Any
               ) -> Iterator[Item | InvalidRecord]:
    yield from each(json_lines(path), partial(_from_line, user_id=user_id, task=task))


def _from_line(value: Any, user_id: str | None, task: str | None) -> ImportedPastTask:
    if not isinstance(value, dict):
        raise TypeError('expected an object with "user_id" and "production"')
    text = value.get("production", value.get("text"))
    if not isinstance(text, str):
        raise TypeError('"production" (the produced text) is missing')
    given = str(value.get("title") or "").strip()
    # Without a title, as a text without a file name: its first line when short, else its first words.
    title, production = (given, text) if given else text_from_file(None, text)
    # The id hashes the title as it was made before such a text was titled by its first words (then
    # "text"), so a file imported before is still recognised: importing it again adds the better title
    # as a new version of the same text, not a second text.
    key_title = given or text_from_file("text", text)[0]
    key = value.get("source_key") or value.get("id") or f"import-{content_id([key_title, production])}"
    created = parse_time(value["created_at"], "created_at") if value.get("created_at") else None
    return ImportedPastTask(user_id=str(value.get("user_id") or user_id or ""),
                            task=str(value.get("task") or task or DEFAULT_TASK), title=title[:300],
                            production=production, created_at=created, source_key=str(key)[:500])
