"""Score fusion for hybrid retrieval: pure functions, the formula in each docstring."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime

from core.models import FusionProfile, MemoryRow, ScoredMemory, ScoreParts

# What a memory gains when the query names its speaker (`core.retrieval.speakers`), added to the fused
# score and to relevance. On LoCoMo dev (pools of 300, 1,033 questions) 0.1 / 0.2 / 0.3 gave R@5 0.673 /
# 0.681 / 0.682 against 0.633 without; R@10 peaked at 0.2 (0.752 against 0.721).
SPEAKER_WEIGHT = 0.2
# How much a memory's chain (its conversation or session) counts: a memory is ranked by
# (own + CHAIN_WEIGHT * best of its chain in the pool) / (1 + CHAIN_WEIGHT), so the turns of a session that
# answers the question well rise together, while the best of each chain keeps its own score. With the
# speaker part, on LoCoMo dev: 0 / 0.1 / 0.2 / 0.3 gave R@5 0.681 / 0.688 / 0.690 / 0.694.
CHAIN_WEIGHT = 0.3


def clip01(x: float) -> float:
    """min(1, max(0, x)); NaN becomes 0."""
    return 0.0 if math.isnan(x) else min(1.0, max(0.0, x))


def recency_score(age_seconds: float, tau_s: float) -> float:
    """exp(-age_seconds / tau_s); an age in the future counts as 0 s old."""
    return math.exp(-max(0.0, age_seconds) / tau_s)


def fuse_linear(semantic: float, text: float, recency: float, profile: FusionProfile) -> float:
    """w_sem * semantic + w_text * text + w_rec * recency."""
    return profile.w_sem * semantic + profile.w_text * text + profile.w_rec * recency


def fuse_rrf(ranks: Sequence[int | None], weights: Sequence[float], k: int) -> float:
    """(Σ_leg w_leg / (k + rank_leg)) / (1 / (k + 1)), a leg without the candidate adding 0.

    Divided by the best possible score (rank 1 in every leg, weights summing to 1), so it lies in [0, 1].
    """
    total = sum(w / (k + r) for r, w in zip(ranks, weights, strict=True) if r is not None)
    return total * (k + 1)


def relevance_weights(profile: FusionProfile) -> tuple[float, float]:
    """(w_sem, w_text) / (w_sem + w_text): the profile without its recency part, rescaled so the two sum
    to 1. A profile that weighs recency alone counts both equally."""
    total = profile.w_sem + profile.w_text
    return (profile.w_sem / total, profile.w_text / total) if total > 0 else (0.5, 0.5)


def normalise_max(scores: Sequence[float]) -> list[float]:
    """score / max(scores), so the best is 1; all zeros (or empty) stay zeros."""
    top = max(scores, default=0.0)
    return [s / top if top > 0 else 0.0 for s in scores]


@dataclass(frozen=True)
class Candidate:
    """One memory found by either leg, before fusion."""

    memory: MemoryRow
    cosine: float              # cosine similarity to the query expanded by its best text matches, in [-1, 1]
    text_raw: float            # the text leg's raw score (0 when the text leg did not find it)
    vector_rank: int | None    # 1-based rank in the vector leg (by `cosine`)
    text_rank: int | None
    query_cosine: float | None = None  # cosine similarity to the query alone; None: not expanded, `cosine`
    speaker_named: bool = False  # the query names the memory's speaker (`core.retrieval.speakers`)


def fuse(candidates: Sequence[Candidate], profile: FusionProfile, now: datetime, *,
         speaker_and_chain: bool = True, text_ideal: float | None = None) -> Iterator[ScoredMemory]:
    """Score every candidate with the profile and yield them best first.

    semantic = clip01(cosine); text = text_raw / max(text_raw); recency = exp(-age / tau);
    similarity = clip01(query_cosine); speaker = 1 when the query names the memory's speaker, else 0;
    coverage = min(1, text_raw / text_ideal), the share of an ideal match's score (the query's every word
    once, `core.index.text.text_leg`), or `text` when no ideal is given;
    relevance = r_sem * semantic + r_text * coverage with the profile's `relevance_weights`, whatever its
    method, + SPEAKER_WEIGHT * speaker;
    own = the profile's fusion (linear or rrf) + SPEAKER_WEIGHT * speaker;
    chain = the best `own` among the candidates of the memory's chain (its own when it has no chain);
    combined = (own + CHAIN_WEIGHT * chain) / (1 + CHAIN_WEIGHT).
    Without `speaker_and_chain` (one leg searched alone, to show what that leg finds) speaker and chain
    play no part: combined = own, and relevance is the legs' alone.
    Ties are broken by the newer memory, then by id, so the order is deterministic. Every score is
    computed and sorted at once, and each `ScoredMemory` made as it is asked for: a search stops after its
    top k (LoCoMo's top 25 of ~80 candidates: ranking 0.91 -> 0.66 ms a search).

    `text` ranks: relative to the pool's best, it spreads every query's matches over [0, 1] (measured
    against the ideal instead, LoCoMo dev R@5 fell 0.706 -> 0.667). `coverage` judges: relevance is read
    against a fixed floor, and the best match of a pool is not a good one for being the best: "my bike
    lock code is 8826" matched one stored memory by "code" alone, whose `text` was 1.
    """
    texts = normalise_max([c.text_raw for c in candidates])
    coverage = [clip01(c.text_raw / text_ideal) for c in candidates] if text_ideal else texts
    ages = [(now - c.memory.created_at).total_seconds() for c in candidates]
    age_rank = _ranks_by([-a for a in ages])
    r_sem, r_text = relevance_weights(profile)
    parts = []
    for i, c in enumerate(candidates):
        semantic = clip01(c.cosine)
        recency = recency_score(ages[i], profile.tau_s)
        named = speaker_and_chain and c.speaker_named
        if profile.method == "linear":
            own = fuse_linear(semantic, texts[i], recency, profile)
        else:
            own = fuse_rrf((c.vector_rank, c.text_rank, age_rank[i]),
                           (profile.w_sem, profile.w_text, profile.w_rec), profile.rrf_k)
        relevance = r_sem * semantic + r_text * coverage[i]
        speaker = SPEAKER_WEIGHT * named
        parts.append((semantic, recency, own + speaker, relevance + speaker, float(named)))
    chains = (_chain_bests([c.memory.chain_id for c in candidates], [p[2] for p in parts])
              if speaker_and_chain else [0.0] * len(candidates))
    combined = [(own + CHAIN_WEIGHT * chain) / (1 + CHAIN_WEIGHT) if speaker_and_chain else own
                for (_, _, own, _, _), chain in zip(parts, chains, strict=True)]
    # Best first; ties to the newer memory (the smaller age), then by id.
    order = sorted(range(len(candidates)), key=lambda i: (-combined[i], ages[i], candidates[i].memory.id))
    for i in order:
        c, (semantic, recency, _, relevance, speaker) = candidates[i], parts[i]
        yield ScoredMemory(memory=c.memory, score=ScoreParts(
            semantic=semantic, text=texts[i], coverage=coverage[i], recency=recency, combined=combined[i],
            similarity=clip01(c.cosine if c.query_cosine is None else c.query_cosine), relevance=relevance,
            speaker=speaker, chain=chains[i], vector_rank=c.vector_rank, text_rank=c.text_rank))


def _chain_bests(chains: Sequence[str | None], owns: Sequence[float]) -> list[float]:
    """Each candidate's chain score: the best own score among the candidates of its chain (its own when
    it has no chain)."""
    best: dict[str, float] = {}
    for chain, own in zip(chains, owns, strict=True):
        if chain is not None:
            best[chain] = max(best.get(chain, own), own)
    return [own if chain is None else best[chain] for chain, own in zip(chains, owns, strict=True)]


def _ranks_by(values: Sequence[float]) -> list[int]:
    """1-based rank of each value, highest first."""
    order = sorted(range(len(values)), key=lambda i: -values[i])
    ranks = [0] * len(values)
    for rank, i in enumerate(order, start=1):
        ranks[i] = rank
    return ranks
