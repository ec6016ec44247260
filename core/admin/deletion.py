"""Deleting what is stored — a chain, a single memory, a memory bank — from every store that holds it.

Deleting means the text is gone (the GDPR meaning; docs/ARCHITECTURE.md §6): from the records that
hold it, from the records derived from it (`core.admin.redaction`: other turns' prompts, answers and
served results, neighbours' context, text postings and counters), and from the files on disk
(`core.admin.compaction`). A `Deletion` removes one or more targets, then `finish` does those two last
steps once for all of them.

A chain is tombstoned first (`chain_tombstone`, for `TOMBSTONE_TTL_S`): from then on a turn on it is
refused, so a writer racing the deletion cannot bring it back. Then every key of the chain is removed,
found by its listings (`provenance.chain_keys`: its zset, the keys its zset does not list, the feedback
naming it, kept by every writer and built once from a scan for older data) and repeated until none is
left, so a chain with any key left can always be deleted, in time that does not grow with the instance. Redis goes before Postgres: a sync that reads the outbox later finds nothing of the
chain to re-index, and the index rows go last.

The ids of what was deleted stay (`core.admin.deleted`, ids alone, no text): the tombstone ends after ten
minutes, but the next import of an export that still holds the conversation must not bring it back.

An observation (the id an assistant is given for a fact) is forgotten with its statement: the message it
was formed from said it too. A message that said nothing else is deleted (its id recorded, so an import
leaves it out); else the statement's words become "[deleted]" there, redacted as any copy (its row and
vector made again), and its other observations stay; the message stays, so an import finds it present.
Its row records the fact's place (`observations.FORGOTTEN_PLACES`): formed again, no other fact of it
takes the forgotten fact's id, so a forget retried with that id removes nothing.
A fact an LLM restated is found in its message by its words (`core.admin.sources`: the statements it
shares the most words with). The chain's summary made from the message goes too (an LLM's summary
restates the fact where no redaction finds it); the next `workbench formation run` makes it again.
An important copy of a message (`core.formation.important`) states the whole message: forgetting it
deletes the message, as forgetting the one fact of a message does.

A deletion killed midway (power lost, Ctrl-C, the OOM killer) must not leave its copies behind: before it
removes anything it writes down what it must still erase (`deleting:<instance>`: the text and ids it
read, the chains, the rows as they were), and drops that note once its copies are redacted. The next
deletion in the instance, the same command run again included, or the next sweep (`finish_interrupted`,
from `core.admin.upkeep`), takes over the notes whose process is gone (`resume`) and finishes them: it
removes what the kill left of a chain being deleted, then erases the copies. Without it, the re-run found
nothing left to delete ("no chain …") while other chains' answers still quoted the text; and without the
sweep, nothing finished them until the user deleted something again.
"""

from __future__ import annotations

import json
import logging
import os
import re
import socket
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Literal

from psycopg.types.json import Jsonb
from pydantic import BaseModel
from redis.exceptions import LockNotOwnedError

import core.bank.db as bank_db
from core.admin import deleted
from core.admin.compaction import compact
from core.admin.redaction import redact_copies
from core.admin.sources import restated_from, statement_in
from core.bank.bank import MemoryBank
from core.bank.index_ids import (
    BANK_KINDS,
    ENTRY_KIND,
    SUMMARY_KIND,
    BankKind,
    bank_item_of,
    entry_index_id,
    summary_index_id,
)
from core.conversation import provenance
from core.conversation.indexing import LOCK_TTL_MS, LOCK_WAIT_S
from core.conversation.keys import (
    OUTBOX_LOCK,
    chain_meta_key,
    chain_tombstone,
    chains_key,
    deletion_journal_key,
    feedback_index_key,
    feedback_key,
    feedback_pending_key,
)
from core.errors import InvalidInput, NotFound
from core.formation.observations import FORGOTTEN_PLACES, place_of
from core.formation.summaries import summarise_again
from core.formation.supersede import mend
from core.ids import SHARED_INSTANCE, validate_id
from core.index.names import lexemes_name, partition_name, postings_name
from core.models import MemoryRecord
from core.services.holders import holder_dead, holder_token
from core.services.leases import process_alive, start_time
from core.tuning.labels import LabelStore

if TYPE_CHECKING:
    from core.runtime import Workbench

THOUGHT_KINDS = ("user", "assistant")
TEXT_CATEGORIES = ("ui_remember:user", "ui_remember:assistant")  # metrics thoughts hold no text of their own
# Long enough that a turn started before the deletion has ended (its LLM call included): the turn is
# refused. Within it, a chain id can be used again only by another id; after it, the id is free.
TOMBSTONE_TTL_S = 600
MAX_PASSES = 10  # scans of a chain's keys; more would mean a writer ignores the tombstone
BANK_TABLES = ("bank", "bank_entry", "bank_summary", "bank_event")
# A deletion under way on another host whose note was not written for this long is taken as dead (one on
# this host is known dead at once: its process is gone).
JOURNAL_STALE_S = 600
log = logging.getLogger(__name__)
_WORD = re.compile(r"\w")


