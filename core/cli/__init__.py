"""The `workbench` command: one module per command group, each command a thin front end that parses its
options into a request, calls one use case (`core.usecases`) and prints the result.

Commands import the use cases when they run, not at the top: those pull in the database drivers, numpy and
pydantic's models (about 0.4 s), which `--help` and a usage error should not wait for. The use cases keep
pandas and scipy (another 0.8 s) for the feedback analytics that need them (`core.usecases.__getattr__`).

`--instance` is accepted before the subcommand and after it (`_accept_instance_after_subcommands`).

Bad input exits with status 2 and a one-line message; a service failure with status 1; never a
traceback (set WORKBENCH_DEBUG=1 to see one).
"""

from __future__ import annotations

import functools
import logging
import os
import signal
import sys
from collections.abc import Callable
from typing import Any

import click

from core.cli import (
    api,
    bank,
    chains,
    demo,
    export,
    feedback,
    formation,
    importing,
    keys,
    mcp,
    memory,
    profiles,
    read_message,
    reembed,
    remember,
    retrieve,
    services,
    sweep,
    tasks,
    tuning,
)
from core.cli.context import WorkbenchContext, instance_after_subcommand, instance_option
from core.errors import InvalidInput, describe, explain_validation

__all__ = ["cli", "main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--instance", default=None, callback=instance_option,
              help="Memory instance to work on (default: INSTANCE setting).")
@click.pass_context
def cli(ctx: click.Context, instance: str | None) -> None:
    """Memory Workbench: conversational and agent memory, from the command line."""
    ctx.obj = WorkbenchContext(instance)
    ctx.call_on_close(ctx.obj.close)


cli.add_command(services.services)
cli.add_command(services.serve)
cli.add_command(demo.demo)
cli.add_command(remember.remember)
cli.add_command(sweep.sweep)
cli.add_command(profiles.profiles)
cli.add_command(retrieve.retrieve)
cli.add_command(tuning.evaluate)
cli.add_command(tasks.tasks)
cli.add_command(bank.bank)
cli.add_command(chains.chains)
cli.add_command(memory.memory)
cli.add_command(feedback.feedback)
cli.add_command(keys.keys)
cli.add_command(mcp.mcp)
cli.add_command(api.api)
cli.add_command(importing.import_)
cli.add_command(export.export)
cli.add_command(reembed.reembed)
cli.add_command(formation.formation)
memory.memory.add_command(read_message.read_message)


def _accept_instance_after_subcommands(group: click.Group) -> None:
    """`--instance` after the subcommand too (`workbench chains list --instance X`), added here to every
    command below `group` that has no `--instance` of its own (those, like `export`'s, use the same
    callback; `keys create --instance` names the key's instances, something else)."""
    for command in group.commands.values():
        if not any("--instance" in param.opts for param in command.params):
            command.params.append(instance_after_subcommand())
        if isinstance(command, click.Group):
            _accept_instance_after_subcommands(command)


_accept_instance_after_subcommands(cli)


def _say_options(group: click.Group) -> None:
    """A request a command builds from its options, refused by its model, names the options the user typed
    ("--top-k: Input should be greater than or equal to 1"), not the request's fields ("top_k: …"): each
    command below `group` is run through `_options_said`."""
    for command in group.commands.values():
        if isinstance(command, click.Group):
            _say_options(command)
        else:
            command.invoke = functools.partial(_options_said, command.invoke)  # type: ignore[method-assign]


def _options_said(invoke: Callable[[click.Context], Any], ctx: click.Context) -> Any:
    try:
        return invoke(ctx)
    except Exception as e:
        from pydantic import ValidationError

        if not isinstance(e, ValidationError):
            raise
        options = {p.name: max(p.opts, key=len) for p in ctx.command.params
                   if isinstance(p, click.Option) and p.name and p.expose_value}
        errors = [{**err, "loc": (options[err["loc"][0]], *err["loc"][1:])}
                  if err["loc"] and err["loc"][0] in options else err for err in e.errors(include_url=False)]
        raise InvalidInput(explain_validation(_Errors(errors))) from e


class _Errors:
    """Validation errors with their locations renamed, as `explain_validation` reads a ValidationError."""

    def __init__(self, errors: list[dict[str, Any]]):
        self._errors = errors

    def errors(self, include_url: bool = True) -> list[dict[str, Any]]:
        return self._errors


_say_options(cli)


def _interrupted(signum: int, frame: object) -> None:
    """Ctrl+C: a query it cuts off cannot be rolled back on its busy connection, and the pool said so in
    warnings ("another command is already in progress") above the one line the command says; they tell the
    user nothing, so the database driver's log is quieted before the interrupt unwinds."""
    logging.getLogger("psycopg").setLevel(logging.ERROR)
    raise KeyboardInterrupt


def main() -> None:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _interrupted)
    try:
        cli.main(prog_name="workbench", standalone_mode=False)
    except click.exceptions.Abort as e:  # Ctrl+C, or "no" to a question: what was (not) done, if known
        # Click turns Ctrl+C into a bare Abort: what the command had done is in the interrupt it came from.
        said = str(e) or (str(e.__cause__) if isinstance(e.__cause__, KeyboardInterrupt) else "")
        if said:
            click.echo(f"aborted: {said}", err=True)
        sys.exit(130)
    except click.exceptions.UsageError as e:  # a bad option or argument: one line, status 2
        click.echo(usage_line(e), err=True)
        sys.exit(e.exit_code)
    except click.exceptions.ClickException as e:
        e.show()
        sys.exit(e.exit_code)
    except Exception as e:
        if os.environ.get("WORKBENCH_DEBUG"):
            raise
        info = describe(e, "cli")
        click.echo(f"error: {info.message}", err=True)
        sys.exit(2 if info.code in ("invalid_input", "config", "not_found") or isinstance(e, InvalidInput)
                 else 1)


def usage_line(e: click.exceptions.UsageError) -> str:
    """Click's usage error as the CLI's one line: what to change, and where the command's help is (Click
    printed the usage, a hint and the error on three lines)."""
    help_of = f" (see '{e.ctx.command_path} --help')" if e.ctx is not None else ""
    return f"error: {e.format_message().rstrip('.')}{help_of}"
