"""Whether the optimiser's best profile beats the current one beyond noise, and the sentence that says so.

A profile's figure is a mean over a few queries, and the optimiser takes the best of over a thousand
profiles, so on a small set some profile always looks better by luck (the issue's 6-query set proposed
semantic 0 / text 0.05 / recency 0.95 for a tie). The rule: the best profile is recommended only when
the 95% paired bootstrap interval of its mean per-query difference from the current profile lies above 0
(the queries resampled with replacement 10,000 times, seed 0, percentile interval). The best profile was
picked on these same queries, which flatters it, so the rule is a floor on the doubt, not a guarantee: on
a handful of queries expect no recommendation, and label more queries to get one.
"""

from __future__ import annotations

import numpy as np
from pydantic import BaseModel

from core.models import FusionProfile
from core.retrieval.profile_text import describe_profile, named_profile

RESAMPLES = 10_000
CONFIDENCE = 0.95


class Spread(BaseModel):
    """The per-query differences proposed − current on the optimised metric."""

    queries: int
    wins: int     # queries where the proposed profile scores higher
    ties: int
    losses: int
    mean: float   # mean difference (= the difference of the two means)
    low: float    # the 95% paired bootstrap interval of `mean`
    high: float

    @property
    def reliable(self) -> bool:
        """The interval lies above 0: better beyond noise."""
        return self.low > 0


def paired_spread(proposed: np.ndarray, current: np.ndarray, *, resamples: int = RESAMPLES,
                  seed: int = 0) -> Spread:
    """Wins, ties, losses and the percentile bootstrap interval of the mean of `proposed - current`.

    Resampled 1,000 at a time, so 1,000 queries take 8 MB, not 80."""
    diff = np.asarray(proposed, dtype=float) - np.asarray(current, dtype=float)
    n = len(diff)
    if n == 0:
        return Spread(queries=0, wins=0, ties=0, losses=0, mean=0.0, low=0.0, high=0.0)
    rng = np.random.default_rng(seed)
    means = np.concatenate([diff[rng.integers(0, n, size=(min(1000, resamples - done), n))].mean(axis=1)
                            for done in range(0, resamples, 1000)])
    tail = (1 - CONFIDENCE) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return Spread(queries=n, wins=int((diff > 0).sum()), ties=int((diff == 0).sum()),
                  losses=int((diff < 0).sum()), mean=float(diff.mean()), low=float(low), high=float(high))


def verdict(spread: Spread, metric: str, best: FusionProfile, best_value: float, current: FusionProfile,
            current_value: float, category: str | None = None) -> str:
    """One plain sentence: what is recommended and why, or that nothing is, on how many queries. Both
    profiles are spelt out (`describe_profile`: weights, method, recency or rrf k), so the difference between
    them shows."""
    n = spread.queries
    where = f"these {n:,} {'query' if n == 1 else 'queries'}" + (f" of category {category}" if category else "")
    counts = (f"better on {spread.wins}, equal on {spread.ties}, worse on {spread.losses} "
              f"{'query' if n == 1 else 'queries'}")
    interval = f"95% interval of the mean difference {spread.low:+.3f} to {spread.high:+.3f}"
    if spread.reliable:
        return (f"Recommended: {describe_profile(best)} is better than {named_profile(current)} on {where}: "
                f"{metric} {best_value:.3f} against {current_value:.3f} ({counts}; {interval}, above 0).")
    if best_value <= current_value:
        return (f"No profile is reliably better than {current.name} on {where}: none scores higher on "
                f"{metric} than its {current_value:.3f}. Keep {current.name}.")
    return (f"No profile is reliably better than {current.name} on {where}. The best one found "
            f"({describe_profile(best)}) scores {metric} {best_value:.3f} against {current_value:.3f} for "
            f"{named_profile(current)}: {counts}; {interval}, not above 0. Keep {current.name}, or label more "
            "queries.")
