"""What every use-case request shares: unknown fields refused, and the instance it works on."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import psycopg
import redis
from pydantic import BaseModel, ConfigDict

from core.access.scope import LOCAL_USER, Principal
from core.conversation.metrics import Origin
from core.errors import ServiceUnavailable
from core.ids import SHARED_INSTANCE, Id

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


KNOWN_LISTED = 10  # the known instances a new instance's note names; more are counted
_NONE_OTHER = {True: "no other instance holds memory yet", False: "no other instance this key may use holds memory"}


def new_instance_note(wb: Workbench, instance: str, caller: Principal = LOCAL_USER, *,
                      index_first: bool = False) -> str | None:
    """What a write about to store the first memory of `instance` tells its caller, checked before the write:
    an assistant that mistyped the instance would otherwise split the user's memory in silence. None when
    the instance is known (it has conversations in Redis or a partition of the memory index, as `GET
    /v1/instances` lists it), when it is the configured one (INSTANCE: a fresh install's first turn is no
    typo), or when the check fails (the write then says what failed).

    Costs one key lookup: in the set of instances Redis keeps, or, with `index_first` (a write that goes to
    the index only), among the index's partitions; the other only when the first does not know the
    instance, and both lists, for the note, only when neither does (reading the lists at every write cost an
    add 0.52 of its 1.47 ms among 800 instances). The known instances it names are those the caller may use. Of first writes at the same moment (two API
    replicas, two assistants), only the one that claims the instance in Redis is told
    (`ThoughtStore.claim_new_instance`); a write should hold the claim through `new_instance_told`, which
    gives it up when the write fails."""
    return _note_and_claim(wb, instance, caller, index_first=index_first)[0]


@contextmanager
def new_instance_told(wb: Workbench, instance: str, caller: Principal = LOCAL_USER, *,
                      index_first: bool = False) -> Iterator[str | None]:
    """`new_instance_note` around the write it is for: the note, and, when the write raises (refused, or a
    store failed), its claim on the instance given up, so that the next write, the one that does store the
    instance's first memory, is told (kept, the claim silenced every write for NEW_INSTANCE_CLAIM_S). A
    write that did store something before failing leaves the instance known, and no later write asks."""
    note, token = _note_and_claim(wb, instance, caller, index_first=index_first)
    try:
        yield note
    except BaseException:  # GeneratorExit too: a stream whose client left before its turn was stored
        if token is not None:
            try:
                wb.thoughts.release_new_instance(instance, token)
            except redis.RedisError:
                pass  # the claim lapses by itself
        raise


def _note_and_claim(wb: Workbench, instance: str, caller: Principal, *, index_first: bool
                    ) -> tuple[str | None, str | None]:
    """`new_instance_note`'s note, and the token of the claim it took (None when it took none)."""
    if instance == wb.settings.instance:
        return None, None
    # Each store is reached in its lookup (inside the try): a Redis that is down fails no index write here,
    # nor a Postgres that is down a turn (`wb.index` connects on first use).
    lookups = [lambda: wb.index.has_instance(instance), lambda: wb.thoughts.has_instance(instance)]
    try:
        if any(knows() for knows in (lookups if index_first else reversed(lookups))):
            return None, None
        known = {*wb.index.instances(), *wb.thoughts.instances()}  # for the note
        if instance in known:
            return None, None  # stored meanwhile
        if (token := wb.thoughts.claim_new_instance(instance)) is None:
            return None, None  # another write is storing the instance's first memory: it was told
    except (redis.RedisError, psycopg.Error, ServiceUnavailable):
        return None, None
    others = sorted(n for n in known - {SHARED_INSTANCE} if caller.may_read(n))
    listed = ", ".join(others[:KNOWN_LISTED]) + (f" and {len(others) - KNOWN_LISTED} more"
                                                 if len(others) > KNOWN_LISTED else "")
    return (f"instance {instance!r} is new: this is its first memory "
            f"({f'known instances: {listed}' if others else _NONE_OTHER[caller.is_local]})"), token
