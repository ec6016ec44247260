"""An instance's Postgres rows besides the memory index in and out of an archive: memory banks, past
tasks (executions, produced texts, versions, tool executions), fusion profiles and the instance's
activations of them.

Rows leave as Postgres renders them (`to_jsonb`: every column, times to the microsecond) and come back
through `jsonb_populate_record`, so the database converts each column to its own type and a column
added later travels without a change here. Restoring writes only what the target lacks: rows with a
key of their own are inserted `ON CONFLICT DO NOTHING`; rows keyed by a serial number are matched on
what identifies them (see each function). Profiles are shared by every instance: an archived profile
whose name is taken by a different definition leaves the existing one in place and says so.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from itertools import groupby
from typing import TYPE_CHECKING, Any

from psycopg import sql
from psycopg.types.json import Jsonb

from core.archive.ids import IdMap
from core.archive.memories import decode_vector, encode_vector
from core.models import FusionProfile

if TYPE_CHECKING:
    from core.runtime import Workbench

BANK_TABLES = ("bank", "bank_summary", "bank_entry", "bank_event")  # in the order they restore
# Serial keys the database gives anew (see core.archive.ids).
_SERIAL = {"bank_entry": "seq", "bank_event": "id"}
_BANK_ORDER = {"bank": "name", "bank_summary": "bank, ts, id", "bank_entry": "seq", "bank_event": "id"}


def _rows(conn, query: sql.Composable | str, params: tuple) -> Iterator[tuple]:
    """A query's rows through a server-side cursor: read in pages, never held whole."""
    with conn.transaction(), conn.cursor(name="archive_rows") as cur:
        cur.itersize = 500
        cur.execute(query, params)
        yield from cur


# -- memory banks -------------------------------------------------------------------------------------

def export_banks(wb: Workbench, instance: str) -> Iterator[dict[str, Any]]:
    with wb.pool().connection() as conn:
        for table in BANK_TABLES:
            query = sql.SQL("SELECT to_jsonb(t) FROM {} t WHERE t.instance = %s ORDER BY {}").format(
                sql.Identifier(table), sql.SQL(", ").join(
                    sql.Identifier(c.strip()) for c in _BANK_ORDER[table].split(",")))
            for (row,) in _rows(conn, query, (instance,)):
                yield {"table": table, "row": row}


def _columns(conn, table: str) -> list[str]:
    """The table's stored columns (not generated ones), less its serial key."""
    names = [r[0] for r in conn.execute(
        "SELECT attname FROM pg_attribute WHERE attrelid = %s::regclass AND attnum > 0 "
        "AND NOT attisdropped AND attgenerated = '' ORDER BY attnum", (table,))]
    return [n for n in names if n != _SERIAL.get(table)]


def restore_banks(wb: Workbench, lines: Iterator[dict[str, Any]], ids: IdMap) -> dict[str, int]:
    """Banks, summaries, entries (in their original order: new `seq` numbers keep it) and compression
    events; an event is matched on its bank, time, summary and method."""
    created = dict.fromkeys(BANK_TABLES, 0)
    with wb.pool().connection() as conn, conn.transaction():
        statements = {}
        for table in BANK_TABLES:
            cols = sql.SQL(", ").join(map(sql.Identifier, _columns(conn, table)))
            insert = sql.SQL("INSERT INTO {t} ({c}) SELECT {c} FROM jsonb_populate_record(NULL::{t}, %(row)s) r"
                             ).format(t=sql.Identifier(table), c=cols)
            if table == "bank_event":
                statements[table] = insert + sql.SQL(
                    " WHERE NOT EXISTS (SELECT 1 FROM bank_event e WHERE e.instance = r.instance AND "
                    "e.bank = r.bank AND e.at = r.at AND e.summary_id IS NOT DISTINCT FROM r.summary_id "
                    "AND e.method = r.method)")
            else:
                statements[table] = insert + sql.SQL(" ON CONFLICT DO NOTHING")
        for line in lines:
            table = line["table"]
            row = {**line["row"], "instance": ids.target}
            created[table] += conn.execute(statements[table], {"row": Jsonb(row)}).rowcount
    return created


# -- past tasks ---------------------------------------------------------------------------------------

def export_past_tasks(wb: Workbench, instance: str, with_vectors: bool) -> Iterator[dict[str, Any]]:
    """One line per task execution: the execution, its task type, its produced text and every version."""
    with wb.pool().connection() as conn:
        rows = _rows(conn, """
            SELECT to_jsonb(e), t.name, t.icon, to_jsonb(pt), to_jsonb(v) - 'embedding', v.embedding
            FROM past_task_execution e JOIN past_task_type t ON t.pk = e.task_type_pk
            LEFT JOIN past_task_produced_text pt ON pt.execution_pk = e.pk
            LEFT JOIN past_task_text_version v ON v.produced_text_pk = pt.pk
            WHERE e.instance = %s ORDER BY e.pk, v.pk""", (instance,))
        for _, group in groupby(rows, key=lambda r: r[0]["pk"]):
            group = list(group)
            execution, name, icon, text = group[0][:4]
            versions = []
            for *_, version, vec in group:
                if version is not None:
                    if with_vectors and vec is not None:
                        version["vector"] = encode_vector(vec)
                    versions.append(version)
            yield {"execution": execution, "task": {"name": name, "icon": icon}, "text": text,
                   "versions": versions}


