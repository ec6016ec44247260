"""A Russian, Greek, Arabic or Hindi user's words are found in another of their forms (`memory_script_words` in
`core.index.text`: the runs of Cyrillic, Greek, Arabic and Devanagari letters are stemmed with their language's
configuration), by a live add and a bulk import alike, and queries are read by the same analysis; the stop words
of 'russian' are no words; other texts are analysed as before; a database whose vectors were made before is
analysed again once, only the rows holding such a letter; the densest texts of those letters stay under
Postgres's text vector limit; and on tests/data/other_scripts_labelled the text leg finds what it did not."""

from __future__ import annotations

import random
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

import pytest
from psycopg.types.json import Jsonb

from core.index import memory_index
from core.index.text import CJK_INDEXED_CHARS
from core.models import MemoryContext, MemoryRecord
from tests.support.labelled_texts import add, evaluated, indexed_words, row_version, text_hits

SET = Path(__file__).parents[1] / "data" / "other_scripts_labelled"
OTHERS = ["The build failed on the main branch.", "Мама приезжает в пятницу.", "Η γάτα μου λέγεται Μέλι.",
          "أختي تدرس الطب.", "मेरी बहन डॉक्टर है।", "我住在上海。", "A inspeção do carro é em abril."]


@pytest.mark.parametrize("stored, typed", [
    ("Я живу в Москве и работаю врачом.", "Москва"),  # the word in another case
    ("Я живу в Москве и работаю врачом.", "Где живёт врач?"),  # ё as е, a question's other forms
    ("Мой брат купил новую машину.", "новая машина брата"),  # й kept: 'новый', 'новая', 'новую' are one
    ("Моя́ сестра́ у́чится в Каза́ни.", "сестра Казань"),  # stress marks are no spaces
    ("Μένω στην Αθήνα και δουλεύω σε τράπεζα.", "Αθήνας"),  # Greek, its accents and cases
    ("Ο αδερφός μου σπουδάζει ιατρική.", "ΙΑΤΡΙΚΗΣ"),
    ("أختي تدرس في الجامعة.", "جامعة"),  # Arabic, the article
    ("هل تحب القاهرة؟", "قاهرة"),  # Arabic punctuation is no letter of the word
    ("हमारे कुत्ते का नाम मोती है।", "कुत्ता"),  # Hindi, the danda is no letter of the word
    ("Встреча в офисе Google в 10:00, адрес ivan@mail.ru", "google встречи"),  # Latin words beside
])
@pytest.mark.parametrize("load", ["live add", "bulk import"])
def test_a_word_is_found_in_another_of_its_forms(workbench, instance, stored, typed, load):
    add(workbench, instance, [stored, *OTHERS], load)
    assert text_hits(workbench, instance, typed)[:1] == ["m0"], typed


def test_the_words_are_the_stemmers_and_stop_words_are_none(workbench):
    with workbench.pool().connection() as conn:
        def lexemes(text: str) -> set[str]:
            return set(conn.execute("SELECT tsvector_to_array(memory_analyse(%s))", (text,)).fetchone()[0])

        assert lexemes("Я живу в Москве и работаю врачом.") == {"жив", "москв", "работа", "врач"}
        assert lexemes("Москву") == lexemes("Москва") == {"москв"}
        assert lexemes("ёлка") == lexemes("елка")
        assert lexemes("the 東京 trip в Москве, στην Αθήνα; ivan@mail.ru") >= {
            "trip", "東京", "москв", "αθην", "ivan@mail.ru", "mail"}
        same = conn.execute("SELECT memory_query_words(t) = memory_analyse(t) FROM unnest(%s::text[]) t",
                            (["Где живёт врач?", "Αθήνας", "جامعة", "कुत्ता"],)).fetchall()
    assert all(s for (s,) in same)


def test_other_words_are_analysed_as_before(workbench, instance):
    """The text without those scripts' letters is analysed as before 2026-12-07 (`memory_analyse_folded`)."""
    texts = ["I moved to Denver last week!", "Naïve? No: São João.", "nginx.conf", "", "我住在上海，在一家银行工作。",
             "ṭhe café – 50 €", "서울에서 디자이너로 일하고 있어요."]
    with workbench.pool().connection() as conn:
        same = conn.execute("""SELECT memory_analyse(t) = memory_analyse_folded(t, 30000, true)
                                      OR octet_length(t) = length(t),
                                      NOT memory_may_hold_script(t)
                               FROM unnest(%s::text[]) t""", (texts,)).fetchall()
    assert all(a and b for a, b in same)


