"""What a query's relations add: "my daughter" also reads as "Inês" once the user said "My daughter Inês
loves drawing.", and "Inês" as "my daughter" (`core.formation.relations` reads both the relations a memory
states and what a query asks of them).

A role the query names with a possessive ("my daughter", "Melanie's kids") is resolved before the search:
one short statement on the search's connection reads the names that hold it (`related_words`), and both
legs search them, each as the role's word it stands for (`RELATION_WEIGHT`): the text leg weighs it by
that word's idf, and the query's vector, with static word vectors, holds the name's vector weighed so
(`core.retrieval.hybrid_sql`). A name the query holds adds its role inside the search statement itself,
to the text leg only and at half that weight (`named_roles`, ROLE_WEIGHT): whose "daughter" a memory
speaks of is less sure than who Inês is, and most queries hold a name (every LoCoMo question names a
speaker), where a statement before each would cost them all a round trip. Relations are read from the
searched memories that state them and are not superseded, by the partial index `memory_relations`. An
ideal match, which coverage and relevance read, still holds the query's own words only.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import NamedTuple

import psycopg
from psycopg import sql

from core.formation.relations import asked
from core.index.partitions import searched_table

RELATION_WEIGHT = 1.0
ROLE_WEIGHT = 0.5

# The relations `r` the searched memories state, one a row; a `relations` value of another shape (a caller's
# own metadata) is passed over, not an error.
_STATED = sql.SQL("""{table} m
CROSS JOIN LATERAL jsonb_array_elements(CASE jsonb_typeof(m.metadata->'relations')
                                        WHEN 'array' THEN m.metadata->'relations' END) AS r
WHERE m.instance = ANY({instances}) AND m.metadata ? 'relations' AND jsonb_typeof(r) = 'object'
  AND coalesce(m.metadata->>'superseded_at', '') = ''""")
_WORD = re.compile(r"[^\W_]+")


class Related(NamedTuple):
    """A word a query's relations (or the attribute it asks about, `core.retrieval.attributes`) add: `word`,
    standing for the query's word `stands`, weighing `weight` times that word's idf, and `in_vector` times
    it in the query's vector (None: `weight`)."""

    word: str
    stands: str
    weight: float
    in_vector: float | None = None


def related_words(conn, query: str, partitions: dict[str, str]) -> list[Related]:
    """The names the roles the query asks about stand for, read on `conn` from `partitions` ({instance:
    partition table}); none, and no statement sent, when the query names no role with a possessive."""
    roles, _ = asked(query)
    if not roles or not partitions:
        return []
    # Prepared, as the search's own statement: 0.05 ms on an idle machine.
    rows = psycopg.RawCursor(conn).execute(_lookup(tuple(partitions.values())), [
        list(partitions), sorted({key.split("/", 1)[1] for key in roles})], prepare=True).fetchall()
    own = _words(query)
    related: dict[str, Related] = {}
    for holder, role, name in sorted({(h or "", r, n) for h, r, n in rows if r and n}):  # one order, any plan
        stands = roles.get(f"{holder.split(' ', 1)[0].lower()}/{role}") or roles.get(f"/{role}")
        if stands and not _words(name) <= own:  # "my daughter Inês" adds nothing
            related.setdefault(name, Related(name, stands, RELATION_WEIGHT))
    return list(related.values())


def named_roles(table: sql.Composable) -> sql.Composed:
    """(word, stands, w) rows for the search statement: the roles of the names the query holds
    (`%(names)s`, lower-cased), each standing for the name, weighing ROLE_WEIGHT."""
    return sql.SQL("SELECT r->>'role', r->>'name', {w}::float8 FROM {stated} "
                   "AND string_to_array(lower(r->>'name'), ' ') && %(names)s::text[]").format(
        w=sql.Literal(ROLE_WEIGHT), stated=_STATED.format(table=table, instances=sql.SQL("%(instances)s")))


@lru_cache(maxsize=512)
def _lookup(partitions: tuple[str, ...]) -> bytes:
    """The holders, roles and names of the roles asked about ($2) in the searched partitions (`searched_table`;
    $1 the instances), composed once."""
    table = searched_table(partitions, "memory")
    return sql.SQL("SELECT r->>'holder', r->>'role', r->>'name' FROM {stated} AND r->>'role' = ANY($2::text[])"
                   ).format(stated=_STATED.format(table=table, instances=sql.SQL("$1::text[]"))).as_bytes(None)


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))
