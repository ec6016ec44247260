"""How commands print: results as JSON on standard output, progress on standard error."""

from __future__ import annotations

import json
import sys
from typing import Any, Self

import click


def emit(payload: Any) -> None:
    """Print a result as JSON (models, also inside a list, are dumped with their aliases, dates as
    ISO 8601)."""
    click.echo(json.dumps(_plain(payload), indent=2, ensure_ascii=False, default=str))


def _plain(payload: Any) -> Any:
    if hasattr(payload, "model_dump"):
        return payload.model_dump(mode="json")
    if isinstance(payload, list | tuple):
        return [_plain(item) for item in payload]
    return payload


def tty_progress(done: int, total: int, what: str) -> None:
    """A `(done, total, what)` progress line, redrawn in place; only on a terminal, so that a log of
    the command holds its results alone."""
    if sys.stderr.isatty():
        click.echo(f"\r{what}: {done}/{total}   ", nl=False, err=True)
        if done == total:
            click.echo("", err=True)


class ProgressBar:
    """A `(done, total)` progress callback drawing a bar on standard error, opened at its first call:
    a use case that refuses its input before any work then prints nothing but its one-line error.

        with ProgressBar("embedding and storing") as step:
            uc.ingest_files(wb, request, progress=step)
    """

    def __init__(self, label: str):
        self.label = label
        self._bar: Any = None
        self._done = 0

    def __enter__(self) -> Self:
        return self

    def __call__(self, done: int, total: int) -> None:
        if self._bar is None:
            self._bar = click.progressbar(length=total, label=self.label, show_pos=True,
                                          file=click.get_text_stream("stderr"))
            self._bar.__enter__()
        self._bar.update(done - self._done)
        self._done = done

    def __exit__(self, *exc_info: object) -> None:
        if self._bar is not None:
            self._bar.__exit__(*exc_info)
