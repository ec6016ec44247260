"""Reading an import file as a stream: its encoding checked on the first bytes, its hash, its JSON items
or lines one at a time (never the whole file), and what a truncated or malformed file yields."""

from __future__ import annotations

import codecs
import hashlib
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, Literal

import ijson

from core.errors import InvalidInput
from core.importing.records import InvalidRecord

PEEK_BYTES = 64 * 1024
HASH_CHUNK = 1 << 20
# What one record may be. A JSON value nested deeper than MAX_DEPTH is refused before the parser builds
# it: ijson keeps every level's full path, so 100,000 levels in a 200 KB file took 24 GB. One value (a
# string, say) longer than MAX_VALUE_BYTES is refused too: ijson gathers a long string in time that grows
# with its square (a 200 MB one took 4 minutes), and a JSONL line longer than that is never read whole.
MAX_DEPTH = 512
MAX_VALUE_BYTES = 16 << 20
BOMS = {codecs.BOM_UTF32_LE: "UTF-32", codecs.BOM_UTF32_BE: "UTF-32", codecs.BOM_UTF16_LE: "UTF-16",
        codecs.BOM_UTF16_BE: "UTF-16"}


def peek_text(path: Path) -> str:
    """The start of the file as text (BOM removed). InvalidInput when it cannot be read (permission
    denied, an I/O error: it said "Unexpected OSError"), is empty or is not UTF-8."""
    try:
        with path.open("rb") as f:
            head = f.read(PEEK_BYTES)
    except OSError as e:
        raise InvalidInput(f"cannot read {path}: {e.strerror or type(e).__name__}") from None
    if head.startswith(b"PK\x03\x04"):  # a zip (a ChatGPT data export as downloaded), never UTF-8 text
        raise InvalidInput(f"{path.name}: a zip archive, not a Memory Workbench archive: unzip it and import "
                           "the file in it that holds the data (for a ChatGPT export, conversations.json)")
    for bom, name in BOMS.items():
        if head.startswith(bom):
            raise InvalidInput(f"{path.name}: the file is {name}, not UTF-8: save it as UTF-8 and import "
                               "again")
    head = head.removeprefix(codecs.BOM_UTF8)
    if not head.strip():
        raise InvalidInput(f"{path.name}: the file is empty: nothing to import")
    if b"\x00" in head:
        raise InvalidInput(f"{path.name}: the file holds NUL bytes, so it is not UTF-8 text (UTF-16, or a "
                           "binary file?): save it as UTF-8 and import again")
    try:
        return codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
    except UnicodeDecodeError as e:
        raise InvalidInput(f"{path.name}: byte {e.start} is not UTF-8 (a Windows or Latin-1 export?): save "
                           "the file as UTF-8 and import again") from None


