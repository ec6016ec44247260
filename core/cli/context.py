"""What every command receives as `ctx`: the Workbench, built on first use."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from core.errors import EMPTY_INSTANCE, InvalidInput

if TYPE_CHECKING:
    from core.runtime import Workbench


def instance_option(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """An `--instance` option's callback, before the subcommand (`workbench --instance X chains list`) or
    after it (`workbench chains list --instance X`, `instance_after_subcommand`). "" (an unset shell
    variable, `--instance "$INST"`) is refused, never read as "the default instance", which made
    `chains delete` delete a chain of `default`. After the subcommand, the name is the command's instance
    (`WorkbenchContext.use_instance`)."""
    if value is not None and not value.strip():
        raise InvalidInput(f"{param.opts[0]}: {EMPTY_INSTANCE}")
    workbench = ctx.find_object(WorkbenchContext)  # None before the subcommand: the group makes it
    if value is not None and workbench is not None:
        workbench.use_instance(value)
    return value


def instance_after_subcommand() -> click.Option:
    """The `--instance` option `core.cli` gives every subcommand that has none of its own: the same
    option as the group's, where a user naturally puts it."""
    return click.Option(["--instance"], default=None, expose_value=False, callback=instance_option,
                        help="Memory instance to work on (default: INSTANCE setting); the same as "
                             "`workbench --instance`.")


class WorkbenchContext:
    """Builds the Workbench on first use, so `--help` and input errors never start servers (and never
    import the core: the use cases take about 0.4 s to import).

    The embedded servers a command starts are the commands': `close`, at the command's exit, stops them
    unless another process (the dashboard, the API, another command) still uses them."""

    def __init__(self, instance: str | None):
        self.instance_override = instance
        self._wb: Workbench | None = None

    def use_instance(self, name: str) -> None:
        """`--instance NAME` given after the subcommand: the instance to work on, unless `--instance`
        named another one before it (InvalidInput: which of the two was meant is not for us to guess)."""
        if self.instance_override not in (None, name):
            raise InvalidInput(f"--instance is given twice, as {self.instance_override!r} and {name!r}: "
                               "give it once, before or after the command")
        self.instance_override = name

    @property
    def wb(self) -> Workbench:
        if self._wb is None:
            # Looked up at call time, not imported at the top: tests replace `core.runtime.Workbench`.
            from core.config import load_settings
            from core.runtime import Workbench

            overrides = {} if self.instance_override is None else {"instance": _instance(self.instance_override)}
            self._wb = Workbench(load_settings(**overrides))
            self._wb.services.for_command()
        return self._wb

    def close(self) -> None:
        if self._wb is not None:
            self._wb.services.release()


def _instance(name: str) -> str:
    """`--instance`'s name if it is allowed, else InvalidInput naming the option: as a setting, it was
    refused as a bad INSTANCE to fix in the environment or the secrets file."""
    from pydantic import ValidationError

    from core import usecases as uc  # here, not in the option's callback: `--help` does not wait for it

    try:
        uc.InstanceRequest(instance=name)
    except ValidationError as e:
        raise InvalidInput(f"--instance: {e.errors()[0]['msg'].removeprefix('Value error, ')}") from None
    return name
