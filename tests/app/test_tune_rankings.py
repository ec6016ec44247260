"""The Tune page's Rankings tab as chat ranks (the user pass U2's findings 1, 3 and 4): it opens at the pool a
chat turn asking for the rows shown draws, so its order and scores are that turn's; one "Candidates per leg"
control sets it and the evaluation's, each figure saying its pool; its tables show what the
Chat page's "why" table shows, relevance (what the floor reads) among it; and the evaluation chart's bars lie
down with their values beside them (the table's height: tests/e2e/test_tune_browser.py)."""

from __future__ import annotations

from datetime import UTC, datetime

from core import usecases as uc
from core.retrieval.fusion import BOOSTED_AMONG, handed_by_floor, others_bar
from core.retrieval.hybrid import SearchRequest, default_pool, hybrid_search
from tests.app.test_tune_page import app, evaluate_six, frames  # noqa: F401  (the page's fixture)

QUERY = "What did I eat yesterday?"  # the page's opening query


def test_the_rankings_open_at_chats_pool_and_rank_as_chat(app, workbench, instance):  # noqa: F811
    at = app
    rows = at.slider(key="tune_rows").value
    pool = at.number_input(key="tune_pool")
    assert pool.value is None and "max(10, 2 × k)" in pool.help and "A larger pool ranks otherwise" in pool.help
    said = (f"Rankings: {default_pool(rows)} a leg, a chat turn's for {rows} memories (Rows shown; "
            f"{default_pool(BOOSTED_AMONG)} when the query names a time")
    assert any(c.value.startswith(said) and "50 for Evaluate's 25" in c.value for c in at.caption)
    # The query names a time ("yesterday"): as a chat turn, the pool is a search for the best BOOSTED_AMONG,
    # which the time re-ranks, and the page says so.
    assert any(f"({default_pool(BOOSTED_AMONG)} candidates per leg); the top {rows}" in c.value for c in at.caption)
    assert any(c.value.startswith("As chat ranks") and "the query's time 'yesterday'" in c.value for c in at.caption)
    active = frames(at)[0]
    chat = hybrid_search(workbench.search_pool(), workbench.embedder, SearchRequest(
        query=QUERY, instance=instance, top_k=rows, profile=workbench.profiles.active(instance),
        time_of="event"), now=datetime.now(UTC)).results
    assert list(active["id"]) == [m.memory.id for m in chat]
    for part in ("semantic", "text", "relevance"):  # the parts normalised over the pool, and what the floor reads
        assert [round(x, 6) for x in active[part]] == [round(getattr(m.score, part), 6) for m in chat], part
    # combined to the page's 3 decimals: recency moved on in the moment between the two searches
    assert [f"{x:.3f}" for x in active["combined"]] == [f"{m.score.combined:.3f}" for m in chat]
    # another number of rows: again chat's pool for that many
    at.slider(key="tune_rows").set_value(25).run()
    assert any("(50 candidates per leg, a chat turn's for 25 memories); the top 25" in c.value for c in at.caption)
    # retrieve_memory keeps its own, an agent's, among the op parameters, and says it under its output
    scope = uc.ScopeParams().retrieve_memory_op.pool_size
    assert at.number_input(key="tune_scope_pool").value == scope
    assert any(f"retrieve_memory's pool_size: {scope} candidates per leg" in m.value for m in at.markdown)


def test_one_pool_feeds_the_rankings_and_the_evaluation_and_each_says_it(app, workbench, instance,  # noqa: F811
                                                                        tmp_path):
    """The user pass's finding: two pool sliders with different defaults for one concept. One control, empty
    as chat draws, sets the Rankings tab's tables, the evaluation and the optimiser; each figure says its pool,
    and the evaluation's default is `workbench eval`'s."""
    at = app
    at.number_input(key="tune_pool").set_value(30).run()
    assert any(c.value.startswith("Rankings and evaluations: 30 a leg.") for c in at.caption)
    assert any("(30 candidates per leg); the top 10" in c.value for c in at.caption)
    fixed = hybrid_search(workbench.search_pool(), workbench.embedder, SearchRequest(
        query=QUERY, instance=instance, top_k=10, pool_size=30, profile=workbench.profiles.active(instance),
        time_of="event"), now=datetime.now(UTC)).results
    assert list(frames(at)[0]["id"]) == [m.memory.id for m in fixed]
    at.number_input(key="tune_scope_pool").set_value(200).run()  # retrieve_memory's own: no ranking moves
    assert list(frames(at)[0]["id"]) == [m.memory.id for m in fixed]

    at, path = evaluate_six(at, tmp_path)
    assert any("from 30 candidates per leg (*Candidates per leg*, left)" in c.value for c in at.caption)
    assert any(c.value.endswith("· ranked from 30 candidates per leg") for c in at.caption)
    by_cli = uc.tune(workbench, uc.TuneRequest(instance=instance, source=path, pool_size=30)).evaluation
    overall = next(f for f in frames(at) if "category" in f.columns).set_index(["profile", "category"])
    assert overall.loc[("balanced-default", "overall"), "recall@25"] == round(by_cli.value("recall@25"), 4)
    at.button(key="tune_eval_opt_run").click().run()
    assert any("profiles scored on 6 queries, 30 candidates per leg, in" in c.value for c in at.caption)

    at.number_input(key="tune_pool").set_value(None).run()  # cleared: as chat draws, `workbench eval`'s default
    at.button(key="tune_eval_run").click().run()
    default = uc.tune(workbench, uc.TuneRequest(instance=instance, source=path)).evaluation
    assert default.pool_size == default_pool(25) == 50
    assert any(c.value.endswith("· ranked from 50 candidates per leg, a chat turn's for 25 memories")
               for c in at.caption)
    overall = next(f for f in frames(at) if "category" in f.columns).set_index(["profile", "category"])
    assert overall.loc[("balanced-default", "overall"), "recall@25"] == round(default.value("recall@25"), 4)


def test_the_tables_show_relevance_and_the_floor_note_quotes_it(app, workbench, instance):  # noqa: F811
    at = app
    active = frames(at)[0]
    assert {"content", "semantic", "text", "coverage", "relevance", "combined", "in_chat"} <= set(active.columns)
    floor = workbench.settings.relevance_floor
    assert list(active["in_chat"]) == handed_by_floor(list(active["relevance"]), floor)
    at.slider(key="tune_rows").set_value(25).run()  # deep enough for ranks left out
    active = frames(at)[0]
    assert active["in_chat"].any(), "the demo's best row reaches the floor"
    below = active[~active["in_chat"]]
    assert len(below), "the demo's ranking has ranks under half the floor at 25"
    [note] = {c.value for c in at.caption if c.value.startswith("Rank ")}
    first = below.iloc[0]
    assert f"{first['rank']} (rel {first['relevance']:.2f})" in note
    assert (f"relevance under {others_bar(list(active['relevance']), floor):.2f}, what the others need once one "
            f"reaches the floor {floor:.2f} (RELEVANCE_FLOOR)") in note


def test_the_evaluation_chart_lays_its_bars_down_with_their_values_beside_them(app, tmp_path):  # noqa: F811
    at, _ = evaluate_six(app, tmp_path)
    [chart] = at.get("plotly_chart")
    spec = chart.proto.spec
    assert '"orientation":"h"' in spec.replace(" ", "") and '"textposition":"outside"' in spec.replace(" ", "")
