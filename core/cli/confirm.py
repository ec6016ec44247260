"""The question a command asks before it deletes or changes something for good, and `--yes` to skip it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from core.errors import InvalidInput


def confirm(question: str, declined: str) -> None:
    """Ask `question` on the terminal; anything but "yes" aborts, saying `declined` (what was left alone).

    With no terminal on standard input (a script, a pipe, cron) nobody can answer, and click would read
    the answer from whatever the pipe holds, or end silently at its end: refused at once, naming --yes."""
    if not click.get_text_stream("stdin").isatty():
        raise InvalidInput(f"standard input is not a terminal, so nobody could be asked “{question}”: pass "
                           f"--yes to confirm ({declined})")
    try:
        click.confirm(question, abort=True)
    except click.Abort:  # "no", Ctrl+C or the end of input
        raise click.Abort(declined) from None


def confirmation_option(question: str, declined: str = "nothing was deleted") -> Callable[[Any], Any]:
    """click's `confirmation_option` (`--yes`), but one that says why it did not go ahead."""
    def ask(_ctx: click.Context, _param: click.Parameter, yes: bool) -> None:
        if not yes:
            confirm(question, declined)

    return click.option("--yes", is_flag=True, expose_value=False, callback=ask,
                        help="Confirm the action without prompting.")
