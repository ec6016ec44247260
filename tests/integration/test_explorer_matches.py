"""The explorer's search shows only hits that match: full-text mode those with the query's words (and
never claims more), semantic mode those semantically close, hybrid either; never padded to top_k. Before
a search, the newest memories."""

from __future__ import annotations

from core import usecases as uc

FACTS = ["The quince orchard has forty trees near the river.", "Our pear trees need pruning in February.",
         "The boat to the island leaves at nine.", "Sushi is my favourite food when I travel."]


def add(wb, instance) -> None:
    for fact in FACTS:
        uc.add_memory(wb, uc.AddMemory(instance=instance, content=fact))


def search(wb, instance, query: str, mode: str) -> uc.SearchOutcome:
    return uc.memory_search(wb, uc.ExplorerSearch(query=query, instance=instance, mode=mode))


def test_full_text_mode_keeps_only_hits_with_the_words(workbench, instance):
    add(workbench, instance)
    out = search(workbench, instance, "quince", "text")
    assert [h.content for h in out.hits] == [FACTS[0]] and all(h.text > 0 for h in out.hits)
    assert out.min_similarity is None
    assert search(workbench, instance, "zebra", "text").hits == []


def test_semantic_and_hybrid_modes_do_not_pad_with_unrelated_memories(workbench, instance):
    add(workbench, instance)
    for mode in ("vector", "hybrid"):
        out = search(workbench, instance, "quantum chromodynamics lecture", mode)
        assert out.hits == [] and out.left_out == len(FACTS), mode
    out = search(workbench, instance, "quince orchard trees", "hybrid")
    assert out.hits[0].content == FACTS[0] and len(out.hits) < len(FACTS)
    assert all(h.text > 0 or h.semantic > out.min_similarity for h in out.hits)


def test_before_a_search_the_newest_memories(workbench, instance):
    add(workbench, instance)
    recent = uc.recent(workbench, uc.RecentRequest(instance=instance, limit=3))
    assert [h.content for h in recent] == FACTS[:0:-1]  # newest first
    assert all(h.score is None for h in recent)
