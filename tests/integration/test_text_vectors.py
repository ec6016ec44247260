"""A memory's text vector (`memory.tsv`) is made message by message (`core.index.text.memory_tsv`): a bulk
load composes it from each distinct text of a batch, parsed once (`core.index.bulk_load`), and must
write exactly what the trigger writes for the same row; its postings are those of the joined texts that
the vector was made of before; and a database whose vector was a generated column keeps its vectors
and postings, and is kept by the trigger from then on."""

from __future__ import annotations

import unicodedata
from datetime import UTC, datetime, timedelta
from functools import partial

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from psycopg.types.json import Jsonb

from core.index import memory_index
from core.index.records import event_time_of
from core.index.text import NEIGHBOUR_CHARS, conversation_context
from core.models import EventTime, MemoryContext, MemoryRecord
from core.retrieval.hybrid import SearchRequest, hybrid_search
from tests.support.labelled_texts import indexed_words

# The vector as it was made until 2026-12-05 (with today's analysis): each distance's neighbours joined, then parsed.
JOINED = """
    setweight(memory_analyse(left(content, 100000)), 'A')
    || setweight(memory_analyse(left(concat_ws(' ', context->'before'->>0, context->'after'->>0),
                                             8000)), 'B')
    || setweight(memory_analyse(left(concat_ws(' ', context->'before'->>1, context->'before'->>2,
                                                       context->'after'->>1, context->'after'->>2), 16000)), 'C')
    || setweight(to_tsvector('english', memory_date_words({y}, {mo}, {d})), 'D')"""

TURNS = ["Hey Mel! Good to see you! How have you been?",
         "I went to a LGBTQ support group yesterday and it was so powerful.",
         "", "Wow, that's cool! My e-mail is mel@example.org; see https://example.org/a-b?c=1 for the photos.",
         "We re-painted the kids' room — 3.5 litres, 2 coats, co-operative weather!",
         "Ça va? Über-cool: naïve café déjà-vu 東京 🎉🎉",
         "It's 10:30am on 8 May 2023... don't forget the 2nd half/quarter",
         "x" * 50 + " " + "héllo wörld " * 600,  # longer than NEIGHBOUR_CHARS: cut as a neighbour
         "Last one."]


def conversation(instance: str, texts: list[str], start: datetime | None = None) -> list[MemoryRecord]:
    start = start or datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    out = []
    for i, text in enumerate(texts):
        at = start + timedelta(minutes=i)
        out.append(MemoryRecord(instance=instance, id=f"t{i}", kind="conversation", chain_id="c1",
                                content=text or "(empty)", created_at=at, context=conversation_context(texts, i),
                                event_time=event_time_of(at) if i % 3 else EventTime()))
    return out


def test_a_bulk_loaded_vector_is_the_one_the_trigger_writes(workbench, instance):
    records = conversation(instance, TURNS)
    records.append(MemoryRecord(instance=instance, id="lone", kind="observation", content="No neighbours here.",
                                created_at=datetime(2024, 1, 2, tzinfo=UTC)))
    records.append(MemoryRecord(instance=instance, id="partial", kind="observation", content="one side",
                                created_at=datetime(2024, 1, 3, tzinfo=UTC),
                                context=MemoryContext(before=["only before", ""], after=[])))
    assert workbench.index.bulk_load(records) == len(records)
    live = f"{instance}-live"
    workbench.index.add([r.model_copy(update={"instance": live}) for r in records])  # through the trigger
    with workbench.pool().connection() as conn:
        rows = conn.execute("""
            SELECT b.id, b.tsv = memory_tsv(b.content, b.context, b.ev_year, b.ev_month, b.ev_day), b.tsv = l.tsv,
                   length(b.tsv) FROM memory b JOIN memory l ON l.instance = %s AND l.id = b.id
            WHERE b.instance = %s ORDER BY b.id""", (live, instance)).fetchall()
        assert len(rows) == len(records)
        assert all(same_as_function and same_as_live for _, same_as_function, same_as_live, _ in rows), rows
        assert all(length > 0 for *_, length in rows)
        # The postings the bulk load wrote are those the trigger wrote for the same rows.
        diff = conn.execute("""
            SELECT count(*) FROM (
                (SELECT id, lexeme, tf, dl FROM memory_term WHERE instance = %(b)s
                 EXCEPT SELECT id, lexeme, tf, dl FROM memory_term WHERE instance = %(l)s)
                UNION ALL
                (SELECT id, lexeme, tf, dl FROM memory_term WHERE instance = %(l)s
                 EXCEPT SELECT id, lexeme, tf, dl FROM memory_term WHERE instance = %(b)s)) x""",
                            {"b": instance, "l": live}).fetchone()[0]
        assert diff == 0
        far = conn.execute("SELECT count(*) FROM memory_term WHERE instance = %s AND id = 't8' AND lexeme = 'world'",
                           (instance,)).fetchone()[0]
        assert far == 1  # the long turn's words reach its neighbours, cut at NEIGHBOUR_CHARS
    assert len(TURNS[7]) > NEIGHBOUR_CHARS