def file_hash(path: Path) -> str:
    """SHA-256 of the file, read in 1 MB chunks (the key of its import checkpoint)."""
    h = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(HASH_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def file_time(path: Path, now: datetime | None = None) -> tuple[datetime, Literal["file", "import"]]:
    """The time given to conversations that have none (`chats.build_conversation`): the file's last
    change, or the import's own time when that is in the future (a wrong clock) or cannot be read."""
    now = now or datetime.now(UTC)
    try:
        changed = datetime.fromtimestamp(path.stat().st_mtime, UTC)
    except (OSError, OverflowError, ValueError):
        return now, "import"
    return (changed, "file") if changed <= now else (now, "import")


class JsonTooLarge(ValueError):
    """A JSON value nested deeper than MAX_DEPTH or longer than MAX_VALUE_BYTES: not read further."""


TOO_DEEP = f"a JSON value nested more than {MAX_DEPTH} levels deep, which no export holds"
TOO_LONG = f"a JSON value longer than {MAX_VALUE_BYTES >> 20} MB, which no export holds"


class _Metered:
    """A binary file that refuses to hand the parser more than MAX_VALUE_BYTES between two events."""

    def __init__(self, f: IO[bytes]):
        self.f, self.unparsed = f, 0

    def read(self, n: int = -1) -> bytes:
        if n == 0:  # ijson asks for nothing to tell bytes from text
            return b""
        data = self.f.read(n if 0 < n <= HASH_CHUNK else HASH_CHUNK)
        self.unparsed += len(data)
        if self.unparsed > MAX_VALUE_BYTES:
            raise JsonTooLarge(TOO_LONG)
        return data


def json_events(f: IO[bytes], *, multiple_values: bool = False, use_float: bool = False
                ) -> Iterator[tuple[str, str, Any]]:
    """ijson's (prefix, event, value) events of `f`, with its nesting and the length of each value bounded
    (JsonTooLarge): every streaming read of an import file goes through here."""
    metered = _Metered(f)
    return ijson.parse(_bounded(ijson.basic_parse(metered, multiple_values=multiple_values, use_float=use_float),
                                metered))


def _bounded(events: Iterator[tuple[str, Any]], metered: _Metered) -> Iterator[tuple[str, Any]]:
    depth = 0
    for event, value in events:
        metered.unparsed = 0
        if event == "start_map" or event == "start_array":
            depth += 1
            if depth > MAX_DEPTH:
                raise JsonTooLarge(TOO_DEEP)
        elif event == "end_map" or event == "end_array":
            depth -= 1
        yield event, value


def open_binary(path: Path) -> IO[bytes]:
    """The file positioned after a UTF-8 BOM, if any (ijson and the line readers read bytes)."""
    f = path.open("rb")
    if f.read(3) != codecs.BOM_UTF8:
        f.seek(0)
    return f


def json_lines(path: Path) -> Iterator[tuple[str, Any]]:
    """Each non-blank line of a JSONL file as ("line N", value), or ("line N", InvalidRecord)."""
    with open_binary(path) as f:
        for number, raw in enumerate(_lines(f), start=1):
            where = f"line {number}"
            if raw is None:
                yield where, InvalidRecord(where=where, problem=f"longer than {MAX_VALUE_BYTES >> 20} MB, which "
                                                                "no record is: not read")
                continue
            if not raw.strip():
                continue
            try:
                yield where, json.loads(raw.decode("utf-8"))
            except RecursionError:
                yield where, InvalidRecord(where=where, problem=f"not valid JSON ({TOO_DEEP})")
            except UnicodeDecodeError:
                yield where, InvalidRecord(where=where, problem="not UTF-8 text: save the file as UTF-8")
            except json.JSONDecodeError as e:  # its own "line 2 column 1" would read as a line of the file
                at = "at the end of the line" if e.pos >= len(raw.rstrip()) else f"at character {e.pos + 1}"
                # Some of json's messages end in "at" ("Invalid control character at"), said once here.
                yield where, InvalidRecord(where=where, problem=f"not valid JSON ({e.msg.removesuffix(' at')} {at})")
            except ValueError as e:
                yield where, InvalidRecord(where=where, problem=f"not valid JSON ({e.args[0][:80]})")


def _lines(f: IO[bytes]) -> Iterator[bytes | None]:
    """The file's lines, each read up to MAX_VALUE_BYTES: a longer one is skipped in chunks and given as
    None, so a 2 GB line is never held in memory."""
    while raw := f.readline(MAX_VALUE_BYTES + 1):
        if len(raw) <= MAX_VALUE_BYTES or raw.endswith(b"\n"):
            yield raw
            continue
        while (rest := f.readline(HASH_CHUNK)) and not rest.endswith(b"\n"):
            pass
        yield None


def _beyond_bounds(path: Path) -> bool:
    """Whether the JSON file holds a value nested deeper than MAX_DEPTH or longer than MAX_VALUE_BYTES: a pass
    of ijson's bare events (no paths built, so a deep file costs no memory), stopped at a JSON error, which
    the read itself reports."""
    with open_binary(path) as f:
        metered = _Metered(f)
        try:
            for _ in _bounded(ijson.basic_parse(metered), metered):
                pass
        except JsonTooLarge:
            return True
        except (ijson.JSONError, UnicodeDecodeError):
            return False
    return False


def json_items(path: Path, prefix: str, label: str) -> Iterator[tuple[str, Any]]:
    """Each item of the JSON array at `prefix` ("item": the top-level array) as ("<label> N", value),
    parsed one item at a time. A file cut short or malformed ends with an `InvalidRecord` saying after which
    item, since nothing after that point can be read."""
    number = 0
    with open_binary(path) as f:
        # ijson's C reader builds the items (0.25 s for 13 MB of a ChatGPT export, against 0.85 s through the
        # bounded events), once a pass of its bare events (0.2 s) has found the file within bounds; a file
        # beyond them is read through `json_events`, which says at which item.
        events = json_events(f, use_float=True) if _beyond_bounds(path) else f
        try:
            for number, value in enumerate(ijson.items(events, prefix, use_float=True), start=1):
                yield f"{label} {number}", value
        except JsonTooLarge as e:
            where = f"{label} {number + 1}"
            yield where, InvalidRecord(where=where, problem=f"{e}: nothing after this point can be read")
        except ijson.IncompleteJSONError as e:
            where = f"{label} {number + 1}"
            text = " ".join(str(e).split())
            problem = ("the JSON ends before this item is complete: the file is truncated (download or "
                       "export it again)" if "incomplete" in text.lower() or "premature" in text.lower()
                       else f"not valid JSON ({text[:80]}); nothing after this point can be read")
            yield where, InvalidRecord(where=where, problem=problem)
        except (ijson.JSONError, UnicodeDecodeError) as e:
            where = f"{label} {number + 1}"
            text = " ".join(str(e).split())[:80]
            yield where, InvalidRecord(where=where, problem=f"not valid JSON or not UTF-8 ({text}); nothing "
                                                            "after this point can be read")
