"""An import: a validation pass over the file, then (unless it is a dry run) a write pass.

Both passes stream the file through the same reader, so memory stays bounded whatever its size: a
batch of records at a time, plus one 8-byte digest per id already written in this run (ids must be
unique within a bulk load). The validation pass counts what would be created and keeps the first
errors; with `on_error="stop"` nothing is written when any record is invalid, with `"skip"` the
invalid ones are listed in the report file and the rest is written.

Idempotent and resumable: every id is derived from the source (its ids, or a hash of the content), so
what is already stored is found and left alone; a checkpoint per (instance, file hash) records how many
records are stored, so an interrupted import re-run skips them and continues. Its messages are noted as they
are stored and flagged `memorized` only once the index committed them (`UnindexedImport`): an import killed
before leaves them to the next search or sweep, which indexes them, run again or not.

What the user deleted stays deleted: the same ids say so (`core.admin.deleted`), so a conversation, a
message or a memory deleted since an earlier import is left out and counted (`ImportOutcome.left_out`),
unless `include_deleted` asks for it back. A dry run (and the Import page's preview) looks the file up in
the instance as it validates it (`Lookup`): what the import would leave out as deleted, counted alike, and
what it would add (`ImportAdds`), so next month's export is told from the same file imported again.

Versions before that record kept none, so a deletion made there left no trace but one: a file that such a
version imported in full (its checkpoint finished, without `KEPT`). What that import stored and is no longer
stored was deleted by the user, so the first import of the same file after the upgrade records it as
deleted (`gone_unrecorded`) and leaves it out like any deletion, instead of bringing it back unasked.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime
from functools import cached_property
from itertools import islice
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Literal

import psycopg
import redis
from pydantic import BaseModel, Field

from core.admin import deleted
from core.archive.instance import RestoreResult
from core.archive.marks import restored_from
from core.conversation.imported import IMPORTED, followed_up, missing, store_chains
from core.conversation.indexing import UnindexedImport, thought_records
from core.conversation.keys import chain_key, import_checkpoint_key
from core.conversation.thoughts import CATEGORY_ASSISTANT, CATEGORY_USER, Thought
from core.errors import InvalidInput, ServiceUnavailable
from core.ids import pg_json, validate_id
from core.importing.detect import Detected
from core.importing.records import (
    ImportedConversation,
    ImportedMemory,
    ImportedMessage,
    ImportedPastTask,
    InvalidRecord,
    Item,
    digest,
)
from core.importing.restored import restored_ids
from core.index.records import event_time_of
from core.models import EventTime, MemoryRecord
from core.past_tasks.store import ProducedTextInput

if TYPE_CHECKING:
    from core.runtime import Workbench

FIRST_ERRORS = 20
PREVIEW_ITEMS = 5
LISTED_CHAINS = 50  # conversations the outcome names (`chains_total` counts them all)
BATCH_RECORDS = 200  # conversations (or memories, past tasks) read per write batch
THOUGHT_KINDS = ("user", "assistant")
# Checkpoint fields: an import of the file finished with deletions recorded (`core.admin.deleted`); and one
# finished by an older version, which recorded none, whose first import since has not finished yet.
KEPT = "deletions_kept"
UNRECORDED = "deletions_unrecorded"
Progress = Callable[[int, int, str], None]


class ImportCounts(BaseModel):
    """What a file holds (validation) or what an import created."""

    conversations: int = 0
    messages: int = 0
    memories: int = 0
    past_tasks: int = 0
    attachments: int = Field(0, description="attachments named in messages (their text is not imported)")


class ImportAdds(BaseModel):
    """What an import would add to the instance, and what of the file the instance holds already (a dry
    run, the Import page's preview). Per kind, `new` + `continued` + `already` + `repeated` + the preview's
    `deleted` = the file's `counts` (attachments are not counted here); what was deleted is counted there
    alone, even where `include_deleted` would write it."""

    new: ImportCounts = Field(ImportCounts(), description="conversations the instance does not hold, with "
                              "their messages; memories and past tasks it does not hold")
    continued: ImportCounts = Field(ImportCounts(), description="conversations the instance holds that would "
                                    "gain messages, and the messages they would gain")
    already: ImportCounts = Field(ImportCounts(), description="what the instance holds already: conversations "
                                  "with nothing to add, the messages it holds (of continued conversations "
                                  "too), memories and past tasks")
    repeated: ImportCounts = Field(ImportCounts(), description="what the file repeats (a conversation, a "
                                   "memory, a past task, or a message within its conversation): written once, "
                                   "counted here from its second time on")

    def nothing(self) -> bool:
        """Whether the import would add nothing (what was deleted aside)."""
        return not (self.new.conversations or self.continued.messages or self.new.memories
                    or self.new.past_tasks)

    def said(self, deleted: ImportCounts | None, *, include_deleted: bool = False) -> str:
        """In words, for a person deciding whether to import, as "Adds 40 new conversations (1,204 messages)
        and 312 messages to 6 conversations you already have; 1,458 conversations are already here." (what
        was deleted is said in the preview's notes)."""
        new, more, here = self.new, self.continued, self.already
        adds = [f"{_n(new.conversations, 'new conversation')} ({_n(new.messages, 'message')})"
                if new.conversations else "",
                f"{_n(more.messages, 'message')} to {_n(more.conversations, 'conversation')} you already have"
                if more.conversations else "",
                _n(new.memories, "new memory", "new memories") if new.memories else "",
                _n(new.past_tasks, "new past task") if new.past_tasks else ""]
        held = [_n(here.conversations, "conversation") if here.conversations else "",
                _n(here.memories, "memory", "memories") if here.memories else "",
                _n(here.past_tasks, "past task") if here.past_tasks else ""]
        if not self.nothing():
            said = f"Adds {_listed(adds)}"
            if any(held):
                one = here.conversations + here.memories + here.past_tasks == 1
                said += f"; {_listed(held)} {'is' if one else 'are'} already here"
            return said + "."
        if not (deleted and deleted_parts(deleted)):
            return "Everything in this file is already here: importing it adds nothing."
        if include_deleted:
            return ("Everything in this file is already here but what you deleted: importing it brings that "
                    "back, as asked, and adds nothing else.")
        return "Everything in this file is already here, or was deleted by you: importing it adds nothing."


def _n(n: int, one: str, many: str | None = None) -> str:
    return f"{n:,} {one if n == 1 else many or one + 's'}"


def _listed(parts: list[str]) -> str:
    """'a', 'a and b', 'a, b and c' of the parts that are not empty."""
    parts = [p for p in parts if p]
    return " and ".join(parts) if len(parts) < 3 else f"{', '.join(parts[:-1])} and {parts[-1]}"


class ImportPreview(BaseModel):
    """The validation pass: detected format, counts per kind, the first records and the first errors,
    and what the import assumes or changes of the file's content (`notes` says it in words)."""

    file: str
    format: str
    shape: str
    sha256: str
    records: int
    counts: ImportCounts
    invalid: int
    errors: list[InvalidRecord]
    first: list[dict[str, Any]]
    times_assumed: int = Field(0, description="conversations whose messages give no time: dated from the "
                                              "conversation's time, else `undated_at`, in order")
    undated: int = Field(0, description="of those, conversations with no time on themselves either")
    undated_at: datetime | None = Field(None, description="the time those are dated from (None: no such "
                                                          "conversation)")
    undated_from: Literal["file", "import"] | None = Field(None, description="file: the file's last change; "
                                                           "import: the import's time (for an upload's copy, "
                                                           "or a file changed later than now)")
    nul_replaced: int = Field(0, description="messages (memories, past tasks) whose text held NUL (U+0000), "
                                             "which Postgres cannot store: stored with U+FFFD in its place")
    attachment_only: int = Field(0, description="user messages that held only attachments (a photo, a file) "
                                                "and no text, kept as a marker naming them ('[photo: "
                                                "IMG_4032.jpeg]'), since the answer after one refers to it")
    attachment_only_left_out: int = Field(0, description="such messages whose attachments have no name: left "
                                                         "out, as there is nothing to show of them")
    deleted: ImportCounts | None = Field(None, description="a dry run or the Import page's preview: what the "
                                         "file holds that the user deleted in the instance since, which the "
                                         "import would leave out, as the outcome's `left_out` then counts it "
                                         "(None: not looked up, as for an import made)")
    adds: ImportAdds | None = Field(None, description="a dry run or the Import page's preview: what the import "
                                    "would add to the instance, and what of the file it holds already "
                                    "(None: not looked up, as for an import made)")
    restore: RestoreResult | None = Field(None, description="a workbench archive's preview: what restoring it "
                                          "into the instance would do, as a dry run of the restore says it")

    def refused(self, on_error: str) -> bool:
        """Whether an import with `on_error` ("stop" or "skip") writes nothing (`refusal` says why): the file
        holds no valid record, or any invalid one with "stop"."""
        return self.invalid == self.records or bool(self.invalid and on_error == "stop")

    def verdict(self, on_error: str, listed_in: Path | None) -> tuple[str, bool] | None:
        """What an import with `on_error` would do with a file holding invalid records (or none), said by a
        dry run, and whether it would refuse (`refused`); None when every record is valid. `listed_in`: where
        --on-error skip lists the invalid ones. A dry run that exited 0 before an import that refused had
        told a script nothing: it reads the exit status, not `invalid` in the JSON."""
        if self.invalid == self.records:
            return refusal(self), True
        if not self.invalid:
            return None
        valid = self.records - self.invalid
        found = (f"{Path(self.file).name}: {self.invalid:,} of {self.records:,} records are invalid "
                 f"(first: {self.errors[0].line()})")
        if self.refused(on_error):
            return (f"{found}: an import with --on-error stop would write nothing; --on-error skip imports the "
                    f"{valid:,} valid ones"), True
        return (f"{found}: the import (--on-error skip) would import the {valid:,} valid ones and list the others "
                f"in {listed_in}"), False

    def adds_said(self, on_error: str = "stop", *, include_deleted: bool = False) -> str | None:
        """What an import with `on_error` would add, in words (`ImportAdds.said`); None when it was not
        looked up, or when the import would write nothing (`refused`), which `verdict` says."""
        if self.adds is None or self.refused(on_error):
            return None
        return self.adds.said(self.deleted, include_deleted=include_deleted)

    def notes(self, *, dating: bool = True, include_deleted: bool = False) -> list[str]:
        """What the import assumes or changes of the file's content, one sentence each for the whole file
        (never one per message). `dating=False`: the import wrote no message, so it dated none (those
        stored keep the times an earlier import gave them). `include_deleted`: what was deleted would be
        brought back, not left out."""
        notes = []
        if self.times_assumed and dating:
            n, undated, own = self.times_assumed, self.undated, "from their conversation's own time"
            whose = "the file's last change" if self.undated_from == "file" else "the time of the import"
            given = f"from {whose}, {self.undated_at:%Y-%m-%d %H:%M:%S} UTC" if self.undated_at else ""
            dated = (own if not undated else given if undated == n
                     else f"{own}, or ({undated} without one) {given}")
            notes.append(f"Times assumed: {n:,} conversation{' gives' if n == 1 else 's give'} no time for "
                         f"{'its' if n == 1 else 'their'} messages, so they are dated {dated}, a millisecond "
                         "apart in the file's order.")
        if self.nul_replaced:
            n = self.nul_replaced
            kind = ("message" if self.counts.conversations else "memory" if self.counts.memories
                    else "past task")
            kinds = {"memory": "memories"}.get(kind, f"{kind}s")
            notes.append(f"{n:,} {kind if n == 1 else kinds} held NUL characters (U+0000), which Postgres "
                         "cannot store: each is stored as U+FFFD (\ufffd) instead.")
        if self.attachment_only or self.attachment_only_left_out:
            notes.append(attachment_note(self.attachment_only, self.attachment_only_left_out))
        if self.deleted is not None and (listed := deleted_parts(self.deleted)):
            notes.append(f"What you deleted here would be brought back, as asked: {listed}."
                         if include_deleted else f"What you deleted here would be left out: {listed}; "
                                                 f"{BRING_BACK}")
        return notes


def attachment_note(kept: int, left_out: int) -> str:
    """The one sentence on user messages that were an attachment alone (a photo sent without a word)."""
    n = kept + left_out
    said = f"{n:,} message{' holds' if n == 1 else 's hold'} only an attachment (photo, file) and no text: "
    line = "as a line naming it, “[photo: name]” or “[file: name]”, as the answer after it refers to it"
    dropped = ("left out, as its attachment has no name" if left_out == 1
               else "left out, as their attachments have no name")
    if not left_out:
        return said + ("kept " if kept == 1 else "each kept ") + line + "."
    if not kept:
        return said + dropped + "."
    return said + (f"1 kept {line}" if kept == 1 else f"{kept:,} kept, each {line}") + f"; {left_out:,} {dropped}."


BRING_BACK = ("import the file with --include-deleted (CLI) or “Import what I deleted” (Import page) to "
              "bring it back.")


def deleted_parts(gone: ImportCounts) -> str:
    """What an import leaves out as deleted, listed ('1 conversation, 10 messages in all'): the messages
    counted are those of the conversations left out and those deleted one by one."""
    parts = []
    if gone.conversations:
        parts.append(f"{gone.conversations:,} conversation{'s' if gone.conversations != 1 else ''}")
    if gone.messages:
        parts.append(f"{gone.messages:,} message{'s' if gone.messages != 1 else ''}"
                     + (" in all" if gone.conversations else ""))
    if gone.memories:
        parts.append(f"{gone.memories:,} {'memory' if gone.memories == 1 else 'memories'}")
    return ", ".join(parts)


class ImportedChain(BaseModel):
    """A conversation the import wrote: its title as the export names it (or its first words), and its
    chain."""

    title: str
    chain_id: str


class ImportOutcome(BaseModel):
    """What the write pass did."""

    created: ImportCounts
    already_present: int = Field(description="records (or messages) found stored already: not written again")
    duplicates: int = Field(description="records repeated within the file: written once")
    skipped_invalid: int
    resumed_after: int = Field(0, description="records an earlier, interrupted run of this file had stored")
    chains: list[ImportedChain] = Field(description="conversations created or completed, by title and "
                                                   f"chain (at most the first {LISTED_CHAINS}: `chains_total` "
                                                   "counts them all)")
    chains_total: int = Field(0, description="conversations created or completed, all of them")
    left_out: ImportCounts = Field(ImportCounts(), description="what the file holds that the user deleted "
                                   "here since (conversations deleted whole; messages: those of these "
                                   "conversations and those deleted one by one; memories): left out, unless "
                                   "imported with `include_deleted`")
    brought_back: ImportCounts = Field(ImportCounts(), description="with `include_deleted`: what was "
                                       "written although the user had deleted it, counted as `left_out` is "
                                       "(no longer recorded as deleted)")

    def notes(self) -> list[str]:
        """What the import did not do as asked, one sentence each: what it left out as deleted."""
        listed = deleted_parts(self.left_out)
        return [f"What you deleted here was left out: {listed}; {BRING_BACK}"] if listed else []


Reader = Callable[[], Iterator[Item | InvalidRecord]]


def validate(read: Reader, path: Path, found: Detected, sha256: str, *, errors_to: Path | None = None,
             undated: tuple[datetime, Literal["file", "import"]] | None = None,
             counted: Callable[[int], None] | None = None, look_up: Lookup | None = None) -> ImportPreview:
    """Stream the file once: counts, the first records, the first errors (all of them to `errors_to`), and
    what is assumed or changed of the records' content. `undated`: the time the reader gives a
    conversation that has none, and whose it is. `counted(records read)`: at the first record, then every
    `BATCH_RECORDS` (a large export is read for seconds before anything is written). `look_up`: the valid
    records are looked up in its instance as they are read, in the same pass (`Lookup`), and the preview
    says what it found (`deleted`, `adds`) unless a server could not be reached (`Lookup.failed`)."""
    counts, errors, first, invalid, records = ImportCounts(), [], [], 0, 0
    assumed, without, nul, marked, unnamed = 0, 0, 0, 0, 0
    sink = None
    if look_up is not None:
        look_up.checkpoint(sha256)
    try:
        for item in read():
            records += 1
            if counted and (records == 1 or records % BATCH_RECORDS == 0):
                counted(records)
            if isinstance(item, InvalidRecord):
                invalid += 1
                if len(errors) < FIRST_ERRORS:
                    errors.append(item)
                if errors_to is not None:
                    sink = sink or open_report(errors_to)
                    sink.write(item.model_dump_json() + "\n")
                continue
            _count(counts, item)
            if look_up is not None:
                look_up.add(item)
            if len(first) < PREVIEW_ITEMS:
                first.append(_preview(item))
            if isinstance(item, ImportedConversation):
                assumed += item.dated_by != "messages"
                without += item.dated_by == "file"
                nul += sum(m.nul_replaced for m in item.messages)
                marked += item.attachment_only
                unnamed += item.attachment_only_left_out
            else:
                nul += item.nul_replaced
        if look_up is not None:
            look_up.flush()
    finally:
        if sink:
            sink.close()
    found_here = look_up is not None and look_up.failed is None
    return ImportPreview(file=str(path), format=found.format, shape=found.shape, sha256=sha256,
                         records=records, counts=counts, invalid=invalid, errors=errors, first=first,
                         times_assumed=assumed, undated=without, nul_replaced=nul,
                         attachment_only=marked, attachment_only_left_out=unnamed,
                         undated_at=undated[0] if without and undated else None,
                         undated_from=undated[1] if without and undated else None,
                         deleted=look_up.deleted if found_here else None,
                         adds=look_up.adds if found_here else None)


def open_report(path: Path) -> IO[str]:
    """The invalid records' report opened for writing from its start, its owner's alone (0600: it holds the
    users' words), created so or, when a file is there already (an earlier report, or a file the user let
    replace), emptied and made so; it is opened only when there is an invalid record to list, so a file the
    import lists nothing in is left as it was. Anything but a regular file is refused (a FIFO would block the
    import, a device was written to)."""
    if path.exists() and not path.is_file():
        raise InvalidInput(f"report: {str(path)!r} is not a regular file (a device, a FIFO or a socket): give "
                           "the path of a file")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "w", encoding="utf-8")


