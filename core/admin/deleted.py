"""What the user deleted, remembered by id alone, so that an import does not bring it back.

Deleting a chain or a memory removes its text from every store (`core.admin.deletion`); the ids it had
stay here, for good, per instance: a chain id (`deleted:chains:<instance>`), and the id of a memory or a
message deleted one by one (`deleted:memories:<instance>`). An id holds no text: an imported chain's is a
hash of the source's conversation id (`ImportedConversation.chain_id`), a message's a hash of its source id,
so the record says that something of that id was deleted and nothing of what it said.

The import reads it (`core.importing.runner`): the next export of the same history holds the deleted
conversation again, under the same source id, so the same chain id, and it is left out and counted, unless
the user asks for it (`include_deleted`): then it is written, and no longer recorded as deleted. A
restore of the workbench's archive is the user asking for what the archive holds: it restores it and
says so (`core.usecases.archive`). The archive carries the record, so a restored copy keeps leaving out
what was deleted before the export. Deleting the whole instance (`clear`) drops its record with it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import redis

from core.conversation.keys import deleted_chains_key, deleted_memories_key

BATCH = 1000  # ids per command: a large import asks in batches


def _key(instance: str, kind: str) -> str:
    return deleted_chains_key(instance) if kind == "chain" else deleted_memories_key(instance)


def record(r: redis.Redis, instance: str, *, chains: Iterable[str] = (), memories: Iterable[str] = ()) -> int:
    """Remember that these chains and memories (or messages) of the instance were deleted; returns how
    many were not recorded yet."""
    added = 0
    for kind, ids in (("chain", list(chains)), ("memory", list(memories))):
        for i in range(0, len(ids), BATCH):
            added += r.sadd(_key(instance, kind), *ids[i:i + BATCH])
    return added


def deleted(r: redis.Redis, instance: str, kind: str, ids: Sequence[str]) -> set[str]:
    """Those of `ids` ("chain" ids, or "memory" ids: thoughts and memories) deleted in the instance."""
    found: set[str] = set()
    ids = list(dict.fromkeys(ids))
    for i in range(0, len(ids), BATCH):
        part = ids[i:i + BATCH]
        found |= {ident for ident, there in zip(part, r.smismember(_key(instance, kind), part), strict=True)
                  if there}
    return found


def any_recorded(r: redis.Redis, instance: str, kind: str) -> bool:
    """Whether anything of that kind ("chain", "memory") was ever deleted in the instance: in most,
    nothing was, and a dry run then has nothing to look up."""
    return bool(r.exists(_key(instance, kind)))


def unrecord(r: redis.Redis, instance: str, kind: str, ids: Iterable[str]) -> int:
    """No longer deleted (brought back on purpose, or the id is free again); returns how many were."""
    ids, removed = list(ids), 0
    for i in range(0, len(ids), BATCH):
        removed += r.srem(_key(instance, kind), *ids[i:i + BATCH])
    return removed


def members(r: redis.Redis, instance: str, kind: str) -> list[str]:
    """Every id of that kind recorded as deleted in the instance (the archive's copy of the record)."""
    return sorted(r.sscan_iter(_key(instance, kind), count=BATCH))


def clear(r: redis.Redis, instance: str) -> None:
    """The whole instance is deleted: nothing of it is left to leave out."""
    r.delete(deleted_chains_key(instance))
    r.delete(deleted_memories_key(instance))  # one key a command: on a cluster each may be in its own slot
