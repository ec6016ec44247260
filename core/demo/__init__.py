"""Demo data: each feature contributes a part with `load(wb, say)` and `reset(wb)`.

`load` creates realistic data through the product's own code paths (never values written by hand
where a flow produces them). A marker in Redis records that the demo was loaded, so `make run` loads
it once, on the first start of a fresh embedded install only. Each part marks what it makes as it makes
it (`core.demo.marks`), and `reset` removes only what is marked: a user's own data named like the demo's
stays.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from core.conversation.keys import DEMO_LOADED
from core.runtime import Workbench

# Modules defining `load(wb, say)` and `reset(wb)`, in load order.
DEMO_PARTS: list[str] = [
    "core.demo.conversations",
    "core.demo.feedback",
    "core.demo.past_tasks",
    "core.demo.bank",
    "core.demo.tune",
]

def is_loaded(wb: Workbench) -> bool:
    return bool(wb.redis().exists(DEMO_LOADED))


def load(wb: Workbench, say: Callable[[str], None] = print) -> None:
    for name in DEMO_PARTS:
        say(f"demo: loading {name.rsplit('.', 1)[-1]}")
        importlib.import_module(name).load(wb, say)
    wb.redis().set(DEMO_LOADED, "1")


def reset(wb: Workbench, say: Callable[[str], None] = print) -> None:
    for name in reversed(DEMO_PARTS):
        say(f"demo: removing {name.rsplit('.', 1)[-1]}")
        importlib.import_module(name).reset(wb)
    wb.redis().delete(DEMO_LOADED)
