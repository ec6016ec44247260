"""How commands print: results as JSON on standard output, progress on standard error."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, Self

import click

from core.errors import InvalidInput


def emit(payload: Any) -> None:
    """Print a result as JSON (models, also inside a list, are dumped with their aliases, dates as
    ISO 8601)."""
    click.echo(json.dumps(_plain(payload), indent=2, ensure_ascii=False, default=str))


def output_file(path: Path, option: str, *, force: bool | None = None) -> Path:
    """`path` if a file can be written there, else InvalidInput naming the option and what to change.

    Called before the work whose result goes there, so a mistyped folder is said at once, not after a
    whole evaluation has run. `force`: the command has a --force, so a file already there is replaced only
    with it (`--report precious.txt` replaced the user's file without a word). Only a regular file is ever
    replaced: a device, a FIFO or a socket named by mistake is refused, whatever `force` says."""
    folder = path.parent
    if path.is_dir():
        problem = "is a folder; give a file name"
    elif path.exists() and not path.is_file():
        problem = "is not a regular file (a device, a FIFO or a socket); give a file name"
    elif not folder.is_dir():
        problem = f"cannot be written: the folder {str(folder)!r} does not exist"
    elif force is False and path.exists():
        problem = "exists: choose another name, or pass --force to replace it"
    elif not os.access(path if path.exists() else folder, os.W_OK):
        problem = "cannot be written: permission denied"
    else:
        return path
    raise InvalidInput(f"{option}: {str(path)!r} {problem}")


def private_file(path: Path) -> bool:
    """Create `path` empty for its owner alone (0600, as `workbench export` creates its archive), or make
    the file already there 0600, before anything is written to it: what a command writes outside the data
    directory holds users' words (rating comments, transcripts, invalid records), and the usual umask
    would leave it readable by everyone. A writer opening it afterwards keeps that mode; the folder's is
    never changed. True when the file was created; OSError when it cannot be written."""
    try:
        fd, created = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), True
    except FileExistsError:
        fd, created = os.open(path, os.O_WRONLY), False
    try:
        os.fchmod(fd, 0o600)
    finally:
        os.close(fd)
    return created


def write_output(path: Path, data: str | bytes, option: str) -> None:
    """Write a command's result to the file an option named (text as UTF-8), 0600 (`private_file`); a
    failure (the disk full, the folder removed meanwhile) is said in one line naming the option."""
    try:
        private_file(path)
        if isinstance(data, bytes):
            path.write_bytes(data)
        else:
            path.write_text(data, encoding="utf-8")
    except OSError as e:
        raise InvalidInput(f"{option}: could not write {str(path)!r}: {e.strerror or type(e).__name__}") from e


def _plain(payload: Any) -> Any:
    if hasattr(payload, "model_dump"):
        return payload.model_dump(mode="json")
    if isinstance(payload, list | tuple):
        return [_plain(item) for item in payload]
    return payload


def tty_progress(done: int, total: int, what: str) -> None:
    """A `(done, total, what)` progress line, redrawn in place; only on a terminal, so that a log of
    the command holds its results alone. `total` 0: a step whose total is not known, counted as it goes
    (`done` records so far), or, with `done` 0 too, a step that counts nothing (its name alone)."""
    if not sys.stderr.isatty():
        return
    # Back to the line's start and erased: a shorter line drawn over a longer one leaves nothing of it.
    if not total:
        counted = f": {done:,} record{'s' if done != 1 else ''}" if done else ""
        click.echo(f"\r\x1b[K{what}{counted}…", nl=not done, err=True)
        return
    click.echo(f"\r\x1b[K{what}: {done:,}/{total:,}", nl=done == total, err=True)


class ProgressBar:
    """A `(done, total)` progress callback drawing a bar on standard error, opened at its first call:
    a use case that refuses its input before any work then prints nothing but its one-line error.
    `terminal_only`: drawn on a terminal alone, as `tty_progress` is, so that a log of the command holds its
    results alone (elsewhere click prints the bar's label and its end).

        with ProgressBar("embedding and storing") as step:
            uc.ingest_files(wb, request, progress=step)
    """

    def __init__(self, label: str, *, terminal_only: bool = False):
        self.label, self.terminal_only = label, terminal_only
        self._bar: Any = None
        self._done = 0

    def __enter__(self) -> Self:
        return self

    def __call__(self, done: int, total: int) -> None:
        if self.terminal_only and not sys.stderr.isatty():  # as `tty_progress`
            return
        if self._bar is None:
            self._bar = click.progressbar(length=total, label=self.label, show_pos=True,
                                          file=click.get_text_stream("stderr"))
            self._bar.__enter__()
        self._bar.update(done - self._done)
        self._done = done

    def __exit__(self, *exc_info: object) -> None:
        if self._bar is not None:
            self._bar.__exit__(*exc_info)
