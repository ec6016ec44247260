"""A text's specifics (numbers, names, negation, identifiers: what near-duplicates must share) are read
with fast paths and patterns tuned for speed; they must find exactly what the plain definitions find."""

import json
import random
import re
from pathlib import Path

import pytest

from core.retrieval.ranking import specifics

# The definitions, written plainly: numbers; capitalised words neither at the start nor after a
# sentence's end; an odd count of negations.
NUMBER = re.compile(r"\d+")
NAME = re.compile(r"(?<![.!?:]\s)(?<!^)\b([A-Z][a-z]+)\b")
NEGATION = re.compile(r"\b(?:not|never|no)\b|n't\b", re.IGNORECASE)
# Identifiers: code spans, and the words (runs of non-space characters, edges trimmed) holding a slash, a
# backslash, or a dot between a word character and a small letter.
CODE_SPAN = re.compile(r"`[^`\n]+`")
IDENTIFIER_WORD = re.compile(r"[/\\]|\w\.[a-z]")


def identifiers(text: str) -> frozenset[str]:
    words = (w.strip("([{<'\"`)]}>,;:!?.") for w in text.split() if IDENTIFIER_WORD.search(w))
    return frozenset(set(CODE_SPAN.findall(text)) | {w for w in words if w})


def by_patterns(text: str) -> tuple[frozenset[str], frozenset[str], bool, frozenset[str]]:
    return (frozenset(NUMBER.findall(text)), frozenset(NAME.findall(text.strip())),
            len(NEGATION.findall(text)) % 2 == 1, identifiers(text))


EDGES = ["No way", "I don't know", "Not now. Never!", "nothing", "know", "canNOT", "no.", "non", "n't", "NEVER",
         "Don’t go", "isn't it", "in no time", "piano", "x no", "Nope", "", "   ", "A", " Caroline went home",
         "We met Caroline in Paris on 3 May", "Met at 7.", "Call Bob: Alice said no", "٣ apples", "Ünal met Émile",
         "naïve? not quite", "He said NO", "She won't, she can't", "NOT", "The Kelvin sign K is not k",
         "no-one", "not_here", "snot", "Notes", "a\nNo", "1st 2nd and 10,000",
         "Ran `npm run build` in charts/api/values.yaml: merge conflict in pyproject.toml.", "and/or", "/",
         "e.g. (see foo.py)", "...and then", "C:\\x\\y.txt", "`a` b `c", "``", "x.Y", "3.5 km", "é.txt", "_.py"]


def test_the_edges_read_as_the_patterns_read_them():
    for text in EDGES:
        assert specifics(text) == by_patterns(text), text


def test_labelled_pairs_read_as_the_patterns_read_them():
    path = Path(__file__).parents[1] / "data" / "near_duplicates.jsonl"
    for line in path.read_text().splitlines():
        pair = json.loads(line)
        for text in (pair["a"], pair["b"]):
            assert specifics(text) == by_patterns(text), text


@pytest.mark.parametrize("seed", range(5))
def test_random_texts_read_as_the_patterns_read_them(seed):
    rng = random.Random(seed)
    pieces = ["n", "N", "o", "O", "t", "T", "'", "’", "ever", "EVER", " ", ". ", "! ", ": ", "\n", "Ana", "bob",
              "7", "42", "٣", "é", "Émile", "no", "not", "never", "n't", "x", "_", "-", "`", "/", "\\", ".py",
              "a.b", "(", ")"]
    for _ in range(2000):
        text = "".join(rng.choices(pieces, k=rng.randint(0, 12)))
        assert specifics(text) == by_patterns(text), repr(text)


@pytest.mark.parametrize("seed", range(3))
def test_random_ascii_texts_read_as_the_patterns_read_them(seed):
    """ASCII texts take their own path for names (each character read as its class): every class, each
    character `\\s` matches and the boundaries around a word must read as the pattern reads them."""
    rng = random.Random(100 + seed)
    pieces = list("aAzZ09_ .!?:,'-#`/\\\t\n\r\x0b\x0c\x1c\x1f") + ["Paris", "Bob", "McDonald", "I", "US", "x2",
                                                               ". Ana", "? Bo", ":\tEd", "no", "Not"]
    for _ in range(20000):
        text = "".join(rng.choices(pieces, k=rng.randint(0, 14)))
        assert specifics(text) == by_patterns(text), repr(text)