def restore_past_task(wb: Workbench, line: dict[str, Any], ids: IdMap) -> dict[str, int]:
    """One execution with its text and versions. An execution is matched on its user, task type, time
    and source key; a version on its text, time, title and production. A version that had a vector gets
    the archived one when it is the active model's, else a new one."""
    e, task, text = line["execution"], line["task"], line["text"]
    created = {"past_tasks": 0, "text_versions": 0}
    with wb.pool().connection() as conn, conn.transaction():
        conn.execute("INSERT INTO past_task_type (name, icon) VALUES (%s, %s) ON CONFLICT (name) DO NOTHING",
                     (task["name"], task["icon"]))
        type_pk = conn.execute("SELECT pk FROM past_task_type WHERE name = %s", (task["name"],)).fetchone()[0]
        key = {"i": ids.target, "u": e["user_id"], "t": type_pk, "k": e["source_key"],
               "c": datetime.fromisoformat(e["created_at"])}
        found = conn.execute(
            "SELECT pk FROM past_task_execution WHERE instance = %(i)s AND user_id = %(u)s "
            "AND task_type_pk = %(t)s AND created_at = %(c)s AND source_key IS NOT DISTINCT FROM %(k)s",
            key).fetchone()
        if found is None:
            found = conn.execute(
                "INSERT INTO past_task_execution (instance, user_id, task_type_pk, source_key, created_at) "
                "VALUES (%(i)s, %(u)s, %(t)s, %(k)s, %(c)s) RETURNING pk", key).fetchone()
            created["past_tasks"] = 1
        ids.executions[e["pk"]] = found[0]
        if text is None:
            return created
        conn.execute("INSERT INTO past_task_produced_text (execution_pk, deleted_by_user) VALUES (%s, %s) "
                     "ON CONFLICT (execution_pk) DO NOTHING", (found[0], text["deleted_by_user"]))
        text_pk = conn.execute("SELECT pk FROM past_task_produced_text WHERE execution_pk = %s",
                               (found[0],)).fetchone()[0]
        ids.texts[text["pk"]] = text_pk
        model = wb.past_tasks.embedder.name
        for v in line["versions"]:
            at = datetime.fromisoformat(v["created_at"])
            there = conn.execute(
                "SELECT pk FROM past_task_text_version WHERE produced_text_pk = %s AND created_at = %s "
                "AND title = %s AND production = %s", (text_pk, at, v["title"], v["production"])).fetchone()
            if there is None:
                vec = None
                if v.get("embedding_model"):
                    vec = (decode_vector(v["vector"]) if v.get("vector") and v["embedding_model"] == model
                           else wb.past_tasks.embedder.embed_batch([f"{v['title']}\n\n{v['production']}"])[0])
                there = conn.execute(
                    "INSERT INTO past_task_text_version (produced_text_pk, title, production, created_at, "
                    "embedding, embedding_model) VALUES (%s, %s, %s, %s, %s, %s) RETURNING pk",
                    (text_pk, v["title"], v["production"], at, vec, model if vec is not None else None)
                ).fetchone()
                created["text_versions"] += 1
            ids.versions[v["pk"]] = there[0]
    if created["text_versions"]:
        wb.past_tasks.ensure_vector_index()
    return created


def export_tool_executions(wb: Workbench, instance: str) -> Iterator[dict[str, Any]]:
    with wb.pool().connection() as conn:
        for (row,) in _rows(conn, "SELECT to_jsonb(x) FROM past_task_tool_execution x WHERE x.instance = %s "
                                  "ORDER BY x.pk", (instance,)):
            yield row


def restore_tool_executions(wb: Workbench, rows: Iterator[dict[str, Any]], ids: IdMap) -> int:
    """After the past tasks: a recorded result names executions by their (new) keys."""
    created = 0
    with wb.pool().connection() as conn, conn.transaction():
        for row in rows:
            created += conn.execute(
                "INSERT INTO past_task_tool_execution (execution_id, instance, user_id, query, params, status, "
                "result, created_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (execution_id) "
                "DO NOTHING",
                (ids.new_id(row["execution_id"]), ids.target, row["user_id"], row["query"],
                 Jsonb(ids.tool_result(row["params"])), row["status"],
                 None if row["result"] is None else Jsonb(ids.tool_result(row["result"])),
                 datetime.fromisoformat(row["created_at"]))).rowcount
    return created


# -- fusion profiles ----------------------------------------------------------------------------------

