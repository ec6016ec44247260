"""The SQL of hybrid retrieval: one statement for both legs, fast at 100,000 memories.

What keeps it fast (measured on 10,000 synthetic memories, per query, see benchmarks/README.md):
- It names the instance's partition tables itself rather than `memory`, `memory_term` and
  `memory_lexeme`: planning a statement over the partitioned parent and pruning it cost about 1 ms a
  query and grows with the number of instances, and prepared (generic) plans of the parent were several
  times slower. Two partitions searched (the instance and the shared one, `SHARED_INSTANCE`, when that
  has memories) are their UNION ALL (`core.index.partitions.searched_table`), never the parent.
- The two legs' candidates are one FULL JOIN (a hash join, each with its ranks), and the final lookup
  of each is a LATERAL primary-key probe: the planner otherwise hashed the whole partition (5 ms at
  1,250 rows of wide, TOASTed rows). Their union joined back to each leg was a nested loop over the
  text leg, whose size the planner guesses as 1 (LoCoMo, top 25 from pools of 50: 0.2 ms of the
  statement's 1.6 ms).
- The text leg reads impact-ordered postings (`core.index.text`), bounded per query word.
- Each candidate's stored vector and immediate neighbours come back with it (binary), so the
  near-duplicate pass needs no second query. The vector is read and cast once per candidate (`e`),
  for it and both cosines: three times cost 0.18 ms of the statement's 1.2 ms (LoCoMo, top 25).
- The statement's text is composed once per shape of request (composing it took 0.25 ms a query), with
  its named placeholders turned into Postgres's own ($1, $2, ...) there too: it goes through a raw cursor
  (`psycopg.RawCursor`), which parses nothing. psycopg parses a named statement again at every execution
  when it is longer than 4 kB (its cache's bound; ours is 6.8 kB): 0.06 ms a search.
- A query whose relations may add words (`core.retrieval.relations`: "my daughter" → "Inês", read before
  it; "Inês" → "daughter", read by it) gets a shape of its own, which weighs them as the query's words they
  stand for; a query with neither a role asked about nor a capitalised word runs the statement it ran
  before, byte for byte. A query about an attribute (`core.retrieval.attributes`: "where … live" also
  searches "moved") adds its words the same way, given with the statement as the names are, and ranks in
  its text leg the memories that superseded the leg's best matches (`_SUCCEEDED`).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime
from functools import lru_cache
from typing import NamedTuple

import numpy as np
import psycopg
from psycopg import sql
from psycopg.types.array import ListBinaryDumper

from core.embeddings import Embedder
from core.formation.relations import asked
from core.ids import SHARED_INSTANCE
from core.index.names import lexemes_of, postings_of
from core.index.partitions import searched_table
from core.index.records import (
    ROW_COLUMNS,
    event_first_hour_sql,
    event_last_hour_sql,
    hour_key,
    stated_event_sql,
)
from core.index.text import BM25_IDF, K1, B, text_leg
from core.models import FusionProfile
from core.retrieval.relations import Related, named_roles

FEEDBACK_DOCS = 3  # best text matches whose vectors refine the query's (pseudo-relevance feedback)
QUERY_WORDS = 256  # distinct words of a query weighed for its vector (the first ones)
# The prior of a query word's weight in its vector (`word_weight`): memories the instance is taken to hold
# besides its own, and how many of them hold any word.
PRIOR_MEMORIES = 50.0
PRIOR_DF = 1.0


class BinaryList(list):
    """A list psycopg sends in binary: a raw cursor's parameters have no format of their own (`%b`), and
    psycopg writes a list of vectors as text otherwise, 1.6 ms a query."""


psycopg.adapters.register_dumper(BinaryList, ListBinaryDumper)

# A query's words as its vector weighs them: runs of letters (with inner apostrophes and hyphens), numbers.
_WORD = re.compile(r"[^\W\d_](?:[^\W\d_]|['-])*[^\W\d_]|[^\W\d_]|\d+")


def query_word_counts(query: str) -> Counter[str]:
    """The query's distinct words (case kept, as the embedder reads them) with how often each occurs."""
    counts: Counter[str] = Counter()
    for word in _WORD.findall(query):
        if word in counts or len(counts) < QUERY_WORDS:
            counts[word] += 1
    return counts