WORDS = st.sampled_from(["cat", "cats", "running", "ran", "re-run", "e-mail", "x@y.org", "http://a.b/c-d",
                         "3.5", "10:30", "2nd", "don't", "naïve", "東京", "🎉", "-", "—", "...", "/", "co-op",
                         "U.S.A.", "ab-", "-cd", "it's", "the", "a", "Ünïcode", "foo_bar", "#tag", "<b>", "&amp;"])
TEXT = st.lists(WORDS, max_size=12).map(" ".join) | st.text(
    st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)), max_size=40)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.none(), TEXT), min_size=7, max_size=7))
def test_the_postings_are_those_of_the_joined_texts(workbench, texts):
    content, *near = texts
    context = {"before": [t for t in near[0:1] + near[2:4] if t is not None],
               "after": [t for t in near[1:2] + near[4:6] if t is not None]}
    joined = JOINED.format(y="r.ev_year", mo="r.ev_month", d="r.ev_day")
    with workbench.pool().connection() as conn:
        # Joined, a neighbour but the first of its distance follows a space; the parser reads a few texts
        # otherwise at their start (`~0`: a file name there, a blank and a number after a space). Each
        # neighbour is now parsed on its own, as at its start (`test_a_neighbour_is_read_as_it_is_alone`).
        assume(conn.execute("SELECT bool_and(memory_analyse(t) = memory_analyse(' ' || t)) FROM unnest(%s::text[]) t",
                            ([t for t in near if t is not None],)).fetchone()[0] is not False)
        # Joined, an address in one neighbour ('0@0') has the words inside another's file name read too ('~0A':
        # also '0a'), where each alone reads them only in a text holding an address (`memory_may_hold_address`).
        assume(conn.execute("SELECT NOT (bool_or(memory_may_hold_address(t)) AND bool_or(memory_analyse_parts("
                            "memory_fold(t)) <> memory_analyse_nfc(memory_fold(t)))) FROM unnest(%s::text[]) t",
                            ([t for t in near if t is not None],)).fetchone()[0] is not False)
        terms = conn.execute(f"""
            WITH r AS (SELECT %(content)s::text AS content, %(context)s::jsonb AS context, 2023::int2 AS ev_year,
                              5::int2 AS ev_month, 8::int2 AS ev_day)
            SELECT (SELECT array_agg((w.lexeme, w.tf)::text ORDER BY w.lexeme) FROM r, memory_terms_of(
                        memory_tsv(r.content, r.context, r.ev_year, r.ev_month, r.ev_day)) w),
                   (SELECT array_agg((w.lexeme, w.tf)::text ORDER BY w.lexeme) FROM r, memory_terms_of({joined}) w)
            """, {"content": content or "", "context": Jsonb(context)}).fetchone()
    assert terms[0] == terms[1]


def test_a_neighbour_is_read_as_it_is_alone(workbench):
    """Not as it would be read after another neighbour's text: `~0` starting a message is one word."""
    with workbench.pool().connection() as conn:
        vector, joined = conn.execute(f"""
            SELECT memory_tsv('', %(context)s::jsonb, 0::int2, 0::int2, 0::int2)::text,
                   {JOINED.format(y="0::int2", mo="0::int2", d="0::int2")}::text
            FROM (SELECT ''::text AS content, %(context)s::jsonb AS context) r""",
                                      {"context": Jsonb({"before": [""], "after": ["~0"]})}).fetchone()
    assert vector == "'~0':1B"
    assert joined == "'0':1B"  # the two neighbours joined: a blank, then the number


