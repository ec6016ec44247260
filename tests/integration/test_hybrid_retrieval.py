"""Hybrid retrieval on real Postgres with the keyword embedder: exact order and scores."""

import threading
from datetime import UTC, datetime, timedelta
from math import exp, log, sqrt

import numpy as np
import psycopg
import pytest
from pgvector.psycopg import register_vector
from psycopg_pool import ConnectionPool

from core.index import memory_index
from core.index.partitions import searched_partitions
from core.models import PRESET_PROFILES, EventTime, FusionProfile, MemoryContext, MemoryRecord
from core.retrieval.hybrid import (
    HNSW_BEAM_MIN,
    SEARCH_SESSION,
    Reach,
    SearchRequest,
    _candidates,
    fetch_pool,
    hybrid_search,
)
from core.retrieval.hybrid_sql import shown_by
from tests.support.embedders import keyword_vector

NOW = datetime(2026, 6, 1, 12, tzinfo=UTC)


@pytest.fixture
def memories(keyword_workbench, instance):
    def rec(id_, content, age_s, **kw):
        return MemoryRecord(instance=instance, id=id_, kind="user", content=content,
                            created_at=NOW - timedelta(seconds=age_s), **kw)

    keyword_workbench.index.add([
        rec("a", "paris museum", 0),
        rec("b", "paris", 86400),
        rec("c", "dog", 3600, tags=["pets"]),
        rec("d", "france budget", 2 * 86400),
    ])
    return instance


def search(wb, instance, query, **kw):
    return hybrid_search(wb.pool(), wb.embedder, SearchRequest(query=query, instance=instance, **kw), now=NOW)


def test_exact_scores_follow_the_formula(keyword_workbench, memories):
    res = search(keyword_workbench, memories, "paris museum", top_k=10, feedback=0)
    by_id = {r.memory.id: r.score for r in res.results}
    # feedback=0: the query's vector alone (test_feedback_refines_the_query_vector has the default).
    # cosines with the query vector (paris + museum)/√2: a = 1, b = 1/√2, c = d = 0.
    # text: a matches both words and b one, so after normalising by the best, a = 1 and 0 < b < 1.
    assert by_id["a"].semantic == pytest.approx(1.0, abs=1e-6)
    assert by_id["a"].combined == pytest.approx(0.6 * 1.0 + 0.25 * 1.0 + 0.15 * exp(0), abs=1e-6)
    b = by_id["b"]
    assert b.semantic == pytest.approx(1 / sqrt(2), abs=1e-6)
    assert 0 < b.text < 1
    assert b.combined == pytest.approx(0.6 / sqrt(2) + 0.25 * b.text + 0.15 * exp(-1), abs=1e-6)
    assert by_id["c"].combined == pytest.approx(0.15 * exp(-3600 / 86400), abs=1e-6)
    assert [r.memory.id for r in res.results] == ["a", "b", "c", "d"]


def test_feedback_refines_the_query_vector(keyword_workbench, memories):
    """semantic = cosine to q + 0.25 * mean(vectors of the 3 best text matches): here a and b."""
    res = search(keyword_workbench, memories, "paris museum", top_k=10)
    by_id = {r.memory.id: r.score for r in res.results}
    a, b = keyword_vector("paris", "museum"), keyword_vector("paris")
    q = keyword_vector("paris", "museum") + 0.25 * (a + b) / 2
    q /= np.linalg.norm(q)
    assert by_id["a"].semantic == pytest.approx(float(a @ q), abs=1e-5)
    assert by_id["b"].semantic == pytest.approx(float(b @ q), abs=1e-5)
    assert by_id["c"].semantic == 0 and by_id["d"].semantic == 0
    assert by_id["b"].combined == pytest.approx(0.6 * float(b @ q) + 0.25 * by_id["b"].text + 0.15 * exp(-1),
                                                abs=1e-5)
    # `similarity` is the query's own cosine, whatever the expansion: a = 1, b = 1/√2.
    assert by_id["a"].similarity == pytest.approx(1.0, abs=1e-5)
    assert by_id["b"].similarity == pytest.approx(1 / sqrt(2), abs=1e-5)


