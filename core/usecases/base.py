"""What every use-case request shares: unknown fields refused, and the instance it works on."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from core.conversation.metrics import Origin
from core.ids import Id

__all__ = ["Origin"]

if TYPE_CHECKING:
    from core.runtime import Workbench

# (done, total, what is being done); total 0: a step that counts nothing (done is 0 too), said by its name
Progress = Callable[[int, int, str], None]


class Request(BaseModel):
    model_config = ConfigDict(extra="forbid")


class InstanceRequest(Request):
    """A request about one memory instance; `None` means the INSTANCE setting."""

    instance: Id | None = None

    def instance_in(self, wb: Workbench) -> str:
        return wb.settings.instance if self.instance is None else self.instance

