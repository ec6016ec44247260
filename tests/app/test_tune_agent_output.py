"""The Tune page scores what an agent gets beside the ranking (the tuning report's M2): with the option on,
retrieve_memory's output with each profile and the op parameters on the left, in its own table under its
plain label, equal to what `uc.retrieve_memory` returns for each query."""

from __future__ import annotations

import pytest

from core import usecases as uc
from tests.app.conftest import open_tab
from tests.app.test_tune_page import app  # noqa: F401  (the page's fixture)
from tests.integration.test_eval_memoryscope import _by_hand
from tests.integration.test_eval_optimise import six_query_jsonl

LABEL = "retrieve_memory's output (MemoryScope, after fuse_rerank): what an agent gets"


def test_the_option_adds_the_agent_table_with_the_op_parameters_on_the_left(app, tmp_path, workbench,  # noqa: F811
                                                                            instance):
    at = app
    path = tmp_path / "set.jsonl"
    path.write_text(six_query_jsonl())
    at.number_input(key="tune_top_k").set_value(10).run()  # retrieve_memory_op's top_k: 5 come out of fuse_rerank
    open_tab(at, "Evaluate & optimise")
    at.radio(key="tune_eval_source").set_value("Path on the server").run()
    at.text_input(key="tune_eval_path").set_value(str(path)).run()
    at.toggle(key="tune_eval_memoryscope").set_value(True).run()
    at.button(key="tune_eval_run").click().run()
    assert not at.exception and not at.error, (at.exception, [e.value for e in at.error])
    assert f"**{LABEL}**" in [m.value for m in at.markdown]
    agent = next(d.value for d in at.dataframe if "mrr@5" in d.value.columns)
    assert list(agent["profile"].unique()) == ["balanced-default", "candidate"]
    overall = agent.query("category == 'overall' and profile == 'balanced-default'").iloc[0]
    recall, mrr = _by_hand(workbench, instance, uc.ScopeParams.from_flat({"op.retrieve_memory_op.params.top_k": 10}),
                           5)
    assert overall["recall@5"] == pytest.approx(recall, abs=1e-4) and overall["mrr@5"] == pytest.approx(mrr, abs=1e-4)
    assert "recall@10" not in agent.columns  # never read off 5 memories
    # The ranking's table is the one it was: no row of the agent's in it.
    ranking = next(d.value for d in at.dataframe if "handed recall@10" in d.value.columns)
    assert not ranking["profile"].str.contains("retrieve_memory").any()
    assert any("what an agent gets with balanced-default (retrieve_memory, 5 memories at most)" in c.value
               for c in at.caption)