def test_the_similarity_threshold_reads_the_query_own_cosine(keyword_workbench, instance):
    """"travel" shares no word with the query, only with its best text match: the expanded query brings
    it a semantic part, but its similarity to the query is 0, so a similarity threshold leaves it out."""
    keyword_workbench.index.add([
        MemoryRecord(instance=instance, id=i, kind="user", content=text, created_at=NOW)
        for i, text in (("match", "paris museum travel"), ("travel", "travel"))])
    found = search(keyword_workbench, instance, "paris museum", top_k=10, include_shared=False)
    travel = next(r.score for r in found.results if r.memory.id == "travel")
    assert travel.semantic > 0.1 and travel.similarity == 0
    strict = search(keyword_workbench, instance, "paris museum", top_k=10, include_shared=False,
                    similarity_threshold=0.1)
    assert [r.memory.id for r in strict.results] == ["match"]


def bm25_part(tf: float, dl: float, avgdl: float, k1: float = 1.2, b: float = 0.3) -> float:
    return tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))


def idf(n: int, df: int) -> float:
    return log(1 + (n - df + 0.5) / (df + 0.5))


def test_text_score_is_bm25(keyword_workbench, memories):
    """The raw text score is BM25 over the instance: N = 4 memories, lexemes a: paris museum (dl 2),
    b: paris (1), c: dog (1), d: franc budget (2), so avgdl = 1.5, df(paris) = 2, df(museum) = 1."""
    res = search(keyword_workbench, memories, "paris museum", top_k=10, include_shared=False)
    by_id = {r.memory.id: r.score for r in res.results}
    a = (idf(4, 2) + idf(4, 1)) * bm25_part(1, 2, 1.5)
    b = idf(4, 2) * bm25_part(1, 1, 1.5)
    assert by_id["a"].text == pytest.approx(1.0, abs=1e-6)
    assert by_id["b"].text == pytest.approx(b / a, abs=1e-5)
    assert by_id["c"].text == 0 and by_id["d"].text == 0


def test_neighbours_and_dates_are_searched_with_less_weight(keyword_workbench, instance):
    """tf weights: the memory's own words 1, its neighbours' 0.4 (distance 1) and 0.2 (2–3), its date's
    0.5; so a reply is found by the question before it, below a memory saying the word itself."""
    at = NOW - timedelta(days=3)
    keyword_workbench.index.add([
        MemoryRecord(instance=instance, id="q", kind="turn", content="dog", created_at=at),
        MemoryRecord(instance=instance, id="reply", kind="turn", content="budget", created_at=at,
                     context=MemoryContext(before=["dog"])),
        MemoryRecord(instance=instance, id="far", kind="turn", content="france", created_at=at,
                     context=MemoryContext(before=["museum", "x", "dog"])),
        MemoryRecord(instance=instance, id="dated", kind="turn", content="paris", created_at=at,
                     event_time=EventTime(year=2026, month=5, day=29)),
    ])
    res = search(keyword_workbench, instance, "dog", top_k=10, include_shared=False, search_type="text")
    raw = {r.memory.id: r.score.text for r in res.results}
    # dl: q 1; reply 1 + 0.4; far 1 + 0.4 + 0.2 + 0.2 (its date is unknown); dated 1 + 3 × 0.5.
    avgdl = (1 + 1.4 + 1.8 + 2.5) / 4
    expect = {"q": bm25_part(1, 1, avgdl), "reply": bm25_part(0.4, 1.4, avgdl),
              "far": bm25_part(0.2, 1.8, avgdl)}
    assert [r.memory.id for r in res.results] == ["q", "reply", "far"]
    for id_, value in expect.items():  # one idf for all, so the normalised scores are ratios of the parts
        assert raw[id_] == pytest.approx(value / expect["q"], abs=1e-5)
    dated = search(keyword_workbench, instance, "29 May 2026", top_k=10, include_shared=False,
                   search_type="text")
    assert [r.memory.id for r in dated.results] == ["dated"]


