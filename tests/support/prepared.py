"""The statements a flow would have prepared over a partitioned table's parent.

psycopg prepares a statement at its sixth run on a connection, and Postgres then plans it generically once,
with the instance unknown: over `memory` (a partition per instance, as `memory_term` and `memory_lexeme`) that
plan opens and locks every instance's partitions, 0.3-1.1 s and 8,041 locks among 800 instances, once per
pool connection and statement. So a statement through the parent, a write above all (the parent's statement
triggers keep the text index), runs unprepared (`prepare=False`): Postgres plans it at each run with the
instance known and leaves the others out. The reads of a turn's rows by id name the partition instead
(`MemoryIndex.table`), which keeps their prepared plan.

`preparing` records the statements psycopg would prepare if they ran six times on a connection, so one
pass of a flow shows what its sixth would send prepared.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from psycopg._preparing import PrepareManager

from core.config import Settings
from core.runtime import Workbench

_PARENTS = "SELECT c.relname::text FROM pg_partitioned_table p JOIN pg_class c ON c.oid = p.partrelid"


@contextmanager
def preparing(settings: Settings) -> Iterator[tuple[Workbench, list[str]]]:
    """A runtime of its own (its schema in place), and the statements that psycopg would prepare at their
    sixth run on a connection: all but those sent with `prepare=False` (a server-side cursor's are never
    prepared). Recorded as psycopg decides, without changing its decision, on every connection of this
    process meanwhile, another runtime's included."""
    wb = Workbench(settings)
    wb.pool()
    preparable: list[str] = []
    decide = PrepareManager.get

    def get(self, query, prepare=None):
        if prepare is not False and self.prepare_threshold is not None:
            preparable.append(query.query.decode())
        return decide(self, query, prepare)

    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(PrepareManager, "get", get)
            yield wb, preparable
    finally:
        wb.close()


def over_parents(wb: Workbench, statements: list[str]) -> list[str]:
    """Those of `statements` that read, change or delete rows through a partitioned table's parent (an
    INSERT through it is planned without its partitions, and so is left out; so is a comma join, which no
    statement of `core` writes)."""
    with wb.pool().connection() as conn:
        parents = [row[0] for row in conn.execute(_PARENTS, prepare=False)]
    names = "|".join(parents)
    through = re.compile(rf"\b(?:FROM|JOIN|UPDATE|USING|MERGE\s+INTO)\s+(?:ONLY\s+)?(?:public\.)?\"?(?:{names})\"?"
                         r"(?![\w\"])", re.IGNORECASE)
    return sorted({" ".join(s.split()) for s in statements if through.search(s)})