def instance_tables(instance: str) -> set[str]:
    """The tables of an instance a deletion writes to: its partitions of the memory index."""
    return {partition_name(instance), postings_name(instance), lexemes_name(instance)}


class NothingToDelete(NotFound):
    """Nothing of the instance has the id given: no such chain, memory or bank (never there, or already
    deleted). Raised before anything is removed."""


class DeletionReport(BaseModel):
    target: Literal["chain", "memory", "bank"]
    instance: str
    id: str
    thoughts: int = 0  # thought hashes removed from Redis
    feedback: int = 0  # feedback hashes removed
    outbox: int = 0  # queued index writes dropped
    requests: int = 0  # served-request results removed
    index_rows: int = 0  # memory-index rows removed
    bank_rows: int = 0  # memory-bank entries / summaries removed
    copies: int = 0  # other records whose copy of the text became "[deleted]" (redaction)
    marks: int = 0  # relevance marks (the Tune page's labelled set) naming what was removed
    notes: list[str] = []

    @property
    def removed_anything(self) -> bool:
        return any((self.thoughts, self.feedback, self.outbox, self.requests, self.index_rows,
                    self.bank_rows))


class Deletion:
    """Removes targets of one instance, remembering their text; `finish` then erases its copies and
    has the files rewritten, once for all the targets."""

    def __init__(self, wb: Workbench, instance: str):
        self.wb, self.instance = wb, validate_id(instance, "instance")
        self.texts: set[str] = set()
        self.ids: set[str] = set()
        self.removed: dict[str, MemoryRecord] = {}  # the index rows removed, as they were
        self.chains: set[str] = set()  # chains the text was said in (their later prompts quote it)
        self.deleting: set[str] = set()  # chains this deletion removes whole (`chain`), redone by `resume`
        self.tables: set[str] = set()
        self.journal = uuid.uuid4().hex  # this deletion's note of what it must still erase (`_save`)
        self.saved = False
        self.resumed: list[str] = []  # notes of deletions killed midway that this one finishes (`resume`)
        self.notes: list[str] = []  # what `resume` did beyond the copies, for `finish`'s report

    def resume(self) -> int:
        """Take over the deletions of the instance that were killed midway (their process is gone): the
        chains they were removing are removed again (what the kill left of them), and what they had removed
        is erased from its copies and the files by this deletion's `finish`. Returns how many were taken
        over. The next deletion and the sweep (`finish_interrupted`) both finish them through this."""
        unfinished: set[str] = set()
        for journal, raw in self.wb.redis().hgetall(deletion_journal_key(self.instance)).items():
            note = json.loads(raw)
            if not _abandoned(note):
                continue
            self.texts |= set(note["texts"])
            self.ids |= set(note["ids"])
            self.chains |= set(note["chains"])
            self.tables |= set(note["tables"])
            self.removed |= {r["id"]: MemoryRecord.model_validate(r) for r in note["removed"]}
            unfinished |= set(note.get("deleting", []))
            self.resumed.append(journal)
        for chain_id in sorted(unfinished):
            self._chain_again(chain_id)
        return len(self.resumed)

    def _chain_again(self, chain_id: str) -> None:
        """Remove what a killed deletion left of a chain it was removing (keys, outbox entries, index rows)
        while the chain's tombstone stands: no turn was stored on it since, so all of it is the deletion's
        to remove. Past the tombstone the id may be in use again: only the index rows of the messages it
        had noted, and those made from them, are removed; anything else left has its text redacted by
        `finish`, for the user to delete again."""
        if not self.wb.redis().exists(chain_tombstone(self.instance, chain_id)):
            if rows := self._made_from_noted(chain_id):
                with self._indexing_paused():
                    self._remember(rows)
                    self.wb.index.delete(self.instance, [m.id for m in rows])
            self.notes.append(note := f"chain {chain_id!r}, whose deletion was interrupted over "
                              f"{TOMBSTONE_TTL_S // 60} minutes ago, may be in use again: the index rows of its "
                              "deleted messages were removed and their copies redacted, anything else left of it "
                              "stays; delete it again to remove it")
            log.warning("deletion in instance %r: %s", self.instance, note)  # a sweep has no report to say it
            return
        try:
            again = self.chain(chain_id)
        except NothingToDelete:  # the kill came after its keys and rows went: only its record was missing
            deleted.record(self.wb.redis(), self.instance, chains=[chain_id])
            self.chains.add(chain_id)
            return
        self.notes.append(f"what the interrupted deletion had left of chain {chain_id!r} was removed "
                          f"({again.thoughts} thoughts, {again.outbox} queued index writes, "
                          f"{again.index_rows} index rows)")

    def _made_from_noted(self, chain_id: str) -> list[MemoryRecord]:
        """The chain's index rows that are messages a killed deletion noted (`ids`), or were made from them
        (observations, important copies, a summary drawn from them): its own, whatever the id holds now."""
        return [m for m in self.wb.index.records(self.instance, chains=[chain_id])
                if m.id in self.ids or m.metadata.get("source_thought") in self.ids
                or self.ids & set(m.metadata.get("source_ids") or ())]

    def _save(self) -> None:
        """Write down what this deletion must still erase, before it removes anything more (see the module
        docstring); `finish` drops it."""
        note = {"texts": sorted(self.texts), "ids": sorted(self.ids), "chains": sorted(self.chains),
                "deleting": sorted(self.deleting),
                "tables": sorted(self.tables), "removed": [r.model_dump(mode="json") for r in self.removed.values()],
                "host": socket.gethostname(), "pid": os.getpid(), "started": start_time(os.getpid()),
                "at": time.time()}
        self.wb.redis().hset(deletion_journal_key(self.instance), self.journal, json.dumps(note))
        self.saved = True

    def _rewrites(self, instance: str) -> None:
        """The instance's tables are written to: their files are rewritten at the end (`finish`). Noted
        before the rows are written, so a deletion killed midway and resumed rewrites them too, though
        its redaction then finds nothing left to change there. A deletion in the shared instance rewrote
        every instance's tables: among 800 instances a shared memory took 20 s to delete."""
        if not (tables := instance_tables(instance)) <= self.tables:
            self.tables |= tables
            if self.saved:
                self._save()

    def drop_note(self) -> None:
        """Drop this deletion's note when it found nothing to remove: a note is taken over only once its
        process is gone (`resume`), so a running API kept one for every absent chain or memory it was
        asked to delete (a soak's `forget` of an absent chain: one more field of `deleting:<instance>`
        each time, read whole by every later deletion), and after a restart the next deletion reported
        them all as deletions interrupted midway."""
        if self.saved:
            self.wb.redis().hdel(deletion_journal_key(self.instance), self.journal)
            self.saved = False

    def finish(self, report: DeletionReport | None = None) -> None:
        """Close the fact histories through what was removed, replace the copies of what was removed by
        "[deleted]", then rewrite the files on disk."""
        # A correction of what was removed quoted it ("… (correcting: <it>)"): `mend` writes it again, and the
        # chains that retrieved it (in place of the fact it had superseded) hold copies of the old words.
        quoting = {c for m in self.removed.values() if (c := m.metadata.get("superseded_by"))} - set(self.removed)
        mended = mend(self.wb.index, self.instance, self.removed)
        copies = redact_copies(self.wb, self.instance, self.texts, self.ids, self.chains, quoting=quoting,
                               rewriting=self._rewrites)
        shared = self.instance == SHARED_INSTANCE
        marks = LabelStore(self.wb.pool()).forget(None if shared else [self.instance], self.ids | set(self.removed))
        # The copies are gone: the note of what to erase goes before the files are rewritten, so they keep
        # no copy of it either.
        if done := ([self.journal] if self.saved else []) + self.resumed:
            self.wb.redis().hdel(deletion_journal_key(self.instance), *done)
            self.saved = False
        self.tables |= instance_tables(self.instance)
        notes = compact(self.wb, [*self.tables, *(["relevance_mark"] if marks else [])])
        if report is not None:
            report.copies += copies
            report.marks += marks
            report.notes += self.notes + mended.notes() + notes
            if self.resumed:
                n = len(self.resumed)
                report.notes.append(f"{'a deletion' if n == 1 else f'{n} deletions'} in this instance had been "
                                    "interrupted before its copies were erased: finished now (the copies in "
                                    "other chains redacted, the files rewritten)")

    # -- targets ----------------------------------------------------------------------------

    def chain(self, chain_id: str) -> DeletionReport:
        """Remove a chain: every key of it, its feedback, outbox entries and index rows."""
        validate_id(chain_id, "chain_id")
        wb, instance = self.wb, self.instance
        r = wb.redis()
        tombstone = chain_tombstone(instance, chain_id)
        earlier = r.set(tombstone, f"{time.time():.3f}", ex=TOMBSTONE_TTL_S, get=True)
        self.deleting.add(chain_id)  # in the note (`_save`) before anything of it goes: `resume` redoes it
        report = DeletionReport(target="chain", instance=instance, id=chain_id)
        provenance.ensure(wb.thoughts, instance)
        for _ in range(MAX_PASSES):
            keys = provenance.chain_keys(wb.thoughts, instance, chain_id)
            if not keys:
                break
            self._remove_keys(chain_id, keys, report)
        else:
            report.notes.append("keys of the chain were still being written after "
                                f"{MAX_PASSES} passes; delete it again")
        r.zrem(chains_key(instance), chain_id)
        with self._indexing_paused():
            report.outbox = wb.thoughts.outbox_drop(instance, chain_id)
            self._remember(wb.index.records(instance, chains=[chain_id]))
            report.index_rows = wb.index.delete_chain(instance, chain_id)
        if not report.removed_anything:
            if earlier is None:
                r.delete(tombstone)  # nothing was ever there: the id stays free
            raise NothingToDelete(f"no chain {chain_id!r} in instance {instance!r}")
        # For good, by its id alone: the next import of an export that still holds the conversation
        # leaves it out (`core.admin.deleted`).
        deleted.record(r, instance, chains=[chain_id])
        report.notes.append(f"new turns on chain {chain_id!r} are refused for {TOMBSTONE_TTL_S // 60} "
                            "minutes; continue under another chain id")
        report.notes.append("a later import of a file holding this conversation leaves it out, unless asked "
                            "to include what you deleted")
        self.chains.add(chain_id)
        return report

    def memory(self, memory_id: str, *, chain_id: str | None = None) -> DeletionReport:
        """Remove one memory: its index row; a thought from Redis too (found through its index row, or
        in `chain_id` when it is not indexed yet); a bank entry or summary from its bank.

        A bank entry or summary is named by its index row's id ("be-…", "bs-…") or by its own id (the one
        `memory_bank_add` and the bank's snapshot return). An observation formed from a message takes its
        statement from the message, and a message's important copy the message (`_observation`). An id
        that could name two things names, in this order: the memory-index row with that id (a thought, an
        added memory; a bank item sharing its id stays, and a note says how to name it); a bank item by
        its row id; a bank entry or summary by its own id, refused as ambiguous when an entry and a
        summary share it. Deleting a bank summary deletes the entries it compressed (it is what stands
        for them)."""
        validate_id(memory_id, "memory id")
        if chain_id is not None:
            validate_id(chain_id, "chain_id")
        wb, instance = self.wb, self.instance
        report = DeletionReport(target="memory", instance=instance, id=memory_id)
        rows = wb.index.records(instance, ids=[memory_id])
        row = rows[0] if rows else None
        chain = row.chain_id if row is not None and row.kind in THOUGHT_KINDS else chain_id
        recorded = [memory_id]
        if (row is not None and row.kind not in THOUGHT_KINDS and row.chain_id
                and row.metadata.get("source_thought")):
            # The message went too when it said nothing else: an import of its file leaves it out as well.
            recorded += self._observation(row, row.chain_id, report)
        elif chain:
            self._thought(memory_id, chain, row, report)
        elif row is not None and row.kind not in BANK_KINDS:
            self._remember(rows)
            report.index_rows = wb.index.delete(instance, [memory_id])
            if same := bank_items_with_own_id(self.wb, self.instance, memory_id):
                report.notes.append(f"{' and '.join(same)} also {'has' if len(same) == 1 else 'have'} the id "
                                    f"{memory_id!r} and stayed (a memory's own id names it first): forget "
                                    f"{' or '.join(repr(_index_id(k, memory_id)) for k in same.values())} "
                                    "to delete it")
        elif (index_id := self._bank_item_named(memory_id, row)) is not None:
            self._delete_bank_item(index_id, report)
        if not report.removed_anything:
            raise NothingToDelete(f"no memory {memory_id!r} in instance {instance!r}")
        if (report.thoughts or report.index_rows) and not report.bank_rows:
            # A message or memory an import wrote would be written again by the next import of its file.
            deleted.record(wb.redis(), instance, memories=recorded)
        return report

    def _thought(self, thought_id: str, chain: str, row: MemoryRecord | None, report: DeletionReport) -> None:
        """Remove a thought of `chain` from Redis with its index row (`row`, None when it is not indexed
        yet) and what formation made of it."""
        wb, instance, store = self.wb, self.instance, self.wb.thoughts
        had_feedback = bool(store.answers_with_feedback([thought_id]))
        said = store.get_many(instance, chain, [thought_id])
        self.texts |= {t.thought for t in said if t.category in TEXT_CATEGORIES}
        self.ids.add(thought_id)
        self.chains.add(chain)
        self._remember([row] if row is not None else [])  # written down before anything goes
        with self._indexing_paused():
            # The chain's served-request results stay, their copies of the text redacted below: a
            # client's retry of any of its turns gets its result, and stores nothing again.
            gone = store.delete_thought(instance, chain, thought_id)
            if gone and not store.chain_meta(instance, chain):
                report.notes.append(f"chain {chain} had nothing else left and was removed")
                self._remember(wb.index.records(instance, chains=[chain]))
                report.index_rows += wb.index.delete_chain(instance, chain)
            # The observations formed from a message (core.formation) go with it.
            formed = row.metadata.get("observations", []) if row is not None else []
            self._remember(wb.index.records(instance, ids=formed))
            report.index_rows += wb.index.delete(instance, [*(gone or [thought_id]), *formed])
            report.index_rows += wb.index.delete_derived(instance, gone or [thought_id])
        report.thoughts = len(gone)
        report.feedback = int(had_feedback and bool(gone))
        self.ids.update(gone)

    def _observation(self, observation: MemoryRecord, chain: str, report: DeletionReport) -> list[str]:
        """Remove an observation and its statement from the message it was formed from (an assistant is
        given observations, and forgetting one forgets the fact, not only its row): the whole message
        when it said nothing else, else the statement's words, which `finish` redacts there and in every
        copy, the message's other observations kept. An important copy (or any row formed from a message,
        `source_thought`) goes the same way: its text is the whole message's. Returns the id of the message
        when it was deleted."""
        wb, instance = self.wb, self.instance
        source = observation.metadata["source_thought"]
        said = wb.thoughts.get_many(instance, chain, [source])
        self._remember([observation])
        if not said:
            report.index_rows = wb.index.delete(instance, [observation.id])
            report.notes.append(f"the message it came from in chain {chain!r} had been deleted already")
            return []
        rows = wb.index.records(instance, ids=[source])
        message = rows[0] if rows else None
        formed = message.metadata.get("observations", []) if message is not None else []
        others = [o for o in formed if o != observation.id]
        span = statement_in(observation.content, said[0].thought)
        if not others or (span is not None and not _WORD.search(said[0].thought.replace(span, ""))):
            self._thought(source, chain, message, report)  # its observations go with it
            report.notes.append(f"the message it came from in chain {chain!r} said nothing else and was "
                                "deleted")
            return [source]
        report.index_rows = wb.index.delete(instance, [observation.id])
        if span is None:
            return self._restated(observation, chain, said[0].thought, message, others, report)
        report.notes.append(f"removed from the message it came from in chain {chain!r} (the message's other "
                            "statements stay)")
        self._statement_gone(observation, chain, [span], others, report)
        return []

    def _restated(self, observation: MemoryRecord, chain: str, text: str, message: MemoryRecord | None,
                  others: list[str], report: DeletionReport) -> list[str]:
        """Forget a fact its message does not say word for word (an LLM restated it): the message's
        statements it was restated from, found by their words (`sources.restated_from`), become
        "[deleted]"; the whole message goes when they were all it said. Returns the id of the message
        when it was deleted."""
        source = observation.metadata["source_thought"]
        by = "an LLM" if observation.metadata.get("formed_by") == "llm" else "formation"
        rows = self.wb.index.records(self.instance, ids=others)
        spans = restated_from(observation.content, [r.content for r in rows], text)
        if not spans:
            report.notes.append(f"the message it came from in chain {chain!r} does not hold these words ({by} "
                                "restated the fact) and no statement of it shares a word with them: it stays; "
                                f"forget {source!r} to delete it too")
            return []
        rest = text
        for span in spans:
            rest = rest.replace(span, "")
        if not _WORD.search(rest):
            self._thought(source, chain, message, report)
            report.notes.append(f"the message it came from in chain {chain!r} was deleted: the fact was restated "
                                f"by {by}, and the statements sharing the most words with it were all the message "
                                f"said (its {len(rows)} other {'fact' if len(rows) == 1 else 'facts'} went with it)")
            return [source]
        report.notes.append(f"removed from the message it came from in chain {chain!r}: the fact was restated "
                            f"by {by}, and the {'statement' if len(spans) == 1 else f'{len(spans)} statements'} "
                            "sharing the most words with it became [deleted] (the message's other statements "
                            "stay)")
        self._statement_gone(observation, chain, spans, others, report)
        return []

    def _statement_gone(self, observation: MemoryRecord, chain: str, spans: list[str], others: list[str],
                        report: DeletionReport) -> None:
        """The message keeps its other observations and loses `spans` (redacted by `finish`); its row
        records the place of the forgotten fact, which formation gives no other fact; the chain's summary
        made from it goes, as it goes with a deleted message: an LLM's summary says the fact in its own
        words, which no redaction finds (`workbench formation run` makes it again from what is left)."""
        wb, instance = self.wb, self.instance
        source = observation.metadata["source_thought"]
        self.texts |= set(spans)
        self.chains.add(chain)
        self._save()
        place = place_of(instance, source, observation.id)
        with wb.pool().connection() as conn:
            # The place appended in the statement itself: a forget of another fact of the message may run
            # beside it.
            conn.execute("UPDATE memory SET metadata = jsonb_set(metadata, '{observations}', %(others)s) || "
                         "CASE WHEN %(place)s::jsonb IS NULL THEN '{}'::jsonb ELSE jsonb_build_object(%(key)s::text, "
                         "COALESCE(metadata->%(key)s::text, '[]'::jsonb) || %(place)s::jsonb) END "
                         "WHERE instance = %(instance)s AND id = %(id)s",
                         {"others": Jsonb(others), "place": None if place is None else Jsonb([place]),
                          "key": FORGOTTEN_PLACES, "instance": instance, "id": source}, prepare=False)
            summaries = [r[0] for r in conn.execute(
                "SELECT id FROM memory WHERE instance = %s AND kind = 'session_summary' "
                "AND metadata->'source_ids' ? %s", (instance, source), prepare=False)]
        if summaries:
            self._remember(wb.index.records(instance, ids=summaries))
            report.index_rows += wb.index.delete(instance, summaries)
            summarise_again(wb, instance, chain)
            report.notes.append("the chain's summary, made from the message, was deleted: `workbench formation "
                                "run` makes it again from what is left")

    def bank(self, name: str, *, keep: bool = False) -> DeletionReport:
        """Remove a memory bank with its entries, summaries, compression events and index rows; with
        `keep`, what it holds only (`workbench bank clear`): the bank and its settings stay. Clearing is
        deleting too: it removed the rows alone, and their text stayed in the copies that quoted them
        and in the files on disk."""
        validate_id(name, "bank name")
        instance = self.instance
        report = DeletionReport(target="bank", instance=instance, id=name)
        with self.wb.pool().connection() as conn, conn.transaction():
            if not bank_db.lock_existing(conn, instance, name):
                raise NothingToDelete(f"no memory bank named {name!r} in instance {instance!r}")
            stats = bank_db.stats_row(conn, instance, name)
            indexed = conn.execute("SELECT id, content FROM memory WHERE instance = %s AND kind = ANY(%s) "
                                   "AND metadata->>'bank' = %s", (instance, list(BANK_KINDS), name),
                                   prepare=False).fetchall()
            bank_db.clear(conn, instance, name) if keep else bank_db.drop(conn, instance, name)
            report.index_rows = bank_db.delete_index_rows(conn, instance, name)
        self.ids |= {i for i, _ in indexed}
        self.texts |= {c for _, c in indexed}
        self.tables.update(BANK_TABLES)
        self._save()
        report.bank_rows = stats["total_entries"] + stats["summaries"]
        return report

    # -- steps ------------------------------------------------------------------------------

    @contextmanager
    def _indexing_paused(self) -> Iterator[None]:
        """Hold the outbox lock (`core.conversation.indexing`) while queued index writes are dropped and
        index rows deleted: a sync in flight read the thoughts before they went, and would write their
        rows back after. Past the sync's own wait, it goes on without the lock, as a sync does. The hold's
        token names this process as a sync's does (`holder_token`): a deletion killed while holding it
        made every sync wait LOCK_WAIT_S (10 s) for its random token to expire; a sync now takes it over
        at once, as this takes over a dead sync's."""
        lock = self.wb.redis().lock(OUTBOX_LOCK, timeout=LOCK_TTL_MS / 1000, sleep=0.005,
                                    raise_on_release_error=False)
        held = _hold(self.wb.redis(), lock)
        try:
            yield
        finally:
            if held:
                try:
                    lock.release()
                except LockNotOwnedError:  # the work outlasted the lock's expiry: it is done all the same
                    log.warning("deletion: the outbox lock expired before the index rows were deleted")

    def _remember(self, records: list[MemoryRecord]) -> None:
        """Note records about to be removed (their ids, text, and the rows as they were), written down
        (`_save`) before they go."""
        self.ids |= {r.id for r in records}
        self.texts |= {r.content for r in records}
        self.removed |= {r.id: r for r in records}
        self._save()

    def _remove_keys(self, chain_id: str, keys: list[str], report: DeletionReport) -> None:
        """Delete keys of the chain (and the feedback of its answers, those whose thought is gone
        included), noting the thoughts' text."""
        r, store = self.wb.redis(), self.wb.thoughts
        # Read before the chain's sets go with its keys: the stray answers (a turn that raced an earlier
        # deletion wrote its feedback after its thoughts went), the memories it retrieved.
        stray = provenance.chain_feedback(store, self.instance, chain_id)
        p = r.pipeline(transaction=False)
        for key in keys:
            p.type(key)
        kinds = dict(zip(keys, p.execute(), strict=True))
        meta = chain_meta_key(self.instance, chain_id)
        hashes = [k for k, kind in kinds.items() if kind == "hash" and k != meta]
        p = r.pipeline(transaction=False)
        for key in hashes:
            p.hgetall(key)
        thoughts = [h for h in p.execute() if h]
        self.texts |= {h["thought"] for h in thoughts if h.get("category") in TEXT_CATEGORIES and "thought" in h}
        self.ids |= {h["id"] for h in thoughts if "id" in h}
        self.chains.add(chain_id)
        self._save()  # before the keys go: their text is known nowhere else then
        report.thoughts += len(hashes)
        report.requests += sum(kind == "string" for kind in kinds.values())
        p = r.pipeline(transaction=False)
        provenance.forget(p, r, self.instance, chain_id)
        p.execute()
        r.delete(*keys)  # one slot: one command, even on a cluster
        self._remove_feedback(list(dict.fromkeys([h["id"] for h in thoughts if "id" in h] + stray)), report)

    def _remove_feedback(self, answer_ids: list[str], report: DeletionReport) -> None:
        if not answer_ids:
            return
        r, instance = self.wb.redis(), self.instance
        p = r.pipeline(transaction=False)
        for a in answer_ids:  # one command each: on a cluster the hashes live in different slots
            p.delete(feedback_key(a))
        report.feedback += sum(p.execute())
        r.zrem(feedback_index_key(instance), *answer_ids)
        r.zrem(feedback_pending_key(instance), *answer_ids)
        self.wb.thoughts.feedback_changed(instance, answer_ids)

    def _bank_item_named(self, memory_id: str, row: MemoryRecord | None) -> str | None:
        """The index id of the bank entry or summary `memory_id` names, or None. First as an index id
        ("be-<entry id>", "bs-<summary id>": a bank row, or a bank item whose row is gone), then as an
        entry's or a summary's own id. An entry and a summary may share an own id (a caller chooses an
        entry's): then the id is refused as ambiguous, naming the two index ids, rather than guessing
        (a summary takes the entries it compressed with it)."""
        if row is not None and row.kind in BANK_KINDS:
            return memory_id
        prefixed = bank_item_of(memory_id)
        if prefixed is not None:
            with self.wb.pool().connection() as conn:
                if bank_db.owner_of(conn, self.instance, *prefixed) is not None:
                    return memory_id
        own = bank_items_with_own_id(self.wb, self.instance, memory_id)
        if len(own) > 1:
            raise InvalidInput(f"{memory_id!r} is the id of a bank entry and of a bank summary: forget "
                               f"{entry_index_id(memory_id)!r} for the entry or {summary_index_id(memory_id)!r} "
                               "for the summary (and the entries it compressed)")
        if own:
            return _index_id(next(iter(own.values())), memory_id)
        return memory_id if prefixed is not None else None  # a row already gone: its leftovers, if any

    def _delete_bank_item(self, index_id: str, report: DeletionReport) -> None:
        wb, instance = self.wb, self.instance
        kind, item_id = bank_item_of(index_id)
        with wb.pool().connection() as conn, conn.transaction():
            bank = bank_db.owner_of(conn, instance, kind, item_id)
            if bank is not None:
                bank_db.lock_existing(conn, instance, bank)
            if kind == ENTRY_KIND:
                told = bank_db.delete_entry(conn, instance, item_id)
                gone = [item_id] if told.removed else []
                index_ids = [entry_index_id(i) for i in gone]
                if told.summary_dropped:
                    index_ids.append(summary_index_id(told.summary_id))
            else:
                entries = bank_db.delete_summary(conn, instance, item_id)
                gone = ([item_id] if bank is not None else []) + entries
                index_ids = [summary_index_id(item_id)] + [entry_index_id(i) for i in entries]
                if entries:
                    report.notes.append(f"{len(entries)} entries compressed into this summary were deleted "
                                        "with it")
        index_ids = list(dict.fromkeys(index_ids + [index_id]))
        self._remember(wb.index.records(instance, ids=index_ids))
        self.tables.update(BANK_TABLES)
        report.bank_rows = len(gone)
        report.index_rows = wb.index.delete(instance, index_ids)
        if kind == ENTRY_KIND and told.summary_id is not None:
            self._entry_left_summary(bank, told, report)

    def _entry_left_summary(self, bank: str, told: bank_db.EntryDeleted, report: DeletionReport) -> None:
        """The summary that compressed a deleted entry quoted it: it was told again without it (its index row
        written anew) or, standing for it alone, deleted; its copies of the entry's line are redacted."""
        self.ids.add(summary_index_id(told.summary_id))
        self.texts.add(told.quoted)
        self._save()
        if told.summary_dropped:
            report.bank_rows += 1
            report.notes.append("the summary that had compressed it stood for it alone and was deleted")
            return
        report.notes += [*MemoryBank(self.wb, self.instance, bank).index_pending(),
                         "the summary that had compressed it was written again by rule from its other steps"]


