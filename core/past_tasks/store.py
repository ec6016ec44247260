"""Past tasks on Postgres + pgvector: what the assistant produced for each user.

A task type (name, icon) is done by a user in a task execution; the execution has one produced text,
which the user may mark deleted; each edit of that text is a version (title, production, creation
date, embedding of `title + "\\n\\n" + production`, and the name of the model that made it).
Searching lives in `core.past_tasks.search`; the record of each tool execution (an execution answers
one query only) is kept here too, so the dashboard and the CLI share one history.
"""

from __future__ import annotations

import difflib
import re
import uuid
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np
from psycopg import errors as pg_errors
from psycopg.types.json import Jsonb
from psycopg_pool import ConnectionPool
from pydantic import BaseModel, ConfigDict, Field, field_validator

from core.bank.match import case_blind_pattern
from core.embeddings import Embedder
from core.errors import InvalidInput, NotFound
from core.ids import Id, UserId, pg_text, validate_id
from core.index.vectors import ensure_model_hnsw_index
from core.past_tasks.models import PastTaskFilter

DDL = """
CREATE TABLE IF NOT EXISTS past_task_type (
    pk    bigserial PRIMARY KEY,
    name  text NOT NULL UNIQUE,
    icon  text NOT NULL
);
CREATE TABLE IF NOT EXISTS past_task_execution (
    pk           bigserial   PRIMARY KEY,
    instance     text        NOT NULL,
    user_id      text        NOT NULL,
    task_type_pk bigint      NOT NULL REFERENCES past_task_type (pk),
    source_key   text,
    created_at   timestamptz NOT NULL DEFAULT now(),
    UNIQUE (instance, user_id, source_key)
);
CREATE INDEX IF NOT EXISTS past_task_execution_user ON past_task_execution (instance, user_id);
CREATE TABLE IF NOT EXISTS past_task_produced_text (
    pk              bigserial PRIMARY KEY,
    execution_pk    bigint    NOT NULL UNIQUE REFERENCES past_task_execution (pk) ON DELETE CASCADE,
    deleted_by_user boolean   NOT NULL DEFAULT false
);
CREATE TABLE IF NOT EXISTS past_task_text_version (
    pk               bigserial   PRIMARY KEY,
    produced_text_pk bigint      NOT NULL REFERENCES past_task_produced_text (pk) ON DELETE CASCADE,
    title            text        NOT NULL,
    production       text        NOT NULL,
    created_at       timestamptz NOT NULL,
    embedding        vector,
    embedding_model  text
);
CREATE INDEX IF NOT EXISTS past_task_version_latest
    ON past_task_text_version (produced_text_pk, created_at DESC, pk DESC);
CREATE TABLE IF NOT EXISTS past_task_tool_execution (
    pk           bigserial   PRIMARY KEY,
    execution_id text        NOT NULL UNIQUE,
    instance     text        NOT NULL,
    user_id      text        NOT NULL,
    query        text        NOT NULL,
    params       jsonb       NOT NULL DEFAULT '{}',
    status       text        NOT NULL DEFAULT 'running',
    result       jsonb,
    created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS past_task_tool_user
    ON past_task_tool_execution (instance, user_id, created_at DESC);
"""

# Icons for the task types a user is most likely to name; any other type gets DEFAULT_ICON.
KNOWN_ICONS = {"meeting minutes": "📝", "email": "✉️", "note": "🗒️", "plan": "🗺️",
               "report": "📊", "summary": "📄", "proposal": "💡", "checklist": "✅"}
DEFAULT_ICON = "📄"
TASK_NAME = re.compile(r"^[\w][\w '&/-]{0,63}$")
TEXT_SUFFIXES = (".md", ".markdown", ".txt")


