"""Score fusion for hybrid retrieval: pure functions, the formula in each docstring."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np

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
# What the memories handed beside the best match need, as a share of the relevance floor. The floor decides
# whether any memory matches (abstention); an answer often shares fewer of the question's words than its
# neighbours ("What blood pressure medication am I on?" and "I take 10mg lisinopril every morning.", none),
# so once the best passes, the rest of the top k are held to a lower bar. Over LoCoMo dev, 410 labelled
# notes (tests/data/notes_labelled) and 716 package descriptions, no answering memory of a passing top 10
# was under 0.18, and 121 of the 2,297 memories under 0.33 were under 0.165, none an answer. The notes'
# handed recall@10 went 0.807 (each memory held to the floor) -> 0.886, as with no second bar, with 7.3
# memories handed instead of 9.3 (benchmarks/README.md, "Saying nothing relevant").
OTHERS_SHARE = 0.5
# What the memories handed beside the best match also need, as a share of the best's relevance: a memory
# sharing one stray word with the question reads 0.2-0.3 whatever the best reads, so beside a strong answer
# it is padding ("When is my Lisbon trip?": the trip at 0.82, "Ana is vegetarian" at 0.22, a Paris museum at
# 0.26), beside a weak one (0.4) it may be the answer. Set on the labelled notes and LoCoMo conv-26/30/41/42,
# confirmed on tests/data/work_notes_labelled (308 notes of an engineer's work and agent steps, 55
# questions), conv-43/44/47 and 716 package descriptions: no answer that half the floor alone handed was
# lost on any set, and the non-answers handed per question at k 10 went 6.32 -> 4.98 (notes), 6.13 -> 6.02
# (work notes, whose best matches are weak), 9.09 -> 8.59 (packages); handed precision@10 0.139 -> 0.170
# and 0.113 -> 0.115. The tuning sets allowed up to 0.39, but their lowest answer read 0.394 of its best
# ("I take 10mg lisinopril every morning.") and the confirming sets' 0.392: 0.35 leaves room. A semantic
# part of at least 0.25 instead, tuned on the same sets, lost an answer of the work notes ("I use Neovim
# with gopls…", semantic 0.240) (benchmarks/README.md, "Saying nothing relevant", 2026-12-06).
BEST_SHARE = 0.35
# When the best match states the attribute the question names of whom it asks it (its `stated`: "I moved to
# Porto…" for "Where do I live?", "I drive a Tesla." for "What car do I drive?"), the others need the floor itself: the answer the lower bars wait for is
# there, and beside it half the floor handed memories sharing the attribute's word of someone else, lifted by
# the feedback that word brought ("Dana moved to billing…" 0.27, "Interviews moved to Wednesdays." 0.22). On
# LoCoMo dev, the notes, the work notes and the multilingual notes no answer was lost; strays@10 of the notes
# 5.05 -> 4.91 and of the work notes 6.15 -> 6.09, LoCoMo's the same (its best never states one of whom it
# is asked) (benchmarks/README.md, "Saying nothing relevant", 2026-12-07).


# What a memory of the time a query names gains among its best BOOSTED_AMONG, in every hybrid search that sets no
# time window (`core.retrieval.hybrid.hybrid_search`, `SearchRequest.time_boost`; a chat turn without a time hint):
# the query's own time ("What did I do last weekend?") is read as a boost, never a restriction. LoCoMo dev's top
# 25 (pools of 50) re-sorted so, 163 of its 1,033 questions naming a time the parser reads: 0 / 0.05 / 0.1 /
# 0.2 gave R@5 0.7068 / 0.7117 / 0.7120 / 0.7115 and R@10 0.7907 / 0.7941 / 0.7968 / 0.7981 (those 163:
# R@5 0.771 / 0.802 / 0.804 / 0.801); on a year of daily use (15 questions naming their time), the top 5 said
# in the time meant 19 / 24 / 28 / 33 of 75, an answer among them 4 / 5 / 6 / 6 of 15 (benchmarks/README.md).
TIME_BOOST = 0.1
BOOSTED_AMONG = 25  # the best memories the time a query names re-sorts, as measured


def unit(x: np.ndarray) -> np.ndarray:
    """Each value clipped to [0, 1]; NaN becomes 0."""
    return np.where(np.isnan(x), 0.0, np.clip(x, 0.0, 1.0))


def recency(age_s: np.ndarray, tau_s: float) -> np.ndarray:
    """exp(-age_s / tau_s); an age in the future counts as 0 s old."""
    return np.exp(-np.maximum(age_s, 0.0) / tau_s)


def own_scores(method: str, w_sem: float, w_text: float, w_rec: float, tau_s: float, rrf_k: int, *,
               semantic: np.ndarray, text: np.ndarray, age_s: np.ndarray, vector_rank: np.ndarray,
               text_rank: np.ndarray, age_rank: np.ndarray, speaker: np.ndarray) -> np.ndarray:
    """Each candidate's own score, arrays of any shape (the ranking's one pool, the optimiser's every pool):

    linear: w_sem * semantic + w_text * text + w_rec * recency(age_s)
    rrf:    (Σ_leg w_leg / (rrf_k + rank_leg)) * (rrf_k + 1), over the vector leg, the text leg and age
            (rank 1 the newest); a rank of 0 (the leg did not find it) adds 0. Divided by the best
            possible score (rank 1 everywhere, weights summing to 1), so it lies in [0, 1].
    + SPEAKER_WEIGHT * speaker (1 when the query names the memory's speaker).
    """
    if method == "linear":
        score = w_sem * semantic + w_text * text + w_rec * recency(age_s, tau_s)
    else:
        k = float(rrf_k)
        vec = np.where(vector_rank > 0, w_sem / (k + vector_rank), 0.0)
        txt = np.where(text_rank > 0, w_text / (k + text_rank), 0.0)
        score = (vec + txt + w_rec / (k + age_rank)) * (k + 1)
    return score + SPEAKER_WEIGHT * speaker


def chain_groups(chains: Sequence[str | None]) -> np.ndarray:
    """Chain group of each candidate: the position of the first candidate of its chain (its own without)."""
    first: dict[str, int] = {}
    return np.array([i if c is None else first.setdefault(c, i) for i, c in enumerate(chains)], dtype=np.int64)


def chain_scores(own: np.ndarray, chain: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(chain, combined) of each candidate along the last axis: chain = the best `own` in its chain group
    (`chain_groups`), combined = (own + CHAIN_WEIGHT * chain) / (1 + CHAIN_WEIGHT)."""
    best = np.full_like(own, -np.inf)
    np.maximum.at(best, (*np.indices(chain.shape, sparse=True)[:-1], chain), own)
    bests = np.take_along_axis(best, chain, axis=-1)
    return bests, (own + CHAIN_WEIGHT * bests) / (1 + CHAIN_WEIGHT)


def relevance_weights(profile: FusionProfile) -> tuple[float, float]:
    """(w_sem, w_text) / (w_sem + w_text): the profile without its recency part, rescaled so the two sum
    to 1. A profile that weighs recency alone counts both equally."""
    total = profile.w_sem + profile.w_text
    return (profile.w_sem / total, profile.w_text / total) if total > 0 else (0.5, 0.5)


@dataclass(slots=True)  # not frozen: a frozen dataclass sets each field through object.__setattr__, and a
class Candidate:         # search makes ~80 (1.5 against 0.6 us each)
    """One memory found by either leg, before fusion."""

    memory: MemoryRow
    cosine: float              # cosine similarity to the query expanded by its best text matches, in [-1, 1]
    text_raw: float            # the text leg's raw score (0 when the text leg did not find it)
    vector_rank: int | None    # 1-based rank in the vector leg (by `cosine`)
    text_rank: int | None
    query_cosine: float | None = None  # cosine similarity to the query alone; None: not expanded, `cosine`
    speaker_named: bool = False  # the query names the memory's speaker (`core.retrieval.speakers`)


def fusion_columns(candidates: Sequence[Candidate], now: datetime) -> dict[str, np.ndarray]:
    """What `own_scores` reads of each candidate, as arrays in the pool's order (`fuse` reads them for one
    pool, the optimiser for each of its pools):

    semantic = clip(cosine, 0, 1), NaN 0; text = text_raw / max(text_raw), all zeros when none scored;
    age_s = seconds since it was created (now - created_at); vector_rank, text_rank (0: that leg did not
    find it); age_rank (1 the newest, ties in the pool's order); speaker = 1 when the query names the
    memory's speaker.
    """
    n = len(candidates)

    def column(values: Iterable[float | bool | None]) -> np.ndarray:
        return np.fromiter(values, np.float64, n)

    raw = column(c.text_raw for c in candidates)
    top = raw.max(initial=0.0)
    ages = column((now - c.memory.created_at).total_seconds() for c in candidates)
    age_rank = np.empty(n)
    age_rank[np.argsort(ages, kind="stable")] = np.arange(1, n + 1)
    return {"semantic": unit(column(c.cosine for c in candidates)),
            "text": raw / top if top > 0 else np.zeros(n), "age_s": ages,
            "vector_rank": column(c.vector_rank or 0 for c in candidates),
            "text_rank": column(c.text_rank or 0 for c in candidates), "age_rank": age_rank,
            "speaker": column(c.speaker_named for c in candidates)}


def fuse(candidates: Sequence[Candidate], profile: FusionProfile, now: datetime, *,
         speaker_and_chain: bool = True, text_ideal: float | None = None,
         held: np.ndarray | None = None, stated: np.ndarray | None = None) -> Iterator[ScoredMemory]:
    """Score every candidate with the profile and yield them best first.

    semantic, text and speaker as `fusion_columns` reads them; recency = exp(-age / tau);
    similarity = clip(query_cosine, 0, 1); speaker = 1 when the query names the memory's speaker, else 0;
    coverage = min(1, text_raw / text_ideal + held), the share of an ideal match's score (the query's every
    word once, `core.index.text.text_leg`), or `text` + held when no ideal is given; held, per candidate
    (0 when not given), the share of the query's words a memory answers without holding them: the word
    naming an attribute, for a memory stating it in another way (`core.retrieval.attributes.AttributeAsk`);
    relevance = r_sem * semantic + r_text * coverage with the profile's `relevance_weights`, whatever its
    method, + SPEAKER_WEIGHT * speaker;
    own = the profile's fusion (linear or rrf) + SPEAKER_WEIGHT * speaker (`own_scores`);
    chain = the best `own` among the candidates of the memory's chain (its own when it has no chain);
    combined = (own + CHAIN_WEIGHT * chain) / (1 + CHAIN_WEIGHT) (`chain_scores`).
    The optimiser computes `own` and `combined` with the same two functions, over every pool at once.
    Without `speaker_and_chain` (one leg searched alone, to show what that leg finds) speaker and chain
    play no part: combined = own, and relevance is the legs' alone.
    Ties are broken by the newer memory, then by id, so the order is deterministic. Every score is
    computed and sorted at once, in numpy, and each `ScoredMemory` made as it is asked for: a search stops
    after its top k.

    `text` ranks: relative to the pool's best, it spreads every query's matches over [0, 1] (measured
    against the ideal instead, LoCoMo dev R@5 fell 0.706 -> 0.667). `coverage` judges: relevance is read
    against a fixed floor, and the best match of a pool is not a good one for being the best: "my bike
    lock code is 8826" matched one stored memory by "code" alone, whose `text` was 1.
    """
    n = len(candidates)
    if not n:
        return
    columns = fusion_columns(candidates, now)
    if not speaker_and_chain:
        columns["speaker"] = np.zeros(n)
    semantic, text, ages, speaker = columns["semantic"], columns["text"], columns["age_s"], columns["speaker"]
    raw = np.fromiter((c.text_raw for c in candidates), np.float64, n)
    held = np.zeros(n) if held is None else held
    stated = np.zeros(n, dtype=bool) if stated is None else stated
    coverage = unit((raw / text_ideal if text_ideal else text) + held)
    similarity = unit(np.fromiter((c.cosine if c.query_cosine is None else c.query_cosine for c in candidates),
                                  np.float64, n))
    own = own_scores(profile.method, profile.w_sem, profile.w_text, profile.w_rec, profile.tau_s, profile.rrf_k,
                     **columns)
    r_sem, r_text = relevance_weights(profile)
    relevance = r_sem * semantic + r_text * coverage + SPEAKER_WEIGHT * speaker
    if speaker_and_chain:
        chain, combined = chain_scores(own, chain_groups([c.memory.chain_id for c in candidates]))
    else:
        chain, combined = np.zeros(n), own
    # Best first; ties to the newer memory (the smaller age), then by id.
    order = np.lexsort((np.array([c.memory.id for c in candidates]), ages, -combined))
    rows = list(zip(*(a.tolist() for a in (semantic, text, coverage, recency(ages, profile.tau_s), combined,
                                            similarity, relevance, speaker, chain, held, stated)), strict=True))
    for i in order.tolist():
        c = candidates[i]
        sem, txt, cov, rec, comb, sim, rel, spk, chn, hld, sta = rows[i]
        yield ScoredMemory(memory=c.memory, score=ScoreParts(
            semantic=sem, text=txt, coverage=cov, recency=rec, combined=comb, similarity=sim, relevance=rel,
            speaker=spk, chain=chn, held=hld, stated=sta, vector_rank=c.vector_rank, text_rank=c.text_rank))


def time_boosted(combined: Sequence[float], inside: Sequence[bool], boost: float = TIME_BOOST) -> list[int]:
    """The order of a ranked list when the time a question names counts (positions, best first):

    score_i = combined_i + boost * inside_i   (inside_i: the memory's time lies in the question's time)

    ties kept in the list's order. Relevance, which the floor reads, is unchanged: a boost ranks, never hands."""
    return sorted(range(len(combined)), key=lambda i: -(combined[i] + boost * bool(inside[i])))


def best_states(relevance: Sequence[float], stating: Sequence[bool] | None) -> bool:
    """Whether the memory of the highest relevance states the attribute the question names, of whom it asks
    it (its `stating`, `ScoreParts.stated`; the first of equals)."""
    if not stating or not relevance:
        return False
    return bool(stating[max(range(len(relevance)), key=relevance.__getitem__)])


def others_bar(relevance: Sequence[float], floor: float, stating: Sequence[bool] | None = None) -> float:
    """What each memory of a turn's top k needs to be handed once the best reaches the floor:

    bar = floor                                                       when the best states the attribute
                                                                      asked (`best_states`, `stating`;
                                                                      another stating it keeps the bar
                                                                      below, `handed_by_floor`)
    bar = min(floor, max(OTHERS_SHARE * floor, BEST_SHARE * max_j relevance_j))   otherwise

    A memory reaching the floor always matches; below it, a memory needs half the floor (an answer often
    shares fewer of the question's words than its neighbours) and a share of what the best reads, so one
    stray word shared with the question does not ride along beside a strong answer. Beside a best match that
    states the attribute the question asks, of whom it asks it, the answer is there: the others need the
    floor."""
    if best_states(relevance, stating):
        return floor
    return min(floor, max(OTHERS_SHARE * floor, BEST_SHARE * max(relevance, default=0.0)))


def handed_by_floor(relevance: Sequence[float], floor: float, stating: Sequence[bool] | None = None) -> list[bool]:
    """Which memories of a turn's top k are handed to synthesis, from their relevance (and `stating`: whether
    each states the attribute the question asks, of whom it asks it; None: none does):

    handed_i = (max_j relevance_j >= floor) and (relevance_i >= others_bar(relevance, floor, stating)
                                                  or (stating_i and relevance_i >= others_bar(relevance, floor)))

    None when no memory reaches the floor (the turn says no memory matches); otherwise the best and every
    memory reaching `others_bar`; beside a best stating the attribute asked, another memory stating it too
    ("Who is my boss?": two notes naming my manager) keeps the bar of any other turn."""
    if not relevance or max(relevance) < floor:
        return [False] * len(relevance)
    bar, usual = others_bar(relevance, floor, stating), others_bar(relevance, floor)
    states = stating or [False] * len(relevance)
    return [r >= bar or (bool(st) and r >= usual) for r, st in zip(relevance, states, strict=True)]
