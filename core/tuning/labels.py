"""A labelled query set built from what a person sees: "relevant" / "not relevant" marks on a query's
results, kept per instance, and read as the JSONL query set the Tune page and `eval --data` take.

Marks hold memory ids, never the memories' text, so forgetting a memory leaves nothing of it here; its id
then shows as unknown when the set is evaluated (`check_ids`), which says so rather than scoring it 0.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING

from psycopg_pool import ConnectionPool
from pydantic import BaseModel, Field

from core.errors import InvalidInput, NotFound
from core.ids import SHARED_INSTANCE, validate_id
from core.tuning.datasets import (  # normalise_query: marks on one query, as a set counts it
    EMPTIED_REASON,
    EvalDataset,
    normalise_query,
)

if TYPE_CHECKING:
    from core.runtime import Workbench

DDL = """
CREATE TABLE IF NOT EXISTS relevance_mark (
    instance   text        NOT NULL,
    query      text        NOT NULL,
    memory_id  text        NOT NULL,
    relevant   boolean     NOT NULL,
    marked_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (instance, query, memory_id)
);
"""
UNKNOWN_REASON = "relevant ids not in the instance (dropped)"


class LabelledQuery(BaseModel):
    query: str
    relevant: list[str] = Field(description="memory ids marked relevant, oldest mark first")
    not_relevant: list[str] = Field(description="memory ids marked not relevant")
    marked_at: datetime = Field(description="the query's latest mark")


class LabelledSet(BaseModel):
    instance: str
    queries: list[LabelledQuery] = Field(description="newest marks first")

    def get(self, query: str) -> LabelledQuery | None:
        """The marks of `query` (whitespace as typed does not matter), None when it has none."""
        wanted = normalise_query(query)
        return next((q for q in self.queries if q.query == wanted), None)

    @property
    def usable(self) -> list[LabelledQuery]:
        """The queries a metric can score: those with at least one relevant memory."""
        return [q for q in self.queries if q.relevant]

    def jsonl(self) -> str:
        """One `{"query", "relevant"}` line per usable query: the format `load_jsonl` reads."""
        return "".join(json.dumps({"query": q.query, "relevant": q.relevant}, ensure_ascii=False) + "\n"
                       for q in self.usable)


class LabelStore:
    def __init__(self, pool: ConnectionPool):
        self.pool = pool

    def mark(self, instance: str, query: str, memory_id: str, relevant: bool | None) -> None:
        """Mark a memory relevant (True) or not (False) for the query; None takes the mark away. The
        memory must be in the instance or the shared one, where the query's search finds it."""
        validate_id(instance, "instance")
        query = normalise_query(query)
        with self.pool.connection() as conn:
            if relevant is None:
                conn.execute("DELETE FROM relevance_mark WHERE instance = %s AND query = %s AND memory_id = %s",
                             (instance, query, memory_id))
                return
            if not known_ids(conn, [instance, SHARED_INSTANCE], [memory_id]):
                raise NotFound(f"memory {memory_id!r} is not in {instance!r}: mark a memory its search shows")
            conn.execute("INSERT INTO relevance_mark (instance, query, memory_id, relevant) VALUES (%s, %s, %s, %s) "
                         "ON CONFLICT (instance, query, memory_id) DO UPDATE "
                         "SET relevant = EXCLUDED.relevant, marked_at = now()",
                         (instance, query, memory_id, relevant))

    def labelled_set(self, instance: str, query: str | None = None) -> LabelledSet:
        """The instance's marks by query (only `query`'s when given)."""
        with self.pool.connection() as conn:
            rows = conn.execute("SELECT query, memory_id, relevant, marked_at FROM relevance_mark "
                                "WHERE instance = %s AND (%s::text IS NULL OR query = %s) "
                                "ORDER BY marked_at, memory_id",
                                (instance, query and normalise_query(query),
                                 query and normalise_query(query))).fetchall()
        by_query: dict[str, LabelledQuery] = {}
        for text, memory_id, relevant, at in rows:
            q = by_query.setdefault(text, LabelledQuery(query=text, relevant=[], not_relevant=[], marked_at=at))
            (q.relevant if relevant else q.not_relevant).append(memory_id)
            q.marked_at = max(q.marked_at, at)
        queries = sorted(by_query.values(), key=lambda q: q.marked_at, reverse=True)
        return LabelledSet(instance=instance, queries=queries)

    def clear(self, instance: str, query: str) -> int:
        """Take away every mark of the query; returns how many there were."""
        with self.pool.connection() as conn:
            return conn.execute("DELETE FROM relevance_mark WHERE instance = %s AND query = %s",
                                (instance, normalise_query(query))).rowcount

    def forget(self, instances: list[str] | None, memory_ids: Iterable[str]) -> int:
        """Take away the marks naming deleted memories, in `instances` (None: every instance, as for a
        memory of the shared one); returns how many there were. A query whose marks all go goes with them:
        its text was typed to find those memories."""
        with self.pool.connection() as conn:
            return conn.execute("DELETE FROM relevance_mark WHERE (%s::text[] IS NULL OR instance = ANY(%s)) "
                                "AND memory_id = ANY(%s)", (instances, instances, list(memory_ids))).rowcount


def known_ids(conn, instances: list[str], ids: Iterable[str]) -> set[str]:
    """Those of `ids` stored in the memory index under one of `instances`."""
    rows = conn.execute("SELECT DISTINCT id FROM memory WHERE instance = ANY(%s) AND id = ANY(%s)",
                        (instances, list(ids)), prepare=False).fetchall()
    return {r[0] for r in rows}


def check_ids(wb: Workbench, dataset: EvalDataset) -> EvalDataset:
    """A JSONL set with the relevant ids its instances do not hold dropped, named in `unknown_ids` and
    counted in `skipped`: an id that cannot be retrieved would otherwise score 0 without a word. A query
    left with none is left out."""
    by_instance: dict[str, set[str]] = {}
    for q in dataset.queries:
        by_instance.setdefault(q.instance, set()).update(q.relevant)
    known: dict[str, set[str]] = {}
    with wb.pool().connection() as conn:
        for instance, ids in by_instance.items():
            scope = [instance, SHARED_INSTANCE] if dataset.include_shared else [instance]
            known[instance] = known_ids(conn, scope, ids)
    unknown: list[str] = []
    queries = []
    emptied: list[str] = []
    for q in dataset.queries:
        kept = [i for i in q.relevant if i in known[q.instance]]
        unknown += [i for i in q.relevant if i not in known[q.instance] and i not in unknown]
        if kept:
            queries.append(q.model_copy(update={"relevant": kept}))
        else:
            emptied.append(q.query)
    if not unknown:
        return dataset
    if not queries:
        shown = ", ".join(unknown[:5]) + (f" and {len(unknown) - 5} more" if len(unknown) > 5 else "")
        raise InvalidInput(f"none of the set's relevant ids is in {', '.join(sorted(by_instance))} ({shown}): "
                           "label memories of this instance, or choose the instance the set was made for")
    skipped = ({**dataset.skipped, UNKNOWN_REASON: len(unknown)}
               | ({EMPTIED_REASON: len(emptied)} if emptied else {}))
    return dataset.model_copy(update={"queries": queries, "skipped": skipped, "unknown_ids": unknown,
                                      "emptied": emptied})
