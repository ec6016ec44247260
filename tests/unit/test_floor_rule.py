"""Which memories of a turn's top k are handed to synthesis (`core.retrieval.fusion.handed_by_floor`): none
when no relevance reaches the floor, else every one reaching `others_bar`: the floor itself, or OTHERS_SHARE
of it and BEST_SHARE of the best's relevance."""

from __future__ import annotations

from core.config import Settings
from core.retrieval.fusion import BEST_SHARE, OTHERS_SHARE, handed_by_floor, others_bar
from core.tuning.measures import HANDED

FLOOR = 0.33


def test_nothing_is_handed_when_no_memory_reaches_the_floor():
    relevance = [0.32, 0.25, 0.1]
    assert max(relevance) < FLOOR
    assert handed_by_floor(relevance, FLOOR) == [False, False, False]


def test_beside_a_weak_best_the_others_need_half_the_floor():
    """A best of 0.41: BEST_SHARE of it (0.14) is under half the floor (0.165), which decides."""
    relevance = [0.41, 0.229, 0.16, 0.05]
    bar = max(OTHERS_SHARE * FLOOR, BEST_SHARE * max(relevance))
    assert others_bar(relevance, FLOOR) == bar == OTHERS_SHARE * FLOOR
    assert handed_by_floor(relevance, FLOOR) == [max(relevance) >= FLOOR and r >= bar for r in relevance]
    assert handed_by_floor(relevance, FLOOR) == [True, True, False, False]


def test_beside_a_strong_best_a_memory_sharing_one_stray_word_is_left_out():
    """The demo's "When is my Lisbon trip?": the trip reads 0.82, so the others need 0.35 * 0.82 = 0.287; a
    Paris museum (0.26) and "Ana is vegetarian" (0.22) share a stray word and no longer ride along."""
    relevance = [0.82, 0.61, 0.47, 0.26, 0.22]
    bar = BEST_SHARE * 0.82
    assert others_bar(relevance, FLOOR) == bar > OTHERS_SHARE * FLOOR
    assert handed_by_floor(relevance, FLOOR) == [r >= bar for r in relevance] == [True, True, True, False, False]


def test_a_memory_reaching_the_floor_is_always_handed():
    """BEST_SHARE of a best above 0.94 (the speaker part lifts relevance up to 1.2) is over the floor: the bar
    stops at the floor, which a memory reaching matches on its own."""
    relevance = [1.2, FLOOR, 0.3]
    assert BEST_SHARE * max(relevance) > FLOOR
    assert others_bar(relevance, FLOOR) == FLOOR
    assert handed_by_floor(relevance, FLOOR) == [True, True, False]


def test_the_best_need_not_be_first():
    """Ranking reads recency and the chain, relevance does not: the gate is the top k's best, wherever it is."""
    assert handed_by_floor([0.2, 0.1, 0.4], FLOOR) == [True, False, True]


def test_edges():
    assert handed_by_floor([], FLOOR) == []
    assert others_bar([], FLOOR) == OTHERS_SHARE * FLOOR
    assert handed_by_floor([0.0, 0.0], 0.0) == [True, True]  # floor 0: everything
    assert handed_by_floor([FLOOR, OTHERS_SHARE * FLOOR], FLOOR) == [True, True]  # both bars are reached at equality
    best = 0.8
    assert handed_by_floor([best, BEST_SHARE * best], FLOOR) == [True, True]


def test_the_help_texts_say_the_shares():
    """The setting's help and the evaluation's definition say "half of it" and 0.35 of the best's: they must
    change with OTHERS_SHARE and BEST_SHARE."""
    said = f"half of it and {BEST_SHARE:g} of the best's relevance"
    assert OTHERS_SHARE == 0.5 and said in Settings.model_fields["relevance_floor"].description
    assert said in HANDED
