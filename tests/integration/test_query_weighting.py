"""With static word vectors (wordllama), hybrid search's vector leg searches with the query's words weighed
by their idf, as the text leg weighs them; the similarity threshold still reads the query's own vector, and
the vector leg searched alone uses the query's own vector."""

from __future__ import annotations

import numpy as np
import pytest

from core import usecases as uc
from core.embeddings.base import normalise
from core.retrieval.hybrid import SearchRequest, fetch_pool
from core.retrieval.hybrid_sql import QUERY_WORDS, query_word_counts, word_weight

MEMORIES = ["Anna bought a red kayak for the lake trip.", "The plan for the weekend is a walk.",
            "We plan to visit the museum on the weekend.", "The weekend plan changed because of rain.",
            "Tom plans the weekend dinner."]


@pytest.fixture
def memories(workbench, instance):
    for text in MEMORIES:
        uc.add_memory(workbench, uc.AddMemory(instance=instance, content=text))
    return instance


def expected_query_vector(wb, instance: str, query: str) -> np.ndarray:
    """The docstring's formula, computed here: Σ count · weight(word) · unit word vector, normalised, with
    the weight (`word_weight`: the idf with a prior) of the word's rarest lexeme; no lexeme, no weight."""
    counts = query_word_counts(query)
    vectors = wb.embedder.word_vectors(list(counts))
    total = np.zeros(wb.embedder.dim)
    with wb.pool().connection() as conn:
        n = conn.execute("SELECT df FROM memory_lexeme WHERE instance = %s AND lexeme = ''", (instance,)).fetchone()[0]
        for (word, count), vec in zip(counts.items(), vectors, strict=True):
            dfs = [conn.execute("SELECT coalesce((SELECT df FROM memory_lexeme WHERE instance = %s AND lexeme = %s), 0)",
                                (instance, lexeme)).fetchone()[0]
                   for (lexeme,) in conn.execute("SELECT lexeme FROM unnest(to_tsvector('english', %s))", (word,))]
            if dfs:
                total += count * max(word_weight(df, n) for df in dfs) * vec
    return normalise(total[None, :])[0]


def test_the_vector_leg_searches_with_the_words_weighed_by_their_idf(workbench, memories):
    query = "Which weekend plan has the kayak, the kayak?"
    found = fetch_pool(workbench.pool(), workbench.embedder,
                       SearchRequest(query=query, instance=memories, feedback=0))
    weighted = expected_query_vector(workbench, memories, query)
    own = workbench.embedder.embed(query)
    assert len(found.candidates) == len(MEMORIES)
    for c in found.candidates:
        vec = found.vectors[(c.memory.instance, c.memory.id)]
        assert c.cosine == pytest.approx(float(weighted @ vec), abs=1e-5)
        assert c.query_cosine == pytest.approx(float(own @ vec), abs=1e-5)  # what the threshold reads
    # "kayak" is in one memory and "weekend" and "plan" in four: the kayak leads the vector leg.
    best = min(found.candidates, key=lambda c: c.vector_rank)
    assert "kayak" in best.memory.content

    alone = fetch_pool(workbench.pool(), workbench.embedder,
                       SearchRequest(query=query, instance=memories, search_type="vector"))
    assert all(c.cosine == pytest.approx(c.query_cosine, abs=1e-5) for c in alone.candidates)


def test_a_query_of_stop_words_searches_with_its_own_vector(workbench, memories):
    found = fetch_pool(workbench.pool(), workbench.embedder,
                       SearchRequest(query="Which of these is it?", instance=memories, feedback=0))
    assert found.candidates and all(c.cosine == pytest.approx(c.query_cosine, abs=1e-5) for c in found.candidates)


def test_query_words_keep_their_case_and_count():
    assert query_word_counts("Caroline's sister-in-law met caroline twice in 2021, twice!") == {
        "Caroline's": 1, "sister-in-law": 1, "met": 1, "caroline": 1, "twice": 2, "in": 1, "2021": 1}
    many = " ".join(f"w{i}x" for i in range(QUERY_WORDS + 10))
    assert len(query_word_counts(many)) == QUERY_WORDS
