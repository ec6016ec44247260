"""The multilingual labelled set (tests/data/multilingual_labelled) is what its README says: 60 Portuguese, 40
German and 50 English notes in the format `workbench import` reads, questions whose answering ids are notes
of the set, and questions no note answers; and `workbench eval` reads it, one category per language."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from core.tuning.datasets import load_jsonl

SET = Path(__file__).parents[1] / "data" / "multilingual_labelled"
CATEGORIES = {"pt", "de", "en", "cross", "unaccented"}


def rows(name: str) -> list[dict]:
    return [json.loads(line) for line in (SET / name).read_text(encoding="utf-8").splitlines()]


def test_the_notes_are_sixty_portuguese_forty_german_and_fifty_english_observations():
    notes = rows("notes.jsonl")
    assert Counter(n["id"][3:5] for n in notes) == {"pt": 60, "de": 40, "en": 50}
    assert len({n["id"] for n in notes}) == len(notes)
    assert {n["kind"] for n in notes} == {"observation"} and all(n["content"] and n["created_at"] for n in notes)
    # Accents as the persona types them, not ASCII stand-ins.
    text = " ".join(n["content"] for n in notes)
    assert all(word in text for word in ("Não", "São João", "Führerschein", "heißt", "Zahnärztin"))


def test_every_question_is_answered_by_notes_of_the_set_and_the_unanswered_by_none():
    ids = {n["id"] for n in rows("notes.jsonl")}
    queries = rows("queries.jsonl")
    assert all(q["relevant"] and set(q["relevant"]) <= ids for q in queries)
    assert {q["category"] for q in queries} == CATEGORIES
    assert Counter(q["category"] for q in queries)["cross"] == 10
    unanswered = rows("unanswered.jsonl")
    assert len(unanswered) == 10 and all(q["relevant"] == [] for q in unanswered)
    ds = load_jsonl((SET / "queries.jsonl").read_text(encoding="utf-8"), instance="ml")
    assert len(ds.queries) == len(queries) and ds.skipped == {}
