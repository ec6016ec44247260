"""`MemoryBank`: the step-by-step memory of an agent's task, persisted per (instance, name).

Each `add_entry` stores the entry; when the live (uncompressed) entries reach `compression_threshold`
or `max_entries`, the oldest half is compressed into one summary (LLM when configured, else by rule),
the entries are kept and marked as compressed into it, and the compression is recorded as an event.
Entries and summaries are written to the memory index too (kinds bank_entry / bank_summary), so the
explorer's search and ui_remember's retrieval find them.

The LLM call is made outside any transaction: the entries to compress are chosen under the bank's
lock, summarised without it, and the summary is stored under the lock again only if none of them was
compressed by a concurrent writer meanwhile.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import psycopg
from pydantic import BaseModel, ConfigDict, Field

# Not `from core.bank import db`: that goes through the package's __init__, which imports this module.
import core.bank.db as db  # noqa: PLR0402
from core.bank.compress import compress
from core.bank.index_ids import ENTRY_KIND, SUMMARY_KIND, bank_item_of, entry_index_id, summary_index_id
from core.bank.types import (BankEntryState, BankInfo, BankSnapshot, BankStats, CompressionEvent,
                             MemoryEntry, MemoryQuery, MemorySummary)
from core.errors import Conflict, InvalidInput, NotFound, ServiceUnavailable, outage
from core.ids import validate_id
from core.index.records import event_time_of
from core.index.text import indexed_chars, text_cut_note
from core.models import MemoryRecord

if TYPE_CHECKING:
    from core.runtime import Workbench

log = logging.getLogger(__name__)
DEFAULT_BANK = "default"


class BankConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    max_entries: int = Field(6, ge=2, le=100_000)
    compression_threshold: int = Field(6, ge=2, le=100_000)


class AddEntryResult(BaseModel):
    entry: MemoryEntry  # as stored: with its step number and summary
    compression: CompressionEvent | None = None
    repeated: bool = Field(False, description="true when this entry (its id, bank and content) was already "
                                              "stored: a retry; `entry` is the stored one and nothing was added")
    notes: list[str] = []


# What an entry sent again must repeat to be a retry of the one stored: its content always; its time,
# step number and summary when the caller gave them (left out, the first call generated them).
_SAME_CONTENT = ("skill_name", "thinking", "command", "result", "importance", "tags")
_SAME_WHEN_GIVEN = ("timestamp", "summary", "step_number")


def entry_record(instance: str, bank: str, e: MemoryEntry) -> MemoryRecord:
    return MemoryRecord(instance=instance, id=entry_index_id(e.id), kind=ENTRY_KIND, content=e.search_text(),
                        created_at=e.timestamp, event_time=event_time_of(e.timestamp), tags=e.tags,
                        metadata={"bank": bank, "entry_id": e.id, "skill_name": e.skill_name,
                                  "step_number": e.step_number, "importance": e.importance})


def summary_record(instance: str, bank: str, s: MemorySummary) -> MemoryRecord:
    return MemoryRecord(instance=instance, id=summary_index_id(s.id), kind=SUMMARY_KIND,
                        content=s.search_text(),
                        created_at=s.timestamp, event_time=event_time_of(s.timestamp), tags=s.tags,
                        metadata={"bank": bank, "summary_id": s.id, "source_entries": s.source_entries,
                                  "importance": s.importance, "method": s.method})


class MemoryBank:
    """A memory bank bound to a workbench, an instance (None: the INSTANCE setting) and a name.
    Nothing connects until first used.

    Without a Workbench at hand, `core.usecases.default_bank()` builds one from the settings.
    """

    def __init__(self, wb: Workbench, instance: str | None = None, name: str = DEFAULT_BANK, *,
                 max_entries: int = 6, compression_threshold: int = 6):
        self.config = BankConfig(max_entries=max_entries, compression_threshold=compression_threshold)
        self.name = validate_id(name, "bank name")
        self._instance = None if instance is None else validate_id(instance, "instance")
        self.wb = wb

    @classmethod
    def open(cls, wb: Workbench, instance: str, name: str) -> MemoryBank:
        """An existing bank with the settings it was stored with."""
        with wb.pool().connection() as conn:
            found = db.bank_settings(conn, validate_id(instance, "instance"), validate_id(name, "bank name"))
        if found is None:
            raise NotFound(f"no memory bank named {name!r} in instance {instance!r}")
        return cls(wb, instance, name, max_entries=found[0], compression_threshold=found[1])

    @property
    def instance(self) -> str:
        return self._instance or self.wb.settings.instance

    @property
    def max_entries(self) -> int:
        return self.config.max_entries

    @property
    def compression_threshold(self) -> int:
        return self.config.compression_threshold

    # -- writes -----------------------------------------------------------------------------

    def add_entry(self, entry: MemoryEntry) -> AddEntryResult:
        """Store an entry (numbering its step when it has none); compress the oldest half when due.

        Idempotent by the entry's id: the same entry sent again (a retry after a lost answer) returns the
        stored one, marked `repeated`; another entry under an id already taken is a `Conflict`."""
        if not isinstance(entry, MemoryEntry):
            raise InvalidInput("entry must be a MemoryEntry")
        sent, entry = entry, entry.model_copy()
        with self.wb.pool().connection() as conn, conn.transaction():
            next_step = db.lock_bank(conn, self.instance, self.name, self.max_entries,
                                     self.compression_threshold)
            if entry.step_number == 0:
                entry.step_number = next_step
            if not db.insert_entry(conn, self.instance, self.name, entry):
                # Another writer of this id committed first (the bank's lock orders writers of one bank;
                # the insert waits for one of another bank): its row is read after it.
                found = db.stored_entry(conn, self.instance, entry.id)
                if found is None:  # deleted between the two statements: the same request id, nothing kept
                    raise Conflict(f"entry.id: the entry {entry.id!r} was being deleted as it was sent; "
                                   "send it again")
                self._same_or_conflict(sent, *found)
                result = AddEntryResult(entry=found[1], repeated=True, notes=[
                    f"entry {entry.id!r} was already stored (the same entry sent again): nothing was added"])
                self._index(result.notes)
                return result
            due = self._due(db.live_entries(conn, self.instance, self.name))
        result = AddEntryResult(entry=entry)
        if due:
            result.compression = self._compress(due, result.notes)
        self._index(result.notes)
        return result

    def _same_or_conflict(self, sent: MemoryEntry, bank: str, stored: MemoryEntry) -> None:
        """Nothing when `sent` repeats `stored` (see `_SAME_CONTENT`), else the Conflict saying what differs."""
        differs = [f for f in _SAME_CONTENT if getattr(sent, f) != getattr(stored, f)] or [
            f for f in _SAME_WHEN_GIVEN  # a summary made from other content differs too: named only alone
            if f in sent.model_fields_set and getattr(sent, f) and getattr(sent, f) != getattr(stored, f)]
        if bank != self.name:
            differs.insert(0, f"bank (it is in {bank!r})")
        if differs:
            raise Conflict(f"entry.id: an entry with id {sent.id!r} already exists in instance {self.instance!r} "
                           f"with another {', '.join(differs)}; sending the same entry again returns it, so a "
                           "retry is safe: for a new entry leave id out, or choose another")

    def _due(self, live: list[MemoryEntry]) -> list[MemoryEntry]:
        """The oldest half of the live entries when either threshold is reached, else nothing."""
        if len(live) < min(self.max_entries, self.compression_threshold):
            return []
        return live[: max(1, len(live) // 2)]

    def _compress(self, chosen: list[MemoryEntry], notes: list[str]) -> CompressionEvent | None:
        wb = self.wb
        made = compress(chosen, wb.llm, wb.settings.model_fast)
        if made.note:
            notes.append(made.note)
        ids = [e.id for e in chosen]
        at = max(e.timestamp for e in chosen)
        with wb.pool().connection() as conn, conn.transaction():
            db.lock_bank(conn, self.instance, self.name, self.max_entries, self.compression_threshold)
            live = db.live_entries(conn, self.instance, self.name)
            live_ids = {e.id for e in live}
            if not set(ids) <= live_ids:  # a concurrent writer compressed (or deleted) some of them
                notes.append("compression skipped: a concurrent write already compressed these entries")
                return None
            at = max([at] + [e.timestamp for e in live])  # when it happened, on the entries' clock
            summary = MemorySummary(
                timestamp=at, title=made.title, content=made.content, source_entries=ids,
                tags=list(dict.fromkeys(t for e in chosen for t in e.tags)),
                importance=max(e.importance for e in chosen), period_start=min(e.timestamp for e in chosen),
                period_end=max(e.timestamp for e in chosen), method=made.method)
            db.insert_summary(conn, self.instance, self.name, summary,
                              first_step=min(e.step_number for e in chosen))
            db.mark_compressed(conn, self.instance, ids, summary.id)
            db.insert_event(conn, self.instance, self.name, at, summary.id, len(ids), len(live), made.method,
                            made.model, made.tokens, made.note)
            return db.events(conn, self.instance, self.name)[-1]

    def index_pending(self) -> list[str]:
        """Write the rows not yet in the memory index (a summary told again after a deletion, rows a failed
        write left); returns notes on what could not be written."""
        notes: list[str] = []
        self._index(notes)
        return notes

    def _index(self, notes: list[str]) -> None:
        """Write the bank's not-yet-indexed rows to the memory index. A failure leaves them pending."""
        wb = self.wb
        try:
            with wb.pool().connection() as conn:
                entries, summaries = db.unindexed(conn, self.instance, self.name)
            if not entries and not summaries:
                return
            records = ([entry_record(self.instance, self.name, e) for e in entries]
                       + [summary_record(self.instance, self.name, s) for s in summaries])
            wb.index.add(records)
            for r in records:
                if len(r.content) > (indexed := indexed_chars(r.content)):  # "entry 1f3…: searched by words in …"
                    kind, item = bank_item_of(r.id)
                    notes.append(f"{kind.removeprefix('bank_')} {item}: {text_cut_note(len(r.content), indexed)}")
            with wb.pool().connection() as conn:
                kept = db.mark_indexed(conn, self.instance, [e.id for e in entries],
                                       [s.id for s in summaries])
            # Rows deleted while they were being indexed must not survive in the index.
            stale = [r.id for r in records if bank_item_of(r.id)[1] not in kept]
            if stale:
                wb.index.delete(self.instance, stale)
        except (psycopg.Error, ServiceUnavailable) as e:
            log.warning("memory bank indexing deferred: %s", type(e).__name__)
            notes.append(f"indexing deferred: the memory index could not be written ({outage(e, 'Postgres')}); "
                         "the next write retries")

    def clear(self) -> int:
        """Remove every entry, summary and compression event of the bank (and their index rows)."""
        with self.wb.pool().connection() as conn, conn.transaction():
            if not db.lock_existing(conn, self.instance, self.name):
                return 0
            n = db.clear(conn, self.instance, self.name)
            db.delete_index_rows(conn, self.instance, self.name)
        return n

    def delete(self) -> bool:
        """Remove the bank itself with everything in it."""
        with self.wb.pool().connection() as conn, conn.transaction():
            if not db.lock_existing(conn, self.instance, self.name):
                return False
            db.drop(conn, self.instance, self.name)
            db.delete_index_rows(conn, self.instance, self.name)
        return True

    # -- reads ------------------------------------------------------------------------------

    def get_relevant_memories(self, query: MemoryQuery) -> list[MemoryEntry]:
        """Live entries and summaries (as entries whose skill_name is "MemorySummary") matching the query."""
        if not isinstance(query, MemoryQuery):
            raise InvalidInput("query must be a MemoryQuery")
        with self.wb.pool().connection() as conn:
            return db.query(conn, self.instance, self.name, query)

    def get_recent_entries(self, count: int = 5) -> list[MemoryEntry]:
        """The `count` most recent live entries, oldest first."""
        if not isinstance(count, int) or count < 0:
            raise InvalidInput("count must be a whole number ≥ 0")
        with self.wb.pool().connection() as conn:
            live = db.live_entries(conn, self.instance, self.name)
        return live[-count:] if count else []

    def get_summaries(self) -> list[MemorySummary]:
        with self.wb.pool().connection() as conn:
            return db.summaries(conn, self.instance, self.name)

    def get_all_memories(self) -> list[MemoryEntry]:
        """Every entry, compressed and live, oldest first."""
        with self.wb.pool().connection() as conn:
            return [e for e, _ in db.all_entries(conn, self.instance, self.name)]

    def get_compression_events(self) -> list[CompressionEvent]:
        with self.wb.pool().connection() as conn:
            return db.events(conn, self.instance, self.name)

    def stats(self) -> BankStats:
        with self.wb.pool().connection() as conn:
            row = db.stats_row(conn, self.instance, self.name)
        return BankStats(instance=self.instance, bank=self.name, max_entries=self.max_entries,
                         compression_threshold=self.compression_threshold, **row)

    def get_stats(self) -> dict[str, Any]:
        return self.stats().model_dump()

    def snapshot(self) -> BankSnapshot:
        """Entries (with what compressed them), summaries, events and stats, for the dashboard."""
        with self.wb.pool().connection() as conn:
            entries = db.all_entries(conn, self.instance, self.name)
            summaries = db.summaries(conn, self.instance, self.name)
            events = db.events(conn, self.instance, self.name)
        return BankSnapshot(stats=self.stats(), summaries=summaries, events=events,
                            entries=[BankEntryState(entry=e, compressed_into=s) for e, s in entries])


def list_banks(wb: Workbench, instance: str) -> list[BankInfo]:
    with wb.pool().connection() as conn:
        return db.list_banks(conn, validate_id(instance, "instance"))


def count_entries(wb: Workbench, instance: str) -> int:
    return sum(b.entries for b in list_banks(wb, instance))