def is_report(path: Path) -> bool:
    """Whether `path` is a regular file holding an invalid-records report (`open_report`) or nothing: JSON
    lines of "where" and "problem", as the first line says. What is not one is never removed as one."""
    try:
        if not path.is_file():
            return False
        with path.open("rb") as f:
            first = f.readline(1 << 16)
        if not first.strip():
            return not first  # empty: a report begun with nothing in it
        value = json.loads(first)
        return isinstance(value, dict) and set(value) == {"where", "problem"}
    except (OSError, ValueError, TypeError, RecursionError):
        return False


def refusal(preview: ImportPreview) -> str:
    """The one line saying why nothing was written."""
    if not preview.records:
        return f"{Path(preview.file).name}: no records found in this {preview.format} file: nothing to import"
    if preview.invalid == preview.records:
        return (f"{Path(preview.file).name}: every record is invalid (first: {preview.errors[0].line()}); "
                "nothing to import")
    return (f"{Path(preview.file).name}: {preview.invalid} of {preview.records} records are invalid (first: "
            f"{preview.errors[0].line()}); nothing was written. Fix them, or import the valid ones with "
            "--on-error skip")


def write(wb: Workbench, instance: str, read: Reader, preview: ImportPreview, *,
          progress: Progress | None = None, include_deleted: bool = False) -> ImportOutcome:
    """The write pass (see the module docstring). `include_deleted`: write what the user deleted too."""
    validate_id(instance, "instance")
    if progress:  # said before the servers are reached: starting them takes seconds
        progress(0, preview.records - preview.invalid, "importing")
    run = _Run(wb, instance, preview, progress, include_deleted)
    items = (item for item in read() if not isinstance(item, InvalidRecord))
    if preview.format == "past-tasks":
        for batch in _batched(items, BATCH_RECORDS):
            run.past_tasks(batch)
    else:
        run.unindexed.begin()
        try:
            wb.index.bulk_load(run.records(items))
        except BaseException:
            run.unindexed.stopped()
            raise
        run.unindexed.committed()
    run.finish()
    return ImportOutcome(created=run.created, already_present=run.present, duplicates=run.duplicates,
                         skipped_invalid=preview.invalid, resumed_after=run.resumed, chains=run.chains,
                         chains_total=run.chains_total, left_out=run.left_out, brought_back=run.brought_back)