class ProducedTextInput(BaseModel):
    """A produced text to store: a new execution, or a new version of the execution `source_key` names."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    instance: Id
    user_id: UserId
    task: str = Field(description="task type name, e.g. 'meeting minutes'")
    task_icon: str | None = Field(None, max_length=16)
    title: str = Field(min_length=1, max_length=300)
    production: str = Field(min_length=1, max_length=500_000)
    created_at: datetime | None = None
    source_key: str | None = Field(None, min_length=1, max_length=500,
                                   description="identifies the execution, e.g. a file name: ingesting "
                                               "the same key again adds a version")

    @field_validator("task")
    @classmethod
    def _task(cls, v: str) -> str:
        if not TASK_NAME.fullmatch(v):
            raise ValueError("must be 1–64 characters: letters, digits, spaces, ' & / - _")
        return v.lower()

    @field_validator("created_at")
    @classmethod
    def _aware(cls, v: datetime | None) -> datetime | None:
        return v if v is None or v.tzinfo else v.replace(tzinfo=UTC)

    @field_validator("title", "production", "task_icon", "source_key")
    @classmethod
    def _storable(cls, v: str | None) -> str | None:
        return None if v is None else pg_text(v)

    @property
    def embedded_text(self) -> str:
        return f"{self.title}\n\n{self.production}"


class IngestedText(BaseModel):
    user_task_execution_pk: int
    produced_text_pk: int
    version_pk: int
    version_number: int
    title: str
    task: str
    new_execution: bool


class StoredText(BaseModel):
    """A produced text as listed: its latest version, whether it is searchable, how many versions."""

    user_task_execution_pk: int
    produced_text_pk: int
    task_name: str
    task_icon: str
    title: str
    production: str
    created_at: datetime
    versions: int
    deleted: bool
    embedded: bool = Field(description="the latest version has a vector of the active model")


class ToolExecutionRecord(BaseModel):
    execution_id: str
    instance: str
    user_id: str
    query: str
    params: dict[str, Any]
    status: str
    result: dict[str, Any] | None
    created_at: datetime


TITLE_WORDS_MAX = 80  # a title made of a text's first words: about a line of a list


def text_from_file(name: str | None, content: str) -> tuple[str, str]:
    """Title and production of a Markdown or text file, or of a text that has no file name (`name` None:
    an imported line, a pasted text).

    The first non-empty line is the title when it is short and more text follows (a leading '#'
    heading marker is removed); otherwise the file name, without its suffix, is the title, and a text
    without a file name is titled by its first words (`first_words`).
    """
    lines = content.replace("\r\n", "\n").strip().split("\n")
    first = lines[0].strip() if lines else ""
    rest = "\n".join(lines[1:]).strip()
    if first and rest and len(first) <= 200:
        return _unheaded(first) or (name or first_words(rest)), rest
    if name is None:
        return first_words(_unheaded(content)) or "untitled", content.strip()
    stem = re.sub(r"\.(md|markdown|txt)$", "", name.rsplit("/", 1)[-1], flags=re.IGNORECASE)
    return stem.replace("_", " ").replace("-", " ").strip() or "untitled", content.strip()


def _unheaded(line: str) -> str:
    return re.sub(r"^\s*#+\s*", "", line).strip()


def first_words(text: str, limit: int = TITLE_WORDS_MAX) -> str:
    """`text` on one line (whitespace folded), cut after its last whole word within `limit` characters
    and marked with an ellipsis: "We agreed to cut the travel budget by ten percent…"."""
    line = " ".join(text.split())
    if len(line) <= limit:
        return line
    cut = line[: limit - 1]
    if line[limit - 1] != " " and " " in cut:  # a word cut in two is left out; one long word is cut
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip(" ,;:.-–—") + "…"


def task_type_pks(conn, instance: str, names: Sequence[str]) -> list[int] | None:
    """The keys of the task types named (None when none is: no filter by type). InvalidInput when a name
    is no task type of the instance's texts, naming those there are (and the nearest one), so "emails" is
    not silently nothing. Only the instance's types are named: the type table serves every instance, and
    a key for one instance must not learn the type names of another."""
    if not names:
        return None
    by_name = dict(conn.execute(
        "SELECT tt.name, tt.pk FROM past_task_type tt WHERE EXISTS (SELECT 1 FROM past_task_execution e "
        "WHERE e.instance = %s AND e.task_type_pk = tt.pk) ORDER BY tt.name", (instance,)).fetchall())
    unknown = [name for name in names if name not in by_name]
    if unknown:
        near = [m for name in unknown for m in difflib.get_close_matches(name, by_name, n=1, cutoff=0.75)]
        hint = f" (did you mean {', '.join(map(repr, near))}?)" if near else ""
        types = ", ".join(by_name) if by_name else "none yet (a type is made by the first text stored with it)"
        raise InvalidInput(f"no task type named {', '.join(map(repr, unknown))} in instance {instance!r}{hint}; "
                           f"its task types are: {types}")
    return [by_name[name] for name in names]


def filter_params(conn, instance: str, where: PastTaskFilter) -> dict[str, Any]:
    """The statement parameters of a filter: `type_pks` (NULL: every type), `date_from`, `date_to` (NULL:
    open), each compared in SQL with the text's latest version (`created_at`), both ends included."""
    return {"type_pks": task_type_pks(conn, instance, where.task_types), "date_from": where.date_from,
            "date_to": where.date_to}


