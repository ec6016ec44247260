"""A Chinese, Japanese or Korean user's words are found inside their sentences (`memory_cjk_words` in
`core.index.text`: a run of CJK characters is searched by its characters and their pairs), by a live add and
a bulk import alike; a query's longer runs are searched by their pairs only, so a word no memory holds finds
nothing through one shared character; a database whose vectors were made before is analysed again once, only
the rows holding such a character; the text vector of the densest such texts stays under Postgres's limit; and
on tests/data/cjk_labelled the text leg alone finds every question's note, as `workbench eval --legs` reads it."""

from __future__ import annotations

import random
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

import pytest
from psycopg.types.json import Jsonb

from core.index import memory_index
from core.index.text import CJK_INDEXED_CHARS, CJK_NEIGHBOUR_CHARS, holds_cjk, neighbour_text
from core.models import MemoryContext, MemoryRecord
from tests.support.labelled_texts import add, evaluated, indexed_words, row_version, text_hits

SET = Path(__file__).parents[1] / "data" / "cjk_labelled"
OTHERS = ["The build failed on the main branch.", "北京的冬天很冷。", "大阪の天気は晴れです。", "부산에 가고 싶어요.",
          "A inspeção do carro é em abril."]


@pytest.mark.parametrize("stored, typed", [
    ("我住在上海，在一家银行工作。", "上海"),  # a word inside a Chinese sentence
    ("我住在上海，在一家银行工作。", "我在哪家银行工作？"),  # a question sharing its pairs
    ("我的猫叫小白，它很喜欢吃鱼。", "猫"),  # one character alone
    ("東京の会社でエンジニアとして働いています。", "エンジニア"),  # katakana inside kanji and kana
    ("東京の会社でエンジニアとして働いています。", "東京の会社"),
    ("서울에서 디자이너로 일하고 있어요.", "서울"),  # a Korean word with its particle attached
    ("서울에서 디자이너로 일하고 있어요.", "디자이너"),
    ("My iPhone手机 is in the car.", "手机"),  # CJK after Latin letters with no space
])
@pytest.mark.parametrize("load", ["live add", "bulk import"])
def test_a_word_is_found_inside_a_cjk_sentence(workbench, instance, stored, typed, load):
    add(workbench, instance, [stored, *OTHERS], load)
    assert text_hits(workbench, instance, typed)[:1] == ["m0"], typed


@pytest.mark.parametrize("load", ["live add", "bulk import"])
def test_a_word_sharing_one_character_finds_nothing(workbench, instance, load):
    add(workbench, instance, ["東京の会社でエンジニアとして働いています。", "The build failed."], load)
    assert text_hits(workbench, instance, "南京") == []  # 京 of 東京: searched by its pair only
    assert text_hits(workbench, instance, "京") == ["m0"]  # alone, a character is a word


def test_english_words_are_analysed_as_before(workbench, instance):
    with workbench.pool().connection() as conn:
        same = conn.execute("""SELECT memory_analyse(t) = to_tsvector('english', t), memory_query_words(t) = memory_analyse(t)
                               FROM unnest(%s::text[]) t""",
                            (["I moved to Denver last week!", "Naïve? No: São João.", "nginx.conf", ""],)).fetchall()
    assert same[0] == (True, True) and all(q for _, q in same)