# The query's own vector, `q0`: the text's embedding, or (`_OWN_WEIGHTED`, see `_statement`) its words'
# vectors weighed by their idf with a prior (`word_weight`), normalised; the text's embedding when no word
# has a lexeme.
_OWN_PLAIN = sql.SQL("q0 AS (SELECT %(q)s::{vt} AS q)")
_OWN_WEIGHTED = sql.SQL("""q0 AS (
    SELECT CASE WHEN vector_norm(qi.q) > 0
                THEN qi.q * array_fill((1 / vector_norm(qi.q))::real, ARRAY[{dim}])::{vt} ELSE %(q)s::{vt} END AS q
    FROM (SELECT sum(w.v * array_fill(x.idf, ARRAY[{dim}])::{vt}) AS q
          FROM unnest(%(words)s::text[], %(wv)s::{vt}[]) WITH ORDINALITY AS w(word, v, i)
          JOIN LATERAL (
              SELECT max({idf})::real AS idf
              FROM unnest(memory_query_words(w.word)) u  -- as the text leg reads it (NFC)
              CROSS JOIN st
              LEFT JOIN LATERAL (SELECT sum(d.df)::float8 AS df FROM {lexemes} d
                                 WHERE d.instance = ANY(%(instances)s) AND d.lexeme = u.lexeme) l ON true
          ) x ON x.idf IS NOT NULL) qi
)""")


def word_weight(df: float, n: float) -> float:
    """A query word's weight in the query's vector: its BM25 idf (`core.index.text`) among the `n` memories
    of the searched instances, `df` of which hold it, as if they held PRIOR_MEMORIES more, PRIOR_DF of which
    hold it:

        weight = ln(1 + (n' - df' + 0.5) / (df' + 0.5)),   n' = n + PRIOR_MEMORIES,   df' = df + PRIOR_DF

    The instance's own counts say what its words are worth once it holds many memories; the prior speaks
    while it holds few, and fades as it grows (at n = 600: 5.56 against the idf's 5.99 for a word one memory
    holds, 4.04 against 4.05 for one ten hold). Without it a young instance's counts are degenerate: a new
    user's two memories and their two messages all hold "read" and "Kindle" (idf 0.105 among 4), and "Do I
    still read on my Kindle?" got a vector made of "still", which no memory holds (2.30), at a cosine of
    -0.09 to the answer "I switched from my Kindle to a Kobo." and a relevance under the floor. With the
    prior the three weigh 2.30, 2.30 and 3.60, and the cosine is 0.46 (benchmarks/README.md, "Saying
    nothing relevant").
    """
    df, n = df + PRIOR_DF, n + PRIOR_MEMORIES
    return math.log(1 + (n - df + 0.5) / (df + 0.5))


def word_weight_sql(df: sql.Composable, n: sql.Composable) -> sql.Composed:
    """`word_weight` as SQL over the expressions `df` and `n`: the text leg's idf (`BM25_IDF`) with the prior."""
    return BM25_IDF.format(n=sql.SQL("({} + {})").format(n, sql.Literal(PRIOR_MEMORIES)),
                           df=sql.SQL("({} + {})").format(df, sql.Literal(PRIOR_DF)))


def _truthy(key: str) -> sql.Composed:
    """The metadata's `key` as Python's `bool` reads its JSON value: null, false, 0, "", [], {} and a missing
    key are false."""
    return sql.SQL("""CASE jsonb_typeof(m.metadata->{k}) WHEN 'array' THEN m.metadata->{k} <> '[]'
        WHEN 'object' THEN m.metadata->{k} <> '{{}}' WHEN 'string' THEN m.metadata->{k} <> '""'
        WHEN 'number' THEN m.metadata->{k} <> '0' WHEN 'boolean' THEN m.metadata->{k} = 'true'
        ELSE false END""").format(k=sql.Literal(key))