class _Run:
    """One write pass: its counts, its checkpoint, and the ids it has written."""

    def __init__(self, wb: Workbench, instance: str, preview: ImportPreview, progress: Progress | None,
                 include_deleted: bool = False):
        self.wb, self.instance, self.progress = wb, instance, progress
        self.include_deleted = include_deleted
        self.total = preview.records - preview.invalid
        self.key = import_checkpoint_key(instance, preview.sha256)
        self.r = wb.thoughts.r
        saved = self.r.hgetall(self.key)
        # An earlier run that stopped part-way stored its first `done` records: they are skipped. A
        # finished one is not trusted to still be stored (chains may have been deleted since): checked.
        self.resumed_after = int(saved.get("done", 0)) if saved and not saved.get("finished_at") else 0
        # What this run took as stored by that one (conversations in Redis, past tasks). Memories are not
        # counted: an interrupted bulk load keeps none of them, and each is checked against the index.
        self.resumed = 0
        # Imported in full by a version that recorded no deletions: what it stored and is gone was deleted.
        self.unrecorded = unrecorded(saved)
        self.r.hset(self.key, mapping={"format": preview.format, "file": Path(preview.file).name,
                                       "total": self.total, "started_at": _now(),
                                       **({UNRECORDED: 1} if self.unrecorded else {})})
        self.r.hdel(self.key, "finished_at")
        self.done = 0
        self.created, self.present, self.duplicates = ImportCounts(), 0, 0
        self.chains: list[ImportedChain] = []
        self.chains_total = 0
        self.left_out, self.brought_back = ImportCounts(), ImportCounts()
        self.seen = _Seen()
        self.indexed_before = wb.index.partition_exists(instance)
        # The messages stored and not yet committed to the index, should this process die first.
        self.unindexed = UnindexedImport(wb.thoughts, instance, preview.sha256)

    def records(self, items: Iterable[Item]) -> Iterator[MemoryRecord]:
        """The memory-index rows of every batch, storing each batch's chains in Redis first."""
        for batch in _batched(items, BATCH_RECORDS):
            convs = [c for c in batch if isinstance(c, ImportedConversation)
                     and self._first_time(f"chain {c.chain_id}")]
            memories, gone = self._not_deleted_memories(
                [m for m in batch if isinstance(m, ImportedMemory) and self._first_time(f"memory {m.id}")])
            rows = self._not_indexed((self._conversations(convs) if convs else []) + memories)
            new_memories = sum(r.kind not in THOUGHT_KINDS for r in rows)
            if gone:  # with `include_deleted`: written again, so no longer deleted
                self.brought_back.memories += deleted.unrecord(self.wb.redis(), self.instance, "memory",
                                                               {r.id for r in rows} & gone)
            self.created.memories += new_memories
            self.present += len(memories) - new_memories
            yield from rows
            self._advance(len(batch))
        if self.progress:  # the index still embeds and stores the last batches: seconds for a large file
            self.progress(0, 0, "indexing the imported messages")

    @cached_property
    def origins(self) -> tuple[str, ...]:
        """The instances restored into this one under another name (`core.archive.marks.restored_from`)."""
        return restored_from(self.wb, self.instance)

    def _conversations(self, convs: list[ImportedConversation]) -> list[MemoryRecord]:
        threads = [conversation_thoughts(self.wb, self.instance, c, self.origins) for c in convs]
        convs, threads, gone = self._not_deleted(convs, threads)
        skip = self.done < self.resumed_after  # stored by the interrupted run: only the index is checked
        self.resumed += len(convs) if skip else 0
        stored = [] if skip else missing(self.wb.thoughts, self.instance, [t for th in threads for t in th])
        new = {t.id for t in stored}
        batch = [(c.title, [t for t in th if t.id in new]) for c, th in zip(convs, threads, strict=True)]
        rows = [r for th in threads for r in thought_records(th, {t.id for t in th})]
        # Noted before they are stored: flagged `memorized` once the index commits them, and indexed by the
        # next search or sweep should this process die before (`core.conversation.indexing`).
        self.unindexed.add(rows)
        store_chains(self.wb.thoughts, self.instance, [b for b in batch if b[1]])
        # Answers stored by an earlier import that a user message follows in this file: no longer the
        # conversation's last (an earlier import of this workbench marked every imported answer final).
        followed_up(self.wb.thoughts, self.instance, [
            t.id for th in threads for t in th
            if t.id not in new and t.category == CATEGORY_ASSISTANT and t.next_thought_needed])
        if any(gone):
            self._unrecord(stored, *gone)
        for conv, thread, (_, written) in zip(convs, threads, batch, strict=True):
            self.chains_total += bool(written)
            if written and len(self.chains) < LISTED_CHAINS:
                self.chains.append(ImportedChain(title=conv.title, chain_id=conv.chain_id))
            self.created.conversations += len(written) == len(thread)
            self.created.messages += len(written)
            self.created.attachments += sum(len(t.extra.get("attachments", [])) for t in written)
        if not skip:
            self.present += sum(len(th) for th in threads) - len(stored)
        return rows

    def _not_deleted(self, convs: list[ImportedConversation], threads: list[list[Thought]]
                     ) -> tuple[list[ImportedConversation], list[list[Thought]], tuple[set[str], set[str]]]:
        """The conversations and messages the user has not deleted here (`without_deleted`). With
        `include_deleted`, all of them, and the ids of those deleted (chains, messages), to be no longer
        recorded as deleted once written."""
        r = self.wb.redis()
        if self.unrecorded:
            chains, ones = gone_unrecorded(self.wb, self.instance, {c.chain_id: [t.id for t in th] for c, th in
                                                                    zip(convs, threads, strict=True)},
                                           {c.chain_id: aside_ids(self.instance, c) for c in convs})
            deleted.record(r, self.instance, chains=chains, memories=ones)
        gone = (deleted.deleted(r, self.instance, "chain", [c.chain_id for c in convs]),
                deleted.deleted(r, self.instance, "memory", [t.id for th in threads for t in th]))
        if self.include_deleted:
            return convs, threads, gone
        return *without_deleted(convs, threads, *gone, self.left_out), (set(), set())

    def _not_deleted_memories(self, memories: list[ImportedMemory]) -> tuple[list[MemoryRecord], set[str]]:
        """The memories' rows but those the user deleted here (all, with `include_deleted`, and the ids of
        those deleted)."""
        if self.unrecorded and self.indexed_before and memories:
            ids = [m.id for m in memories]
            deleted.record(self.wb.redis(), self.instance,
                           memories=set(ids) - self.wb.index.held(self.instance, ids))
        gone = deleted.deleted(self.wb.redis(), self.instance, "memory", [m.id for m in memories])
        if self.include_deleted:
            return [self._memory(m) for m in memories], gone
        self.left_out.memories += len(gone)
        return [self._memory(m) for m in memories if m.id not in gone], set()

    def _unrecord(self, stored: list[Thought], chains: set[str], messages: set[str]) -> None:
        """What was deleted and is written again (`include_deleted`) is no longer recorded as deleted; its
        messages are counted as `left_out` counts them (those of the conversations with them)."""
        r = self.wb.redis()
        back = {t.chain_id for t in stored} & chains
        self.brought_back.conversations += deleted.unrecord(r, self.instance, "chain", back)
        deleted.unrecord(r, self.instance, "memory", {t.id for t in stored} & messages)
        self.brought_back.messages += sum(t.chain_id in back or t.id in messages for t in stored)

    def _memory(self, m: ImportedMemory) -> MemoryRecord:
        return MemoryRecord(instance=self.instance, id=m.id, kind=m.memory_kind, content=m.content,
                            created_at=m.created_at or datetime.now(UTC), tags=m.tags,
                            metadata=pg_json({**m.metadata, "origin": IMPORTED}),
                            event_time=event_time_of(m.event_time) if m.event_time else EventTime())

    def _first_time(self, ident: str) -> bool:
        """False for an id this run has met before (a record repeated within the file)."""
        if self.seen.first(ident):
            return True
        self.duplicates += 1
        return False

    def _not_indexed(self, rows: list[MemoryRecord]) -> list[MemoryRecord]:
        """Rows whose id the instance's index does not hold yet (all, for an instance new to it)."""
        if not rows or not self.indexed_before:
            return rows
        there = self.wb.index.held(self.instance, [r.id for r in rows])
        return [r for r in rows if r.id not in there]

    def past_tasks(self, batch: list[ImportedPastTask]) -> None:
        skip = self.done < self.resumed_after
        self.resumed += len(batch) if skip else 0
        fresh = [] if skip else self._new_texts(batch)
        if fresh:
            self.wb.past_tasks.ingest([ProducedTextInput(
                instance=self.instance, user_id=t.user_id, task=t.task, title=t.title,
                production=t.production, created_at=t.created_at, source_key=t.source_key) for t in fresh])
        self.created.past_tasks += len(fresh)
        self.present += 0 if skip else len(batch) - len(fresh)
        self._advance(len(batch))

    def _new_texts(self, batch: list[ImportedPastTask]) -> list[ImportedPastTask]:
        """Those whose text is not already the latest version of one of its user's texts."""
        stored: dict[str, set[tuple[str, str]]] = {}
        fresh = []
        for t in batch:
            if t.user_id not in stored:
                stored[t.user_id] = stored_texts(self.wb, self.instance, t.user_id)
            text = text_of(t)
            if text not in stored[t.user_id] and self._first_time(f"past task {t.user_id} {digest(text[1])}"):
                fresh.append(t)
                stored[t.user_id].add(text)
        return fresh

    def _advance(self, n: int) -> None:
        self.done += n
        if self.done > self.resumed_after:
            self.r.hset(self.key, "done", self.done)
        if self.progress:
            self.progress(min(self.done, self.total), self.total, "importing")

    def finish(self) -> None:
        self.r.hset(self.key, mapping={"done": self.done, "finished_at": _now(), KEPT: 1})
        self.r.hdel(self.key, UNRECORDED)


