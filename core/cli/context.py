"""What every command receives as `ctx`: the Workbench, built on first use."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from core.runtime import Workbench


class WorkbenchContext:
    """Builds the Workbench on first use, so `--help` and input errors never start servers (and never
    import the core: the use cases pull in pandas and scipy, about two seconds)."""

    def __init__(self, instance: str | None):
        self.instance_override = instance
        self._wb: Workbench | None = None

    @property
    def wb(self) -> Workbench:
        if self._wb is None:
            # Looked up at call time, not imported at the top: tests replace `core.runtime.Workbench`.
            from core.config import load_settings
            from core.runtime import Workbench

            overrides = {"instance": self.instance_override} if self.instance_override else {}
            self._wb = Workbench(load_settings(**overrides))
        return self._wb
