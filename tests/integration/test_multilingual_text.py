"""A Portuguese or German user's words are found whether they were stored or typed with their accents or
without (`memory_fold` in `core.index.text`), by a live add and a bulk import alike; a database whose
vectors were made before is analysed again once, only the rows that change; and on the multilingual
labelled set (tests/data/multilingual_labelled) the questions typed without accents are found by the text
leg alone, as `workbench eval --legs` reads it."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

import pytest
from psycopg.types.json import Jsonb

from core import usecases as uc
from core.index import memory_index
from core.models import MemoryRecord
from core.retrieval.hybrid import SearchRequest, hybrid_search
from tests.support.labelled_texts import indexed_words, row_version

SET = Path(__file__).parents[1] / "data" / "multilingual_labelled"
OTHERS = ["The build failed on the main branch.", "We walked the dog by the river.",
          "Ich fahre mit dem Fahrrad zur Arbeit.", "O ginásio fica na Praça do Chile."]


@pytest.mark.parametrize("stored, typed", [
    ("A inspeção do carro tem de ser feita até abril.", "inspecao"),
    ("Não posso comer glúten.", "gluten"),
    ("No São João vamos sempre ao Porto.", "Sao Joao"),
    ("Mein Papierführerschein muss umgetauscht werden.", "Papierfuhrerschein"),
    ("Die Zahnärztin heißt Frau Dr. Schäfer.", "Schafer heisst"),
    ("Dinner at the cafe on Rua Augusta, then a pastel de nata.", "café"),  # stored without, typed with
])
@pytest.mark.parametrize("load", ["live add", "bulk import"])
def test_a_word_is_found_with_or_without_its_accents(workbench, instance, stored, typed, load):
    records = [MemoryRecord(instance=instance, id=f"m{i}", kind="observation", content=text,
                            created_at=datetime.now(UTC)) for i, text in enumerate([stored, *OTHERS])]
    (workbench.index.add if load == "live add" else workbench.index.bulk_load)(records)
    found = hybrid_search(workbench.search_pool(), workbench.embedder,
                          SearchRequest(query=typed, instance=instance, top_k=1, search_type="text"))
    assert [s.memory.id for s in found.results] == ["m0"], typed
    assert found.results[0].memory.content == stored  # stored as given


def test_vectors_made_before_accents_were_folded_are_made_again_once(old_instance_database):
    db = old_instance_database
    db.execute("INSERT INTO memory (instance, id, kind, content, created_at, context) VALUES "
               "('old', 'pt', 'observation', 'A inspeção do carro é em abril', now(), '{}'), "
               "('old', 'ascii', 'observation', 'nothing to fold here', now(), '{}'), "
               "('old', 'kept', 'observation', 'the trip: 50 € a night', now(), '{}'), "
               "('old', 'reply', 'conversation', 'ja, bis 2033', now(), %s)",
               (Jsonb({"before": ["Muss der Führerschein umgetauscht werden?"], "after": []}),))
    # As databases were until version 4 of the analysis: words kept their accents.
    db.execute("""ALTER TABLE memory DISABLE TRIGGER memory_tsv_set;
                  UPDATE memory SET tsv = setweight(to_tsvector('english', content), 'A')
                      || setweight(coalesce(to_tsvector('english', context->'before'->>0), ''), 'B');
                  ALTER TABLE memory ENABLE TRIGGER memory_tsv_set;
                  DELETE FROM memory_analysis WHERE version >= 4;""")

    lexemes, xmin = partial(indexed_words, db), partial(row_version, db)

    assert "inspeção" in lexemes("pt") and "führerschein" in lexemes("reply")
    untouched = {id_: xmin(id_) for id_ in ("ascii", "kept")}

    db.execute(memory_index.DDL)  # today's schema over it
    assert "inspecao" in lexemes("pt") and "inspeção" not in lexemes("pt")
    assert "fuhrerschein" in lexemes("reply")  # a neighbour's words too
    assert all(same for (same,) in db.execute(
        "SELECT tsv = memory_tsv(content, context, ev_year, ev_month, ev_day) FROM memory"))
    # An ASCII text, and one whose other characters carry no accent, have the vector they had: not rewritten.
    assert {id_: xmin(id_) for id_ in untouched} == untouched
    assert db.execute("SELECT content FROM memory WHERE id = 'pt'").fetchone()[0] == "A inspeção do carro é em abril"
    again = xmin("pt")
    db.execute(memory_index.DDL)  # once: a second start leaves the rows alone
    assert xmin("pt") == again


def test_the_questions_typed_without_accents_are_found_by_the_text_leg_alone(workbench, instance):
    notes = [json.loads(line) for line in (SET / "notes.jsonl").read_text(encoding="utf-8").splitlines()]
    workbench.index.bulk_load([MemoryRecord(instance=instance, id=n["id"], kind=n["kind"], content=n["content"],
                                            created_at=datetime.fromisoformat(n["created_at"])) for n in notes])
    report = uc.tune(workbench, uc.TuneRequest(source=SET / "queries.jsonl", instance=instance, ks=[5, 10],
                                               legs=True))
    text_leg = next(r for r in report.legs if r.search_type == "text")
    # Before accents were folded: 0.833 (Doença celíaca and the Zweitschlüssel not found by "doenca celiaca"
    # and "Zweitschlussel").
    assert text_leg.value("recall@5", "unaccented") == 1.0
    assert report.evaluation.value("recall@5", "unaccented") == 1.0
    assert report.evaluation.value("recall@10", "en") == 1.0