# `core.retrieval.ranking.retrievable` as SQL over the memory `m`, for the kinds a profile retrieves
# (`%(shown)s`) and whether it retrieves superseded memories (`%(superseded)s`): the same decision for every
# metadata (tests/integration/test_retrievable_sql.py), so each leg holds only what ranking keeps. A memory
# with none of the three keys (imports, documents, LoCoMo's turns) is decided by one look at its keys, where
# the three lookups below cost every row the filter sees: when the planner read LoCoMo dev's ~600-turn
# partitions whole (before the search's page cost, `hybrid.SEARCH_SESSION`), the statement took 4.0 ms
# p50 as the client sees it, 3.7 ms with this look first (three runs each, alternating).
RETRIEVABLE = sql.SQL("""(NOT m.metadata ?| ARRAY['observations', 'superseded_at', 'message_kind'] OR NOT (
        {observations}
        OR (NOT %(superseded)s AND {superseded})
        OR (coalesce(jsonb_typeof(m.metadata->'message_kind'), 'null') <> 'null'
            AND NOT coalesce(jsonb_typeof(m.metadata->'message_kind') = 'string'
                             AND m.metadata->>'message_kind' = ANY(%(shown)s), false))))""").format(
    observations=_truthy("observations"), superseded=_truthy("superseded_at"))


SUCCEEDED_MATCHES = 50
_RELATED = sql.SQL("SELECT * FROM unnest(%(related)s::text[], %(stands)s::text[], %(rw)s::float8[])")

# For a query about an attribute (`core.retrieval.attributes`): the memories that superseded the text leg's
# best `spool` matches, each with its match's score (`sp`), ranked with the text leg's own (`tr`). The
# superseded facts are what such a question finds ("I live in Chicago …" for "Where do I live now?"), and
# the one key each names (`superseded_by`) is the statement of the change ("We just moved to Denver …").
# At least SUCCEEDED_MATCHES of them whatever the pool: a chat turn's top 5 draws 10 candidates a leg, and
# on a two-year import the Chicago fact came after ten travel tips holding "lively" (stemmed "live"), so
# the move came first in a top 25 and not at all in chat's top 5.
_SUCCEEDED = sql.SQL(""", sp AS (
    SELECT m.instance, m.id, g.tr
    FROM (SELECT p.instance, p.id,
                 sum(p.idf * p.tf * ({k1} + 1) / (p.tf + {k1} * (1 - {b} + {b} * p.dl / st.avgdl))) AS tr
          FROM p, st GROUP BY p.instance, p.id ORDER BY tr DESC, p.id LIMIT %(spool)s) g
    JOIN {table} f ON f.instance = g.instance AND f.id = g.id AND f.metadata ? 'superseded_by'
    JOIN {table} m ON m.instance = f.instance AND m.id = f.metadata->>'superseded_by'
    WHERE {where}{hidden}
)""")
_RANKED = sql.SQL("SELECT instance, id, tr, row_number() OVER (ORDER BY tr DESC, id) AS trank FROM t")
_RANKED_WITH_SUCCESSORS = sql.SQL(
    "SELECT instance, id, max(tr) AS tr, row_number() OVER (ORDER BY max(tr) DESC, id) AS trank "
    "FROM (SELECT instance, id, tr FROM t UNION ALL SELECT instance, id, tr FROM sp) u GROUP BY instance, id")


def shown_by(profile: FusionProfile) -> tuple[list[str], bool] | None:
    """(kinds, superseded): the parameters of `RETRIEVABLE` for what `profile` retrieves, or None when it
    retrieves every memory."""
    if profile.retrieve_kinds is None:
        return None
    return list(profile.retrieve_kinds), profile.include_superseded


