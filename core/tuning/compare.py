"""Two fusion profiles' rankings of the same candidates, side by side, with each memory's rank change.

The candidate pool is fetched once (`fetch_pool`) and ranked twice by `core.retrieval.ranking.rank` with
the settings chat searches with (identical texts once, near-duplicates left out, the similarity
threshold), so each column is what `ui_remember` would retrieve with that profile and the difference
between them is the profiles' doing alone. Two profiles that retrieve different memories (their
`retrieve_kinds` or `include_superseded`) each rank a pool of their own, as a chat turn with each would.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

from pydantic import BaseModel

from core.models import FusionProfile
from core.retrieval.fusion import others_bar
from core.retrieval.hybrid import SearchRequest, fetch_pool, time_asked
from core.retrieval.hybrid_sql import shown_by
from core.retrieval.ranking import above_floor, boosted_by_time, rank, time_boost_note

if TYPE_CHECKING:
    from core.runtime import Workbench


class RankedRow(BaseModel):
    rank: int
    id: str
    kind: str
    content: str
    semantic: float
    text: float
    recency: float
    speaker: float = 0.0
    chain: float = 0.0
    coverage: float = 0.0
    relevance: float = 0.0  # what the relevance floor reads: semantic and coverage, without recency
    combined: float
    change: str = ""  # against the other ranking: "=", "↑2", "↓1", "new"
    below_floor: bool = False  # left out by the relevance floor (`above_floor`): a chat turn does not hand it
    stated: bool = False  # it states the attribute the query asks (`ScoreParts.stated`): the floor reads it


class Comparison(BaseModel):
    query: str
    candidates: int
    pool_size: int = 0  # candidates per leg drawn: a chat turn's for `rows`, or for BOOSTED_AMONG with a time
    time_note: str | None = None  # what the time the query names did to the candidate's ranking, as chat says it
    active: FusionProfile
    candidate: FusionProfile
    active_rows: list[RankedRow]
    candidate_rows: list[RankedRow]
    relevance_floor: float = 0.0
    # What each ranking's other rows need once one reaches the floor (`others_bar`: it reads the ranking's best)
    active_others_floor: float = 0.0
    candidate_others_floor: float = 0.0


def rank_change(before: int | None, after: int) -> str:
    """"new" when absent before, "=" when unchanged, else ↑n (moved up n places) or ↓n."""
    if before is None:
        return "new"
    if before == after:
        return "="
    return f"↑{before - after}" if after < before else f"↓{after - before}"


def compare_profiles(wb: Workbench, instance: str, query: str, active: FusionProfile,
                     candidate: FusionProfile, *,
                     pool_size: int | None = None, similarity_threshold: float = 0.0, rows: int = 10,
                     kinds: list[str] | None = None, now: datetime | None = None,
                     relevance_floor: float | None = None) -> Comparison:
    """The top `rows` of each profile's ranking; the candidate's rows carry their change of rank.

    By default the candidate pool is the one a chat turn asking for `rows` memories draws from
    (`SearchRequest.pool`), so the candidate column is what that turn would retrieve with that profile.

    Each profile's whole ranking is computed (it is prefix-consistent, so its first `rows` are what a
    search for `rows` returns), so a change of rank is measured against the active profile's full order.
    Rows the relevance floor leaves out (`above_floor`; default floor: the RELEVANCE_FLOOR setting) are
    marked `below_floor`, so the rows not marked are exactly what a chat turn hands to synthesis.
    """
    floor = wb.settings.relevance_floor if relevance_floor is None else relevance_floor
    now = now or datetime.now(UTC)
    # As a chat turn searches: a time the query names ("What did I eat yesterday?") re-ranks the best
    # BOOSTED_AMONG, drawn from that search's pool (`hybrid_search`); the columns showed the order without it.
    asked, req = time_asked(SearchRequest(query=query, instance=instance, top_k=rows, pool_size=pool_size,
                                          profile=candidate, similarity_threshold=similarity_threshold,
                                          kinds=kinds), now)
    cands = fetch_pool(wb.search_pool(), wb.embedder, req)
    active_cands = cands if shown_by(active) == shown_by(candidate) else fetch_pool(
        wb.search_pool(), wb.embedder, req.model_copy(update={"profile": active}))

    def ranking(profile: FusionProfile, pool) -> list:
        ranked = rank(pool, profile, now, top_k=len(pool), similarity_threshold=req.similarity_threshold,
                      distinct=req.distinct, near_duplicate=req.near_duplicate)
        return ranked if asked is None else boosted_by_time(ranked, asked)

    before, after = ranking(active, active_cands), ranking(candidate, cands)
    position = {s.memory.id: i for i, s in enumerate(before, start=1)}

    def rows_of(ranked: list, changes: bool) -> list[RankedRow]:
        # Relevance is the profile's own blend of the legs, so each ranking is held to the floor apart.
        passing = {s.memory.id for s in above_floor(ranked[:rows], floor)[0]}
        return [RankedRow(rank=i, id=s.memory.id, kind=s.memory.kind, content=s.memory.content,
                          semantic=s.score.semantic, text=s.score.text, recency=s.score.recency,
                          speaker=s.score.speaker, chain=s.score.chain, coverage=s.score.coverage,
                          relevance=s.score.relevance, combined=s.score.combined, stated=s.score.stated,
                          below_floor=s.memory.id not in passing,
                          change=rank_change(position.get(s.memory.id), i) if changes else "")
                for i, s in enumerate(ranked[:rows], start=1)]

    active_rows, candidate_rows = rows_of(before, False), rows_of(after, True)
    return Comparison(query=query, candidates=len(cands), pool_size=req.pool,
                      time_note=None if asked is None else time_boost_note(asked, after[:rows]),
                      active=active, candidate=candidate,
                      active_rows=active_rows, candidate_rows=candidate_rows, relevance_floor=floor,
                      active_others_floor=others_floor(active_rows, floor),
                      candidate_others_floor=others_floor(candidate_rows, floor))


def others_floor(rows: list[RankedRow], floor: float) -> float:
    """What a ranking's other rows need once one reaches the floor, as a chat turn holds them (`others_bar`)."""
    return others_bar([r.relevance for r in rows], floor, [r.stated for r in rows])