def bank_items_with_own_id(wb: Workbench, instance: str, item_id: str) -> dict[str, BankKind]:
    """The bank entry and the bank summary of the instance whose own id is `item_id` (none, one, or
    both: an entry's id is the caller's choice), as {"an entry of the bank 'ops'": kind}."""
    found: dict[str, BankKind] = {}
    with wb.pool().connection() as conn:
        for kind, what in ((ENTRY_KIND, "an entry"), (SUMMARY_KIND, "a summary")):
            if (bank := bank_db.owner_of(conn, instance, kind, item_id)) is not None:
                found[f"{what} of the bank {bank!r}"] = kind
    return found


def _index_id(kind: BankKind, item_id: str) -> str:
    return entry_index_id(item_id) if kind == ENTRY_KIND else summary_index_id(item_id)


def delete_chain(wb: Workbench, instance: str, chain_id: str) -> DeletionReport:
    """Remove a chain from every store, its copies elsewhere and the files on disk."""
    return _one(wb, instance, "chain", chain_id, lambda d: d.chain(chain_id))


def delete_memory(wb: Workbench, instance: str, memory_id: str, *, chain_id: str | None = None
                  ) -> DeletionReport:
    """Remove one memory from every store, its copies elsewhere and the files on disk."""
    return _one(wb, instance, "memory", memory_id, lambda d: d.memory(memory_id, chain_id=chain_id))


