"""AppTest of the Tune page: rankings side by side that reorder when a weight moves, the pipeline trace,
and the evaluation panel end to end (tiny LoCoMo file → metrics → optimiser → save and activate)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from core.demo.tune import records
from core.index.memory_index import MemoryIndex
from core.retrieval.profiles import ProfileStore
from tests.integration.test_eval_optimise import mini_locomo

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def app(workbench, settings, instance, monkeypatch):
    monkeypatch.setenv("DATA_DIR", str(settings.data_dir))  # get_workbench() uses the test servers
    MemoryIndex(workbench.pool(), workbench.embedder).add(records(instance))
    st.cache_data.clear()
    at = AppTest.from_file(str(ROOT / "dashboard" / "app.py"), default_timeout=60)
    at.session_state["instance"] = instance
    at.run()
    at.switch_page(str(ROOT / "pages" / "tune.py"))
    at.run()
    assert not at.exception, at.exception
    return at


def frames(at):
    return [d.value for d in at.dataframe]


def test_rankings_reorder_when_a_weight_moves_and_the_trace_shows_each_op(app):
    at = app
    active, candidate = frames(at)[:2]
    assert list(active["content"]) == list(candidate["content"]) and set(candidate["change"]) == {"="}
    assert {"semantic", "text", "recency", "combined"} <= set(candidate.columns)
    at.slider(key="tune_w_sem").set_value(0.0).run()
    at.slider(key="tune_w_text_1.00").set_value(0.0).run()  # everything on recency now
    assert not at.exception, at.exception
    assert any("Recency weight" in m.value and "1.00" in m.value for m in at.markdown)
    after = frames(at)[1]
    assert list(after["content"]) != list(active["content"]) and set(after["change"]) - {"="}
    assert list(after["recency"]) == sorted(after["recency"], reverse=True)
    labels = [e.label for e in at.expander]
    for op in ("set_query_op", "extract_time_op", "retrieve_memory_op", "semantic_rank_op", "fuse_rerank_op",
               "print_memory_op"):
        assert any(op in label for label in labels), op
    assert any("no LLM configured" in c.value for c in at.caption)
    assert not at.error


def test_evaluation_optimiser_and_saving_the_winner(app, instance, tmp_path, workbench):
    at = app
    path = tmp_path / "mini.json"
    path.write_text(json.dumps(mini_locomo(f"app-{instance}")))
    at.radio(key="tune_eval_source").set_value("Path on the server").run()
    at.text_input(key="tune_eval_path").set_value(str(path)).run()
    assert any("4 queries" in c.value for c in at.caption), [c.value for c in at.caption]
    at.button(key="tune_eval_run").click().run()
    assert not at.exception and not at.error, (at.exception, [e.value for e in at.error])
    metrics = frames(at)[-1]
    assert set(metrics["profile"]) == {"balanced-default", "candidate"}
    assert "overall" in set(metrics["category"]) and "recall@10" in metrics.columns
    assert len(at.get("plotly_chart")) == 1
    at.button(key="tune_eval_opt_run").click().run()
    assert not at.exception and not at.error, (at.exception, [e.value for e in at.error])
    assert len(at.get("plotly_chart")) == 2  # the bar chart and the ternary surface
    assert any("profiles scored on 4 queries" in m.value for m in at.markdown)
    name = f"won-{instance}"[:40]
    at.text_input(key="tune_eval_save_name").set_value(name).run()
    at.button(key="tune_eval_save").click().run()
    assert not at.exception, at.exception
    assert ProfileStore(workbench.pool()).active(instance).name == name
    assert any(name in s.value for s in at.success)
    assert any(f"Active: {name}" in m.value for m in at.markdown)