def test_a_generated_vector_of_before_is_kept_and_then_set_by_the_trigger(other_database):
    db = other_database
    db.execute(memory_index.DDL)
    # As databases were until 2026-12-05: the vector a column generated from the joined texts.
    db.execute(f"""
        DROP TRIGGER memory_tsv_set ON memory;
        ALTER TABLE memory DROP COLUMN tsv;
        ALTER TABLE memory ADD COLUMN tsv tsvector GENERATED ALWAYS AS (memory_tsv(content, context, ev_year,
                                                                        ev_month, ev_day)) STORED;
        CREATE OR REPLACE FUNCTION memory_tsv(content text, context jsonb, y smallint, mo smallint, d smallint)
        RETURNS tsvector LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT {JOINED.format(y="y", mo="mo", d="d")} $$;
        CREATE TABLE memory_p_old PARTITION OF memory FOR VALUES IN ('old');
        SELECT memory_text_partitions('old', 'memory_p_old');
        INSERT INTO memory_partition VALUES ('old', 'memory_p_old');""")
    texts = ["We adopted a puppy called Toby.", "He loves the park by the river.", "Toby chewed my slippers!"]
    for i, text in enumerate(texts):
        db.execute("INSERT INTO memory (instance, id, kind, content, created_at, context) "
                   "VALUES ('old', %s, 'conversation', %s, now(), %s)",
                   (f"m{i}", text, Jsonb(conversation_context(texts, i).model_dump())))
    before = db.execute("SELECT id, tsv FROM memory ORDER BY id").fetchall()
    postings = db.execute("SELECT id, lexeme, tf, dl FROM memory_term ORDER BY 1, 2").fetchall()

    db.execute(memory_index.DDL)  # today's schema over it
    assert db.execute("SELECT attgenerated FROM pg_attribute WHERE attrelid = 'memory_p_old'::regclass "
                      "AND attname = 'tsv'").fetchone()[0] == ""
    assert db.execute("SELECT id, tsv FROM memory ORDER BY id").fetchall() == before
    assert db.execute("SELECT id, lexeme, tf, dl FROM memory_term ORDER BY 1, 2").fetchall() == postings
    db.execute(memory_index.DDL)  # and again: nothing more changes
    assert db.execute("SELECT id, tsv FROM memory ORDER BY id").fetchall() == before

    db.execute("INSERT INTO memory (instance, id, kind, content, created_at) VALUES ('old', 'm3', 'observation', "
               "'Scout is our second dog', now())")
    db.execute("UPDATE memory SET metadata = '{\"x\": 1}' WHERE id = 'm0'")  # not its text: tsv unchanged
    db.execute("UPDATE memory SET content = 'Toby the puppy sleeps a lot' WHERE id = 'm2'")
    rows = dict(db.execute("SELECT id, tsv = memory_tsv(content, context, ev_year, ev_month, ev_day) "
                           "FROM memory").fetchall())
    assert rows["m3"] and rows["m2"]
    assert db.execute("SELECT tsv FROM memory WHERE id = 'm0'").fetchone()[0] == before[0][1]
    lexemes = {r[0] for r in db.execute("SELECT lexeme FROM memory_term WHERE id = 'm2'")}
    assert {"sleep", "puppi"} <= lexemes and "slipper" not in lexemes
    assert db.execute("SELECT count(*) FROM memory_term WHERE id = 'm3' AND lexeme = 'scout'").fetchone()[0] == 1


