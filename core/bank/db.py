"""Memory banks on Postgres: banks, their entries, the summaries that compress them, compression events.

A bank is keyed by (instance, name). Its row is the bank's lock: every write takes it first (an upsert
or SELECT ... FOR UPDATE), so concurrent writers of one bank take turns and never compress an entry
twice. Entries keep `compressed_into` once a summary stands for them; deleting a summary deletes the
entries it compressed (the FK cascades), deleting a bank deletes everything of it.

`indexed` marks rows already written to the memory index; the bank indexes the rest after each write,
so a row stored while the index write failed is indexed by the next one instead of being lost.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from typing import Any, NamedTuple

import psycopg

from core.bank.compress import rule_summary, step_line
from core.bank.index_ids import BANK_KINDS
from core.bank.match import case_blind_patterns
from core.bank.types import (NO_SKILL, SUMMARY_SKILL, BankInfo, CompressionEvent, MemoryEntry, MemoryQuery,
                             MemorySummary)

DDL = """
CREATE TABLE IF NOT EXISTS bank (
    instance              text        NOT NULL,
    name                  text        NOT NULL,
    max_entries           integer     NOT NULL,
    compression_threshold integer     NOT NULL,
    next_step             integer     NOT NULL DEFAULT 1,
    created_at            timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (instance, name)
);
CREATE TABLE IF NOT EXISTS bank_summary (
    instance       text             NOT NULL,
    bank           text             NOT NULL,
    id             text             NOT NULL,
    ts             timestamptz      NOT NULL,
    title          text             NOT NULL,
    content        text             NOT NULL,
    source_entries text[]           NOT NULL,
    tags           text[]           NOT NULL DEFAULT '{}',
    importance     double precision NOT NULL,
    first_step     integer          NOT NULL DEFAULT 0,
    period_start   timestamptz,
    period_end     timestamptz,
    method         text             NOT NULL,
    indexed        boolean          NOT NULL DEFAULT false,
    PRIMARY KEY (instance, id),
    FOREIGN KEY (instance, bank) REFERENCES bank (instance, name) ON DELETE CASCADE
);
CREATE TABLE IF NOT EXISTS bank_entry (
    instance        text             NOT NULL,
    bank            text             NOT NULL,
    id              text             NOT NULL,
    seq             bigserial,
    ts              timestamptz      NOT NULL,
    skill_name      text             NOT NULL,
    thinking        text             NOT NULL,
    command         text             NOT NULL,
    result          text             NOT NULL,
    summary         text             NOT NULL,
    importance      double precision NOT NULL,
    tags            text[]           NOT NULL DEFAULT '{}',
    step_number     integer          NOT NULL,
    compressed_into text,
    indexed         boolean          NOT NULL DEFAULT false,
    PRIMARY KEY (instance, id),
    FOREIGN KEY (instance, bank) REFERENCES bank (instance, name) ON DELETE CASCADE,
    FOREIGN KEY (instance, compressed_into) REFERENCES bank_summary (instance, id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS bank_entry_live ON bank_entry (instance, bank, ts, seq)
    WHERE compressed_into IS NULL;
CREATE INDEX IF NOT EXISTS bank_entry_summary ON bank_entry (instance, compressed_into);
CREATE INDEX IF NOT EXISTS bank_entry_bank ON bank_entry (instance, bank, ts);
CREATE INDEX IF NOT EXISTS bank_summary_bank ON bank_summary (instance, bank, ts);
CREATE TABLE IF NOT EXISTS bank_event (
    id                 bigserial   PRIMARY KEY,
    instance           text        NOT NULL,
    bank               text        NOT NULL,
    at                 timestamptz NOT NULL,
    summary_id         text,
    entries_compressed integer     NOT NULL,
    live_before        integer     NOT NULL,
    live_after         integer     NOT NULL,
    method             text        NOT NULL,
    model              text,
    tokens             integer,
    note               text        NOT NULL DEFAULT '',
    FOREIGN KEY (instance, bank) REFERENCES bank (instance, name) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS bank_event_bank ON bank_event (instance, bank, at);
"""

ENTRY_COLS = "id, ts, skill_name, thinking, command, result, summary, importance, tags, step_number"
SUMMARY_COLS = ("id, ts, title, content, source_entries, tags, importance, period_start, period_end, method, "
                "first_step")


def _entry_text(alias: str = "") -> str:
    """SQL for the text an entry's keywords are looked for in: all its fields and tags."""
    a = f"{alias}." if alias else ""
    return (f"concat_ws(' ', {a}skill_name, {a}thinking, {a}command, {a}result, {a}summary, "
            f"array_to_string({a}tags, ' '))")


ENTRY_TEXT, COMPRESSED_ENTRY_TEXT = _entry_text(), _entry_text("e")  # constants: SQL text, never values


def entry_from_row(r: Sequence[Any]) -> MemoryEntry:
    return MemoryEntry(id=r[0], timestamp=r[1], skill_name=r[2], thinking=r[3], command=r[4], result=r[5],
                       summary=r[6], importance=r[7], tags=list(r[8]), step_number=r[9])


def summary_from_row(r: Sequence[Any]) -> MemorySummary:
    return MemorySummary(id=r[0], timestamp=r[1], title=r[2], content=r[3], source_entries=list(r[4]),
                         tags=list(r[5]), importance=r[6], period_start=r[7], period_end=r[8], method=r[9])


# -- writes (inside the caller's transaction) -------------------------------------------------------

def lock_bank(conn: psycopg.Connection, instance: str, name: str, max_entries: int, threshold: int) -> int:
    """Create the bank if needed, record its settings, lock its row; returns the next free step number."""
    return conn.execute(
        """INSERT INTO bank (instance, name, max_entries, compression_threshold) VALUES (%s, %s, %s, %s)
           ON CONFLICT (instance, name) DO UPDATE SET max_entries = EXCLUDED.max_entries,
               compression_threshold = EXCLUDED.compression_threshold
           RETURNING next_step""", (instance, name, max_entries, threshold)).fetchone()[0]


def lock_existing(conn: psycopg.Connection, instance: str, name: str) -> bool:
    return conn.execute("SELECT 1 FROM bank WHERE instance = %s AND name = %s FOR UPDATE",
                        (instance, name)).fetchone() is not None


def insert_entry(conn: psycopg.Connection, instance: str, bank: str, e: MemoryEntry) -> bool:
    """False when an entry with this id already exists in the instance (then nothing changes)."""
    cur = conn.execute(
        f"""INSERT INTO bank_entry (instance, bank, {ENTRY_COLS}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s,
                %s, %s, %s) ON CONFLICT (instance, id) DO NOTHING""",
        (instance, bank, e.id, e.timestamp, e.skill_name, e.thinking, e.command, e.result, e.summary,
         e.importance, e.tags, e.step_number))
    if cur.rowcount != 1:
        return False
    conn.execute("UPDATE bank SET next_step = GREATEST(next_step, %s) WHERE instance = %s AND name = %s",
                 (e.step_number + 1, instance, bank))
    return True


def stored_entry(conn: psycopg.Connection, instance: str, entry_id: str) -> tuple[str, MemoryEntry] | None:
    """The entry with this id in the instance, with the bank that holds it."""
    row = conn.execute(f"SELECT bank, {ENTRY_COLS} FROM bank_entry WHERE instance = %s AND id = %s",
                       (instance, entry_id)).fetchone()
    return (row[0], entry_from_row(row[1:])) if row else None


def insert_summary(conn: psycopg.Connection, instance: str, bank: str, s: MemorySummary,
                   first_step: int) -> None:
    conn.execute(
        f"""INSERT INTO bank_summary (instance, bank, {SUMMARY_COLS})
            VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)""",
        (instance, bank, s.id, s.timestamp, s.title, s.content, s.source_entries, s.tags, s.importance,
         s.period_start, s.period_end, s.method, first_step))


def mark_compressed(conn: psycopg.Connection, instance: str, ids: Sequence[str], summary_id: str) -> int:
    return conn.execute("UPDATE bank_entry SET compressed_into = %s WHERE instance = %s AND id = ANY(%s) "
                        "AND compressed_into IS NULL", (summary_id, instance, list(ids))).rowcount


def insert_event(conn: psycopg.Connection, instance: str, bank: str, at: datetime, summary_id: str,
                 compressed: int, live_before: int, method: str, model: str | None, tokens: int | None,
                 note: str) -> None:
    conn.execute(
        """INSERT INTO bank_event (instance, bank, at, summary_id, entries_compressed, live_before,
               live_after, method, model, tokens, note)
           VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)""",
        (instance, bank, at, summary_id, compressed, live_before, live_before - compressed, method, model,
         tokens, note))


# -- reads ------------------------------------------------------------------------------------------

def live_entries(conn: psycopg.Connection, instance: str, bank: str) -> list[MemoryEntry]:
    """Uncompressed entries, oldest first (time, then insertion order)."""
    rows = conn.execute(f"SELECT {ENTRY_COLS} FROM bank_entry WHERE instance = %s AND bank = %s "
                        "AND compressed_into IS NULL ORDER BY ts, seq", (instance, bank)).fetchall()
    return [entry_from_row(r) for r in rows]


def all_entries(conn: psycopg.Connection, instance: str, bank: str) -> list[tuple[MemoryEntry, str | None]]:
    rows = conn.execute(f"SELECT {ENTRY_COLS}, compressed_into FROM bank_entry "
                        "WHERE instance = %s AND bank = %s ORDER BY ts, seq", (instance, bank)).fetchall()
    return [(entry_from_row(r), r[10]) for r in rows]


def summaries(conn: psycopg.Connection, instance: str, bank: str) -> list[MemorySummary]:
    rows = conn.execute(f"SELECT {SUMMARY_COLS} FROM bank_summary WHERE instance = %s AND bank = %s "
                        "ORDER BY ts, id", (instance, bank)).fetchall()
    return [summary_from_row(r) for r in rows]


def events(conn: psycopg.Connection, instance: str, bank: str) -> list[CompressionEvent]:
    rows = conn.execute(
        "SELECT id, at, summary_id, entries_compressed, live_before, live_after, method, model, tokens, note "
        "FROM bank_event WHERE instance = %s AND bank = %s ORDER BY at, id", (instance, bank)).fetchall()
    return [CompressionEvent(id=r[0], at=r[1], summary_id=r[2], entries_compressed=r[3], live_before=r[4],
                             live_after=r[5], method=r[6], model=r[7], tokens=r[8], note=r[9]) for r in rows]


def query(conn: psycopg.Connection, instance: str, bank: str, q: MemoryQuery) -> list[MemoryEntry]:
    """Live entries and summaries matching every given filter, by importance then time, newest first.

    Keywords: any of them, as a case-insensitive substring of the text; a summary's text includes the
    entries it compressed (it stands for them: a step found before compression is found after it);
    tags: any, case-insensitive; dates: an entry's time, or the span of a summary's source entries,
    overlaps [date_from, date_to]. Case is matched the same whatever the database's locale (`match`).
    """
    rows = conn.execute(
        f"""WITH c AS (
              SELECT false AS is_summary, {ENTRY_COLS}, ts AS p0, ts AS p1, {ENTRY_TEXT} AS hay
              FROM bank_entry WHERE instance = %(i)s AND bank = %(b)s AND compressed_into IS NULL
              UNION ALL
              SELECT true, id, ts, %(skill)s, '', '', content, title, importance, tags, first_step,
                     coalesce(period_start, ts), coalesce(period_end, ts),
                     concat_ws(' ', title, content, array_to_string(tags, ' '))
              FROM bank_summary WHERE instance = %(i)s AND bank = %(b)s
            )
            SELECT {ENTRY_COLS} FROM c
            WHERE importance >= %(min)s
              AND (cardinality(%(kw)s::text[]) = 0 OR hay ~ ANY(%(kw)s::text[])
                   OR (is_summary AND EXISTS (
                       SELECT 1 FROM bank_entry e WHERE e.instance = %(i)s AND e.compressed_into = c.id
                       AND {COMPRESSED_ENTRY_TEXT} ~ ANY(%(kw)s::text[]))))
              AND (cardinality(%(tags)s::text[]) = 0
                   OR EXISTS (SELECT 1 FROM unnest(tags) t WHERE t ~ ANY(%(tags)s::text[])))
              AND (%(from)s::timestamptz IS NULL OR p1 >= %(from)s::timestamptz)
              AND (%(to)s::timestamptz IS NULL OR p0 <= %(to)s::timestamptz)
            ORDER BY importance DESC, ts DESC, id
            LIMIT %(n)s""",
        {"i": instance, "b": bank, "skill": SUMMARY_SKILL, "min": q.min_importance,
         "kw": case_blind_patterns(q.keywords), "tags": case_blind_patterns(q.tags, whole=True),
         "from": q.date_from, "to": q.date_to, "n": q.max_results}).fetchall()
    return [entry_from_row(r) for r in rows]


def bank_settings(conn: psycopg.Connection, instance: str, name: str) -> tuple[int, int] | None:
    row = conn.execute("SELECT max_entries, compression_threshold FROM bank "
                       "WHERE instance = %s AND name = %s", (instance, name)).fetchone()
    return (row[0], row[1]) if row else None


def list_banks(conn: psycopg.Connection, instance: str) -> list[BankInfo]:
    rows = conn.execute(
        """SELECT b.name, b.max_entries, b.compression_threshold, b.created_at,
                  (SELECT count(*) FROM bank_entry e WHERE e.instance = b.instance AND e.bank = b.name),
                  (SELECT count(*) FROM bank_summary s WHERE s.instance = b.instance AND s.bank = b.name),
                  (SELECT max(ts) FROM bank_entry e WHERE e.instance = b.instance AND e.bank = b.name)
           FROM bank b WHERE b.instance = %s ORDER BY b.name""", (instance,)).fetchall()
    return [BankInfo(instance=instance, name=r[0], max_entries=r[1], compression_threshold=r[2],
                     created_at=r[3], entries=r[4], summaries=r[5], last_at=r[6]) for r in rows]


def stats_row(conn: psycopg.Connection, instance: str, bank: str) -> dict[str, Any]:
    e = conn.execute(
        """SELECT count(*) FILTER (WHERE compressed_into IS NULL),
                  count(*) FILTER (WHERE compressed_into IS NOT NULL), avg(importance), min(ts), max(ts),
                  count(*) FILTER (WHERE NOT indexed)
           FROM bank_entry WHERE instance = %s AND bank = %s""", (instance, bank)).fetchone()
    s = conn.execute("SELECT count(*), count(*) FILTER (WHERE NOT indexed) FROM bank_summary "
                     "WHERE instance = %s AND bank = %s", (instance, bank)).fetchone()
    n_events = conn.execute("SELECT count(*) FROM bank_event WHERE instance = %s AND bank = %s",
                            (instance, bank)).fetchone()[0]
    skills: Counter[str] = Counter()
    for name, n in conn.execute("SELECT skill_name, count(*) FROM bank_entry "
                                "WHERE instance = %s AND bank = %s GROUP BY skill_name", (instance, bank)):
        skills[name.strip() or NO_SKILL] += n  # a blank name stored before names were stripped counts as none
    skills = dict(sorted(skills.items(), key=lambda kv: (-kv[1], kv[0])))
    return {"live_entries": e[0], "compressed_entries": e[1], "total_entries": e[0] + e[1],
            "average_importance": float(e[2]) if e[2] is not None else None, "first_entry_at": e[3],
            "last_entry_at": e[4], "summaries": s[0], "compressions": n_events, "skills": skills,
            "pending_index": e[5] + s[1]}


def unindexed(conn: psycopg.Connection, instance: str, bank: str, limit: int = 500
              ) -> tuple[list[MemoryEntry], list[MemorySummary]]:
    entries = conn.execute(f"SELECT {ENTRY_COLS} FROM bank_entry WHERE instance = %s AND bank = %s "
                           "AND NOT indexed ORDER BY ts, seq LIMIT %s", (instance, bank, limit)).fetchall()
    sums = conn.execute(f"SELECT {SUMMARY_COLS} FROM bank_summary WHERE instance = %s AND bank = %s "
                        "AND NOT indexed ORDER BY ts LIMIT %s", (instance, bank, limit)).fetchall()
    return [entry_from_row(r) for r in entries], [summary_from_row(r) for r in sums]


def mark_indexed(conn: psycopg.Connection, instance: str, entry_ids: Sequence[str], summary_ids: Sequence[str]
                 ) -> set[str]:
    """Flag rows as indexed; returns the ids that still exist (a row deleted meanwhile is not returned)."""
    found = conn.execute("UPDATE bank_entry SET indexed = true WHERE instance = %s AND id = ANY(%s) "
                         "RETURNING id", (instance, list(entry_ids))).fetchall()
    found += conn.execute("UPDATE bank_summary SET indexed = true WHERE instance = %s AND id = ANY(%s) "
                          "RETURNING id", (instance, list(summary_ids))).fetchall()
    return {r[0] for r in found}


# -- deletes ----------------------------------------------------------------------------------------

def delete_index_rows(conn: psycopg.Connection, instance: str, bank: str) -> int:
    """Every memory-index row of a bank, found by its metadata, so none survives even a failed write."""
    return conn.execute("DELETE FROM memory WHERE instance = %s AND kind = ANY(%s) "
                        "AND metadata->>'bank' = %s", (instance, list(BANK_KINDS), bank), prepare=False).rowcount


def clear(conn: psycopg.Connection, instance: str, bank: str) -> int:
    n = conn.execute("DELETE FROM bank_entry WHERE instance = %s AND bank = %s", (instance, bank)).rowcount
    conn.execute("DELETE FROM bank_summary WHERE instance = %s AND bank = %s", (instance, bank))
    conn.execute("DELETE FROM bank_event WHERE instance = %s AND bank = %s", (instance, bank))
    conn.execute("UPDATE bank SET next_step = 1 WHERE instance = %s AND name = %s", (instance, bank))
    return n


def drop(conn: psycopg.Connection, instance: str, bank: str) -> bool:
    return conn.execute("DELETE FROM bank WHERE instance = %s AND name = %s", (instance, bank)).rowcount == 1


def owner_of(conn: psycopg.Connection, instance: str, kind: str, item_id: str) -> str | None:
    """The bank that holds an entry or a summary."""
    table = "bank_entry" if kind == "bank_entry" else "bank_summary"
    row = conn.execute(f"SELECT bank FROM {table} WHERE instance = %s AND id = %s",
                       (instance, item_id)).fetchone()
    return row[0] if row else None


class EntryDeleted(NamedTuple):
    removed: bool
    summary_id: str | None = None  # the summary that had compressed the entry
    summary_dropped: bool = False  # it stood for that entry alone, and went with it
    quoted: str = ""  # the entry's line in that summary's text, as a rule summary quotes it


def delete_entry(conn: psycopg.Connection, instance: str, entry_id: str) -> EntryDeleted:
    """Delete one entry. The summary that compressed it quoted it (its step line, its tags; an LLM's in its
    own words): it is told again by rule from the entries it still stands for, and written to the memory
    index again by the bank's next indexing (`indexed` false); one that stood for this entry alone goes."""
    row = conn.execute(f"DELETE FROM bank_entry WHERE instance = %s AND id = %s RETURNING {ENTRY_COLS}, "
                       "compressed_into", (instance, entry_id)).fetchone()
    conn.execute("UPDATE bank_summary SET source_entries = array_remove(source_entries, %s) "
                 "WHERE instance = %s AND %s = ANY(source_entries)", (entry_id, instance, entry_id))
    if row is None:
        return EntryDeleted(removed=False)
    summary_id, quoted = row[10], step_line(entry_from_row(row))
    if summary_id is None:
        return EntryDeleted(removed=True)
    rest = [entry_from_row(r) for r in conn.execute(
        f"SELECT {ENTRY_COLS} FROM bank_entry WHERE instance = %s AND compressed_into = %s ORDER BY ts, seq",
        (instance, summary_id)).fetchall()]
    if not rest:
        delete_summary(conn, instance, summary_id)
        return EntryDeleted(True, summary_id, summary_dropped=True, quoted=quoted)
    title, content = rule_summary(rest)
    conn.execute(
        """UPDATE bank_summary SET title = %s, content = %s, method = 'rule', tags = %s, importance = %s,
               first_step = %s, period_start = %s, period_end = %s, indexed = false
           WHERE instance = %s AND id = %s""",
        (title, content, list(dict.fromkeys(t for e in rest for t in e.tags)), max(e.importance for e in rest),
         min(e.step_number for e in rest), rest[0].timestamp, rest[-1].timestamp, instance, summary_id))
    return EntryDeleted(True, summary_id, quoted=quoted)


def delete_summary(conn: psycopg.Connection, instance: str, summary_id: str) -> list[str]:
    """Delete a summary and the entries it stands for; returns those entries' ids."""
    gone = [r[0] for r in conn.execute("SELECT id FROM bank_entry WHERE instance = %s "
                                       "AND compressed_into = %s", (instance, summary_id)).fetchall()]
    conn.execute("DELETE FROM bank_summary WHERE instance = %s AND id = %s", (instance, summary_id))
    conn.execute("UPDATE bank_event SET summary_id = NULL WHERE instance = %s AND summary_id = %s",
                 (instance, summary_id))
    return gone