class _Seen:
    """The ids met so far in a pass, as one 8-byte digest each: memory stays bounded whatever the file."""

    def __init__(self) -> None:
        self.keys: set[bytes] = set()

    def first(self, ident: str) -> bool:
        """False for an id met before (a record repeated within the file)."""
        key = hashlib.blake2b(ident.encode("utf-8", "surrogatepass"), digest_size=8).digest()
        if key in self.keys:
            return False
        self.keys.add(key)
        return True


def without_deleted(convs: list[ImportedConversation], threads: list[list[Thought]], chains: set[str],
                    messages: set[str], left_out: ImportCounts
                    ) -> tuple[list[ImportedConversation], list[list[Thought]]]:
    """The conversations and messages not deleted: a conversation deleted whole is left out, and a message
    deleted alone leaves its conversation without it (its text is neither stored nor part of its
    neighbours' indexed context). What is left out is counted in `left_out`: the messages of the
    conversations left out with them, as a file's counts hold the messages of its conversations."""
    kept = []
    for conv, thread in zip(convs, threads, strict=True):
        left = [] if conv.chain_id in chains else [t for t in thread if t.id not in messages]
        left_out.conversations += conv.chain_id in chains
        left_out.messages += len(thread) - len(left)
        if left:
            kept.append((conv, left))
    return [c for c, _ in kept], [th for _, th in kept]