def test_the_words_counters_of_one_table_move_into_their_instances_partitions(old_instance_database):
    db = old_instance_database
    for i, text in enumerate(["We adopted a puppy called Toby.", "Toby chewed my slippers!"]):
        db.execute("INSERT INTO memory (instance, id, kind, content, created_at) VALUES ('old', %s, 'conversation', "
                   "%s, now())", (f"m{i}", text))
    counters = db.execute("SELECT lexeme, df, len FROM memory_lexeme ORDER BY 1").fetchall()
    # As databases were until 2026-12-07: every instance's counters in one table, a word at zero kept.
    db.execute("""
        CREATE TABLE flat AS SELECT * FROM memory_lexeme;
        DROP TABLE memory_lexeme;
        CREATE TABLE memory_lexeme (instance text NOT NULL, lexeme text COLLATE "C" NOT NULL, df bigint NOT NULL,
                                    len double precision NOT NULL DEFAULT 0, PRIMARY KEY (instance, lexeme));
        INSERT INTO memory_lexeme SELECT * FROM flat;
        INSERT INTO memory_lexeme VALUES ('old', 'gone', 0, 0);
        DROP TABLE flat;""")

    db.execute(memory_index.DDL)  # today's schema over it
    assert db.execute("SELECT relkind FROM pg_class WHERE relname = 'memory_lexeme'").fetchone()[0] == "p"
    assert db.execute("SELECT to_regclass('memory_lexeme_flat')").fetchone()[0] is None
    assert db.execute("SELECT lexeme, df, len FROM memory_l_old ORDER BY 1").fetchall() == counters
    db.execute(memory_index.DDL)  # and again: nothing more changes
    assert db.execute("SELECT lexeme, df, len FROM memory_lexeme ORDER BY 1").fetchall() == counters
    # The trigger counts into the partition, and a deleted text's words leave it.
    db.execute("INSERT INTO memory (instance, id, kind, content, created_at) VALUES ('old', 'm2', 'observation', "
               "'Scout is our second dog', now())")
    assert db.execute("SELECT df FROM memory_l_old WHERE lexeme = 'scout'").fetchone()[0] == 1
    db.execute("DELETE FROM memory WHERE id = 'm2'")
    assert db.execute("SELECT lexeme, df, len FROM memory_lexeme ORDER BY 1").fetchall() == counters


def test_a_bulk_loaded_conversation_is_found_by_its_neighbours_words(workbench, instance):
    workbench.index.bulk_load(conversation(instance, ["Did you see the parade downtown?",
                                                       "Yes, with the kids!", "It was fun."]))
    found = hybrid_search(workbench.search_pool(), workbench.embedder,
                          SearchRequest(query="parade downtown", instance=instance, top_k=3))
    assert {s.memory.id for s in found.results} >= {"t0", "t1"}


def test_vectors_made_before_the_words_inside_addresses_are_made_again_once(old_instance_database):
    db = old_instance_database
    db.execute("INSERT INTO memory (instance, id, kind, content, created_at, context) VALUES "
               "('old', 'conf', 'observation', 'edit /etc/nginx/nginx.conf then reload', now(), '{}'), "
               "('old', 'plain', 'observation', 'nothing to see here.', now(), '{}'), "
               "('old', 'decimal', 'observation', 'bread is 3.5 euros, e.g. at the corner', now(), '{}'), "
               "('old', 'reply', 'conversation', 'done', now(), %s)",
               (Jsonb({"before": ["mail ops@hollyhock.io"], "after": []}),))
    # As databases were until 2026-12-06: each vector Postgres's analysis alone, and no record of it.
    db.execute("""ALTER TABLE memory DISABLE TRIGGER memory_tsv_set;
                  UPDATE memory SET tsv = setweight(to_tsvector('english', content), 'A')
                                       || setweight(to_tsvector('english', coalesce(context->'before'->>0, '')), 'B');
                  ALTER TABLE memory ENABLE TRIGGER memory_tsv_set;
                  DROP TABLE memory_analysis;""")

    lexemes = partial(indexed_words, db)

    assert "nginx" not in lexemes("conf") and "hollyhock" not in lexemes("reply")
    plain = db.execute("SELECT xmin::text FROM memory WHERE id = 'plain'").fetchone()[0]
    decimal = db.execute("SELECT xmin::text FROM memory WHERE id = 'decimal'").fetchone()[0]

    db.execute(memory_index.DDL)  # today's schema over it
    assert {"nginx", "conf", "etc"} <= lexemes("conf") and "hollyhock" in lexemes("reply")
    assert all(same for (same,) in db.execute(
        "SELECT tsv = memory_tsv(content, context, ev_year, ev_month, ev_day) FROM memory WHERE id <> 'plain'"))
    assert db.execute("SELECT xmin::text FROM memory WHERE id = 'plain'").fetchone()[0] == plain  # not rewritten
    # A dot between digits passes the cheap test, but its vector is the same: not rewritten either.
    assert db.execute("SELECT xmin::text FROM memory WHERE id = 'decimal'").fetchone()[0] == decimal
    again = db.execute("SELECT xmin::text FROM memory WHERE id = 'conf'").fetchone()[0]
    db.execute(memory_index.DDL)  # once: a second start leaves the rows alone
    assert db.execute("SELECT xmin::text FROM memory WHERE id = 'conf'").fetchone()[0] == again


