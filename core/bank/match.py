"""Case-insensitive matching of a bank's keywords and tags that does not depend on the database's locale.

Postgres's `lower()` follows the locale the cluster was made with: under the C (POSIX) locale, which an
embedded cluster gets where LANG is unset (many containers and services), it lowers ASCII only, so the
keyword "café" missed "CAFÉ" and the tag "σοφία" missed "ΣΟΦΊΑ". A keyword is instead sent as a regular
expression in which each letter is the set of its case forms, as Python knows them ("café" →
`[cC][aA][fF][éÉ]`), which Postgres matches code point by code point whatever its locale; a letter that folds
to two ("ß": "ss") matches those two too, and they it (`FOLDED_LETTERS`).
"""

from __future__ import annotations

from collections.abc import Iterable


def case_forms(ch: str) -> set[str]:
    """`ch` and its one-character lower, upper, title and folded forms, and theirs ('ς' → ς, Σ, σ)."""
    forms = {ch}
    for _ in range(2):
        forms |= {f for c in forms for f in (c.lower(), c.upper(), c.title(), c.casefold()) if len(f) == 1}
    return forms


def _atom(ch: str) -> str:
    forms = case_forms(ch)
    if len(forms) > 1:
        return "[" + "".join(sorted(forms)) + "]"
    # In a Postgres regular expression (ARE) a backslash before a non-alphanumeric character makes it literal.
    return "\\" + ch if ch.isascii() and not ch.isalnum() else ch


# The letters whose case folding is more than one letter, by what they fold to: "Straße" is "STRASSE" in capitals
# and in `str.casefold`, and a PDF's "ﬁle" is "file". A keyword's run of those letters also matches the one letter,
# and the letter its run, in any case ("Größe" finds "GRÖSSE", "strasse" finds "Straße").
FOLDED_LETTERS = {"ss": "ßẞ", "ff": "ﬀ", "fi": "ﬁ", "fl": "ﬂ", "ffi": "ﬃ", "ffl": "ﬄ", "st": "ﬅﬆ"}


def _unit(text: str, i: int) -> tuple[str, int]:
    """The pattern of the letter or folded run at `text[i]`, and how many characters of `text` it stands for."""
    for n in (3, 2, 1):
        run = text[i:i + n]
        if len(run) == n and (letters := FOLDED_LETTERS.get(run.casefold())):
            return f"(?:[{letters}]|{''.join(_atom(c) for c in run.casefold())})", n
    return _atom(text[i]), 1


def case_blind_pattern(text: str, *, whole: bool = False) -> str:
    """A Postgres regular expression matching `text` in any letter case; `whole`: the entire string only."""
    parts, i = [], 0
    while i < len(text):
        part, n = _unit(text, i)
        parts.append(part)
        i += n
    body = "".join(parts)
    return f"^{body}$" if whole else body


def case_blind_patterns(texts: Iterable[str], *, whole: bool = False) -> list[str]:
    return [case_blind_pattern(t, whole=whole) for t in texts]