class Lookup:
    """A file's valid records looked up in the instance as the validation pass reads them (a dry run, the
    Import page's preview), writing nothing: what the import would leave out as deleted, counted as the write
    pass counts it (`ImportOutcome.left_out`), and what it would add (`ImportAdds`), found as the write pass
    finds what is stored. A batch of `BATCH_RECORDS` records costs a few round trips, never one a record.
    Of a record, a batch keeps its ids alone (a message's made as the write pass makes it), not the parsed
    record: the pass then holds no more objects than without the look-up, and its garbage collector walks
    no more (holding the records made a 1,500-conversation export's pass take 1.7 times as long, its ids
    1.25 times). A server that cannot be reached ends the look-up (`failed`), not the validation."""

    def __init__(self, wb: Workbench, instance: str):
        self.wb, self.instance = wb, instance
        self.deleted, self.adds = ImportCounts(), ImportAdds()
        self.failed: Exception | None = None
        self.unreached = ""  # the server `failed` names
        self.chains: dict[str, tuple[list[str], int]] = {}  # of a batch: chain -> its message ids, messages
        self.memories: list[str] = []  # of a batch: the memories' ids
        self.seen = _Seen()
        self.gone: tuple[bool, bool] | None = None  # anything deleted (chains, ones), asked at the first batch
        self.indexed: bool | None = None  # the instance's index exists, asked at the first memory
        self.texts: dict[str, set[tuple[str, str]]] = {}  # past tasks' stored texts, by user
        self.unrecorded = False  # the file was imported in full by a version that recorded no deletions
        self.asides: dict[str, set[str]] = {}  # of a batch, when `unrecorded`: chain -> its asides' ids

    @cached_property
    def origins(self) -> tuple[str, ...]:
        """The instances restored into this one under another name (`core.archive.marks.restored_from`)."""
        return restored_from(self.wb, self.instance)

    def checkpoint(self, sha256: str) -> None:
        """Read the file's checkpoint in the instance, before the first record: whether an older version
        imported it in full (`unrecorded`)."""
        if sha256:
            self._guarded(self._checkpoint, sha256)

    def _checkpoint(self, sha256: str) -> None:
        self.unrecorded = unrecorded(self.wb.thoughts.r.hgetall(import_checkpoint_key(self.instance, sha256)))

    def add(self, item: Item) -> None:
        if self.failed is not None:
            return
        if isinstance(item, ImportedConversation):
            self._guarded(self._conversation, item)
        elif isinstance(item, ImportedMemory):
            if self.seen.first(f"memory {item.id}"):
                self.memories.append(item.id)
            else:
                self.adds.repeated.memories += 1
        else:
            self._guarded(self._past_task, item)
        if len(self.chains) + len(self.memories) >= BATCH_RECORDS:
            self.flush()

    def flush(self) -> None:
        if self.chains or self.memories:
            self._guarded(self._batch)
        self.chains, self.memories, self.asides = {}, [], {}

    def _guarded(self, step: Callable[..., None], *args: Any) -> None:
        if self.failed is not None:
            return
        try:
            step(*args)
        except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, psycopg.OperationalError,
                ServiceUnavailable) as e:
            self.failed = e
            self.unreached = (e.service if isinstance(e, ServiceUnavailable)
                              else "Postgres" if isinstance(e, psycopg.Error) else "Redis")

    def _conversation(self, conv: ImportedConversation) -> None:
        chain = conv.chain_id
        if self.seen.first(f"chain {chain}"):
            self.chains[chain] = (message_ids(self.wb, self.instance, conv, self.origins), len(conv.messages))
            if self.unrecorded:
                self.asides[chain] = aside_ids(self.instance, conv)
        else:
            self.adds.repeated.conversations += 1
            self.adds.repeated.messages += len(conv.messages)

    def _batch(self) -> None:
        r = self.wb.redis()
        if self.gone is None:
            self.gone = (deleted.any_recorded(r, self.instance, "chain"),
                         deleted.any_recorded(r, self.instance, "memory"))
        if self.chains:
            self._conversations(r)
        if self.memories:
            self._memories(r)

    def _conversations(self, r: redis.Redis) -> None:
        adds, (chains_gone, ones_gone), ids = self.adds, self.gone, self.chains
        gone = deleted.deleted(r, self.instance, "chain", list(ids)) if chains_gone else set()
        ones = (deleted.deleted(r, self.instance, "memory", [i for th, _ in ids.values() for i in th])
                if ones_gone else set())
        if self.unrecorded:  # as the write pass records them (`_Run._not_deleted`)
            chains, messages = gone_unrecorded(self.wb, self.instance, {c: th for c, (th, _) in ids.items()},
                                               self.asides)
            gone, ones = gone | chains, ones | messages
        kept = {chain: [i for i in th if i not in ones] for chain, (th, _) in ids.items() if chain not in gone}
        asked = [chain for chain, th in kept.items() if th]
        p = self.wb.thoughts.r.pipeline(transaction=False)  # as `missing` asks: one ZMSCORE a chain
        for chain in asked:
            p.zmscore(chain_key(self.instance, chain), kept[chain])
        stored = dict(zip(asked, p.execute() if asked else [], strict=True))
        for chain, (th, messages) in ids.items():
            adds.repeated.messages += messages - len(th)
            if chain in gone:  # as `without_deleted` counts it
                self.deleted.conversations += 1
                self.deleted.messages += len(th)
                continue
            self.deleted.messages += len(th) - len(kept[chain])
            fresh = sum(score is None for score in stored.get(chain, []))
            adds.already.messages += len(kept[chain]) - fresh
            if not fresh:
                adds.already.conversations += 1
                continue
            into = adds.new if fresh == len(kept[chain]) else adds.continued  # as `created` counts it
            into.conversations += 1
            into.messages += fresh

    def _memories(self, r: redis.Redis) -> None:
        gone = deleted.deleted(r, self.instance, "memory", self.memories) if self.gone[1] else set()
        if self.indexed is None:
            self.indexed = self.wb.index.partition_exists(self.instance)
        if self.unrecorded and self.indexed:  # as the write pass records them (`_Run._not_deleted_memories`)
            gone |= set(self.memories) - self.wb.index.held(self.instance, self.memories)
        self.deleted.memories += len(gone)
        ids = [i for i in self.memories if i not in gone]
        there = set()
        if ids and self.indexed:  # as the write pass asks (`_Run._not_indexed`)
            there = self.wb.index.held(self.instance, ids)
        self.adds.already.memories += len(there)
        self.adds.new.memories += len(ids) - len(there)

    def _past_task(self, task: ImportedPastTask) -> None:
        """As the write pass finds them (`_Run._new_texts`): new unless the user's latest versions hold the
        text, or the file held it before. One query a user, the first time the file names them."""
        if task.user_id not in self.texts:
            self.texts[task.user_id] = stored_texts(self.wb, self.instance, task.user_id)
        text = text_of(task)
        if text in self.texts[task.user_id]:
            self.adds.already.past_tasks += 1
        elif self.seen.first(f"past task {task.user_id} {digest(text[1])}"):
            self.adds.new.past_tasks += 1
        else:
            self.adds.repeated.past_tasks += 1


