"""Speakers: who said a memory, whether a query names them, and what fusion does with it."""

from datetime import UTC, datetime

import pytest

from core.models import PRESET_PROFILES, MemoryRow
from core.retrieval.fusion import CHAIN_WEIGHT, SPEAKER_WEIGHT, Candidate, fuse
from core.retrieval.speakers import names_speaker, query_words, speaker_of

NOW = datetime(2026, 1, 2, tzinfo=UTC)
PROFILE = PRESET_PROFILES["balanced-default"]


def row(id_, content="text", chain=None, metadata=None):
    return MemoryRow(instance="i", id=id_, kind="turn", content=content, created_at=NOW, chain_id=chain,
                     metadata=metadata or {})


@pytest.mark.parametrize(("content", "metadata", "speaker"), [
    ("Caroline: I went to a pride parade.", None, "Caroline"),
    ("Dr. Smith: the results are in.", None, "Dr. Smith"),
    ("Mary Ann Lee: hello", None, "Mary Ann Lee"),
    ("I went to a pride parade.", None, None),
    ("note: buy milk", None, None),                 # a lower-case label is not a name
    ("Time: 10:30, place: the hall", None, "Time"),  # a label looks like a speaker; the query must name it
    ("We met.", {"speaker": "user"}, "user"),        # metadata wins (observations carry it)
])
def test_the_speaker_is_the_metadata_or_the_transcript_label(content, metadata, speaker):
    assert speaker_of(row("a", content, metadata=metadata)) == speaker


def test_a_query_names_a_speaker_by_any_word_of_the_name():
    words = query_words("What did John say about Smith's plan?")
    assert names_speaker(words, "John") and names_speaker(words, "John Smith") and names_speaker(words, "Smith")
    assert not names_speaker(words, "Johnny") and not names_speaker(words, None)


def test_a_named_speaker_adds_the_speaker_weight_to_combined_and_relevance():
    said = Candidate(row("said", "Caroline: I paint."), cosine=0.5, text_raw=1.0, vector_rank=1, text_rank=1,
                     speaker_named=True)
    other = Candidate(row("other", "Melanie: Caroline paints."), cosine=0.5, text_raw=1.0, vector_rank=2,
                      text_rank=2)
    scored = {s.memory.id: s.score for s in fuse([said, other], PROFILE, NOW)}
    assert scored["said"].speaker == 1.0 and scored["other"].speaker == 0.0
    assert scored["said"].combined - scored["other"].combined == pytest.approx(SPEAKER_WEIGHT)
    assert scored["said"].relevance - scored["other"].relevance == pytest.approx(SPEAKER_WEIGHT)


def test_a_memory_rises_with_the_best_of_its_chain_and_the_best_keeps_its_own_score():
    best = Candidate(row("best", chain="s1"), cosine=0.9, text_raw=1.0, vector_rank=1, text_rank=1)
    mate = Candidate(row("mate", chain="s1"), cosine=0.3, text_raw=0.0, vector_rank=2, text_rank=None)
    alone = Candidate(row("alone", chain="s2"), cosine=0.35, text_raw=0.0, vector_rank=3, text_rank=None)
    loose = Candidate(row("loose"), cosine=0.35, text_raw=0.0, vector_rank=4, text_rank=None)
    scored = {s.memory.id: s.score for s in fuse([best, mate, alone, loose], PROFILE, NOW)}
    own_best, own_mate = 0.6 * 0.9 + 0.25 + 0.15, 0.6 * 0.3 + 0.15
    assert scored["best"].combined == pytest.approx(own_best) and scored["best"].chain == pytest.approx(own_best)
    assert scored["mate"].chain == pytest.approx(own_best)
    assert scored["mate"].combined == pytest.approx((own_mate + CHAIN_WEIGHT * own_best) / (1 + CHAIN_WEIGHT))
    assert scored["alone"].combined == pytest.approx(0.6 * 0.35 + 0.15)  # alone in its chain: its own score
    assert scored["loose"].combined == scored["alone"].combined  # no chain: its own score
    assert scored["mate"].combined > scored["alone"].combined  # lifted by the session that answers
    assert scored["mate"].relevance == pytest.approx(0.6 * 0.3 / 0.85)  # relevance is its own
