"""Which memories of a turn's top k are handed to synthesis (`core.retrieval.fusion.handed_by_floor`): none
when no relevance reaches the floor, else every one reaching OTHERS_SHARE of it."""

from __future__ import annotations

from core.config import Settings
from core.retrieval.fusion import OTHERS_SHARE, handed_by_floor

FLOOR = 0.33


def test_nothing_is_handed_when_no_memory_reaches_the_floor():
    relevance = [0.32, 0.25, 0.1]
    assert max(relevance) < FLOOR
    assert handed_by_floor(relevance, FLOOR) == [False, False, False]


def test_once_one_reaches_the_floor_the_others_need_a_share_of_it():
    relevance = [0.58, 0.41, 0.229, 0.16, 0.05]
    bar = OTHERS_SHARE * FLOOR  # 0.165
    assert handed_by_floor(relevance, FLOOR) == [max(relevance) >= FLOOR and r >= bar for r in relevance]
    assert handed_by_floor(relevance, FLOOR) == [True, True, True, False, False]


def test_the_best_need_not_be_first():
    """Ranking reads recency and the chain, relevance does not: the gate is the top k's best, wherever it is."""
    assert handed_by_floor([0.2, 0.1, 0.4], FLOOR) == [True, False, True]


def test_edges():
    assert handed_by_floor([], FLOOR) == []
    assert handed_by_floor([0.0, 0.0], 0.0) == [True, True]  # floor 0: everything
    assert handed_by_floor([FLOOR, OTHERS_SHARE * FLOOR], FLOOR) == [True, True]  # both bars are reached at equality


def test_the_settings_description_says_the_share():
    """The setting's help says "half of it": it must change with OTHERS_SHARE."""
    assert OTHERS_SHARE == 0.5 and "half of it" in Settings.model_fields["relevance_floor"].description