def unrecorded(checkpoint: dict[str, str]) -> bool:
    """Whether a file's checkpoint is that of an import finished by a version that recorded no deletions
    (or of the first import since, not finished yet): what it stored and is gone now was deleted."""
    return bool(checkpoint.get("finished_at") or checkpoint.get(UNRECORDED)) and not checkpoint.get(KEPT)


def gone_unrecorded(wb: Workbench, instance: str, threads: dict[str, list[str]], asides: dict[str, set[str]]
                    ) -> tuple[set[str], set[str]]:
    """Of conversations an older version imported in full (`unrecorded`), what the user deleted there: the
    chains none of whose messages is stored any more, and the messages gone from the others (one ZMSCORE
    a chain, in one round trip). Asides (kept system and tool messages, an attachment's line) are never
    taken as deleted: that import may have left them out (without --include-system, or before such lines
    were kept)."""
    said = {chain: [i for i in ids if i not in asides.get(chain, ())] for chain, ids in threads.items()}
    said = {chain: ids for chain, ids in said.items() if ids}
    p = wb.thoughts.r.pipeline(transaction=False)
    for chain, ids in said.items():
        p.zmscore(chain_key(instance, chain), ids)
    chains, messages = set(), set()
    for (chain, ids), scores in zip(said.items(), p.execute() if said else [], strict=True):
        gone = {i for i, score in zip(ids, scores, strict=True) if score is None}
        if len(gone) == len(ids):
            chains.add(chain)
        else:
            messages |= gone
    return chains, messages