NFD_NAME = unicodedata.normalize("NFD", "Hélène")  # as pasted from macOS: an e and a combining accent


def test_vectors_made_before_unicode_normalisation_are_made_again_once(old_instance_database):
    db = old_instance_database
    db.execute("INSERT INTO memory (instance, id, kind, content, created_at, context) VALUES "
               "('old', 'nfd', 'observation', %s, now(), '{}'), "
               "('old', 'nfc', 'observation', 'the trip: 50 € a night', now(), '{}'), "
               "('old', 'reply', 'conversation', 'she did', now(), %s)",
               (f"{NFD_NAME} asked for the tokenizer", Jsonb({"before": [f"did {NFD_NAME} call?"], "after": []})))
    # As databases were until version 3 of the analysis: each text analysed as given.
    db.execute("""ALTER TABLE memory DISABLE TRIGGER memory_tsv_set;
                  UPDATE memory SET tsv = setweight(memory_analyse_nfc(content), 'A')
                      || setweight(coalesce(memory_analyse_nfc(context->'before'->>0), ''), 'B');
                  ALTER TABLE memory ENABLE TRIGGER memory_tsv_set;
                  DELETE FROM memory_analysis WHERE version >= 3;""")

    lexemes = partial(indexed_words, db)

    assert "helen" not in lexemes("nfd") | lexemes("reply")
    composed = db.execute("SELECT xmin::text FROM memory WHERE id = 'nfc'").fetchone()[0]

    db.execute(memory_index.DDL)  # today's schema over it
    assert "helen" in lexemes("nfd") and "helen" in lexemes("reply")  # and without its accents (version 4)
    assert db.execute("SELECT content FROM memory WHERE id = 'nfd'").fetchone()[0].startswith(NFD_NAME)  # as given
    assert db.execute("SELECT xmin::text FROM memory WHERE id = 'nfc'").fetchone()[0] == composed  # not rewritten
    again = db.execute("SELECT xmin::text FROM memory WHERE id = 'nfd'").fetchone()[0]
    db.execute(memory_index.DDL)  # once: a second start leaves the rows alone
    assert db.execute("SELECT xmin::text FROM memory WHERE id = 'nfd'").fetchone()[0] == again


@pytest.mark.parametrize("stored, typed", [("NFD", "NFC"), ("NFC", "NFD")])
@pytest.mark.parametrize("load", ["live add", "bulk import"])
def test_a_name_is_found_whichever_unicode_form_it_was_stored_and_typed_in(workbench, instance, stored, typed,
                                                                          load):
    """Each leg alone finds the memory: the text leg by its words, the vector leg with no word in common
    needed (its closest memory among unrelated ones)."""
    texts = {"name": unicodedata.normalize(stored, "Hélène Zoë asked for the naïve tokenizer"),
             "other": "the build failed on the main branch", "more": "we walked the dog by the river"}
    records = [MemoryRecord(instance=instance, id=k, kind="observation", content=t,
                            created_at=datetime.now(UTC)) for k, t in texts.items()]
    (workbench.index.add if load == "live add" else workbench.index.bulk_load)(records)
    for query in ("Hélène", "Zoë", "naïve"):
        query = unicodedata.normalize(typed, query)
        for leg in ("text", "vector"):
            found = hybrid_search(workbench.search_pool(), workbench.embedder,
                                  SearchRequest(query=query, instance=instance, top_k=1, search_type=leg))
            assert [s.memory.id for s in found.results] == ["name"], (query, leg)
            assert found.results[0].memory.content == texts["name"]  # stored as given