def delete_bank(wb: Workbench, instance: str, name: str) -> DeletionReport:
    """Remove a memory bank from every store, its copies elsewhere and the files on disk."""
    return _one(wb, instance, "bank", name, lambda d: d.bank(name))


def clear_bank(wb: Workbench, instance: str, name: str) -> DeletionReport:
    """Remove what a memory bank holds from every store, its copies elsewhere and the files on disk; the
    bank and its settings stay."""
    return _one(wb, instance, "bank", name, lambda d: d.bank(name, keep=True))


def _one(wb: Workbench, instance: str, kind: Literal["chain", "memory", "bank"], ident: str, target
         ) -> DeletionReport:
    """One target removed, and the deletions of the instance killed midway finished with it (`resume`):
    the same command run again after a crash finds the target gone and finishes erasing its copies."""
    deletion = Deletion(wb, instance)
    resumed = deletion.resume()
    try:
        report = target(deletion)
    except NothingToDelete:
        if not resumed:
            deletion.drop_note()
            raise
        report = DeletionReport(target=kind, instance=instance, id=ident,
                                notes=[f"no {kind} {ident!r} is left in instance {instance!r} to delete"])
    deletion.finish(report)
    return report


def _hold(r, lock) -> bool:
    """Take the outbox `lock` for a token naming this process, waiting up to LOCK_WAIT_S; a hold of a
    process of this host that died is freed at once (redis-py's compare-and-delete), not waited out."""
    token, deadline = holder_token(), time.monotonic() + LOCK_WAIT_S
    while not lock.acquire(blocking=False, token=token):
        holder = r.get(OUTBOX_LOCK)
        if holder is not None and holder_dead(holder):
            try:
                lock.do_release(holder)
                log.info("deletion: freed the outbox lock of a process that died holding it")
            except LockNotOwnedError:  # taken over or released meanwhile
                pass
            continue
        if time.monotonic() > deadline:
            return False
        time.sleep(lock.sleep)
    return True