def test_the_words_inside_paths_addresses_and_hosts_are_searched(keyword_workbench, instance):
    """Postgres's parser keeps a path, a URL, a host or an e-mail address whole; their words are indexed too
    (`memory_analyse`), by the memory's own text and by its neighbours', live and bulk-loaded alike, and a
    query holding the whole token still finds it. Digits alone inside a version or a decimal are no words."""
    at = NOW - timedelta(days=3)
    notes = {"conf": "edit /etc/nginx/nginx.conf then reload", "doc": "see https://docs.example.org/av1-avif/",
             "mail": "write to ops@hollyhock.io today", "plain": "nginx is not here, version v2.3.1 at 3.5"}
    live = [MemoryRecord(instance=instance, id=k, kind="turn", content=v, created_at=at) for k, v in notes.items()]
    live.append(MemoryRecord(instance=instance, id="reply", kind="turn", content="done", created_at=at,
                             context=MemoryContext(before=["restarted via /usr/sbin/avahi-daemon"])))
    keyword_workbench.index.add(live)
    loaded = f"{instance}-bulk"
    keyword_workbench.index.bulk_load([r.model_copy(update={"instance": loaded}) for r in live])

    def found(where: str, query: str) -> list[str]:
        res = search(keyword_workbench, where, query, top_k=10, include_shared=False, search_type="text")
        return sorted(r.memory.id for r in res.results)

    for where in (instance, loaded):
        assert found(where, "nginx conf") == ["conf", "plain"]
        assert found(where, "avif docs") == ["doc"]
        assert found(where, "hollyhock") == ["mail"]
        assert found(where, "avahi") == ["reply"]
        assert found(where, "/etc/nginx/nginx.conf") == ["conf", "plain"]
        assert found(where, "v2") == ["plain"]
        assert found(where, "3") == []  # digits alone, inside a version or a decimal, are not words

def test_profiles_change_the_order(keyword_workbench, memories):
    recent = FusionProfile(name="only-recency", w_sem=0.0, w_text=0.0, w_rec=1.0)
    res = search(keyword_workbench, memories, "paris museum", top_k=4, profile=recent)
    assert [r.memory.id for r in res.results] == ["a", "c", "b", "d"]
    rrf = search(keyword_workbench, memories, "paris museum", top_k=4,
                 profile=PRESET_PROFILES["balanced-default"].model_copy(update={"method": "rrf"}))
    assert rrf.results[0].memory.id == "a" and rrf.results[0].score.combined == pytest.approx(1.0)


def test_threshold_filters_and_search_types(keyword_workbench, memories):
    res = search(keyword_workbench, memories, "paris museum", top_k=10, similarity_threshold=0.5)
    assert {r.memory.id for r in res.results} == {"a", "b"}
    text_only = search(keyword_workbench, memories, "budget", top_k=10, search_type="text")
    assert [r.memory.id for r in text_only.results] == ["d"]
    assert text_only.results[0].score.vector_rank is None


def test_filters_exclusion_and_isolation(keyword_workbench, memories):
    assert [r.memory.id for r in search(keyword_workbench, memories, "dog", tags=["pets"]).results] == ["c"]
    excluded = search(keyword_workbench, memories, "paris museum", exclude_ids=["a"], top_k=10)
    assert "a" not in {r.memory.id for r in excluded.results}
    keyword_workbench.index.add([MemoryRecord(instance="t-other-instance", id="x", kind="user",
                                              content="paris museum", created_at=NOW)])
    ids = {r.memory.id for r in search(keyword_workbench, memories, "paris museum", top_k=50).results}
    assert "x" not in ids


