"""What the demo made, recorded per instance as it is made, so `demo reset` removes that and nothing else.

A user's own chain named like a demo chain (`fb-0612-1`, `lisbon-trip`), a bank or a past-task user with
a demo name survive a reset: only what is marked here is removed. A load never writes into something of
the user's that has a demo name; it leaves it alone and says so. Marks are made before the thing
(a crash mid-load leaves nothing unmarked) and dropped after it is removed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from core.admin import deleted
from core.admin.deletion import Deletion
from core.conversation.keys import chain_tombstone, demo_items_key
from core.errors import NotFound
from core.runtime import Workbench


def mark(wb: Workbench, kind: str, ids: Iterable[str | int]) -> None:
    members = [f"{kind}:{i}" for i in ids]
    if members:
        wb.redis().sadd(demo_items_key(wb.settings.instance), *members)


def marked(wb: Workbench, kind: str) -> list[str]:
    prefix = f"{kind}:"
    return sorted(m.removeprefix(prefix) for m in wb.redis().smembers(demo_items_key(wb.settings.instance))
                  if m.startswith(prefix))


def unmark(wb: Workbench, kind: str, ids: Iterable[str | int]) -> None:
    members = [f"{kind}:{i}" for i in ids]
    if members:
        wb.redis().srem(demo_items_key(wb.settings.instance), *members)


def remove(wb: Workbench, kind: str, delete: Callable[[Deletion, str], object]) -> int:
    """Delete every item of `kind` the demo made (an item already gone is skipped), their copies and
    files with them (`Deletion`); returns how many there were."""
    items = marked(wb, kind)
    if not items:
        return 0
    deletion = Deletion(wb, wb.settings.instance)
    for item in items:
        try:
            delete(deletion, item)
        except NotFound:
            pass
    deletion.finish()
    unmark(wb, kind, items)
    deleted.unrecord(wb.redis(), wb.settings.instance, "memory", items)  # the demo's: free for its next load
    return len(items)


def remove_chains(wb: Workbench, kind: str) -> int:
    """`remove` for chains; their ids are free again at once, since the next load makes them anew."""
    chains = marked(wb, kind)
    removed = remove(wb, kind, Deletion.chain)
    for chain in chains:  # one key at a time: on a cluster each chain has its own slot
        wb.redis().delete(chain_tombstone(wb.settings.instance, chain))
    deleted.unrecord(wb.redis(), wb.settings.instance, "chain", chains)  # the demo's, not the user's
    return removed


def is_foreign_chain(wb: Workbench, kind: str, chain_id: str) -> bool:
    """Whether a chain of this id exists that the demo did not make (the user's own)."""
    return bool(wb.thoughts.chain_meta(wb.settings.instance, chain_id)) and chain_id not in marked(wb, kind)