def aside_ids(instance: str, conv: ImportedConversation) -> set[str]:
    """The ids a conversation's asides may have (`core.importing.chats`: system-N, attachment-N places)."""
    return {ident for m in conv.messages if m.place.startswith(("system-", "attachment-"))
            for ident in (_message_id(instance, conv.chain_id, m, set()), m.source_id) if ident}


def stored_texts(wb: Workbench, instance: str, user_id: str) -> set[tuple[str, str]]:
    """The user's texts as stored (title, production of each latest version): an imported text found among
    them is not written again."""
    return {(s.title, s.production) for s in wb.past_tasks.list_texts(instance, user_id, limit=10_000)}


def text_of(task: ImportedPastTask) -> tuple[str, str]:
    return task.title.strip(), task.production.strip()


def message_ids(wb: Workbench, instance: str, conv: ImportedConversation, origins: tuple[str, ...] = ()
                ) -> list[str]:
    """The ids of the thoughts a conversation is stored as (`conversation_thoughts`), each once, without
    making the thoughts."""
    ids = _ids(wb, instance, conv, origins)
    return list(dict.fromkeys(ids(m) for m in conv.messages))


def conversation_thoughts(wb: Workbench, instance: str, conv: ImportedConversation, origins: tuple[str, ...] = ()
                          ) -> list[Thought]:
    """The thoughts a conversation is stored as, with the ids an import gives them (`message_ids` makes
    the same ids alone, for a dry run's look-up). `origins`: the instances whose archives were restored into
    this one under another name (`core.archive.marks.restored_from`), whose messages kept the ids the restore
    gave them (`core.importing.restored`)."""
    chain, turn, out = conv.chain_id, 0, []
    # An answer a user message follows was not the conversation's end: not final (`store_chains`).
    user_after, later = [False] * len(conv.messages), False
    for i in range(len(conv.messages) - 1, -1, -1):
        user_after[i], later = later, later or conv.messages[i].role == "user"
    ids = _ids(wb, instance, conv, origins)
    for i, m in enumerate(conv.messages):
        turn += m.role == "user"
        user = m.role == "user"
        extra: dict[str, Any] = {} if user else {"source": IMPORTED}
        if conv.model and not user:
            extra["model"] = conv.model
        if m.attachments:
            extra["attachments"] = m.attachments
        out.append(Thought(
            id=ids(m), instance=instance, chain_id=chain, thought=m.content,
            timestamp=m.at, category=CATEGORY_USER if user else CATEGORY_ASSISTANT, thought_number=max(turn, 1),
            total_thoughts=len(conv.messages),
            next_thought_needed=i < len(conv.messages) - 1 if user else user_after[i],
            tags=conv.tags, seq=i + 1, extra=extra))
    return _unique(out)


