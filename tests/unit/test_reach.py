"""How far a search looks again when a leg that leaves memories out comes back short (`Reach.widened`)."""

from datetime import UTC, datetime

from core.models import MemoryRow
from core.retrieval.fusion import Candidate
from core.retrieval.hybrid import POOL_MAX, POSTINGS_MAX, Reach, Said
from core.retrieval.ranking import CandidatePool

NOW = datetime(2026, 6, 1, tzinfo=UTC)


def pool(vector: int, text: int) -> CandidatePool:
    """`vector` candidates of the vector leg and `text` of the text leg, none in both."""
    def cand(i, v, t):
        return Candidate(MemoryRow(instance="i", id=str(i), kind="user", content=str(i), created_at=NOW),
                         cosine=0.5, text_raw=1.0 if t else 0.0, vector_rank=v, text_rank=t)
    return CandidatePool([cand(i, i + 1, None) for i in range(vector)]
                         + [cand(vector + i, None, i + 1) for i in range(text)])


START = Reach(beam=64, postings=0)


def test_a_full_leg_or_one_with_nothing_more_to_look_at_is_not_searched_again():
    assert START.widened(10, pool(10, 10), Said(memories=50_000, cut=True), True, True) == START
    # The beam reached every memory; no query word's postings were cut.
    assert START.widened(10, pool(3, 2), Said(memories=60, cut=False), True, True) == START
    # A leg that leaves nothing out came back with all there is.
    assert START.widened(10, pool(3, 2), Said(memories=50_000, cut=True), False, False) == START


def test_a_short_leg_looks_further_by_the_share_it_lacked():
    # 4 kept of a beam of 64: 1.25 * 10 * 64 / 4 = 200.
    assert START.widened(10, pool(4, 10), Said(50_000, False), True, True) == Reach(200, 0)
    # At least twice the beam; never past POOL_MAX, nor past the memories there are to reach.
    assert START.widened(10, pool(9, 10), Said(50_000, False), True, True) == Reach(128, 0)
    assert START.widened(10, pool(0, 10), Said(50_000, False), True, True) == Reach(800, 0)  # as if 1 kept
    assert Reach(POOL_MAX, 0).widened(10, pool(0, 10), Said(50_000, False), True, True) == Reach(POOL_MAX, 0)
    # The text leg reads four times as many postings of each word, up to POSTINGS_MAX.
    assert START.widened(10, pool(10, 3), Said(50_000, True), True, True) == Reach(64, 400)
    assert Reach(64, 400).widened(10, pool(10, 3), Said(50_000, True), True, True) == Reach(64, 1600)
    assert Reach(64, POSTINGS_MAX).widened(10, pool(10, 3), Said(50_000, True), True, True) == \
        Reach(64, POSTINGS_MAX)