def active_profile(wb: Workbench, instance: str) -> tuple[str | None, datetime | None]:
    """The profile the instance chose and when, if it chose one (else it uses the default)."""
    with wb.pool().connection() as conn:
        row = conn.execute("SELECT name, updated_at FROM active_profile WHERE instance = %s",
                           (instance,)).fetchone()
    return (row[0], row[1]) if row else (None, None)


def export_profiles(wb: Workbench) -> Iterator[dict[str, Any]]:
    """Every saved profile: they are shared by the instances, and any of them may be chosen again."""
    with wb.pool().connection() as conn:
        for (row,) in _rows(conn, "SELECT to_jsonb(f) FROM fusion_profile f ORDER BY f.name", ()):
            yield row


def restore_profiles(wb: Workbench, rows: Iterator[dict[str, Any]], active: str | None, target: str,
                     notes: list[str], active_since: datetime | None = None) -> int:
    """The archived profiles, and the instance's choice among them with the time it was made (an archive
    made before that time travelled: the time of the restore)."""
    created = 0
    with wb.pool().connection() as conn, conn.transaction():
        for row in rows:
            profile = FusionProfile.model_validate(row["definition"])
            inserted = conn.execute(
                "INSERT INTO fusion_profile (name, definition, updated_at) VALUES (%s, %s, %s) "
                "ON CONFLICT (name) DO NOTHING", (profile.name, Jsonb(row["definition"]),
                                                  datetime.fromisoformat(row["updated_at"]))).rowcount
            created += inserted
            if not inserted:
                (existing,) = conn.execute("SELECT definition FROM fusion_profile WHERE name = %s",
                                           (profile.name,)).fetchone()
                if FusionProfile.model_validate(existing) != profile:
                    notes.append(f"profile {profile.name!r} exists here with other weights; the existing one "
                                 "was kept (save the archived one under another name to compare)")
        if active:
            conn.execute("INSERT INTO active_profile (instance, name, updated_at) "
                         "VALUES (%s, %s, coalesce(%s, now())) ON CONFLICT (instance) DO NOTHING",
                         (target, active, active_since))
    return created


def export_profile_activations(wb: Workbench, instance: str) -> Iterator[dict[str, Any]]:
    """The instance's changes of its active profile, oldest first: what `profiles undo` steps back through."""
    with wb.pool().connection() as conn:
        for name, previous, at in _rows(conn, "SELECT name, previous, at FROM profile_activation "
                                              "WHERE instance = %s ORDER BY id", (instance,)):
            yield {"name": name, "previous": previous, "at": at.isoformat()}


def restore_profile_activations(wb: Workbench, rows: Iterator[dict[str, Any]], target: str) -> int:
    """The activations under the target instance in their order (new serial ids keep it); one already there
    (the same profile, previous one and time) is left as it is. Returns how many were written."""
    written = 0
    with wb.pool().connection() as conn, conn.transaction():
        for row in rows:
            at = datetime.fromisoformat(row["at"])
            written += conn.execute(
                "INSERT INTO profile_activation (instance, name, previous, at) SELECT %(i)s, %(n)s, %(p)s, %(at)s "
                "WHERE NOT EXISTS (SELECT 1 FROM profile_activation WHERE instance = %(i)s AND name = %(n)s "
                "AND previous = %(p)s AND at = %(at)s)",
                {"i": target, "n": row["name"], "p": row["previous"], "at": at}).rowcount
    return written


def export_relevance_marks(wb: Workbench, instance: str) -> Iterator[dict[str, Any]]:
    """The instance's relevance marks (`core.tuning.labels`), each with its memory's kind, so a thought's
    row id can be renamed like the thought on restore. The memory's instance is the parameter, not
    `r.instance`: joined on the column, the statement planned and locked every instance's partition (105 ms
    of a 2-memory instance's 110 ms export among 800 instances)."""
    with wb.pool().connection() as conn:
        for query, memory_id, relevant, marked_at, kind in _rows(conn, """
                SELECT r.query, r.memory_id, r.relevant, r.marked_at,
                       (SELECT m.kind FROM memory m WHERE m.instance = %s AND m.id = r.memory_id LIMIT 1)
                FROM relevance_mark r WHERE r.instance = %s ORDER BY r.query, r.memory_id""", (instance, instance)):
            yield {"query": query, "memory_id": memory_id, "kind": kind, "relevant": relevant,
                   "marked_at": marked_at.isoformat()}


def restore_relevance_marks(wb: Workbench, rows: Iterator[dict[str, Any]], ids: IdMap) -> int:
    """The marks under the target instance; a mark already there is left as it is. Returns how many were
    written."""
    written = 0
    with wb.pool().connection() as conn:
        for row in rows:
            memory_id = ids.row_id(row["kind"], row["memory_id"]) if row.get("kind") else row["memory_id"]
            written += conn.execute(
                "INSERT INTO relevance_mark (instance, query, memory_id, relevant, marked_at) "
                "VALUES (%s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                (ids.target, row["query"], memory_id, row["relevant"], row["marked_at"])).rowcount
    return written