def _ids(wb: Workbench, instance: str, conv: ImportedConversation, origins: tuple[str, ...]
         ) -> Callable[[ImportedMessage], str]:
    """Each message's id in the instance: the one an import gives it (`_message_id`), or the one it already
    has, restored from another instance's archive (`restored_ids`)."""
    chain, there = conv.chain_id, _kept_ids(wb, instance, conv)
    made = {id(m): _message_id(instance, chain, m, there) for m in conv.messages}
    restored = restored_ids(wb, instance, conv, origins, lambda o, m: _message_id(o, chain, m, set()))
    return lambda m: restored.get(made[id(m)], made[id(m)])


def _kept_ids(wb: Workbench, instance: str, conv: ImportedConversation) -> set[str]:
    """The workbench's own chain export brought back into the instance it came from: a message still
    stored there keeps its id, so it is found already present (not stored a second time), and so does one
    the user deleted there, whose id the record holds (`core.admin.deleted`), so it is left out as
    deleted (brought back under its own id with `include_deleted`)."""
    if not conv.keep_ids:
        return set()
    there = {t.id for t in wb.thoughts.chain_thoughts(instance, conv.chain_id)}
    others = [m.source_id for m in conv.messages if m.source_id and m.source_id not in there]
    return there | (deleted.deleted(wb.redis(), instance, "memory", others) if others else set())


def _message_id(instance: str, chain: str, m: ImportedMessage, there: set[str]) -> str:
    # Feedback records are keyed by answer id alone, across instances: the instance is part of each id,
    # so the same file imported into two instances never shares a record.
    if m.source_id in there:
        return m.source_id
    return f"{chain}-{digest(f'{instance}/{m.source_id or m.place}', 12)}"


def _count(counts: ImportCounts, item: Item) -> None:
    if isinstance(item, ImportedConversation):
        counts.conversations += 1
        counts.messages += len(item.messages)
        counts.attachments += sum(len(m.attachments) for m in item.messages)
    elif isinstance(item, ImportedMemory):
        counts.memories += 1
    else:
        counts.past_tasks += 1


def _preview(item: Item) -> dict[str, Any]:
    """A short description of a record for the dry run and the Import page."""
    if isinstance(item, ImportedConversation):
        return {"kind": "conversation", "title": item.title, "chain": item.chain_id,
                "messages": len(item.messages), "first_at": item.messages[0].at.isoformat(),
                "first": item.messages[0].content[:200]}
    if isinstance(item, ImportedMemory):
        return {"kind": item.memory_kind, "id": item.id, "content": item.content[:200],
                "created_at": item.created_at.isoformat() if item.created_at else None, "tags": item.tags}
    return {"kind": "past task", "user": item.user_id, "task": item.task, "title": item.title,
            "text": item.production[:200]}


def _unique(thoughts: list[Thought]) -> list[Thought]:
    """A conversation repeating a message id (a quirk of some exports) keeps its first message."""
    seen: set[str] = set()
    return [t for t in thoughts if not (t.id in seen or seen.add(t.id))]


def _batched(items: Iterable[Any], size: int) -> Iterator[list[Any]]:
    it = iter(items)
    while batch := list(islice(it, size)):
        yield batch


def _now() -> str:
    return datetime.now(UTC).isoformat()