def test_vectors_made_before_cjk_words_were_cut_are_made_again_once(old_instance_database):
    db = old_instance_database
    db.execute("INSERT INTO memory (instance, id, kind, content, created_at, context) VALUES "
               "('old', 'zh', 'observation', '我住在上海，在一家银行工作。', now(), '{}'), "
               "('old', 'ascii', 'observation', 'nothing to cut here', now(), '{}'), "
               "('old', 'pt', 'observation', 'A inspeção do carro', now(), '{}'), "
               "('old', 'reply', 'conversation', 'OK!', now(), %s)",
               (Jsonb({"before": ["서울에서 디자이너로 일하고 있어요."], "after": []}),))
    # As databases were until version 5 of the analysis: a run of CJK characters was one word.
    db.execute("""ALTER TABLE memory DISABLE TRIGGER memory_tsv_set;
                  UPDATE memory SET tsv = setweight(to_tsvector('english', memory_fold(content)), 'A')
                      || setweight(coalesce(to_tsvector('english', context->'before'->>0), ''), 'B');
                  ALTER TABLE memory ENABLE TRIGGER memory_tsv_set;
                  DELETE FROM memory_analysis WHERE version >= 5;""")

    lexemes, xmin = partial(indexed_words, db), partial(row_version, db)

    assert "我住在上海" in lexemes("zh") and "上海" not in lexemes("zh")
    untouched = {id_: xmin(id_) for id_ in ("ascii", "pt")}

    db.execute(memory_index.DDL)  # today's schema over it
    assert {"上海", "猫"} & lexemes("zh") == {"上海"} and "我住在上海" not in lexemes("zh")
    assert "서울" in lexemes("reply")  # a neighbour's words too
    assert all(same for (same,) in db.execute(
        "SELECT tsv = memory_tsv(content, context, ev_year, ev_month, ev_day) FROM memory"))
    assert {id_: xmin(id_) for id_ in untouched} == untouched  # no CJK character: not rewritten
    again = xmin("zh")
    db.execute(memory_index.DDL)  # once: a second start leaves the rows alone
    assert xmin("zh") == again


def ideographs(chars: int, seed: int) -> str:
    """Random CJK Extension B ideographs (4 bytes each) with no space: every pair another word, about 28 bytes
    of text vector a character, the most measured."""
    rng = random.Random(seed)
    return "".join(chr(rng.randint(0x20000, 0x2A6DF)) for _ in range(chars))


def tangut_pairs(chars: int, seed: int) -> str:
    """Hyphenated pairs of Tangut letters (4 bytes, not CJK here): the densest text of other letters."""
    rng = random.Random(seed)
    pairs = (f"{chr(rng.randint(0x17000, 0x187F7))}-{chr(rng.randint(0x17000, 0x187F7))}"
             for _ in range(chars // 4 + 1))
    return " ".join(pairs)[:chars]


@pytest.mark.parametrize("load", ["live add", "bulk import"])
@pytest.mark.parametrize("content, neighbour", [(ideographs, tangut_pairs), (tangut_pairs, ideographs)])
def test_the_densest_cjk_texts_fit(keyword_workbench, instance, load, content, neighbour):
    """Postgres refuses a text vector past 1 MB: a content holding CJK characters is cut into words over its first
    CJK_INDEXED_CHARS (922 kB with the densest neighbours), a neighbour over its first CJK_NEIGHBOUR_CHARS."""
    neighbours = [neighbour(5_000, seed) for seed in range(6)]
    record = MemoryRecord(instance=instance, id="dense", kind="observation", content=content(120_000, 9),
                          created_at=datetime.now(UTC), context=MemoryContext(before=neighbours[:3],
                                                                              after=neighbours[3:]))
    wb = keyword_workbench
    assert (wb.index.add if load == "live add" else wb.index.bulk_load)([record]) == 1
    with wb.pool().connection() as conn:
        same, = conn.execute("SELECT tsv = memory_tsv(content, context, ev_year, ev_month, ev_day) FROM memory "
                             "WHERE instance = %s", (instance,)).fetchone()
    assert same  # a bulk load's vector is the trigger's, neighbours cut alike
    [row] = wb.index.get(instance, ["dense"])
    cut = CJK_INDEXED_CHARS if holds_cjk(record.content) else 100_000
    assert row.metadata["text_indexed"].startswith(f"searched by words in its first {cut:,} of 120,000")
    assert text_hits(wb, instance, record.content[:2]) == ["dense"]
    assert len(neighbour_text(neighbours[0])) == (CJK_NEIGHBOUR_CHARS if holds_cjk(neighbours[0]) else 4_000)


def test_the_labelled_questions_are_found_by_the_text_leg_alone(workbench, instance):
    text_leg, report = evaluated(workbench, instance, SET)
    # Before: 0.176 (only Korean words typed as the note has them between spaces: "강아지", "운전면허", "알레르기가").
    assert text_leg.value("recall@5", "overall") == 1.0
    assert report.evaluation.value("recall@1", "overall") == 1.0  # before: 0.941
