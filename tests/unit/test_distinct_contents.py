"""Identical texts, ignoring case and spacing, are one memory: the fast pass (`distinct_contents`, which
makes a text's whole key only when its first and last words match a kept text's) keeps exactly what
comparing every text's whole key keeps."""

import random
from datetime import UTC, datetime

from core.models import MemoryRow, ScoredMemory, ScoreParts
from core.retrieval.ranking import content_key, distinct_contents

NOW = datetime(2026, 6, 1, tzinfo=UTC)
WORDS = ["Paris", "paris", "PARIS", "museum", "the", "kids", "ß", "SS", "ss", "İ", "i̇", "\u00a0", "x", "é"]
SPACES = [" ", "  ", "\n", "\t", "\u2003", " \n "]
PARTS = ScoreParts(semantic=0, text=0, recency=0, combined=0, similarity=0, relevance=0)


def by_keys(texts: list[str]) -> list[int]:
    seen, out = set(), []
    for i, text in enumerate(texts):
        if (key := content_key(text)) not in seen:
            seen.add(key)
            out.append(i)
    return out


def kept(texts: list[str]) -> list[int]:
    scored = [ScoredMemory(memory=MemoryRow(instance="i", id=str(i), kind="user", content=t, created_at=NOW),
                           score=PARTS) for i, t in enumerate(texts)]
    return [int(s.memory.id) for s in distinct_contents(scored)]


def text(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(0, 9))]
    out = rng.choice(["", " ", "\n"])
    for w in words:
        out += w + rng.choice(SPACES)
    return out.rstrip() if rng.random() < 0.5 else out


def test_the_fast_pass_keeps_what_whole_keys_keep():
    rng = random.Random(5)
    for _ in range(3000):
        texts = [text(rng) for _ in range(rng.randint(1, 12))]
        texts += [rng.choice(texts).upper() for _ in range(rng.randint(0, 3))]
        assert kept(texts) == by_keys(texts), texts


def test_texts_that_share_their_first_and_last_words_are_told_apart():
    texts = ["We went to Paris in May, then home", "we  went to\nLondon in May, then home",
             "We went to Rome in May, then home", "WE WENT TO PARIS IN MAY, THEN HOME"]
    assert kept(texts) == [0, 1, 2]
