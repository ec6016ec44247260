"""The Tune page's Rankings tab as chat ranks (the user pass U2's findings 1, 3 and 4): it opens at the pool a
chat turn asking for the rows shown draws, so its order and scores are that turn's; its tables show what the
Chat page's "why" table shows, relevance (what the floor reads) among it; and the evaluation chart's bars lie
down with their values beside them (the table's height: tests/e2e/test_tune_browser.py)."""

from __future__ import annotations

from datetime import UTC, datetime

from core import usecases as uc
from core.retrieval.fusion import OTHERS_SHARE, handed_by_floor
from core.retrieval.hybrid import SearchRequest, default_pool, hybrid_search
from tests.app.test_tune_page import app, evaluate_six, frames  # noqa: F401  (the page's fixture)

QUERY = "What did I eat yesterday?"  # the page's opening query


def test_the_rankings_open_at_chats_pool_and_rank_as_chat(app, workbench, instance):  # noqa: F811
    at = app
    rows = at.slider(key="tune_rows").value
    pool = at.slider(key=f"tune_rank_pool_{rows}")
    assert pool.value == default_pool(rows) and f"draws {default_pool(rows)} candidates from each leg" in pool.help
    assert "A larger pool ranks otherwise" in pool.help
    active = frames(at)[0]
    chat = hybrid_search(workbench.search_pool(), workbench.embedder, SearchRequest(
        query=QUERY, instance=instance, top_k=rows, profile=workbench.profiles.active(instance),
        time_of="event"), now=datetime.now(UTC)).results
    assert list(active["id"]) == [m.memory.id for m in chat]
    for part in ("semantic", "text", "relevance"):  # the parts normalised over the pool, and what the floor reads
        assert [round(x, 6) for x in active[part]] == [round(getattr(m.score, part), 6) for m in chat], part
    # combined to the page's 3 decimals: recency moved on in the moment between the two searches
    assert [f"{x:.3f}" for x in active["combined"]] == [f"{m.score.combined:.3f}" for m in chat]
    # another number of rows: its own pool, again chat's for that many
    at.slider(key="tune_rows").set_value(25).run()
    assert at.slider(key="tune_rank_pool_25").value == default_pool(25) == 50
    # MemoryScope and the evaluation keep theirs, an agent's
    assert at.slider(key="tune_pool").value == uc.ScopeParams().retrieve_memory_op.pool_size


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
    assert (f"relevance under {OTHERS_SHARE * floor:.2f}, what the others need once one reaches the floor "
            f"{floor:.2f} (RELEVANCE_FLOOR)") in note


def test_the_evaluation_chart_lays_its_bars_down_with_their_values_beside_them(app, tmp_path):  # noqa: F811
    at, _ = evaluate_six(app, tmp_path)
    [chart] = at.get("plotly_chart")
    spec = chart.proto.spec
    assert '"orientation":"h"' in spec.replace(" ", "") and '"textposition":"outside"' in spec.replace(" ", "")
