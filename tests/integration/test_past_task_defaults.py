"""Past-task search's default `max_distance` per embedder: the seed's 0.2 for OpenAI models, and for
WordLlama the value the labelled pairs in tests/data/past_task_pairs.jsonl give (README, "Past tasks")."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from core import usecases as uc
from core.past_tasks.models import MAX_DISTANCE_BY_EMBEDDER, default_max_distance
from core.past_tasks.store import ProducedTextInput

PAIRS = [json.loads(line) for line in
         (Path(__file__).parents[1] / "data" / "past_task_pairs.jsonl").read_text(encoding="utf-8").splitlines()]


def calibrated_max_distance(distances: np.ndarray, relevant: np.ndarray) -> float:
    """The largest 0.05 step at least 0.05 below the nearest unrelated pair."""
    nearest_unrelated = float(distances[~relevant].min())
    return float(np.floor((nearest_unrelated - 0.05) / 0.05 + 1e-9) * 0.05)


def test_openai_models_keep_the_seeds_limit():
    assert default_max_distance("openai:text-embedding-3-small") == 0.2
    assert default_max_distance("openai:text-embedding-3-large") == 0.2


def test_the_wordllama_default_is_the_one_the_labelled_pairs_give(workbench):
    assert len(PAIRS) >= 60 and 0.3 < np.mean([p["relevant"] for p in PAIRS]) < 0.7
    queries = workbench.embedder.embed_batch([p["query"] for p in PAIRS])
    texts = workbench.embedder.embed_batch([f"{p['title']}\n\n{p['text']}" for p in PAIRS])
    distances = 1 - (queries * texts).sum(axis=1)
    relevant = np.array([p["relevant"] for p in PAIRS])
    shipped = MAX_DISTANCE_BY_EMBEDDER[workbench.embedder.name]
    found = distances < shipped
    precision, recall = (found & relevant).sum() / found.sum(), (found & relevant).sum() / relevant.sum()
    print(f"\n{workbench.embedder.name}: max_distance {shipped}: precision {precision:.3f}, recall {recall:.3f}; "
          f"related pairs median {np.median(distances[relevant]):.3f}, nearest unrelated "
          f"{distances[~relevant].min():.3f}; the seed's 0.2 finds {(distances[relevant] < 0.2).sum()} of "
          f"{relevant.sum()}")
    assert shipped == pytest.approx(calibrated_max_distance(distances, relevant))
    assert precision == 1.0 and recall >= 0.8


def test_the_default_search_finds_a_text_holding_the_querys_words(workbench, instance):
    uc.ingest_texts(workbench, uc.IngestTexts(items=[
        ProducedTextInput(instance=instance, user_id="tom", task="note", title="Carrier review",
                          production="Pallet deliveries from NordFreight arrived late on 9 of 40 days. "
                                     "The contract allows a penalty when more than 5 deliveries are late."),
        ProducedTextInput(instance=instance, user_id="tom", task="note", title="Seminar programme",
                          production="Six external speakers give talks on Thursdays at 4 pm.")]))
    result = uc.internal_memory(workbench, uc.PastTaskQuery(instance=instance, user_id="tom",
                                                            query="late pallet deliveries penalty"))
    assert [h.title for h in result.search.hits] == ["Carrier review"]
    assert result.query.max_distance == 0.65  # the recorded query says which limit was used
    assert uc.past_task_defaults(workbench).model_dump() == {
        "embedder": "wordllama-l2-supercat-256", "max_distance": 0.65, "calibrated": True, "n_max": 10}
