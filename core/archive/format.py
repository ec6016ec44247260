"""The workbench archive on disk: one zip file holding a whole instance, written and read as streams.

    mimetype          "application/vnd.memory-workbench.archive", stored first and uncompressed (as
                      EPUB and OpenDocument do), so `is_archive` recognises the file from its first
                      bytes, even a truncated one (which restoring then refuses as truncated)
    <kind>.jsonl      one JSON object a line (`MEMBERS`), each written as it is read from its store
    manifest.json     format, version, product version, source instance, archive id, embedder,
                      counts per kind: written last, once the counts are known; zip's directory at the
                      end of the file finds it first when reading

A zip rather than a tar: its members can be written without knowing their size first, so a member
streams from the database into the file and nothing is held whole in memory; and every member has a
CRC, so a damaged archive is found before anything is restored. Opening an archive reads every member to
its end (its CRC) and every line of it (a JSON object each) before anything is restored from it: a line
found damaged half-way would otherwise leave the instance holding part of the archive.
"""

from __future__ import annotations

import json
import os
import struct
import zipfile
import zlib
from collections.abc import Iterator
from datetime import datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from core.errors import InvalidInput

FORMAT = "memory-workbench-archive"
VERSION = 1
MIME = b"application/vnd.memory-workbench.archive"
MANIFEST = "manifest.json"
MEMBERS = ("profiles", "banks", "past_tasks", "tool_executions", "memories", "chains")
# Members added after version 1 was first written: an archive without one restores with none of it.
OPTIONAL_MEMBERS = ("relevance_marks", "profile_activations", "deleted")
# Bounds on what an archive may expand to, checked on its directory before any member is read (zipfile
# never yields more than a member's declared size): the manifest is a few hundred bytes; the JSONL members
# `workbench export` writes compress about 3 to 20 times, where a zip bomb's expand a thousand times; one
# line is one chain at most.
MAX_MANIFEST_BYTES = 1 << 20
MAX_EXPANSION = 200
EXPANSION_CHECKED_FROM = 1 << 20  # a small member's ratio says nothing
MAX_ROW_BYTES = 256 << 20
_LOCAL_HEADER = struct.Struct("<4s22xHH")  # signature, (version … sizes), name length, extra length
_FLUSH_BYTES = 1 << 20


def product_version() -> str:
    try:
        return version("memory-workbench")
    except PackageNotFoundError:  # running from a checkout that was never installed
        return "unknown"


class Manifest(BaseModel):
    format: str
    version: int
    product_version: str
    archive_id: str
    instance: str = Field(description="the instance the archive was exported from")
    created_at: datetime
    with_vectors: bool
    embedder: str = Field(description="the embedding model active at export (vectors, if kept, are its)")
    active_profile: str | None = None
    active_since: datetime | None = Field(None, description="when the instance chose its active profile (added "
                                                            "after version 1 was first written)")
    counts: dict[str, int]


class ArchiveDamaged(InvalidInput):
    """An archive found truncated or damaged; `what`: where, in a few words. Raised on opening it, before
    anything is restored; a restore that finds damage later (the file changed under it) says what it wrote."""

    def __init__(self, name: str, what: str):
        self.what = what
        super().__init__(f"archive: {name} is truncated or damaged ({what}); nothing was restored from it: "
                         "export the instance again or copy the file anew")


def is_archive(path: Path) -> bool:
    """True when the file starts as a workbench archive does (its first member is `mimetype`)."""
    try:
        with open(path, "rb") as f:
            head = f.read(_LOCAL_HEADER.size + 8 + len(MIME))
    except OSError:
        return False
    if len(head) < _LOCAL_HEADER.size:
        return False
    signature, name_len, extra_len = _LOCAL_HEADER.unpack_from(head)
    start = _LOCAL_HEADER.size
    return (signature == b"PK\x03\x04" and name_len == 8 and head[start:start + 8] == b"mimetype"
            and extra_len == 0 and head[start + 8:] == MIME)


