"""A whole instance out to one archive, and an archive back into an instance (see `core.archive.format`
for the file, `core.archive.ids` for the ids that change on the way).

Restoring refuses an instance that already holds data, unless this same archive was restored into it
before: then it writes what is missing (an interrupted restore resumes; a repeat creates nothing).

The archive carries the ids the user deleted (`core.admin.deleted`, ids alone), so imports into the
restored copy keep leaving out what was deleted before the export. A restore brings back what its archive
holds, even what was deleted here since it was taken: the user asked for that archive. What it brings back
is no longer recorded as deleted, and the restore says so (`RestoreResult.notes`).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from core.admin import deleted
from core.archive import chains, marks, memories, tables
from core.archive.format import (
    FORMAT,
    VERSION,
    ArchiveDamaged,
    ArchiveReader,
    ArchiveWriter,
    Manifest,
    product_version,
)
from core.archive.ids import IdMap
from core.conversation.indexing import sync_index
from core.conversation.keys import chain_meta_key, provenance_key
from core.errors import InvalidInput, NotFound

if TYPE_CHECKING:
    from core.runtime import Workbench

Progress = Callable[[int, int, str], None]  # (done, total, what): `core.usecases.base.Progress`
# What an archive counts, by kind: archive lines (profiles, banks, past_tasks, tool_executions, memories,
# chains) and what those hold (bank_summaries, bank_entries, bank_events, text_versions, thoughts, feedback).
KINDS = ("profiles", "banks", "bank_summaries", "bank_entries", "bank_events", "past_tasks", "text_versions",
         "tool_executions", "memories", "chains", "thoughts", "feedback", "relevance_marks",
         "profile_activations", "deleted")
# Those counted one archive line each (the progress total of a restore).
LINE_KINDS = ("profiles", "banks", "bank_summaries", "bank_entries", "bank_events", "past_tasks",
              "tool_executions", "memories", "chains", "relevance_marks", "profile_activations", "deleted")
_BANK_KIND = {"bank": "banks", "bank_summary": "bank_summaries", "bank_entry": "bank_entries",
              "bank_event": "bank_events"}
_TICK = 200
# What a restore writes, in its order (`_restore`): a restore stopped in one has written those before it.
STAGES = ("profiles", "memory banks", "past tasks", "tool executions", "memories", "chains", "relevance marks",
          "profile activations", "deleted ids")


class ExportResult(BaseModel):
    instance: str
    path: str
    archive_id: str
    bytes: int
    with_vectors: bool
    embedder: str
    counts: dict[str, int] = Field(description="what the archive holds, by kind")


class RestoreResult(BaseModel):
    instance: str
    source_instance: str
    archive_id: str
    dry_run: bool
    again: bool = Field(description="this archive had been restored into the instance before")
    exported_at: datetime | None = Field(None, description="when the archive was made")
    made_by: str | None = Field(None, description="the memory-workbench version that made it")
    counts: dict[str, int] = Field(description="what the archive holds, by kind")
    created: dict[str, int] = Field(description="what this restore wrote that was not there, by kind (a dry "
                                                "run: what it would write into an empty instance)")
    notes: list[str] = []


class _Steps:
    """Counts archive lines as they pass and reports (done, total, what) every few of them."""

    def __init__(self, total: int, progress: Progress | None):
        self.total, self.done, self.progress = total, 0, progress
        # Where a restore is: the stage under way, and the archive line of it being written (0: not counted).
        self.what, self.line = STAGES[0], 0

    def through(self, rows: Iterator[Any], what: str) -> Iterator[Any]:
        self.what = what
        for self.line, row in enumerate(rows, start=1):
            yield row
            self.add(1, what)
        self.report(what)

    def add(self, n: int, what: str) -> None:
        if what != self.what:
            self.what, self.line = what, 0
        self.done += n
        if self.progress and self.done % _TICK < n:
            self.report(what)

    def report(self, what: str) -> None:
        if self.progress:
            self.progress(min(self.done, self.total), self.total, what)


def holdings(wb: Workbench, instance: str) -> dict[str, int]:
    """What the instance holds, in archive lines (a progress total, and the test of an empty instance)."""
    with wb.pool().connection() as conn:
        banks, bank_rows, tasks, tools = conn.execute(
            "SELECT (SELECT count(*) FROM bank WHERE instance = %(i)s), "
            "(SELECT count(*) FROM bank_summary WHERE instance = %(i)s) "
            "+ (SELECT count(*) FROM bank_entry WHERE instance = %(i)s) "
            "+ (SELECT count(*) FROM bank_event WHERE instance = %(i)s), "
            "(SELECT count(*) FROM past_task_execution WHERE instance = %(i)s), "
            "(SELECT count(*) FROM past_task_tool_execution WHERE instance = %(i)s)", {"i": instance}).fetchone()
    return {"chains": chains.chain_count(wb, instance), "memories": wb.index.count(instance), "banks": banks,
            "bank_rows": bank_rows, "past_tasks": tasks, "tool_executions": tools}


def export_instance(wb: Workbench, instance: str, out: Path, *, with_vectors: bool = False,
                    progress: Progress | None = None) -> ExportResult:
    # Thoughts still queued for the memory index are indexed first, so their rows travel too.
    sync_index(wb.thoughts, wb.index)
    held = holdings(wb, instance)
    if not any(held.values()):
        raise NotFound(f"instance {instance!r} holds nothing to export (no chains, memories, banks or past "
                       "tasks); check its name")
    counts = dict.fromkeys(KINDS, 0)
    steps = _Steps(sum(held.values()), progress)
    active, active_since = tables.active_profile(wb, instance)
    writer = ArchiveWriter(out)

    def bank_row(line: dict[str, Any]) -> None:
        counts[_BANK_KIND[line["table"]]] += 1

    def past_task(line: dict[str, Any]) -> None:
        counts["text_versions"] += len(line["versions"])

    def chain(line: dict[str, Any]) -> None:
        counts["thoughts"] += len(line["thoughts"])
        counts["feedback"] += len(line["feedback"])

    try:
        counts["profiles"] = writer.member("profiles", steps.through(tables.export_profiles(wb), "profiles"))
        writer.member("banks", _tally(steps.through(tables.export_banks(wb, instance), "memory banks"), bank_row))
        counts["past_tasks"] = writer.member("past_tasks", _tally(
            steps.through(tables.export_past_tasks(wb, instance, with_vectors), "past tasks"), past_task))
        counts["tool_executions"] = writer.member(
            "tool_executions", steps.through(tables.export_tool_executions(wb, instance), "tool executions"))
        counts["memories"] = writer.member(
            "memories", steps.through(memories.export_memories(wb, instance, with_vectors), "memories"))
        counts["chains"] = writer.member(
            "chains", _tally(steps.through(chains.export_chains(wb, instance), "chains"), chain))
        counts["relevance_marks"] = writer.member(
            "relevance_marks", steps.through(tables.export_relevance_marks(wb, instance), "relevance marks"))
        counts["profile_activations"] = writer.member("profile_activations", steps.through(
            tables.export_profile_activations(wb, instance), "profile activations"))
        counts["deleted"] = writer.member("deleted", _deleted_ids(wb, instance))
        manifest = Manifest(format=FORMAT, version=VERSION, product_version=product_version(),
                            archive_id=uuid.uuid4().hex, instance=instance, created_at=datetime.now(UTC),
                            with_vectors=with_vectors, embedder=wb.embedder.name, active_profile=active,
                            active_since=active_since, counts=counts)
        size = writer.finish(manifest)
    except KeyboardInterrupt as e:  # Ctrl-C: said, since the CLI otherwise ends with no word
        writer.abort()
        # The interrupted readers (their cursors and transactions) are let go now, while the servers run:
        # held by this traceback, they were closed at the interpreter's exit, after the command had stopped
        # the servers, which printed a traceback of the closed connection.
        e.__traceback__ = None
        raise KeyboardInterrupt(f"the export was interrupted: nothing was written to {out} (no partial "
                                "archive is left); run it again") from e
    except BaseException:
        writer.abort()
        raise
    return ExportResult(instance=instance, path=str(out), archive_id=manifest.archive_id, bytes=size,
                        with_vectors=with_vectors, embedder=manifest.embedder, counts=counts)


def _tally(rows: Iterator[dict[str, Any]], count: Callable[[dict[str, Any]], None]) -> Iterator[dict[str, Any]]:
    for row in rows:
        count(row)
        yield row


def restore_instance(wb: Workbench, path: Path, instance: str, *, dry_run: bool = False,
                     progress: Progress | None = None) -> RestoreResult:
    reader = ArchiveReader(path)
    try:
        m = reader.manifest
        again = marks.restored_before(wb, instance, m.archive_id)
        held = holdings(wb, instance)
        if any(held.values()) and not again:
            what = ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in held.items() if n)
            raise InvalidInput(f"instance {instance!r} already holds data ({what}); restore into a new "
                               "instance, or delete this one's data first")
        result = RestoreResult(instance=instance, source_instance=m.instance, archive_id=m.archive_id,
                               dry_run=dry_run, again=again, exported_at=m.created_at, made_by=m.product_version,
                               counts=m.counts, created=dict.fromkeys(KINDS, 0))
        result.notes += _vector_notes(m, wb.embedder.name)
        if dry_run and again:
            result.notes.append("restored here before: a restore would write only what is missing since, which a "
                                "dry run does not count")
        elif dry_run:  # the instance is empty: all of it would be written (it showed 0 of everything)
            result.created = {kind: m.counts.get(kind, 0) for kind in KINDS}
        if not dry_run:
            marks.begin(wb, instance, m.archive_id, m.instance)
            steps = _Steps(sum(m.counts.get(k, 0) for k in LINE_KINDS), progress)
            try:
                _restore(wb, reader, IdMap(m.instance, instance), result, steps)
            except ArchiveDamaged as e:  # the file changed since it was checked on opening
                raise InvalidInput(_stopped(path, instance, steps, e.what, result.created)) from e
            except (KeyError, TypeError, AttributeError) as e:  # a line is JSON, but not what an export writes
                why = f"a line lacks what an export writes: {type(e).__name__} {e}"
                raise InvalidInput(_stopped(path, instance, steps, why, result.created)) from e
            result.notes += _restored_deleted(wb, instance)
            if not again:
                _provenance_complete(wb, instance)
            marks.finish(wb, instance, m.archive_id)
        return result
    finally:
        reader.close()


def _stopped(path: Path, instance: str, steps: _Steps, why: str, created: dict[str, int]) -> str:
    """What a restore stopped part-way says: where and why, what it wrote (as counted; the stage it stopped in
    may have written some of its own uncounted: memories are counted once all are written), what it did not,
    and how to complete it. Only the same archive resumes a restore: another export of the instance is
    another archive, which the instance, holding data now, refuses."""
    stage = steps.what
    written = ", ".join(f"{n:,} {kind.replace('_', ' ')}" for kind, n in created.items() if n) or "nothing"
    at = f" from its line {steps.line:,} on" if steps.line else ""
    later = STAGES[STAGES.index(stage) + 1:] if stage in STAGES else []
    return (f"archive: the restore of {path.name} into instance {instance!r} stopped in its {stage} ({why}), "
            f"leaving the instance with part of the archive. Written: {written}"
            + ("" if steps.line else f", and maybe some of the {stage}") + f". Not written: the {stage}{at}"
            + (f", then the {', '.join(later)}" if later else "") + f". To complete it, restore an undamaged copy "
            f"of this same file into {instance!r} (only what is missing is written); a new export is another "
            "archive: restore that into a new instance")


def _restore(wb: Workbench, reader: ArchiveReader, ids: IdMap, result: RestoreResult, steps: _Steps) -> None:
    created = result.created
    created["profiles"] = tables.restore_profiles(
        wb, steps.through(reader.rows("profiles"), "profiles"), reader.manifest.active_profile, ids.target,
        result.notes, reader.manifest.active_since)
    for table, n in tables.restore_banks(wb, steps.through(reader.rows("banks"), "memory banks"), ids).items():
        created[_BANK_KIND[table]] = n
    for line in steps.through(reader.rows("past_tasks"), "past tasks"):
        for kind, n in tables.restore_past_task(wb, line, ids).items():
            created[kind] += n
    created["tool_executions"] = tables.restore_tool_executions(
        wb, steps.through(reader.rows("tool_executions"), "tool executions"), ids)
    created["memories"] = memories.restore_memories(
        wb, iter(reader.rows("memories")), ids, step=lambda n: steps.add(n, "memories"))
    for line in steps.through(reader.rows("chains"), "chains"):
        for kind, n in chains.restore_chain(wb, line, ids).items():
            created[kind] += n
    created["relevance_marks"] = tables.restore_relevance_marks(
        wb, steps.through(reader.rows("relevance_marks"), "relevance marks"), ids)
    created["profile_activations"] = tables.restore_profile_activations(
        wb, steps.through(reader.rows("profile_activations"), "profile activations"), ids.target)
    gone: dict[str, list[str]] = {"chain": [], "memory": []}
    for line in steps.through(reader.rows("deleted"), "deleted ids"):
        if line.get("kind") in gone and isinstance(line.get("id"), str):
            gone[line["kind"]].append(line["id"])
    created["deleted"] = deleted.record(wb.redis(), ids.target, chains=gone["chain"], memories=gone["memory"])
    if not ids.same:  # a message's id here is the one the restore gave it: an import finds it deleted by that
        deleted.record(wb.redis(), ids.target, memories=[ids.new_id(i) for i in gone["memory"]])


def _provenance_complete(wb: Workbench, instance: str) -> None:
    """Mark the instance's provenance sets complete (`core.conversation.provenance`): a restore into an empty
    instance noted them for every thought it wrote, as live writers note theirs, so the instance's first
    deletion need not scan it to build them. A resumed restore leaves the marker to that scan (what the
    first, interrupted one wrote is not known here)."""
    wb.redis().set(provenance_key(instance), f"{time.time():.3f}", nx=True)


def _deleted_ids(wb: Workbench, instance: str) -> Iterator[dict[str, str]]:
    """The ids deleted in the instance, as archive lines (ids alone: their text is gone)."""
    for kind in ("chain", "memory"):
        for ident in deleted.members(wb.redis(), instance, kind):
            yield {"kind": kind, "id": ident}


def _restored_deleted(wb: Workbench, instance: str) -> list[str]:
    """What the restore brought back that had been deleted in the instance: no longer recorded as deleted,
    and said (the archive was taken before the deletion; restoring it was asked for)."""
    r = wb.redis()
    chain_ids = deleted.members(r, instance, "chain")
    p = r.pipeline(transaction=False)
    for chain in chain_ids:
        p.exists(chain_meta_key(instance, chain))
    back_chains = [c for c, there in zip(chain_ids, p.execute() if chain_ids else [], strict=True) if there]
    memory_ids = deleted.members(r, instance, "memory")
    back_memories = sorted(wb.index.held(instance, memory_ids))
    deleted.unrecord(r, instance, "chain", back_chains)
    deleted.unrecord(r, instance, "memory", back_memories)
    parts = [f"{n:,} {one if n == 1 else many}" for n, one, many in (
        (len(back_chains), "conversation", "conversations"), (len(back_memories), "memory", "memories")) if n]
    if not parts:
        return []
    one = len(back_chains) + len(back_memories) == 1
    return [(f"{' and '.join(parts)} deleted in this instance after the archive was made "
             f"{'was' if one else 'were'} restored with it, as the archive holds {'it' if one else 'them'}: "
             f"delete {'it' if one else 'them'} again to forget {'it' if one else 'them'} (an import leaves out "
             "what was deleted; a restore brings back what its archive holds)")]


def _vector_notes(m: Manifest, model: str) -> list[str]:
    if not m.with_vectors:
        return [f"the archive holds no vectors: memories and past tasks are embedded with {model}"]
    if m.embedder != model:
        return [(f"the archive's vectors were made by {m.embedder}; memories and past tasks are embedded "
                 f"again with the active model, {model}")]
    return []
