"""A new user's first memories are found: the query's vector weighs its words by their idf with a prior
(`core.retrieval.hybrid_sql.word_weight`), so a young instance's degenerate counts do not point it at a
word no memory holds."""

from __future__ import annotations

import pytest
from psycopg import sql

from core.conversation.turn import Remember, UiRememberParams
from core.retrieval.hybrid import SearchRequest, hybrid_search
from core.retrieval.hybrid_sql import word_weight, word_weight_sql

KINDLE = ["I read every night on my Kindle.", "I switched from my Kindle to a Kobo."]
QUESTION = "Do I still read on my Kindle?"


def test_a_new_users_second_day_finds_the_kindle(workbench, instance):
    """The reproduction (benchmarks/README.md, "Saying nothing relevant", 2026-12-06): two statements told in
    chat, then the question in another chain. The instance holds four memories (each statement and its
    observation), all holding "read" and "Kindle" (idf 0.105 among 4); "still" is in none (2.30), and the
    query's vector was made of it: the answer's semantic part was 0.17, its relevance 0.31, under the floor,
    and the turn said no memory matches. Its raw cosine to the question, 0.79, was never the problem."""
    rm = Remember(workbench)
    for fact in KINDLE:
        rm.run(UiRememberParams(thought=fact, chain_id="reader"), instance=instance)
    floor = workbench.settings.relevance_floor
    [best, *_] = hybrid_search(workbench.search_pool(), workbench.embedder,
                               SearchRequest(query=QUESTION, instance=instance, top_k=5)).results
    assert best.memory.content == KINDLE[1]  # the first was superseded by it
    assert best.score.relevance >= floor and best.score.semantic > 0.5

    r = rm.run(UiRememberParams(thought=QUESTION, chain_id="q"), instance=instance)
    assert r.memory == "found" and r.context[0].content == KINDLE[1]
    assert "Kobo" in r.answer


@pytest.mark.parametrize("n", [0, 1, 4, 60, 600, 100_000])
def test_the_statement_weighs_a_word_as_word_weight_does(workbench, n):
    """The SQL the statement runs (`word_weight_sql`) and the documented function agree, over the counts a
    search reads (`st.n`, `l.df`, NULL for a word no memory holds)."""
    weight = word_weight_sql(sql.SQL("coalesce(l.df, 0)"), sql.SQL("st.n"))
    query = sql.SQL("SELECT {} FROM (SELECT %s::float8 AS n) st, (SELECT %s::float8 AS df) l").format(weight)
    with workbench.pool().connection() as conn:
        for df in sorted({0, 1, n // 2, n}):
            [(got,)] = conn.execute(query, (n, df)).fetchall()
            assert got == pytest.approx(word_weight(df, n), rel=1e-12)
        [(unseen,)] = conn.execute(query, (n, None)).fetchall()
    assert unseen == pytest.approx(word_weight(0, n), rel=1e-12)