def test_vectors_made_before_words_were_stemmed_are_made_again_once(old_instance_database):
    db = old_instance_database
    db.execute("INSERT INTO memory (instance, id, kind, content, created_at, context) VALUES "
               "('old', 'ru', 'observation', 'Я живу в Москве и работаю врачом.', now(), '{}'), "
               "('old', 'ascii', 'observation', 'nothing to stem here', now(), '{}'), "
               "('old', 'pt', 'observation', 'A inspeção do carro', now(), '{}'), "
               "('old', 'zh', 'observation', '我住在上海。', now(), '{}'), "
               "('old', 'reply', 'conversation', 'OK!', now(), %s)",
               (Jsonb({"before": ["Μένω στην Αθήνα."], "after": []}),))
    # As databases were until version 6 of the analysis: those words were English's, as written.
    db.execute("""ALTER TABLE memory DISABLE TRIGGER memory_tsv_set;
                  UPDATE memory SET tsv = setweight(to_tsvector('english', memory_fold(content)), 'A')
                      || setweight(coalesce(to_tsvector('english', context->'before'->>0), ''), 'B')
                  WHERE id IN ('ru', 'reply');
                  ALTER TABLE memory ENABLE TRIGGER memory_tsv_set;
                  DELETE FROM memory_analysis WHERE version >= 6;""")

    lexemes, xmin = partial(indexed_words, db), partial(row_version, db)

    assert "москве" in lexemes("ru") and "москв" not in lexemes("ru")
    untouched = {id_: xmin(id_) for id_ in ("ascii", "pt", "zh")}

    db.execute(memory_index.DDL)  # today's schema over it
    assert "москв" in lexemes("ru") and "москве" not in lexemes("ru") and "в" not in lexemes("ru")
    assert "αθην" in lexemes("reply")  # a neighbour's words too
    assert all(same for (same,) in db.execute(
        "SELECT tsv = memory_tsv(content, context, ev_year, ev_month, ev_day) FROM memory"))
    assert {id_: xmin(id_) for id_ in untouched} == untouched  # no such letter: not rewritten
    again = xmin("ru")
    db.execute(memory_index.DDL)  # once: a second start leaves the rows alone
    assert xmin("ru") == again


def letter_pairs(chars: int, seed: int, low: int, high: int) -> str:
    """Hyphenated pairs of random letters of one block, the densest text of words: every pair another word."""
    rng = random.Random(seed)
    pairs = (f"{chr(rng.randint(low, high))}-{chr(rng.randint(low, high))}" for _ in range(chars // 4 + 1))
    return " ".join(pairs)[:chars]


@pytest.mark.parametrize("load", ["live add", "bulk import"])
@pytest.mark.parametrize("low, high", [(0x1F00, 0x1FBC), (0x0400, 0x052F), (0xFB50, 0xFDFF), (0x0900, 0x097F)])
def test_the_densest_texts_of_those_letters_fit(keyword_workbench, instance, load, low, high):
    """Postgres refuses a text vector past 1 MB: a content of 100,000 such characters with six neighbours of
    4,000 (Greek extended, Cyrillic, Arabic presentation forms, Devanagari) is written and found."""
    neighbours = [letter_pairs(5_000, seed, low, high) for seed in range(6)]
    record = MemoryRecord(instance=instance, id="dense", kind="observation",
                          content=letter_pairs(120_000, 9, low, high), created_at=datetime.now(UTC),
                          context=MemoryContext(before=neighbours[:3], after=neighbours[3:]))
    wb = keyword_workbench
    assert (wb.index.add if load == "live add" else wb.index.bulk_load)([record]) == 1
    with wb.pool().connection() as conn:
        same, = conn.execute("SELECT tsv = memory_tsv(content, context, ev_year, ev_month, ev_day) FROM memory "
                             "WHERE instance = %s", (instance,)).fetchone()
    assert same  # a bulk load's vector is the trigger's
    [row] = wb.index.get(instance, ["dense"])
    assert row.metadata["text_indexed"].startswith("searched by words in its first 100,000 of 120,000")
    assert text_hits(wb, instance, record.content[:3]) == ["dense"]


def test_the_labelled_questions_are_found_by_the_text_leg(workbench, instance):
    text_leg, report = evaluated(workbench, instance, SET)
    # Before: 0.150. Left: "Какая у меня работа?" ('работ', the note's 'работаю' 'работа') and "Київ" (Києві).
    assert text_leg.value("recall@5", "overall") == 0.9
    assert text_leg.value("recall@5", "ru") == 11 / 12
    assert report.evaluation.value("recall@1", "overall") >= 0.9  # before: 0.800


def test_a_text_holding_cjk_characters_too_is_cut_as_one(workbench, instance):
    """Its words are those of its first CJK_INDEXED_CHARS characters, script and all, as its metadata says."""
    content = "上海 " * (CJK_INDEXED_CHARS // 3) + "Москва " * 2_000
    workbench.index.add([MemoryRecord(instance=instance, id="m0", kind="observation", content=content,
                                      created_at=datetime.now(UTC))])
    [row] = workbench.index.get(instance, ["m0"])
    assert row.metadata["text_indexed"].startswith(f"searched by words in its first {CJK_INDEXED_CHARS:,} of")
    assert text_hits(workbench, instance, "上海") == ["m0"] and text_hits(workbench, instance, "Москва") == []
