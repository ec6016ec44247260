"""Behaviour feedback for an answer, read from the user's next turn: whether the user continued,
corrected the answer or acknowledged it, how long they took, and the score that follows; an answer
with no follow-up within ABANDON_AFTER_S is marked abandoned.

Pure functions: the thought store applies them.
"""

from __future__ import annotations

import re

from pydantic import BaseModel

ABANDON_AFTER_S = 600.0

# Phrases matched at word boundaries, case-insensitively: "greater" is not "great".
ACKNOWLEDGEMENTS = ("thanks", "thank you", "thx", "got it", "great", "perfect", "that works", "awesome",
                    "helpful", "makes sense", "exactly", "nice", "cool")
CORRECTIONS = ("actually", "wrong", "incorrect", "that's not", "that is not", "thats not", "not true",
               "should be", "not right", "mistaken", "you misunderstood", "i meant")


def _phrase_pattern(phrases: tuple[str, ...]) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(p).replace(r"\ ", r"\s+") for p in phrases)
    return re.compile(rf"(?<!\w)(?:{alternatives})(?!\w)", re.IGNORECASE)


_ACK = _phrase_pattern(ACKNOWLEDGEMENTS)
_CORRECTION = _phrase_pattern(CORRECTIONS)
# "no," / "nope" opening a reply reads as a correction; "no" inside a sentence does not.
_LEADING_NO = re.compile(r"^\s*(?:no|nope)\b\s*[,.!:;-]", re.IGNORECASE)


def is_acknowledgement(text: str) -> bool:
    return bool(_ACK.search(text))


def is_correction(text: str) -> bool:
    return bool(_CORRECTION.search(text) or _LEADING_NO.search(text))


class Feedback(BaseModel):
    feedback_score: float
    acknowledged: bool
    corrected: bool


def base_score(time_to_next_s: float) -> float:
    """0.9 when the user came back within 30 s, 0.7 within 120 s, else 0.5."""
    if time_to_next_s < 30:
        return 0.9
    if time_to_next_s < 120:
        return 0.7
    return 0.5


def feedback_score(time_to_next_s: float, next_text: str) -> Feedback:
    """base_score(t) + 0.1 if acknowledged − 0.1 if corrected, floored at 0.3 after a correction,
    then clipped to [0, 1]."""
    acknowledged = is_acknowledgement(next_text)
    corrected = is_correction(next_text)
    score = base_score(time_to_next_s) + (0.1 if acknowledged else 0.0) - (0.1 if corrected else 0.0)
    if corrected:
        score = max(score, 0.3)
    return Feedback(feedback_score=round(min(1.0, max(0.0, score)), 4), acknowledged=acknowledged,
                    corrected=corrected)
