"""How a fusion profile reads to a person, written once for every front end (the Tune page, the Chat page's
"why", `workbench profiles` and `workbench eval`, the optimiser's verdict, the warning before a save).

    describe_profile  "semantic 0.60 / text 0.25 / recency 0.15 · linear, half-life 16.6 h (τ 1 d)"
                      "semantic 0.50 / text 0.50 / recency 0.00 · rrf, k 60" (reciprocal-rank fusion reads no τ)
    recency_label     "half-life 16.6 h (τ 1 d)": the age at which a memory's recency score halves,
                      half-life = τ · ln 2, in the unit it reads best in, then τ as the profile stores it
"""

from __future__ import annotations

import math

from core.models import FusionProfile

TAU_UNITS = (("y", 365 * 86400), ("w", 7 * 86400), ("d", 86400), ("h", 3600), ("min", 60))
# A duration is written in the largest unit it reaches past the bound: 89 s, 16.6 h, 4.85 d, 253 d, 6.93 y.
DURATION_UNITS = (("s", 1, 90), ("min", 60, 90 * 60), ("h", 3600, 48 * 3600), ("d", 86400, 365 * 86400))


def duration(seconds: float) -> str:
    """A length of time to three significant figures in the unit it reads best in: 2495 s -> "41.6 min",
    59,890 s -> "16.6 h", 7 days -> "7 d", 2 years -> "2 y"."""
    for unit, size, below in DURATION_UNITS:
        if seconds < below:
            return f"{seconds / size:.3g} {unit}"
    return f"{seconds / (365 * 86400):.3g} y"


def tau_label(tau_s: float) -> str:
    """τ in the largest unit it is a whole number of: 3600 -> "1 h", 604800 -> "1 w", 30 days -> "30 d",
    365 days -> "1 y"; else seconds ("12,345 s")."""
    for unit, size in TAU_UNITS:
        n = tau_s / size
        if n >= 1 and abs(n - round(n)) < 1e-9:
            return f"{round(n):,} {unit}"
    return f"{tau_s:,.0f} s" if float(tau_s).is_integer() or tau_s >= 10 else f"{tau_s:g} s"


def recency_label(tau_s: float) -> str:
    """"half-life 16.6 h (τ 1 d)": how fast a memory's recency score exp(−age / τ) fades, as every front end
    shows it."""
    return f"half-life {duration(tau_s * math.log(2))} (τ {tau_label(tau_s)})"


def describe_profile(profile: FusionProfile) -> str:
    """Everything a profile fuses with, so two profiles that differ only in τ (or rrf k) do not read alike:
    "semantic 0.60 / text 0.25 / recency 0.15 · linear, half-life 16.6 h (τ 1 d)", or "… · rrf, k 60"."""
    weights = f"semantic {profile.w_sem:.2f} / text {profile.w_text:.2f} / recency {profile.w_rec:.2f}"
    method = (f"linear, {recency_label(profile.tau_s)}" if profile.method == "linear"
              else f"rrf, k {profile.rrf_k}")
    return f"{weights} · {method}"


def named_profile(profile: FusionProfile) -> str:
    """"balanced-default (semantic 0.60 / text 0.25 / recency 0.15 · linear, half-life 16.6 h (τ 1 d))"."""
    return f"{profile.name} ({describe_profile(profile)})"
