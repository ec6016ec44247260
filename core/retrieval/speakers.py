"""Who said a memory, and whether a query names them.

A memory written as a line of a transcript ("Caroline: I went to a pride parade…", as LoCoMo's loader and
importer and most meeting notes write them), or whose metadata names its `speaker` (observations do), is
said by that speaker. A question about a person ("What kind of art does Caroline make?") is answered
mostly by what that person said, yet the name is a poor word to search by: it opens half the turns of a
two-person conversation, and the neighbours' words indexed with each turn carry it into nearly all of
them, so BM25 weighs it at almost nothing. Fusion therefore adds a fixed part to a memory whose speaker
the query names (`core.retrieval.fusion.SPEAKER_WEIGHT`).

A name mentioned inside the text is not a speaker: boosting memories that merely mention a name the query
holds cost LoCoMo dev 0.06 R@5 (the other person talks about them), where boosting the speaker gained 0.05.
"""

from __future__ import annotations

import re
from functools import lru_cache

from core.models import MemoryRow

# "Name:" or "First Last:" at the start of the content, each word capitalised, at most three words.
_LABEL = re.compile(r"\s*([A-Z][\w'.-]*(?: [A-Z][\w'.-]*){0,2}):\s")
_WORD = re.compile(r"[a-z0-9]+")


def speaker_of(memory: MemoryRow) -> str | None:
    """The memory's speaker: its metadata's `speaker`, else the transcript label its content opens with."""
    named = (memory.metadata or {}).get("speaker")
    if isinstance(named, str) and named.strip():
        return named
    return transcript_label(memory.content)


def transcript_label(text: str) -> str | None:
    """The speaker's name a transcript line opens with ("Caroline: …" → "Caroline"), else None."""
    label = _LABEL.match(text)
    return label.group(1) if label else None


def query_words(query: str) -> frozenset[str]:
    """The query's words, lower-cased, as `names_speaker` compares them."""
    return frozenset(_WORD.findall(query.lower()))


def names_speaker(words: frozenset[str], speaker: str | None) -> bool:
    """Whether a query of these `query_words` names the speaker: any word of the speaker's name (a first
    name alone names "John Smith")."""
    return bool(speaker) and not words.isdisjoint(_name_words(speaker))


@lru_cache(maxsize=1024)
def _name_words(speaker: str) -> frozenset[str]:
    """A speaker's name as words; a conversation has few speakers, each asked about for every candidate."""
    return query_words(speaker)