class PastTaskStore:
    def __init__(self, pool: ConnectionPool, embedder: Embedder):
        self.pool = pool
        self.embedder = embedder
        self._vector_index_ready = False

    def ensure_vector_index(self) -> None:
        """The partial HNSW index for the active model; the model and cast must match the queries'."""
        if self._vector_index_ready:
            return
        ensure_model_hnsw_index(self.pool, "past_task_text_version", self.embedder)
        self._vector_index_ready = True

    # -- writes -----------------------------------------------------------------------------

    def ingest(self, items: Sequence[ProducedTextInput], *, embed: bool = True, batch_size: int = 64,
               progress: Callable[[int, int], None] | None = None) -> list[IngestedText]:
        """Store texts, embedding each batch in one call. `progress(done, total)` after each batch.

        `embed=False` stores versions without a vector (as when embedding runs later, elsewhere);
        `embed_pending` adds them. Such versions are not searchable until then.
        """
        self.ensure_vector_index()
        out: list[IngestedText] = []
        for start in range(0, len(items), batch_size):
            batch = items[start:start + batch_size]
            vectors = (self.embedder.embed_batch([i.embedded_text for i in batch]) if embed
                       else [None] * len(batch))
            with self.pool.connection() as conn, conn.transaction():
                for item, vec in zip(batch, vectors, strict=True):
                    out.append(self._insert(conn, item, vec))
            if progress:
                progress(min(start + batch_size, len(items)), len(items))
        return out

    def _insert(self, conn, item: ProducedTextInput, vec: np.ndarray | None) -> IngestedText:
        type_pk = self._task_type(conn, item.task, item.task_icon)
        if item.source_key is None:
            row = conn.execute(
                "INSERT INTO past_task_execution (instance, user_id, task_type_pk, created_at) "
                "VALUES (%(i)s, %(u)s, %(t)s, coalesce(%(c)s, now())) RETURNING pk, task_type_pk, true",
                {"i": item.instance, "u": item.user_id, "t": type_pk, "c": item.created_at}).fetchone()
        else:
            # `xmax = 0` is true only for a freshly inserted row: tells a new execution from a re-ingest.
            row = conn.execute(
                "INSERT INTO past_task_execution (instance, user_id, task_type_pk, source_key, created_at) "
                "VALUES (%(i)s, %(u)s, %(t)s, %(k)s, coalesce(%(c)s, now())) "
                "ON CONFLICT (instance, user_id, source_key) DO UPDATE SET source_key = EXCLUDED.source_key "
                "RETURNING pk, task_type_pk, xmax = 0",
                {"i": item.instance, "u": item.user_id, "t": type_pk, "k": item.source_key,
                 "c": item.created_at}).fetchone()
        execution_pk, existing_type, new = row
        if existing_type != type_pk:
            name = conn.execute("SELECT name FROM past_task_type WHERE pk = %s",
                                (existing_type,)).fetchone()[0]
            raise InvalidInput(f"task: {item.source_key!r} was ingested as task {name!r} for user "
                               f"{item.user_id!r}; use --task {name!r} to add a version, or rename the file")
        # A text the user deleted and then ingests again is wanted again: the new version restores it.
        text_pk = conn.execute(
            "INSERT INTO past_task_produced_text (execution_pk) VALUES (%s) ON CONFLICT (execution_pk) "
            "DO UPDATE SET deleted_by_user = false RETURNING pk", (execution_pk,)).fetchone()[0]
        version_pk, number = conn.execute(
            "WITH v AS (INSERT INTO past_task_text_version (produced_text_pk, title, production, created_at, "
            "embedding, embedding_model) VALUES (%(p)s, %(t)s, %(x)s, coalesce(%(c)s, now()), %(e)s, %(m)s) "
            "RETURNING pk) SELECT v.pk, (SELECT count(*) + 1 FROM past_task_text_version "
            "WHERE produced_text_pk = %(p)s) FROM v",
            {"p": text_pk, "t": item.title, "x": item.production, "c": item.created_at, "e": vec,
             "m": self.embedder.name if vec is not None else None}).fetchone()
        return IngestedText(user_task_execution_pk=execution_pk, produced_text_pk=text_pk,
                            version_pk=version_pk, version_number=number, title=item.title, task=item.task,
                            new_execution=new)

    def _task_type(self, conn, name: str, icon: str | None) -> int:
        # An explicit icon updates the type; without one, an existing type keeps its icon.
        return conn.execute(
            "INSERT INTO past_task_type (name, icon) VALUES (%(n)s, coalesce(%(i)s, %(default)s)) "
            "ON CONFLICT (name) DO UPDATE SET icon = coalesce(%(i)s, past_task_type.icon) RETURNING pk",
            {"n": name, "i": icon, "default": KNOWN_ICONS.get(name, DEFAULT_ICON)}).fetchone()[0]

    def embed_pending(self, instance: str, *, batch_size: int = 256,
                      progress: Callable[[int], None] | None = None) -> int:
        """Give a vector of the active model to every version of the instance that lacks one."""
        self.ensure_vector_index()
        done = 0
        while True:
            with self.pool.connection() as conn:
                rows = conn.execute(
                    "SELECT v.pk, v.title, v.production FROM past_task_text_version v "
                    "JOIN past_task_produced_text pt ON pt.pk = v.produced_text_pk "
                    "JOIN past_task_execution e ON e.pk = pt.execution_pk "
                    "WHERE e.instance = %(i)s AND v.embedding_model IS DISTINCT FROM %(m)s "
                    "ORDER BY v.pk LIMIT %(n)s",
                    {"i": instance, "m": self.embedder.name, "n": batch_size}).fetchall()
            if not rows:
                return done
            vectors = self.embedder.embed_batch([f"{t}\n\n{p}" for _, t, p in rows])
            with self.pool.connection() as conn, conn.cursor() as cur, conn.transaction():
                cur.executemany(
                    "UPDATE past_task_text_version SET embedding = %s, embedding_model = %s WHERE pk = %s",
                    [(v, self.embedder.name, pk) for (pk, _, _), v in zip(rows, vectors, strict=True)])
            done += len(rows)
            if progress:
                progress(done)

    def mark_deleted(self, instance: str, user_id: str, execution_pk: int, deleted: bool = True) -> None:
        """The user deletes (or restores) a produced text; deleted texts are never searched."""
        with self.pool.connection() as conn:
            cur = conn.execute(
                "UPDATE past_task_produced_text pt SET deleted_by_user = %(d)s FROM past_task_execution e "
                "WHERE pt.execution_pk = e.pk AND e.pk = %(pk)s AND e.instance = %(i)s AND e.user_id = %(u)s",
                {"d": deleted, "pk": execution_pk, "i": instance, "u": user_id})
        if cur.rowcount == 0:
            raise NotFound(f"user {user_id!r} has no past task {execution_pk} in instance {instance!r}")

    def delete_user(self, instance: str, user_id: str) -> int:
        with self.pool.connection() as conn, conn.transaction():
            conn.execute("DELETE FROM past_task_tool_execution WHERE instance = %s AND user_id = %s",
                         (instance, user_id))
            return conn.execute("DELETE FROM past_task_execution WHERE instance = %s AND user_id = %s",
                                (instance, user_id)).rowcount

    def delete_executions(self, instance: str, pks: Sequence[int], tool_runs: Sequence[str] = ()) -> int:
        """Remove these executions (their texts and versions go with them) and these tool executions;
        returns how many executions were removed."""
        with self.pool.connection() as conn, conn.transaction():
            conn.execute("DELETE FROM past_task_tool_execution WHERE instance = %s AND execution_id = ANY(%s)",
                         (instance, list(tool_runs)))
            return conn.execute("DELETE FROM past_task_execution WHERE instance = %s AND pk = ANY(%s)",
                                (instance, list(pks))).rowcount

    # -- reads ------------------------------------------------------------------------------

    def users(self, instance: str) -> list[str]:
        with self.pool.connection() as conn:
            return [r[0] for r in conn.execute(
                "SELECT DISTINCT user_id FROM past_task_execution WHERE instance = %s ORDER BY user_id",
                (instance,))]

    def task_type_pks(self, instance: str, names: Sequence[str]) -> list[int] | None:
        """`task_type_pks`: refuses a name that is no task type of the instance's texts."""
        if not names:
            return None
        with self.pool.connection() as conn:
            return task_type_pks(conn, instance, names)

    def task_types(self, instance: str | None = None) -> list[tuple[str, str]]:
        """(name, icon) of every task type, by name; with `instance`, those of its texts only (what a
        filter there can name)."""
        with self.pool.connection() as conn:
            return conn.execute(
                "SELECT tt.name, tt.icon FROM past_task_type tt WHERE %(i)s::text IS NULL OR EXISTS "
                "(SELECT 1 FROM past_task_execution e WHERE e.instance = %(i)s AND e.task_type_pk = tt.pk) "
                "ORDER BY tt.name", {"i": instance}).fetchall()

    def count(self, instance: str) -> int:
        """Produced texts the users have not deleted."""
        with self.pool.connection() as conn:
            return conn.execute(
                "SELECT count(*) FROM past_task_execution e JOIN past_task_produced_text pt "
                "ON pt.execution_pk = e.pk WHERE e.instance = %s AND NOT pt.deleted_by_user",
                (instance,)).fetchone()[0]

    def list_texts(self, instance: str, user_id: str, *, include_deleted: bool = True, limit: int = 500,
                   execution_pks: Sequence[int] | None = None, with_text: bool = True,
                   where: PastTaskFilter | None = None) -> list[StoredText]:
        """The user's produced texts, newest first, each with its latest version (`production` empty
        unless `with_text`, so listing many long texts stays cheap); with `where`, only those of its task
        types whose latest version was produced in its date range."""
        with self.pool.connection() as conn:
            rows = conn.execute(
                """SELECT e.pk, pt.pk, tt.name, tt.icon, v.title,
                          CASE WHEN %(text)s THEN v.production ELSE '' END, v.created_at,
                          (SELECT count(*) FROM past_task_text_version c WHERE c.produced_text_pk = pt.pk),
                          pt.deleted_by_user, v.embedding_model IS NOT DISTINCT FROM %(m)s
                   FROM past_task_execution e
                   JOIN past_task_type tt ON tt.pk = e.task_type_pk
                   JOIN past_task_produced_text pt ON pt.execution_pk = e.pk
                   JOIN LATERAL (SELECT x.title, x.production, x.created_at, x.embedding_model
                                 FROM past_task_text_version x WHERE x.produced_text_pk = pt.pk
                                 ORDER BY x.created_at DESC, x.pk DESC LIMIT 1) v ON true
                   WHERE e.instance = %(i)s AND e.user_id = %(u)s AND (%(all)s OR NOT pt.deleted_by_user)
                     AND (%(pks)s::bigint[] IS NULL OR e.pk = ANY(%(pks)s))
                     AND (%(type_pks)s::bigint[] IS NULL OR e.task_type_pk = ANY(%(type_pks)s::bigint[]))
                     AND (%(date_from)s::timestamptz IS NULL OR v.created_at >= %(date_from)s::timestamptz)
                     AND (%(date_to)s::timestamptz IS NULL OR v.created_at <= %(date_to)s::timestamptz)
                   ORDER BY v.created_at DESC, e.pk DESC LIMIT %(n)s""",
                {"m": self.embedder.name, "i": instance, "u": user_id, "all": include_deleted, "n": limit,
                 "text": with_text, "pks": list(execution_pks) if execution_pks is not None else None,
                 **filter_params(conn, instance, where or PastTaskFilter())}).fetchall()
        return [StoredText(user_task_execution_pk=r[0], produced_text_pk=r[1], task_name=r[2], task_icon=r[3],
                           title=r[4], production=r[5], created_at=r[6], versions=r[7], deleted=r[8],
                           embedded=r[9]) for r in rows]

    def get_text(self, instance: str, user_id: str, execution_pk: int) -> StoredText:
        found = self.list_texts(instance, user_id, execution_pks=[execution_pk], limit=1)
        if not found:
            raise NotFound(f"user {user_id!r} has no past task {execution_pk} in instance {instance!r}")
        return found[0]

    # -- tool executions (one query each) -----------------------------------------------------

    def begin_tool_execution(self, instance: str, user_id: str, query: str, params: dict[str, Any],
                             execution_id: str | None = None) -> str:
        """Record the one query of a tool execution before it runs; a second query is refused."""
        execution_id = validate_id(execution_id, "execution_id") if execution_id else uuid.uuid4().hex
        try:
            with self.pool.connection() as conn:
                conn.execute("INSERT INTO past_task_tool_execution (execution_id, instance, user_id, query, "
                             "params) VALUES (%s, %s, %s, %s, %s)",
                             (execution_id, instance, user_id, query, Jsonb(params)))
        except pg_errors.UniqueViolation as e:
            raise InvalidInput(f"execution_id: {execution_id!r} already made its query; internal_memory "
                               "allows 1 query per tool execution (n_total_usages = 1)") from e
        return execution_id

    def finish_tool_execution(self, execution_id: str, status: str, result: dict[str, Any]) -> None:
        with self.pool.connection() as conn:
            conn.execute("UPDATE past_task_tool_execution SET status = %s, result = %s "
                         "WHERE execution_id = %s", (status, Jsonb(result), execution_id))

    def tool_executions(self, instance: str, user_id: str, limit: int = 50,
                        contains: str | None = None) -> list[ToolExecutionRecord]:
        """The user's tool executions, newest first; `contains`: only those whose query holds that text in
        any letter case (matched whatever the cluster's locale, as a bank's keywords are)."""
        pattern = case_blind_pattern(pg_text(contains)) if contains else None
        with self.pool.connection() as conn:
            rows = conn.execute(
                "SELECT execution_id, instance, user_id, query, params, status, result, created_at "
                "FROM past_task_tool_execution WHERE instance = %(instance)s AND user_id = %(user)s "
                "AND (%(pattern)s::text IS NULL OR query ~ %(pattern)s) "
                "ORDER BY created_at DESC, pk DESC LIMIT %(limit)s",
                {"instance": instance, "user": user_id, "pattern": pattern, "limit": limit}).fetchall()
        return [ToolExecutionRecord(execution_id=r[0], instance=r[1], user_id=r[2], query=r[3], params=r[4],
                                    status=r[5], result=r[6], created_at=r[7]) for r in rows]
