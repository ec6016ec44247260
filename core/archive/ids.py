"""Which ids change when an archive is restored into another instance, and what they become.

Most ids are scoped by their instance and are kept: chain ids (every chain key names its instance),
memory-index ids other than thoughts', bank, entry and summary ids (keyed by instance and id). Three
kinds are global and get a new id in another instance, so its copy never overwrites the original:
- thought ids: an answer's feedback hash is `voice:feedback:<answer id>`, one key for every instance,
  and a thought's index row has the thought's id;
- tool-execution ids of past tasks (unique across instances);
- serial keys (past tasks' pks, bank entries' `seq`, bank events' `id`): the database gives new ones.
The new ids are derived from the target instance and the old id (UUID 5), so restoring the same
archive again finds the ids of the first restore and writes nothing new. Restored into the instance
it came from, every id stays as it was.
"""

from __future__ import annotations

import uuid
from typing import Any

from core.conversation.indexing import KIND_OF
from core.formation.important import IMPORTANT_KIND, derived_id
from core.formation.supersede import SUPERSEDED_SOURCE

THOUGHT_KINDS = frozenset(KIND_OF.values())  # memory-index kinds whose id is a thought's
_NAMESPACE = uuid.UUID("5b0f3c1e-8d7a-4f0e-9a63-3f1d2c9e7b41")


def moved_id(target: str, old: str) -> str:
    """The id a thought or tool execution of id `old` gets when restored into another instance, `target`."""
    return str(uuid.uuid5(_NAMESPACE, f"{target}\x1f{old}"))


class IdMap:
    def __init__(self, source: str, target: str):
        self.source = source
        self.target = target
        self.same = source == target
        # Serial keys of past tasks, old -> new, filled as they are restored (ints: small).
        self.executions: dict[int, int] = {}
        self.texts: dict[int, int] = {}
        self.versions: dict[int, int] = {}

    def new_id(self, old: str) -> str:
        """A thought's or tool execution's id in the target instance."""
        return old if self.same else moved_id(self.target, old)

    def row_id(self, kind: str, old: str, metadata: dict[str, Any] | None = None) -> str:
        """A memory-index row's id: a thought's row follows its thought, and so does a message's important
        copy, whose id the formation derives from it (kept, the next sweep wrote a second copy under the
        new thought's); any other keeps its id."""
        if kind in THOUGHT_KINDS:
            return self.new_id(old)
        source = (metadata or {}).get("source_thought") or old.partition(f"{IMPORTANT_KIND}-")[2]
        if kind == IMPORTANT_KIND and isinstance(source, str) and source and not self.same:
            return derived_id("important", self.new_id(source))
        return old

    def row_metadata(self, metadata: dict[str, Any]) -> dict[str, Any]:
        """A memory-index row's metadata with the thoughts it names renamed like them: the one it was formed
        from (`source_thought`, set by core.formation) and the message whose superseded fact it states."""
        renamed = {key: self.new_id(metadata[key]) for key in ("source_thought", SUPERSEDED_SOURCE)
                   if isinstance(metadata.get(key), str)}
        return {**metadata, **renamed} if renamed else metadata

    def tool_result(self, value: Any) -> Any:
        """A recorded tool execution's params or result, its references to past tasks, its instance and
        its own id made those of the target."""
        if isinstance(value, list):
            return [self.tool_result(v) for v in value]
        if not isinstance(value, dict):
            return value
        out = {}
        for key, v in value.items():
            if key == "instance" and v == self.source:
                v = self.target
            elif key == "execution_id" and isinstance(v, str):
                v = self.new_id(v)
            elif key in ("user_task_execution_pk", "user_task_execution_pks", "dropped"):
                v = _ints(v, self.executions)
            elif key == "produced_text_pk":
                v = _ints(v, self.texts)
            elif key == "version_pk":
                v = _ints(v, self.versions)
            else:
                v = self.tool_result(v)
            out[key] = v
        return out


def _ints(value: Any, mapping: dict[int, int]) -> Any:
    if isinstance(value, list):
        return [mapping.get(v, v) if isinstance(v, int) else v for v in value]
    return mapping.get(value, value) if isinstance(value, int) else value