def test_identical_texts_count_once_and_the_best_copy_stands(keyword_workbench, instance):
    keyword_workbench.index.add([
        MemoryRecord(instance=instance, id="old", kind="user", content="Paris  museum",
                     created_at=NOW - timedelta(days=30)),
        MemoryRecord(instance=instance, id="new", kind="user", content="paris museum", created_at=NOW),
        MemoryRecord(instance=instance, id="other", kind="user", content="paris", created_at=NOW),
    ])
    ids = [r.memory.id for r in search(keyword_workbench, instance, "paris museum", top_k=10).results]
    assert ids == ["new", "other"]


def test_near_duplicates_give_way_to_the_memory_that_answers(workbench, instance):
    """With the real offline embedder: rephrasings of one question do not take every slot."""
    questions = ["What did I plant on the balcony?", "Got it. What did I plant on the balcony?",
                 "Thanks, that works. What did I plant on the balcony?",
                 "Perfect, thank you. What did I plant on the balcony?"]
    fact = "The balcony gets sun from noon until five, so I planted tomatoes and basil there."
    workbench.index.add([MemoryRecord(instance=instance, id=f"q{i}", kind="user", content=q, created_at=NOW)
                         for i, q in enumerate(questions)]
                        + [MemoryRecord(instance=instance, id="fact", kind="user", content=fact, created_at=NOW)])

    def top(**kw):
        return [r.memory.id for r in search(workbench, instance, "What did I plant on the balcony?", top_k=3,
                                            **kw).results]

    assert "fact" not in top(near_duplicate=1.0)
    assert "fact" in top()


def text_index(wb, instance):
    """The instance's postings and word counters, as the triggers keep them."""
    with wb.pool().connection() as conn:
        postings = conn.execute("SELECT lexeme, id, tf, round(dl::numeric, 4), round(impact::numeric, 4) "
                                "FROM memory_term WHERE instance = %s ORDER BY 1, 2", (instance,)).fetchall()
        counts = conn.execute("SELECT lexeme, df, round(len::numeric, 3) FROM memory_lexeme "
                              "WHERE instance = %s AND df <> 0 ORDER BY 1", (instance,)).fetchall()
    return postings, counts


def test_the_text_index_follows_deletes_and_edits_exactly(keyword_workbench, instance):
    """Postings and counters kept by the triggers equal a rebuild from scratch after a bulk load (its
    postings made batch by batch, here six batches), single adds, an edit and deletes; no deleted memory
    keeps one."""
    wb = keyword_workbench
    words = ["paris", "museum", "dog", "france", "budget", "walk", "lake", "sister", "work", "garden"]

    def rec(i: int, content: str | None = None) -> MemoryRecord:
        text = content or " ".join(words[(i + k) % len(words)] for k in range(1 + i % 4))
        return MemoryRecord(instance=instance, id=f"m{i}", kind="turn", content=text, chain_id=f"c{i % 3}",
                            created_at=NOW - timedelta(hours=i),
                            event_time=EventTime(year=2026, month=5, day=1 + i % 9),
                            context=MemoryContext(before=[words[i % 10], "a walk by the lake"], after=[words[-i % 10]]))

    wb.index.bulk_load([rec(i) for i in range(40)], batch_size=7)
    wb.index.add([rec(i) for i in range(40, 50)])
    wb.index.add([rec(3, "an edited memory about the garden")])
    wb.index.delete(instance, ["m0", "m7", "m41"])
    wb.index.delete_chain(instance, "c1")

    kept, counts = text_index(wb, instance)
    with wb.pool().connection() as conn:
        conn.execute("SELECT memory_text_rebuild(%s)", (instance,))
    assert (kept, counts) == text_index(wb, instance)
    ids = {i for _, i, *_ in kept}
    assert not ids & {"m0", "m7", "m41", "m1", "m4"} and {"m2", "m3", "m47"} <= ids
    assert ("edit", "m3") in {(lexeme, i) for lexeme, i, *_ in kept}


