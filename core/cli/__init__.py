"""The `workbench` command. Each feature adds its command group in a module of this package.

Bad input exits with status 2 and a one-line message; a service failure with status 1; never a
traceback (set WORKBENCH_DEBUG=1 to see one).
"""

from __future__ import annotations

import importlib
import json
import logging
import os
import sys
from typing import Any

import click

from core.errors import InvalidInput, describe

# Modules that each define `register(cli)`, adding their commands.
COMMAND_MODULES = [
    "core.cli.services",
    "core.cli.demo",
    "core.cli.feedback",
    "core.cli.retrieve",
    "core.cli.tasks",
    "core.cli.remember",
    "core.cli.bank",
]


class _Context:
    """Builds the Workbench on first use, so `--help` and input errors never start servers."""

    def __init__(self, instance: str | None):
        self.instance_override = instance
        self._wb = None

    @property
    def wb(self):
        if self._wb is None:
            from core.config import load_settings
            from core.runtime import Workbench

            overrides = {"instance": self.instance_override} if self.instance_override else {}
            self._wb = Workbench(load_settings(**overrides))
        return self._wb


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--instance", default=None, help="Memory instance to work on (default: INSTANCE setting).")
@click.pass_context
def cli(ctx: click.Context, instance: str | None) -> None:
    """Memory Workbench: conversational and agent memory, from the command line."""
    ctx.obj = _Context(instance)


def emit(payload: Any) -> None:
    """Print a result as JSON (models are dumped with their aliases, dates as ISO 8601)."""
    if hasattr(payload, "model_dump"):
        payload = payload.model_dump(mode="json")
    click.echo(json.dumps(payload, indent=2, ensure_ascii=False, default=str))


for _name in COMMAND_MODULES:
    importlib.import_module(_name).register(cli)


def main() -> None:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("pgserver").setLevel(logging.WARNING)
    try:
        cli.main(standalone_mode=False)
    except click.exceptions.Abort:
        sys.exit(130)
    except click.exceptions.ClickException as e:  # usage errors: status 2
        e.show()
        sys.exit(e.exit_code)
    except Exception as e:
        if os.environ.get("WORKBENCH_DEBUG"):
            raise
        info = describe(e)
        click.echo(f"error: {info.message}", err=True)
        sys.exit(2 if info.code in ("invalid_input", "config", "not_found") or isinstance(e, InvalidInput)
                 else 1)