def searched_instances(instance: str, include_shared: bool) -> list[str]:
    return [instance] + ([SHARED_INSTANCE] if include_shared and instance != SHARED_INSTANCE else [])


# A time window on the event time (`SearchRequest.time_of` "event": a period a query asks about): a
# memory's time is when what it says happened (`core.index.records`: its own event time, whose period, to
# the hour, overlaps the window; else when it was stored). A message's event time is the moment it was said,
# so messages are found by when they were said, as on the stored time; "Ivan bought a red bicycle" (event
# 2024-06-03) is in June 2024 whenever it was stored. The two cases are the two arms of an OR, each with
# its index (`memory_created` for the stored time, the partial `memory_event_stated` for the few rows with
# an event time of their own): the generic plan reads the window's rows by a BitmapOr of both, as it reads
# them by `memory_created` on the stored time. A CASE per bound left it no index but the HNSW scan,
# filtered: at 10,000 synthetic memories (5 instances, 300 with an event date of their own), a top-5 search
# with a day, month or 30-day window took 7.2 ms p50 with it against 2.4 with the OR, and with the OR 2.1
# against 1.9 ms on the stored time (300 questions, the two ways asked in turn).
STATED = sql.SQL(stated_event_sql("m."))
WINDOW = sql.SQL("""((NOT {stated} AND m.created_at >= %(since)s AND m.created_at < %(until)s)
        OR ({stated} AND m.ev_year BETWEEN %(since_year)s::int2 AND %(until_year)s::int2
            AND {last} >= %(since_hour)s::int8 AND {first} < %(until_hour)s::int8))""").format(
    stated=STATED, first=sql.SQL(event_first_hour_sql("m.")), last=sql.SQL(event_last_hour_sql("m.")))

# A window that also holds the superseded memories whose fact held in it: a superseded memory counts as in the
# window when [its time, superseded_at) overlaps it (and only then), its time being when it was said or, earlier,
# the start of its own event time. "I live in a flat on Elm Street" (said 2025-12-01, superseded 2026-03-14 by "We
# just moved to … Harbor Road") is where the user lived in February; by its time alone it was in no window but
# December's. Used for a statement whose profile retrieves superseded memories (`candidate_statement`), as a
# turn's windowed search does (`core.conversation.turn`); without a window a profile hides them as before. The end
# is read as a time only when written as one (`supersede` writes ISO times): a failed cast fails the search.
# `memory_superseded` (`core.index.memory_index.DDL`) finds the few superseded rows, so the plan still reads the
# window's rows by a BitmapOr: without it the vector leg scanned HNSW filtered, and a windowed search on the
# year's 6,400 memories took 11 ms p50 against 4 (60 searches: 4 questions, 3 windows; `benchmarks/README.md`).
HELD = sql.SQL(r"""((NOT m.metadata ? 'superseded_at' AND {window})
        OR (m.metadata ? 'superseded_at'
            AND CASE WHEN m.metadata->>'superseded_at' ~ '^\d{{4}}-\d\d-\d\d[T ]\d\d:\d\d'
                     THEN (m.metadata->>'superseded_at')::timestamptz > %(since)s ELSE false END
            AND (m.created_at < %(until)s OR ({stated} AND {first} < %(until_hour)s::int8))))""").format(
    window=WINDOW, stated=STATED, first=sql.SQL(event_first_hour_sql("m.")))

# The filters a request may add: (parameter, SearchRequest field, clause), in the clauses' order.
FILTERS = (("kinds", "kinds", sql.SQL("m.kind = ANY(%(kinds)s)")),
           ("chain_id", "chain_id", sql.SQL("m.chain_id = %(chain_id)s")),
           ("tags", "tags", sql.SQL("m.tags && %(tags)s")),
           ("since", "stored_since", sql.SQL("m.created_at >= %(since)s")),
           ("until", "stored_until", sql.SQL("m.created_at < %(until)s")),
           ("window", "event_window", WINDOW),
           ("exclude", "exclude_ids", sql.SQL("m.id <> ALL(%(exclude)s)")))
