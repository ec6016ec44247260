"""What every command receives as `ctx`: the Workbench, built on first use."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from core.errors import EMPTY_INSTANCE, InvalidInput

if TYPE_CHECKING:
    from core.runtime import Workbench


def instance_option(_ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """An `--instance` option's callback: "" (an unset shell variable, `--instance "$INST"`) is refused,
    never read as "the default instance", which made `chains delete` delete a chain of `default`."""
    if value is not None and not value.strip():
        raise InvalidInput(f"{param.opts[0]}: {EMPTY_INSTANCE}")
    return value


class WorkbenchContext:
    """Builds the Workbench on first use, so `--help` and input errors never start servers (and never
    import the core: the use cases pull in pandas and scipy, about two seconds).

    The embedded servers a command starts are the commands': `close`, at the command's exit, stops them
    unless another process (the dashboard, the API, another command) still uses them."""

    def __init__(self, instance: str | None):
        self.instance_override = instance
        self._wb: Workbench | None = None

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