class ArchiveWriter:
    """Writes an archive to `<out>.partial` and moves it to `out` only when complete, so an interrupted
    export never leaves a truncated archive under the name asked for. The file is the owner's alone:
    it holds every conversation of the instance."""

    def __init__(self, out: Path):
        self.out = out
        self.partial = out.with_name(f".{out.name}.partial")
        fd = os.open(self.partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        self.zip = zipfile.ZipFile(os.fdopen(fd, "wb"), "w", compression=zipfile.ZIP_DEFLATED,
                                   compresslevel=6)
        self.zip.writestr(zipfile.ZipInfo("mimetype"), MIME, compress_type=zipfile.ZIP_STORED)

    def member(self, kind: str, rows: Iterator[dict[str, Any]]) -> int:
        """Stream `rows` into `<kind>.jsonl`; returns how many were written."""
        count, buffered = 0, []
        size = 0
        with self.zip.open(f"{kind}.jsonl", "w", force_zip64=True) as f:
            for row in rows:
                line = (json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
                buffered.append(line)
                size += len(line)
                count += 1
                if size >= _FLUSH_BYTES:
                    f.write(b"".join(buffered))
                    buffered, size = [], 0
            f.write(b"".join(buffered))
        return count

    def finish(self, manifest: Manifest) -> int:
        """Write the manifest, close, and put the archive in place; returns its size in bytes."""
        self.zip.writestr(MANIFEST, manifest.model_dump_json(indent=2))
        fp = self.zip.fp
        self.zip.close()
        # On disk before it takes the name asked for, and the name with it: after a power cut the name
        # holds the whole archive or is not there (a rename can reach the disk before the data it names).
        fp.flush()
        os.fsync(fp.fileno())
        fp.close()
        os.replace(self.partial, self.out)
        _sync_dir(self.out.parent)
        return self.out.stat().st_size

    def abort(self) -> None:
        fp = self.zip.fp
        try:
            self.zip.close()
        except (OSError, ValueError):  # a member's handle cut off mid-write: the file goes anyway
            pass
        # Closed here: a ZipFile that failed to close tries again when collected, and printed the traceback
        # of a seek on the closed file after the one line an interrupted export says.
        self.zip.fp = None
        try:
            if fp is not None:
                fp.close()  # flushes what is buffered: fails again on a full disk
        except OSError:
            pass
        finally:  # the partial file goes whatever closing it said (it holds the users' words)
            self.partial.unlink(missing_ok=True)


def _sync_dir(folder: Path) -> None:
    """fsync a folder, so a rename in it lasts a power cut (where a folder cannot be opened so, as on Windows,
    its file system keeps renames itself)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


class ArchiveReader:
    """Opens an archive and refuses one that is not ours, is newer than this version reads, or is
    damaged or truncated, with a message that says which, before anything is read from it."""

    def __init__(self, path: Path):
        self.path = path
        if not path.is_file():
            raise InvalidInput(f"archive: {path} is not a file; give the path of a workbench archive")
        try:
            self.zip = zipfile.ZipFile(path)
        except (zipfile.BadZipFile, OSError) as e:
            if is_archive(path):
                raise self._damaged("its end is missing") from e
            raise InvalidInput(f"archive: {path.name} is not a Memory Workbench archive (made by "
                               "`workbench export`)") from e
        try:
            self._refuse_bomb()
            self.manifest = self._manifest()
            self._check_members()
        except BaseException as e:
            self.zip.close()
            if isinstance(e, zipfile.BadZipFile | EOFError | zlib.error | OSError):
                raise self._damaged(type(e).__name__) from e
            raise

    def _refuse_bomb(self) -> None:
        """Refuse a member that would expand far beyond what an export writes, before reading it."""
        for info in self.zip.infolist():
            expansion = info.file_size / max(info.compress_size, 1)
            if (info.filename == MANIFEST and info.file_size > MAX_MANIFEST_BYTES) or \
                    (info.file_size > EXPANSION_CHECKED_FROM and expansion > MAX_EXPANSION):
                raise InvalidInput(f"archive: {self.path.name} is not an archive `workbench export` writes: its "
                                   f"member {info.filename[:60]!r} would expand to {info.file_size:,} bytes "
                                   f"({expansion:,.0f} times its size), as a zip bomb does; nothing was read")

    def _damaged(self, what: str) -> ArchiveDamaged:
        return ArchiveDamaged(self.path.name, what)

    def _check_members(self) -> None:
        """Read every member to its end, so zipfile checks its CRC, and every line of a JSONL one, before
        anything is restored: a damaged archive restores nothing (rather than the part before the damage).
        Costs one more read of the archive: 0.15 s for 9 MB of JSONL (600 chains and 6,000 memories), whose
        restore takes 8–15 s."""
        restored = {f"{kind}.jsonl" for kind in (*MEMBERS, *OPTIONAL_MEMBERS)}
        for info in self.zip.infolist():
            if info.filename in restored:
                for _ in self._objects(info.filename):
                    pass
            elif info.filename != MANIFEST:  # read whole already, its CRC with it; others: their CRC alone
                with self.zip.open(info) as f:
                    while f.read(_FLUSH_BYTES):
                        pass

    def _manifest(self) -> Manifest:
        names = set(self.zip.namelist())
        if MANIFEST not in names:
            raise InvalidInput(f"archive: {self.path.name} has no {MANIFEST}: not a Memory Workbench archive")
        try:
            raw = json.loads(self.zip.read(MANIFEST))
        except ValueError as e:
            raise self._damaged(f"{MANIFEST} is not JSON") from e
        if not isinstance(raw, dict) or raw.get("format") != FORMAT:
            raise InvalidInput(f"archive: {self.path.name} is not a Memory Workbench archive (format "
                               f"{str(raw.get('format') if isinstance(raw, dict) else None)[:40]!r})")
        if isinstance(raw.get("version"), int) and raw["version"] > VERSION:
            raise InvalidInput(f"archive: version {raw['version']} is newer than this workbench reads "
                               f"(up to {VERSION}); it was made by memory-workbench "
                               f"{str(raw.get('product_version'))[:20]}: upgrade to restore it")
        try:
            manifest = Manifest.model_validate(raw)
        except ValidationError as e:
            raise self._damaged(f"{MANIFEST} lacks a field") from e
        missing = [k for k in MEMBERS if f"{k}.jsonl" not in names]
        if missing:
            raise self._damaged(f"members missing: {', '.join(missing)}")
        return manifest

    def rows(self, kind: str) -> Iterator[dict[str, Any]]:
        """The member's objects, one line at a time (none for an optional member the archive lacks)."""
        if kind in OPTIONAL_MEMBERS and f"{kind}.jsonl" not in self.zip.namelist():
            return
        yield from self._objects(f"{kind}.jsonl")

    def _objects(self, name: str) -> Iterator[dict[str, Any]]:
        with self.zip.open(name) as f:
            number = 0
            while line := f.readline(MAX_ROW_BYTES + 1):  # a line is never read past the bound
                number += 1
                if len(line) > MAX_ROW_BYTES:
                    raise self._damaged(f"{name} line {number} is longer than {MAX_ROW_BYTES >> 20} MB")
                try:
                    row = json.loads(line)
                except (ValueError, RecursionError) as e:
                    raise self._damaged(f"{name} line {number} is not JSON") from e
                if not isinstance(row, dict):
                    raise self._damaged(f"{name} line {number} is not a JSON object")
                yield row

    def close(self) -> None:
        self.zip.close()