CLAUSES = {name: clause for name, _, clause in FILTERS} | {"held": HELD}  # "held": the window, see `HELD`


def window_params(since: datetime | None, until: datetime | None) -> dict:
    """`WINDOW`'s values for [since, until), an open end unbounded: the bounds themselves for the stored
    time, and for an event time the years and `hour_key`s they span."""
    return {"since": since or datetime.min.replace(tzinfo=UTC),
            "until": until or datetime.max.replace(tzinfo=UTC),
            "since_year": since.astimezone(UTC).year if since else 0,
            "until_year": until.astimezone(UTC).year if until else 32767,
            "since_hour": hour_key(since) if since else 0,
            "until_hour": hour_key(until, up=True) if until else 10_000_010_100}


def candidate_statement(embedder: Embedder, req, qvec, partitions: dict[str, str],
                        shown: tuple[list[str], bool] | None, postings: int = 0,
                        related: Sequence[Related] = (), succeeds: bool = False) -> tuple[bytes, list]:
    """The first `req.pool` candidates of each leg, the vector leg and the text leg, with their fusion inputs,
    stored vectors and immediate neighbours, from `partitions` ({instance: partition table} of the searched
    instances that have memories). With `shown` (`shown_by`), each leg holds only the memories it keeps
    (`RETRIEVABLE`), ranked among themselves. The text leg reads each query word's first `postings`
    postings, at least 100 and 4 a candidate (`core.index.text.text_leg`). The statement is for a raw cursor
    (`psycopg.RawCursor`), with its values in its placeholders' order (`Statement`). A hybrid search also
    searches what the query's relations add (`core.retrieval.relations`), each word weighing as the query's
    word it stands for: `related`, the names of the roles it asks about, in the text leg and, with static
    word vectors, in the query's vector; and the roles of the names it holds, which the statement reads
    (`named_roles`), in the text leg. With `succeeds` (a query about an attribute,
    `core.retrieval.attributes`), the text leg also ranks the memories that superseded its best matches
    (`_SUCCEEDED`)."""
    params: dict = {"instances": list(partitions), "q": qvec, "text": req.query,
                    "vpool": req.pool if req.search_type != "text" else 0,
                    "tpool": req.pool if req.search_type != "vector" else 0}
    used = []
    for name, field, _ in FILTERS:
        if value := getattr(req, field):
            params |= window_params(*value) if name == "window" else {name: value}
            used.append(name)
    if shown is not None:
        params["shown"], params["superseded"] = shown
    if "window" in used and (shown is None or shown[1]):  # superseded memories retrieved: those that held in it
        used[used.index("window")] = "held"
    params["kpost"] = max(100, 4 * params["tpool"], postings)
    params["spool"] = max(SUCCEEDED_MATCHES, params["tpool"])
    params["fbk"] = FEEDBACK_DOCS if req.feedback > 0 else 0
    params["fbw"] = np.full(embedder.dim, req.feedback, dtype=np.float32)
    # Hybrid only, as the text leg's best matches refine it: the vector leg searched alone shows what the
    # query's own embedding finds.
    counts = query_word_counts(req.query) if req.search_type == "hybrid" else Counter()
    vectors = embedder.word_vectors(list(counts)) if counts else None
    if vectors is not None:  # each occurrence of a word counts
        params["words"] = list(counts)
        params["wv"] = BinaryList(vectors * np.array(list(counts.values()), dtype=np.float32)[:, None])
    # What the query's relations add (`core.retrieval.relations`): the names of the roles it asks about, read
    # before, to both legs (the vector: each name's weighed by the idf of the role's word, as the statement
    # weighs words, times its `in_vector` weight when it has one: an attribute's words,
    # `core.retrieval.attributes`); the roles of the names it holds, read by the statement, to the text leg.
    if related:
        params["related"], params["stands"], params["rw"] = ([r.word for r in related], [r.stands for r in related],
                                                             [r.weight for r in related])
        if vectors is not None and (added := embedder.word_vectors(params["related"])) is not None:
            params["words"] = params["words"] + params["stands"]
            weights = np.float32([r.weight if r.in_vector is None else r.in_vector for r in related])
            params["wv"] = BinaryList(np.concatenate([params["wv"], added * weights[:, None]]))
    names = list(asked(req.query)[1]) if req.search_type == "hybrid" else []
    if names:
        params["names"] = names
    stmt = _statement(embedder.dim, embedder.name, tuple(partitions.values()), tuple(used),
                      vectors is not None, shown is not None, bool(related), bool(names), succeeds)
    return stmt.text, [params[name] for name in stmt.names]


