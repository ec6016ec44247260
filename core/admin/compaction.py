"""After a deletion, the deleted text leaves the files on disk too, not only the live data.

Redis keeps every write in its append-only file and, when snapshots are on, in `dump.rdb`; it rewrites
the append-only file by itself only once it has grown past 64 MB (`auto-aof-rewrite-min-size`), so on a
small install a deleted memory stayed readable in the file for good. A deletion therefore asks for a
rewrite (`BGREWRITEAOF`) and a new snapshot (`BGSAVE SCHEDULE`), which Redis makes in the background
from the data as it is now. A rewrite already running may have forked before the deletion, so it is
waited for and asked again.

Postgres keeps a deleted row's bytes in its table's pages until they are reused; `VACUUM FULL` writes the
table anew without them (and its indexes, so a text posting's lexeme goes too). It locks the table while
it runs, so it is used on tables up to `FULL_VACUUM_MAX_BYTES` and only when the lock comes within
`LOCK_WAIT`; a larger or busy table gets a plain `VACUUM` (the space is reused by later writes, and the
note says so). The planner's statistics hold a sample of each column's values (`pg_statistic`: most
common values, histogram bounds), so a deleted text or its lexemes stayed there, and on disk, until the
next ANALYZE: the tables are analysed as they are vacuumed, and `pg_statistic` is written anew without
the old rows. The write-ahead log holds the inserted text too: a switch to a new segment and a
checkpoint let Postgres drop the older segments, which removes them when `wal_recycle` is off (on, it
renames them for reuse, text inside, until they are overwritten; the note says so).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import TYPE_CHECKING

import psycopg
import redis
from psycopg import sql

from core.services.bounded import without_time_limit

if TYPE_CHECKING:
    from core.runtime import Workbench

FULL_VACUUM_MAX_BYTES = 32 * 2**20  # rewritten whole within about a second on the 2-core machine
LOCK_WAIT = "500ms"  # VACUUM FULL waits no longer than this for its lock (it would queue every reader)
REWRITE_WAIT_S = 30.0  # how long a deletion waits for a rewrite that was already running


def compact(wb: Workbench, tables: Iterable[str]) -> list[str]:
    """Make Redis rewrite its files and Postgres write `tables` anew; returns notes on what could not be
    done at once (empty when everything was)."""
    return _redis_files(wb.redis(), cluster=wb.thoughts.cluster) + _vacuum(wb, sorted(set(tables)))


def _redis_files(r: redis.Redis, *, cluster: bool) -> list[str]:
    if cluster:
        return ["Redis Cluster: run BGREWRITEAOF on each node so the deleted text leaves its files"]
    try:
        info = r.info("persistence")
        notes = []
        if str(info.get("aof_enabled")) == "1":
            notes += _background(r, r.bgrewriteaof, "aof_rewrite_in_progress", "append-only file")
        if r.config_get("save").get("save"):
            notes += _background(r, lambda: r.bgsave(schedule=True), "rdb_bgsave_in_progress", "snapshot")
        return notes
    except redis.exceptions.ResponseError as e:  # a managed Redis may refuse these commands
        return [(f"Redis refused to rewrite its files ({e}); the deleted text stays in them until Redis "
                 "rewrites them by itself")]


def _background(r: redis.Redis, start, busy: str, what: str) -> list[str]:
    """Start a background write, after waiting out one already running (it may hold the deleted data).
    A second refusal means a newer one started after that wait: it holds the data as it is now."""
    for attempt in range(2):
        try:
            start()
            return []
        except redis.exceptions.ResponseError as e:
            if "in progress" not in str(e) or attempt:
                return [] if "in progress" in str(e) else [f"Redis {what}: {e}"]
            deadline = time.monotonic() + REWRITE_WAIT_S
            while str(r.info("persistence").get(busy)) == "1":
                if time.monotonic() > deadline:
                    return [(f"Redis was still writing its {what} after {REWRITE_WAIT_S:.0f} s; the "
                             "deleted text leaves it at the next rewrite")]
                time.sleep(0.05)
    return []


def _vacuum(wb: Workbench, tables: list[str]) -> list[str]:
    notes = []
    # The pool's connections are in autocommit, so VACUUM may run; a large table's takes its time.
    with wb.pool().connection() as conn, without_time_limit(conn):
        sizes = dict(conn.execute(
            "SELECT t, pg_total_relation_size(to_regclass(t)) FROM unnest(%s::text[]) t "
            "WHERE to_regclass(t) IS NOT NULL", (tables,)).fetchall())
        for table, size in sizes.items():
            name = sql.Identifier(table)
            if size <= FULL_VACUUM_MAX_BYTES and _vacuum_full(conn, name):
                continue
            conn.execute(sql.SQL("VACUUM (ANALYZE) {}").format(name))
            notes.append(f"{table}: {size / 2**20:.0f} MB, vacuumed in place; the deleted rows' bytes leave "
                         "its files as Postgres reuses the space (or run VACUUM FULL in a quiet moment)")
        notes += _drop_old_statistics(conn, list(sizes))
        notes += _drop_old_wal(conn)
    return notes


def _drop_old_statistics(conn: psycopg.Connection, tables: list[str]) -> list[str]:
    """Write `pg_statistic` anew: the rows the ANALYZE just replaced still held the old sample's values.
    Removed first: an empty table's statistics, which ANALYZE leaves as they were (the last memory of an
    instance deleted, its text stayed there), and a partitioned table's own, which sample every partition
    and only a manual ANALYZE makes (analysing the parent again at each deletion read all instances'
    rows; the planner goes by the partitions'). Only a superuser may (another role's VACUUM skips the
    catalog with a warning, no error)."""
    if not conn.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user").fetchone()[0]:
        return [("the database role may not rewrite pg_statistic: the planner's old statistics, which may "
                 "quote deleted text, stay in its file until Postgres reuses the space")]
    empty = [t for t in tables
             if conn.execute(sql.SQL("SELECT NOT EXISTS (SELECT 1 FROM {})").format(sql.Identifier(t))).fetchone()[0]]
    conn.execute("DELETE FROM pg_catalog.pg_statistic WHERE starelid = ANY(SELECT to_regclass(t) FROM "
                 "unnest(%s::text[]) t) OR starelid IN (SELECT inhparent FROM pg_inherits WHERE inhrelid = ANY("
                 "SELECT to_regclass(t) FROM unnest(%s::text[]) t))", (empty, tables))
    conn.execute("VACUUM FULL pg_catalog.pg_statistic")
    return []


def _drop_old_wal(conn: psycopg.Connection) -> list[str]:
    """Switch to a new write-ahead segment and checkpoint, so the segments holding the deleted text go."""
    if conn.execute("SELECT current_setting('wal_recycle')::bool").fetchone()[0]:
        return [("Postgres recycles its write-ahead log (wal_recycle on): the deleted text stays in old "
                 "segments until they are overwritten")]
    try:
        conn.execute("SELECT pg_switch_wal()")
        conn.execute("CHECKPOINT")
    except psycopg.errors.InsufficientPrivilege:
        return [("the database role may not switch the write-ahead log: the deleted text stays in its old "
                 "segments until Postgres recycles them")]
    return []


def _vacuum_full(conn: psycopg.Connection, table: sql.Identifier) -> bool:
    """VACUUM FULL (and ANALYZE) the table if its lock comes within LOCK_WAIT; False if it did not."""
    conn.execute(sql.SQL("SET lock_timeout = {}").format(sql.Literal(LOCK_WAIT)))
    try:
        conn.execute(sql.SQL("VACUUM (FULL, ANALYZE) {}").format(table))
        return True
    except psycopg.errors.LockNotAvailable:
        return False
    finally:
        conn.execute("RESET lock_timeout")