def finish_interrupted(wb: Workbench, instances: list[str]) -> dict[str, int]:
    """Finish the deletions killed midway in `instances` (what `resume` does for the next deletion), for the
    sweep: without it a deletion killed midway stayed unfinished (its chain's rest, the copies of its text)
    until the next deletion in its instance. Returns how many were finished, by instance."""
    if not instances:
        return {}
    r = wb.redis()
    p = r.pipeline(transaction=False)
    for instance in instances:  # one command each: on a cluster the notes live in different slots
        p.exists(deletion_journal_key(instance))
    finished = {}
    for instance, pending in zip(instances, p.execute(), strict=True):
        if not pending:
            continue
        deletion = Deletion(wb, instance)
        if n := deletion.resume():
            deletion.finish()
            finished[instance] = n
            for note in deletion.notes:
                log.info("sweep: instance %r: %s", instance, note)
    return finished


def _abandoned(note: dict) -> bool:
    """Whether the deletion that wrote `note` is dead: its process is gone (this host), or it has not
    written for JOURNAL_STALE_S (another host)."""
    if note.get("host") != socket.gethostname():
        return time.time() - float(note.get("at", 0)) > JOURNAL_STALE_S
    pid = int(note.get("pid", 0))
    return not (pid and process_alive(pid) and start_time(pid) == note.get("started"))
