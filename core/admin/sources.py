"""Where in its message a forgotten observation was said, so forgetting it takes those words out too.

A fact the rules formed is the message's own words (`statement_in` finds them, case and spacing aside).
A fact an LLM formed is its restatement ("The user lives in Lisbon." for "I live near the tower in
Lisbon."): the formation keeps no pointer into the message, so the statements it was restated from are
found by their words (`restated_from`): the message's statements (`kinds.told_statements`, the units the
rules form facts from) each go to the fact of the message sharing the most content words with them
(crude stems, without function words or "user"), a tie to each fact in it. A statement two facts share
goes with either: forgetting one takes the sentence that told both.
"""

from __future__ import annotations

import re

from core.formation.kinds import sentences, told_statements
from core.formation.supersede import words

_WORD = re.compile(r"\w")
_SUFFIX = re.compile(r"(?:'s|ing|ed|es|s)$")
# How an LLM names the one who wrote the message: not a word the message shares with the fact.
_RESTATING = frozenset({"user", "user's", "users", "person", "they're"})


def statement_in(statement: str, text: str) -> str | None:
    """The words of `statement` as `text` says them (formation may change their case and spacing: "No, it
    was Lyon." told "It was Lyon."), or None when the text does not hold them."""
    found = statement.split()
    if not found:
        return None
    pattern = ((r"(?<!\w)" if _WORD.match(found[0][0]) else "") + r"\s+".join(map(re.escape, found))
               + (r"(?!\w)" if _WORD.match(found[-1][-1]) else ""))
    match = re.search(pattern, text, re.IGNORECASE)
    return match.group() if match else None


def stems(text: str) -> set[str]:
    """The content words of a text, each cut to a crude stem ("lives", "lived" → "liv")."""
    return {_SUFFIX.sub("", w).removesuffix("e") for w in words(text) if w not in _RESTATING}


def restated_from(fact: str, others: list[str], text: str) -> list[str]:
    """The statements of `text`, as it says them, that `fact` was restated from, given the other facts
    formed from the same message: each statement goes to the facts sharing the most content words with
    it. [] when no statement shares a word with `fact` (then nothing sound can be said)."""
    units = [s for s in told_statements(text) if _WORD.search(s)]
    own = stems(fact)
    if not any(own & stems(u) for u in units):  # a fact read from what the rules leave out (a question)
        units = [s for s in sentences(text) if _WORD.search(s)]
    theirs = [stems(o) for o in others]
    out = []
    for unit in units:
        said = stems(unit)
        shared = len(own & said)
        if shared and shared >= max((len(o & said) for o in theirs), default=0):
            found = statement_in(unit, text)
            if found is not None:
                out.append(found)
    if not out:  # every statement it shares words with tells another fact better: its best one still
        best = max(units, key=lambda u: len(own & stems(u)), default=None)
        if best is not None and own & stems(best) and (found := statement_in(best, text)) is not None:
            out.append(found)
    return out
