"""Messages restored from another instance's archive keep the ids the restore gave them.

An import gives a message an id derived from its instance and its source id (`runner._message_id`), so the
same file imported into two instances never shares an answer's feedback record. A restore into an instance
of another name gives each thought a new id derived from the old one (`core.archive.ids.IdMap.new_id`), so
there the same file's messages are stored, or recorded as deleted, under ids the import would not make:
imported again, each was stored a second time, and a message deleted before the export came back. An
import into an instance restored from others (`core.archive.marks.restored_from`) therefore also makes, for
each message, the id the restore gave it, and takes that one when the chain holds it or the instance
records it as deleted (the restore translates the archive's deleted ids too).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from core.admin import deleted
from core.archive.ids import moved_id
from core.importing.records import ImportedConversation, ImportedMessage

if TYPE_CHECKING:
    from core.runtime import Workbench


def restored_ids(wb: Workbench, instance: str, conv: ImportedConversation, origins: tuple[str, ...],
                 made_in: Callable[[str, ImportedMessage], str]) -> dict[str, str]:
    """The id an import makes here for a message (`made_in(instance, message)`) → the one the message has,
    restored from one of `origins`; only messages the chain holds, or the instance records as deleted."""
    if not origins:
        return {}
    ours = {moved_id(instance, made_in(origin, m)): made_in(instance, m) for m in conv.messages for origin in origins}
    held = {t.id for t in wb.thoughts.chain_thoughts(instance, conv.chain_id)} & ours.keys()
    rest = [i for i in ours if i not in held]
    if rest:
        held |= deleted.deleted(wb.redis(), instance, "memory", rest)
    return {ours[i]: i for i in held}