def test_concurrent_single_adds_and_deletes_keep_the_counters_exact(keyword_workbench, instance):
    """Four writers adding one memory a statement (each its own commit, as live adds are) while a fifth
    deletes: every writer updates the same words' counters, in one order, so none deadlocks and the
    counters equal a rebuild's."""
    wb = keyword_workbench
    words = ["paris", "museum", "dog", "france", "budget", "walk", "lake"]
    wb.index.add([MemoryRecord(instance=instance, id=f"old{i}", kind="turn", content=" ".join(words[i % 7:]),
                               created_at=NOW) for i in range(20)])

    def add(k: int) -> None:
        for i in range(25):
            wb.index.add([MemoryRecord(instance=instance, id=f"w{k}-{i}", kind="turn", created_at=NOW,
                                       content=" ".join(words[(i + k) % 7:] + words[:(i * k) % 4]))])

    def delete() -> None:
        for i in range(20):
            wb.index.delete(instance, [f"old{i}"])

    threads = [threading.Thread(target=add, args=(k,)) for k in range(4)] + [threading.Thread(target=delete)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert wb.index.count(instance) == 100
    kept = text_index(wb, instance)
    with wb.pool().connection() as conn:
        conn.execute("SELECT memory_text_rebuild(%s)", (instance,))
    assert kept == text_index(wb, instance)
    assert not any(i.startswith("old") for _, i, *_ in kept[0])


def test_an_add_over_several_statements_keeps_the_last_copy_of_a_memory(keyword_workbench, instance,
                                                                          monkeypatch):
    """Rows beyond one statement's share go in one transaction (a failing statement leaves none of the
    add written); a memory given twice in one add is written once, as its last copy; the counters equal
    a rebuild's."""
    monkeypatch.setattr(memory_index, "ROWS_PER_STATEMENT", 2)
    wb = keyword_workbench
    texts = ["paris museum", "dog walk", "lake", "france budget", "paris dog"]
    records = [MemoryRecord(instance=instance, id=f"r{i}", kind="turn", content=t, created_at=NOW)
               for i, t in enumerate(texts)]
    vectors = list(wb.embedder.embed_batch(texts))
    with pytest.raises(psycopg.Error):  # the last statement's vector has the wrong dimensions
        wb.index.add(records, embeddings=[*vectors[:-1], np.ones(3, dtype=np.float32)])
    assert wb.index.count(instance) == 0
    written = wb.index.add([*records, records[0].model_copy(update={"content": "garden work"})])
    assert written == 5
    assert {r.id: r.content for r in wb.index.get(instance, [f"r{i}" for i in range(5)])} == {
        "r0": "garden work", "r1": "dog walk", "r2": "lake", "r3": "france budget", "r4": "paris dog"}
    kept = text_index(wb, instance)
    with wb.pool().connection() as conn:
        conn.execute("SELECT memory_text_rebuild(%s)", (instance,))
    assert kept == text_index(wb, instance)
    assert "museum" not in {lexeme for lexeme, *_ in kept[1]}


def test_the_memories_of_the_speaker_the_query_names_come_first(keyword_workbench, instance):
    """Both turns hold "paris"; the one Caroline said wins when the query names her, and only then."""
    keyword_workbench.index.add([
        MemoryRecord(instance=instance, id="mel", kind="turn", content="Melanie: Caroline loves paris museum",
                     created_at=NOW),
        MemoryRecord(instance=instance, id="car", kind="turn", content="Caroline: paris", created_at=NOW)])
    named = search(keyword_workbench, instance, "what does caroline think of paris", top_k=2)
    assert [r.memory.id for r in named.results] == ["car", "mel"]
    assert [r.score.speaker for r in named.results] == [1.0, 0.0]
    plain = search(keyword_workbench, instance, "paris museum", top_k=2)
    assert [r.memory.id for r in plain.results] == ["mel", "car"]
    assert {r.score.speaker for r in plain.results} == {0.0}
    for leg in ("vector", "text"):  # one leg alone shows what that leg finds: no speaker part
        alone = search(keyword_workbench, instance, "what does caroline think of paris", top_k=2, search_type=leg)
        assert {r.score.speaker for r in alone.results} == {0.0}


def test_a_search_leaves_the_connection_settings_as_they_were(keyword_workbench, memories):
    """The search's HNSW beam and generic plan last only for its statement, whether it succeeds or fails
    (a query vector of the wrong dimension), so the connection's other statements keep their own."""
    def configure(conn):
        register_vector(conn)
        conn.execute("SET hnsw.ef_search = 77")

    wb = keyword_workbench
    show = "SELECT current_setting('hnsw.ef_search'), current_setting('plan_cache_mode')"
    with ConnectionPool(wb.pool().conninfo, min_size=1, max_size=1, kwargs={"autocommit": True},
                        configure=configure) as one:  # one connection: the one searched is checked
        with one.connection() as conn:
            before = conn.execute(show).fetchone()
        assert before == ("77", "auto")
        assert hybrid_search(one, wb.embedder, SearchRequest(query="paris", instance=memories), now=NOW).results
        with one.connection() as conn:
            assert conn.execute(show).fetchone() == before
        with pytest.raises(psycopg.Error):
            fetch_pool(one, wb.embedder, SearchRequest(query="paris", instance=memories),
                       np.ones(wb.embedder.dim + 1, dtype=np.float32))
        with one.connection() as conn:
            assert conn.execute(show).fetchone() == before


def test_the_search_pool_keeps_the_settings_for_its_sessions_and_finds_the_same(keyword_workbench, memories):
    """The Workbench's search pool sets the search's settings once a connection (`SEARCH_SESSION`), so a
    search sends its statement alone; the shared pool's connections keep Postgres's plan choice. Both
    find the same, and a search that widens its beam on the search pool leaves the session's as it was."""
    wb = keyword_workbench
    show = "SELECT current_setting('hnsw.ef_search'), current_setting('plan_cache_mode')"
    with wb.search_pool().connection() as conn:
        assert conn.execute(show).fetchone() == (SEARCH_SESSION["hnsw.ef_search"], "force_generic_plan")
    with wb.pool().connection() as conn:
        assert conn.execute(show).fetchone()[1] == "auto"
    for query in ("paris", "dog", "france budget"):
        req = SearchRequest(query=query, instance=memories, top_k=3)
        assert ([r.memory.id for r in hybrid_search(wb.search_pool(), wb.embedder, req, now=NOW).results]
                == [r.memory.id for r in hybrid_search(wb.pool(), wb.embedder, req, now=NOW).results])
    wide = SearchRequest(query="paris", instance=memories, top_k=50)  # a pool of 100: a beam of 100
    assert hybrid_search(wb.search_pool(), wb.embedder, wide, now=NOW).results
    with wb.search_pool().connection() as conn:
        assert conn.execute(show).fetchone() == (SEARCH_SESSION["hnsw.ef_search"], "force_generic_plan")


@pytest.mark.parametrize("questions", [40, 300])
def test_questions_asked_before_do_not_crowd_out_what_is_retrieved(keyword_workbench, instance, questions):
    """Formation hides the questions a user asked (`retrieve_kinds`), and they are what lies nearest a new
    question. Each leg leaves them out in the statement, so a top-3 search gives the three statements a pool
    of 500 ranks first, though each leg's nearest are questions; with 300 of them the HNSW scan's first
    beam (64) holds no statement, and the beam is widened."""
    def rec(id_, content, **kw):
        return MemoryRecord(instance=instance, id=id_, kind="user", content=content, created_at=NOW, **kw)

    asked = [rec(f"q{i:03}", f"food in paris? {i}", metadata={"message_kind": "question"})
             for i in range(questions)]
    said = [rec("s1", "we ate sushi food at the museum cafe in paris"),
            rec("s2", "the food budget for the paris travel was small"),
            rec("s3", "my dog likes the food they sell in paris"),
            rec("s4", "paris music festival"), rec("s5", "redis and postgres hold the memory")]
    keyword_workbench.index.add(asked + said)
    wb, query = keyword_workbench, "food in paris"
    as_stored = PRESET_PROFILES["balanced-default"].model_copy(update={"retrieve_kinds": None})
    nearest = fetch_pool(wb.pool(), wb.embedder,
                         SearchRequest(query=query, instance=instance, top_k=3, profile=as_stored))
    assert all(c.memory.id.startswith("q") for c in nearest.candidates)  # each leg's 6 nearest: questions
    found = search(wb, instance, query, top_k=3)
    wide = search(wb, instance, query, top_k=3, pool_size=500)
    assert [r.memory.id for r in found.results] == [r.memory.id for r in wide.results]
    assert {r.memory.id for r in found.results} == {"s1", "s2", "s3"}
    # Each leg holds what the profile retrieves, ranked among themselves: no question.
    pool = fetch_pool(wb.pool(), wb.embedder, SearchRequest(query=query, instance=instance, top_k=3))
    assert {"s1", "s2", "s3"} <= {c.memory.id for c in pool.candidates}
    assert not any(c.memory.id.startswith("q") for c in pool.candidates)
    if questions == 40:  # the beam reaches all 45 memories; among 300 identical vectors HNSW loses some
        assert sorted(c.vector_rank for c in pool.candidates) == [1, 2, 3, 4, 5]
    # The Tune comparison of a profile that retrieves the questions with one that does not: each column
    # is what a chat turn with that profile retrieves, from a pool of its own.
    from core.tuning.compare import compare_profiles
    shown = compare_profiles(wb, instance, query, as_stored, PRESET_PROFILES["balanced-default"], rows=3,
                             now=NOW)
    assert all(r.id.startswith("q") for r in shown.active_rows)
    assert [r.id for r in shown.candidate_rows] == [r.memory.id for r in found.results]


@pytest.mark.parametrize(("holding", "cut"), [(100, False), (101, True)])
def test_a_query_word_list_is_cut_only_when_it_is_longer_than_the_postings_read(
        keyword_workbench, instance, holding, cut):
    """The statement reads each query word's first 100 postings (a small pool's bound) and says whether a
    list was longer, so that a short text leg looks further only where there is more to read. A word in
    exactly 100 memories is read whole; in 101 it was cut."""
    keyword_workbench.index.add([MemoryRecord(instance=instance, id=f"m{i:03}", kind="user",
                                              content=f"paris note {i}", created_at=NOW) for i in range(holding)])
    wb = keyword_workbench
    req = SearchRequest(query="paris", instance=instance, top_k=3, include_shared=False)
    partitions = searched_partitions(wb.pool(), [instance])
    with wb.search_pool().connection() as conn:
        _, said = _candidates(conn, wb.embedder, req, wb.embedder.embed("paris"), partitions,
                              shown_by(req.profile), Reach(beam=HNSW_BEAM_MIN, postings=0))
    assert said.cut is cut


def test_a_text_leg_that_probes_only_hidden_memories_looks_further(keyword_workbench, instance):
    """The text leg probes its first 100 scored memories (a small pool's bound) for what the profile
    retrieves. Here no word's list is cut (63 and 60 postings), but together they score 123 memories, the
    first 120 of them questions formation hid: the leg looks further and finds the three statements."""
    def rec(id_, content, **kw):
        return MemoryRecord(instance=instance, id=id_, kind="user", content=content, created_at=NOW, **kw)

    hidden = {"message_kind": "question"}
    keyword_workbench.index.add(
        [rec(f"p{i:03}", "paris paris?", metadata=hidden) for i in range(60)]
        + [rec(f"f{i:03}", "food food?", metadata=hidden) for i in range(60)]
        + [rec(f"s{i}", f"a long walk in paris with the whole family and friends, day {i}") for i in range(3)])
    pool = fetch_pool(keyword_workbench.pool(), keyword_workbench.embedder,
                      SearchRequest(query="paris food", instance=instance, top_k=3, include_shared=False))
    assert {c.memory.id for c in pool.candidates if c.text_rank is not None} == {"s0", "s1", "s2"}
