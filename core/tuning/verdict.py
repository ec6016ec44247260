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


TAU_UNITS = (("y", 365 * 86400), ("w", 7 * 86400), ("d", 86400), ("h", 3600), ("min", 60))


def tau_label(tau_s: float) -> str:
    """τ in the largest unit it is a whole number of, as the Tune page's τ choices read: 3600 -> "1 h",
    604800 -> "1 w", 30 days -> "30 d", 365 days -> "1 y"; else seconds ("12,345 s")."""
    for unit, size in TAU_UNITS:
        n = tau_s / size
        if n >= 1 and abs(n - round(n)) < 1e-9:
            return f"{round(n):,} {unit}"
    return f"{tau_s:,.0f} s" if float(tau_s).is_integer() else f"{tau_s:g} s"


def _method(profile: FusionProfile) -> str:
    """"linear, τ 1 w" or "rrf, k 60": the method with the one parameter it reads (a linear profile reads no
    rrf k, reciprocal-rank fusion no τ)."""
    return f"linear, τ {tau_label(profile.tau_s)}" if profile.method == "linear" else f"rrf, k {profile.rrf_k}"


def _weights(profile: FusionProfile) -> str:
    return f"semantic {profile.w_sem:.2f} / text {profile.w_text:.2f} / recency {profile.w_rec:.2f}"


def weights(profile: FusionProfile) -> str:
    """"semantic 0.60 / text 0.25 / recency 0.15 (linear, τ 1 d)": everything the profile fuses with, so two
    profiles that differ only in τ (or rrf k) do not read alike."""
    return f"{_weights(profile)} ({_method(profile)})"


def named(profile: FusionProfile) -> str:
    """"balanced-default (semantic 0.60 / text 0.25 / recency 0.15, linear, τ 1 d)"."""
    return f"{profile.name} ({_weights(profile)}, {_method(profile)})"


def verdict(spread: Spread, metric: str, best: FusionProfile, best_value: float, current: FusionProfile,
            current_value: float, category: str | None = None) -> str:
    """One plain sentence: what is recommended and why, or that nothing is, on how many queries. Both
    profiles are spelt out (weights, method, τ or rrf k), so the difference between them shows."""
    n = spread.queries
    where = f"these {n:,} {'query' if n == 1 else 'queries'}" + (f" of category {category}" if category else "")
    counts = (f"better on {spread.wins}, equal on {spread.ties}, worse on {spread.losses} "
              f"{'query' if n == 1 else 'queries'}")
    interval = f"95% interval of the mean difference {spread.low:+.3f} to {spread.high:+.3f}"
    if spread.reliable:
        return (f"Recommended: {weights(best)} is better than {named(current)} on {where}: {metric} "
                f"{best_value:.3f} against {current_value:.3f} ({counts}; {interval}, above 0).")
    if best_value <= current_value:
        return (f"No profile is reliably better than {current.name} on {where}: none scores higher on "
                f"{metric} than its {current_value:.3f}. Keep {current.name}.")
    return (f"No profile is reliably better than {current.name} on {where}. The best one found, "
            f"{weights(best)}, scores {metric} {best_value:.3f} against {current_value:.3f} for "
            f"{named(current)}: {counts}; {interval}, not above 0. Keep {current.name}, or label more queries.")