class Statement(NamedTuple):
    """A statement for a raw cursor: its text with Postgres's placeholders, and the name of the value each
    stands for, $1 first."""

    text: bytes
    names: tuple[str, ...]


_PLACEHOLDER = re.compile(rb"%\((\w+)\)s|%%")


def positional(named: bytes) -> Statement:
    """`named` (psycopg's `%(name)s` placeholders, `%%` for %) with Postgres's $1, $2, ... instead: a name
    used twice is one placeholder."""
    names: list[str] = []

    def number(match: re.Match) -> bytes:
        if match[1] is None:
            return b"%"
        name = match[1].decode()
        if name not in names:
            names.append(name)
        return b"$%d" % (names.index(name) + 1)

    return Statement(_PLACEHOLDER.sub(number, named), tuple(names))


@lru_cache(maxsize=512)
def _statement(dim: int, model_name: str, partitions: tuple[str, ...], used: tuple[str, ...],
               weighted: bool, hides: bool, related: bool = False, named: bool = False,
               succeeds: bool = False) -> Statement:
    """The statement for one shape of request, composed once: composing it took 0.25 ms a query."""
    table = searched_table(partitions, "memory")
    postings = searched_table([postings_of(p) for p in partitions], "memory_term")
    lexemes = searched_table([lexemes_of(p) for p in partitions], "memory_lexeme")
    where = sql.SQL(" AND ").join([sql.SQL("m.instance = ANY(%(instances)s)")]
                                  + [CLAUSES[name] for name in used])
    filtered = any(name != "exclude" for name in used)
    vt = sql.SQL("vector({})").format(sql.Literal(dim))
    model = sql.Literal(model_name)
    # The text leg runs first: its best matches refine the query's vector (Rocchio's pseudo-relevance
    # feedback, q' = q + feedback * mean of their vectors), which the vector leg then searches with.
    # wordllama averages word vectors, so a question's vector is vague; the vectors of the memories
    # sharing its rare words say what it is about. Each candidate comes back with both cosines: to q'
    # (`semantic`, the part fusion weighs: LoCoMo dev R@5 / R@10 0.637 / 0.731, against 0.624 / 0.719
    # when fusion weighs the query's own cosine) and to q alone (`similarity`, what
    # `similarity_threshold` reads). The partial HNSW index is used only when the model and the cast
    # appear literally, as here.
    # With static word vectors (`weighted`), q itself is the sum of the query's words' vectors, each
    # weighed by its idf as the text leg reads it (`st`, `memory_lexeme`; a word with no lexeme, a stop
    # word, weighs nothing), with a prior that speaks for a young instance (`word_weight`), normalised: the
    # text's own vector weighs "cities" no more than "which".
    # LoCoMo dev R@10 0.775 -> 0.789 (multi-hop 0.432 -> 0.485), with feedback 0.25 instead of 0.5.
    # `query_cosine` stays the text's own vector's. The words' vectors go in binary (`BinaryList`).
    # With `hides`, both legs leave out what the profile does not retrieve (`RETRIEVABLE`): the vector leg
    # as pgvector filters, among the HNSW scan's `hnsw.ef_search` nearest (`core.retrieval.hybrid` widens
    # the beam when they hold too few); the text leg in its score's order, one key probe a candidate until
    # it has its `tpool`. Each row carries the searched instances' memory count (`st.n`) and whether a
    # query word's postings were cut (`tc.cut`), which tell the caller whether a short leg had more to find;
    # with no candidate, one row carries them alone.
    # The words the query's relations add (`core.retrieval.relations`): names given with the statement
    # (`related`), roles of the names it holds read by it (`named`).
    added = [part for part, wanted in ((_RELATED, related), (named_roles(table), named)) if wanted]
    hidden = sql.SQL(" AND {}").format(RETRIEVABLE) if hides else sql.SQL("")
    weight = word_weight_sql(sql.SQL("coalesce(l.df, 0)"), sql.SQL("st.n"))
    own = (_OWN_WEIGHTED.format(dim=sql.Literal(dim), vt=vt, idf=weight, lexemes=lexemes) if weighted
           else _OWN_PLAIN.format(vt=vt))
    stmt = sql.SQL("""
WITH {text_leg}{succeeded}, tr AS (
    {ranked}
), fb AS (
    SELECT avg(m.embedding::{vt}) AS centroid
    FROM (SELECT instance, id FROM t ORDER BY tr DESC, id LIMIT %(fbk)s) x
    CROSS JOIN LATERAL (SELECT m.embedding FROM {table} m WHERE m.instance = x.instance AND m.id = x.id
                        AND m.embedding_model = {model} LIMIT 1) m
), {own}, qv AS (
    SELECT coalesce(q0.q + fb.centroid * %(fbw)s::{vt}, q0.q) AS q FROM fb, q0
), v AS (
    SELECT m.instance, m.id, (m.embedding::{vt}) <=> (SELECT q FROM qv) AS dist
    FROM {table} m
    WHERE {where} AND m.embedding_model = {model}{hidden}
    ORDER BY (m.embedding::{vt}) <=> (SELECT q FROM qv)
    LIMIT %(vpool)s
), vr AS (
    SELECT instance, id, row_number() OVER (ORDER BY dist, id) AS vrank FROM v
), c AS (
    SELECT coalesce(vr.instance, tr.instance) AS instance, coalesce(vr.id, tr.id) AS id, vr.vrank,
           tr.tr, tr.trank
    FROM vr FULL JOIN tr ON tr.instance = vr.instance AND tr.id = vr.id
)
SELECT x.*, s.ideal, s.n, s.cut
FROM (SELECT (SELECT ideal FROM ti) AS ideal, (SELECT n FROM st) AS n, (SELECT cut FROM tc) AS cut) s
LEFT JOIN LATERAL (
    SELECT {cols}, m.e, m.context->'before'->>0, m.context->'after'->>0,
           1 - (m.e <=> (SELECT q FROM qv)) AS cosine, 1 - (m.e <=> %(q)s::{vt}) AS query_cosine,
           c.tr, c.vrank, c.trank
    FROM c
    CROSS JOIN LATERAL (SELECT *, CASE WHEN m.embedding_model = {model} THEN m.embedding::{vt} END AS e
                        FROM {table} m WHERE m.instance = c.instance AND m.id = c.id LIMIT 1) m
) x ON true
""").format(vt=vt, where=where, model=model, table=table, own=own,
            hidden=hidden,
            succeeded=_SUCCEEDED.format(k1=sql.Literal(K1), b=sql.Literal(B), table=table, where=where, hidden=hidden)
            if succeeds else sql.SQL(""),
            ranked=_RANKED_WITH_SUCCESSORS if succeeds else _RANKED,
            text_leg=text_leg(filtered, where, "exclude" in used, table, postings, lexemes,
                              RETRIEVABLE if hides else None,
                              sql.SQL(" UNION ALL ").join(added) if added else None),
            cols=sql.SQL(", ").join(sql.Identifier("m", c.strip()) for c in ROW_COLUMNS.split(",")))
    return positional(stmt.as_bytes(None))
