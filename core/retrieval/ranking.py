"""The one ranking of a candidate pool: the memories the profile retrieves → fusion → identical texts
once → similarity threshold → near-duplicates to the end → top k (`rank_pool`, which also says which
near-duplicates were left out).

Chat (`ui_remember`), MemoryScope's retrieve, the Tune page's comparison and `evaluate` call `rank`; the
optimiser runs the same passes vectorised over many queries (`core.tuning.optimise.kept_hits`) on the
same pools, with the same near-duplicate relation (`near_duplicate_matrix`), so what is tuned, compared
and evaluated is what chat retrieves. A search whose query names a time then re-sorts its best
BOOSTED_AMONG by that time (`boosted_by_time`, in `core.retrieval.hybrid.hybrid_search`, which chat,
MemoryScope's retrieve, the explorer and `evaluate` call); the comparison and the optimiser, which weigh one
profile against another on the same pools, rank without it: it adds the same to either.

Every pass keeps items in order and decides each one only from the items ranked above it, so the top k
for any k is a prefix of the top K: recall@5 read off a top-25 list is the recall of a top-5 search.
"""

from __future__ import annotations

import re
import string
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import lru_cache
from itertools import islice

import numpy as np
from pydantic import BaseModel

from core.models import FusionProfile, MemoryRow, ScoredMemory
from core.retrieval.attributes import AttributeAsk
from core.retrieval.fusion import BOOSTED_AMONG, TIME_BOOST, Candidate, fuse, handed_by_floor, time_boosted
from core.retrieval.speakers import speaker_of
from core.retrieval.timeparse import TimeHint, find_time_expression, range_of_parts

Key = tuple[str, str]  # (instance, id)
# Cosine at which a result gives way to a better-ranked one with the same `specifics`. Set on 72
# labelled pairs of chat messages (tests/data/near_duplicates.jsonl: 36 repeats, 36 distinct facts in
# the same words) with the offline embedder: precision 0.94, recall 0.83 (0.90: 0.86 / 0.83; 0.92:
# 0.93 / 0.78). Cosine alone cannot tell "...on March 3" from "...on March 5" (0.957): the embedder
# averages word vectors, so a swapped number or name barely moves it. On LoCoMo dev no threshold
# changes recall (its turns are seldom near-duplicates).
NEAR_DUPLICATE = 0.91
# Share of their words (`_words`) two near-duplicates have in common: |A ∩ B| / |A ∪ B| at least this. The
# embedder averages word vectors, so texts of a hundred words or more drawn from one vocabulary come out
# close whatever they say: among the candidates of 100 questions over 100,000 long memories
# (`benchmarks.long_memories`), 21,096 pairs had a cosine of 0.91 or more (0.96-0.98 typically), and with
# neither numbers nor names to tell them apart, 17 of a question's 35 candidates (on average) gave way as
# "near-duplicates" of documents they share no sentence with. Those pairs share at most 0.27 of their
# words (median 0.19); the labelled repeats at least 0.38 ("Tom prefers tea over coffee." / "Tom likes
# tea better than coffee."), so the labelled set is decided as before.
SHARED_WORDS = 1 / 3
_SEPARATORS = str.maketrans(dict.fromkeys(string.punctuation, " "))
GRID = 2.0 ** -20  # vectors are compared on this grid (`on_grid`)
_NUMBER = re.compile(r"\d+")
# A capitalised word, not a sentence's first: a capital not at the start, nor after a sentence's end,
# nor inside a word. The pattern opens with the capital and looks back from it: the regex engine then
# skips to the next capital with a character-class scan instead of trying each position (8 us against
# 18 us for 1,600 characters, with the lookbehinds first; long memories were ranked slower than found).
_NAME = re.compile(r"([A-Z](?<!^[A-Z])(?<![.!?:]\s[A-Z])(?<!\w[A-Z])[a-z]+)\b")
_NEGATION = re.compile(r"(?=n)(?:\b(?:not|never|no)\b|n't\b)", re.IGNORECASE)  # opens with a lookahead
# `_NEGATION` over lower-case ASCII text: it opens with a literal, which the regex engine finds with a
# fast string search instead of trying each position (4 us against 17 us for 1,600 characters).
_NEGATION_ASCII = re.compile(r"n(?:(?<=\bn)(?:ot|ever|o)\b|'t\b)")
_DIGITS = "0123456789"
# What an agent's step or a note is told apart by besides its numbers and names: a code span (`npm run
# build`), and a word holding a slash or backslash (a path, a URL: charts/api/values.yaml) or a dot between
# a word character and a small letter (a file name: pyproject.toml). Two steps with the same outcome but
# another command or file ("`docker build -t api .` in charts/api/values.yaml -> failed: merge conflict…" /
# "`npm run build` in …") have a cosine of 0.92-0.94 and share most of their words.
_CODE_SPAN = re.compile(r"`[^`\n]+`")
_DOTTED = re.compile(r"\.(?<=\w\.)(?=[a-z])")  # opens with the literal: found by a fast search (1 us / 1,600 chars)
_SLASH = re.compile(r"[/\\]")
_WORD_END = re.compile(r"\S*")
_WORD_EDGES = "([{<'\"`)]}>,;:!?."


def _class_table() -> bytes:
    """ASCII bytes as the classes `_NAME` reads: A a capital, a a small letter, 0 any other word character
    (digits, _), . an end of sentence or a colon, a space any character `\\s` matches, # the rest."""
    table = bytearray(b"#" * 256)
    for chars, cls in ((range(ord("A"), ord("Z") + 1), "A"), (range(ord("a"), ord("z") + 1), "a"),
                       (b"0123456789_", "0"), (b".!?:", "."), (b" \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f", " ")):
        for c in chars:
            table[c] = ord(cls)
    return bytes(table)


_CLASSES = _class_table()
# `_NAME` over those classes: a capital not first, not after an end of sentence and a space, not after a
# word character, then small letters up to a word's end. Same matches (tests/unit/test_specifics.py).
_NAME_CLASSES = re.compile(rb"A(?<!^A)(?<!\. A)(?<![Aa0]A)a+(?![Aa0])")


def share_words(a: str, b: str) -> bool:
    """Whether two texts have a `SHARED_WORDS` share of their words in common."""
    words_a, words_b = _words(a), _words(b)
    common = len(words_a & words_b)
    return common >= SHARED_WORDS * (len(words_a) + len(words_b) - common)


@lru_cache(maxsize=4096)
def _words(text: str) -> frozenset[str]:
    """The text's distinct words, case-folded, punctuation taken as a space ("sister's": sister, s)."""
    return frozenset(text.casefold().translate(_SEPARATORS).split())


def specifics(text: str) -> tuple[frozenset[str], frozenset[str], bool, frozenset[str]]:
    """What two texts must share to be near-duplicates: their numbers (dates written in figures among
    them), their names (capitalised words not opening a sentence: people, places, days, months), whether
    they are negated, and their identifiers (code spans, paths, file names: `_identifiers`). Two messages
    that differ in one of them state different facts however close their vectors, and two agent steps
    that ran another command or touched another file are different steps."""
    return _numbers(text), _names(text), _negated(text), _identifiers(text)


def same_specifics(a: str, b: str) -> bool:
    """`specifics(a) == specifics(b)`, each part read only when the ones before it agree."""
    return (_numbers(a) == _numbers(b) and _names(a) == _names(b) and _negated(a) == _negated(b)
            and _identifiers(a) == _identifiers(b))


# Cached: a candidate is compared with several kept ones, and comes back in later queries. Each part
# first asks, with string methods that run at memory speed, whether the text can hold a match at all:
# a regular expression visits every character (about 10 ns each), and long memories are compared with
# every kept one (their averaged vectors are all close). Same results as the patterns alone
# (tests/unit/test_specifics.py).
@lru_cache(maxsize=4096)
def _numbers(text: str) -> frozenset[str]:
    if text.isascii() and not any(d in text for d in _DIGITS):
        return frozenset()
    return frozenset(_NUMBER.findall(text))


@lru_cache(maxsize=4096)
def _names(text: str) -> frozenset[str]:
    text = text.strip()
    rest = text[1:]
    if rest.lower() == rest:  # no capital letter after the first character
        return frozenset()
    if not text.isascii():
        return frozenset(_NAME.findall(text))
    # ASCII text: each character as its class (`_CLASSES`), where `_NAME_CLASSES` opens with a literal, which
    # the regex engine finds by a fast search instead of testing each position against [A-Z] (a long memory
    # of 1,900 characters: 8 us against 19 us, most of the near-duplicate pass's reading of it).
    return frozenset(text[m.start():m.end()] for m in _NAME_CLASSES.finditer(text.encode().translate(_CLASSES)))


@lru_cache(maxsize=4096)
def _negated(text: str) -> bool:
    found = _NEGATION_ASCII.findall(text.lower()) if text.isascii() else _NEGATION.findall(text)
    return len(found) % 2 == 1


@lru_cache(maxsize=4096)
def _identifiers(text: str) -> frozenset[str]:
    """The text's code spans (with their backticks), and each word (a run of non-space characters, its
    brackets, quotes and closing punctuation trimmed) holding a slash or backslash, or a dot between a word
    character and a small letter. Prose seldom holds any: the slashes are looked for by `in` first."""
    found = set(_CODE_SPAN.findall(text)) if "`" in text else set()
    marks = [m.start() for m in _DOTTED.finditer(text)]
    if "/" in text or "\\" in text:
        marks += [m.start() for m in _SLASH.finditer(text)]
    for i in marks:
        start = i
        while start and not text[start - 1].isspace():
            start -= 1
        found.add(text[start:_WORD_END.match(text, i).end()].strip(_WORD_EDGES))
    found.discard("")
    return frozenset(found)


class LeftOut(BaseModel):
    """A memory left out of the results as a near-duplicate of a better-ranked one that was kept."""

    id: str
    content: str
    like_id: str
    like_content: str
    cosine: float

    def note(self) -> str:
        return (f"near-duplicate left out: {_quote(self.content)} (cosine {self.cosine:.3f} to the kept "
                f"{_quote(self.like_content)})")


def _quote(text: str, limit: int = 80) -> str:
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


@dataclass(frozen=True)
class CandidatePool:
    """Both legs' candidates of one query before fusion, in the database's order, with what the
    passes after fusion need: each candidate's stored vector of the active model (absent when it has
    none) and the texts of its immediate conversation neighbours. (instance, id) is unique in a pool."""

    candidates: Sequence[Candidate]
    vectors: Mapping[Key, np.ndarray] = field(default_factory=dict)
    adjacent: Mapping[Key, Collection[str]] = field(default_factory=dict)
    # The text leg's score of an ideal match (`core.index.text.text_leg`): what each candidate's text score
    # is measured against for its coverage of the query. None when the pool does not say.
    text_ideal: float | None = None
    # The attributes the query names, which a memory stating one covers (`core.retrieval.attributes`);
    # None when it names none.
    attribute: AttributeAsk | None = None

    def __len__(self) -> int:
        return len(self.candidates)


def key_of(c: Candidate | ScoredMemory) -> Key:
    return (c.memory.instance, c.memory.id)


def content_key(text: str) -> str:
    """The text compared for identity: case-folded, runs of whitespace collapsed to one space, trimmed."""
    return " ".join(text.casefold().split())


def content_groups(texts: Sequence[str]) -> np.ndarray:
    """Group id of each text: the index of the first text with the same `content_key`."""
    first: dict[str, int] = {}
    return np.array([first.setdefault(content_key(t), i) for i, t in enumerate(texts)], dtype=np.int64)


def edges(text: str) -> str:
    """The first and last three words, case-folded: texts with the same `content_key` have the same edges.
    They are read without reading the rest (1.7 us for a 1,600-character memory, where its key takes 22 us)."""
    return " ".join(text.split(maxsplit=3)[:3] + text.rsplit(maxsplit=3)[-3:]).casefold()


def distinct_contents(scored: Iterable[ScoredMemory]) -> Iterator[ScoredMemory]:
    """Identical texts (same `content_key`: ignoring case and spacing) are one memory: the best-scored copy
    stands for the rest, so a question asked in ten conversations does not fill the context ten times.
    Lazy: the near-duplicate pass stops once it has its top k, and the rest are never looked at. A text's
    key is made only when a text kept before has the same `edges`, which texts that differ seldom have:
    making every candidate's key took 0.6 ms of a search over long memories (~30 candidates)."""
    kept: dict[str, list[str]] = {}  # edges -> the kept texts with them
    for s in scored:
        text = s.memory.content
        same_edges = kept.setdefault(edges(text), [])
        if same_edges and content_key(text) in {content_key(t) for t in same_edges}:
            continue
        same_edges.append(text)
        yield s


def on_grid(vec: np.ndarray) -> np.ndarray:
    """The vector in float64 with each component rounded to a multiple of GRID = 2^-20.

    A cosine moves by ~1e-6 at most, but every product of two components is then a multiple of 2^-40
    held exactly, and so is every partial sum of a dot product of unit vectors (|sum| <= 1 needs 41 of
    float64's 53 bits): a cosine comes out bit for bit the same however it is computed, one candidate
    against the kept ones (`drop_near_duplicates`) or a whole pool at once (`near_duplicate_matrix`),
    whatever the BLAS kernel and its order of summation.
    """
    grid = np.asarray(vec, dtype=np.float64) * (1 / GRID)  # a power of two: exact, as dividing by GRID is
    np.rint(grid, out=grid)
    grid *= GRID
    return grid


def near_duplicates(pool: CandidatePool, a: Key, b: Key, content_a: str, content_b: str) -> bool:
    """Whether two memories whose vectors are close say the same thing: neither text one of the other's
    `adjacent` texts (next to it in a conversation), the same `specifics`, and a share of their words in
    common (`share_words`)."""
    return (content_a not in pool.adjacent.get(b, ()) and content_b not in pool.adjacent.get(a, ())
            and same_specifics(content_a, content_b) and share_words(content_a, content_b))


@dataclass(frozen=True)
class Ranking:
    """A ranked list and the near-duplicates that gave way and fell past its end."""

    results: list[ScoredMemory]
    left_out: list[LeftOut] = field(default_factory=list)


def drop_near_duplicates(ranked: Iterable[ScoredMemory], pool: CandidatePool,
                         threshold: float = NEAR_DUPLICATE, limit: int | None = None) -> Ranking:
    """Greedy, best first: a memory that is a near-duplicate of one already kept gives way, to the end
    of the list: the result is every kept memory in order, then the ones that gave way in order, cut at
    `limit`; those cut are `left_out`, each with the kept memory it repeats.

    Near-duplicates: cosine >= threshold (`on_grid` vectors: stored vectors have unit length) and
    `near_duplicates`. Rephrasings of one question ("Got it. What did I plant?" / "What did I plant?")
    would otherwise take every context slot and push out the memory that answers it; when there are
    fewer distinct memories than slots, they still fill the rest (two steps of an agent that did the
    same thing twice are both worth showing). Memories without a stored vector of the active model are
    kept. Two messages next to each other in a conversation are never each other's duplicate: a memory's vector includes the message before it (`embedding_text`), so a
    question and its answer have close vectors without saying the same thing.

    Whether a memory is kept depends only on the ones above it, so the result for any k is a prefix of
    the result for a larger k, and the pass can stop once `limit` are kept. Each memory's vector is
    compared with the kept ones in one product (a few small matrix-vector products per search, no
    thread hand-off in BLAS).
    """
    kept: list[ScoredMemory] = []  # kept memories with a vector, one row each in kept_vecs
    kept_vecs: np.ndarray | None = None
    out: list[ScoredMemory] = []
    gave_way: list[tuple[ScoredMemory, LeftOut]] = []
    for s in ranked:
        if limit is not None and len(out) >= limit:
            break
        key = key_of(s)
        vec = pool.vectors.get(key)
        if vec is not None:
            vec = on_grid(vec)
            if kept_vecs is not None:
                cosines = kept_vecs[: len(kept)] @ vec
                like = None
                if (close := cosines >= threshold).any():  # most candidates have no close kept memory
                    like = next((j for j in np.flatnonzero(close)
                                 if near_duplicates(pool, key, key_of(kept[j]), s.memory.content,
                                                    kept[j].memory.content)), None)
                if like is not None:
                    first = kept[like].memory
                    gave_way.append((s, LeftOut(id=s.memory.id, content=s.memory.content, like_id=first.id,
                                                like_content=first.content, cosine=float(cosines[like]))))
                    continue
        out.append(s)
        if vec is not None:
            if kept_vecs is None or len(kept) == len(kept_vecs):  # room for `limit` rows, or twice as many
                grown = np.empty((limit or max(16, 2 * len(kept)), len(vec)))
                if kept_vecs is not None:
                    grown[: len(kept)] = kept_vecs
                kept_vecs = grown
            kept_vecs[len(kept)] = vec
            kept.append(s)
    room = len(gave_way) if limit is None else max(0, limit - len(out))
    return Ranking(out + [m for m, _ in gave_way[:room]], [why for _, why in gave_way[room:]])


def near_duplicate_matrix(pool: CandidatePool, threshold: float = NEAR_DUPLICATE) -> np.ndarray:
    """close[i, j] (pool order, symmetric, False on the diagonal): candidates i and j are near-duplicates
    as `drop_near_duplicates` decides it, for all pairs at once (the optimiser's passes):

    close[i, j] = on_grid(v_i) · on_grid(v_j) >= threshold, both have a stored vector, the same
                  `specifics`, neither text is one of the other's `adjacent` texts, and they
                  `share_words`.
    The cosines come from one matrix product and are exactly those of `drop_near_duplicates` (`on_grid`).
    """
    n = len(pool.candidates)
    close = np.zeros((n, n), dtype=bool)
    keys = [key_of(c) for c in pool.candidates]
    with_vec = [i for i, k in enumerate(keys) if k in pool.vectors]
    if len(with_vec) < 2:
        return close
    vecs = np.stack([on_grid(pool.vectors[keys[i]]) for i in with_vec])
    sub = vecs @ vecs.T >= threshold
    np.fill_diagonal(sub, False)
    if sub.any():
        kinds: dict[tuple, int] = {}
        same = np.array([kinds.setdefault(specifics(pool.candidates[i].memory.content), len(kinds))
                         for i in with_vec])
        sub &= same[:, None] == same[None, :]
    if sub.any():
        # Texts as integers, so "j's text is one of i's neighbours" is one array comparison.
        ids: dict[str, int] = {}
        content = np.array([ids.setdefault(pool.candidates[i].memory.content, len(ids)) for i in with_vec])
        near = [sorted(pool.adjacent.get(keys[i], ())) for i in with_vec]
        width = max((len(a) for a in near), default=0)
        if width:
            adj = np.full((len(with_vec), width), -1)
            for row, texts in enumerate(near):
                adj[row, : len(texts)] = [ids.setdefault(t, len(ids)) for t in texts]
            next_to = (adj[:, :, None] == content[None, None, :]).any(axis=1)  # [i, j]: j's text by i
            sub &= ~(next_to | next_to.T)
    texts = [pool.candidates[i].memory.content for i in with_vec]
    for i, j in zip(*np.nonzero(np.triu(sub)), strict=True):  # the pairs left, each once
        if not share_words(texts[i], texts[j]):
            sub[i, j] = sub[j, i] = False
    close[np.ix_(with_vec, with_vec)] = sub
    return close


def retrievable(memory: MemoryRow, profile: FusionProfile) -> bool:
    """Whether `profile` retrieves a memory, by what formation recorded on it (`core.formation`): a user
    message whose facts became observations is retrieved through them; a message (or observation) of a
    kind outside `retrieve_kinds` (by default questions and acknowledgements) is not; a memory a
    correction superseded is not, unless `include_superseded`. Memories without these marks (imported
    memories, benchmark turns) always are, and every memory is when `retrieve_kinds` is None."""
    meta = memory.metadata
    if not meta or profile.retrieve_kinds is None:
        return True
    if meta.get("observations") or (meta.get("superseded_at") and not profile.include_superseded):
        return False
    kind = meta.get("message_kind")
    return kind is None or kind in profile.retrieve_kinds


def retrievable_pool(pool: CandidatePool, profile: FusionProfile) -> CandidatePool:
    """The pool without the candidates `profile` does not retrieve (`retrievable`)."""
    kept = [c for c in pool.candidates if retrievable(c.memory, profile)]
    return pool if len(kept) == len(pool.candidates) else replace(pool, candidates=kept)


def attribute_parts(candidates: Sequence[Candidate], ask: AttributeAsk | None
                    ) -> tuple[np.ndarray | None, np.ndarray | None]:
    """For each candidate, what its coverage of the query gains for stating an attribute the query names
    (`AttributeAsk.held` for a memory the text leg found that states it without the query's word for it, else
    0), and whether it states it in any of its ways ("I drive a Tesla." for "What car do I drive?" too), which
    the relevance floor reads (`ScoreParts.stated`); (None, None) when the query names none. Whom each memory
    states it of is read once (`AttributeAsk.states`)."""
    if ask is None:
        return None, None
    stated = np.array([ask.states(c.memory.content, speaker_of(c.memory), in_its_words=True) for c in candidates],
                      dtype=bool)
    held = np.array([ask.held if s and c.text_raw > 0 and not ask.holds_its_word(c.memory.content) else 0.0
                     for s, c in zip(stated, candidates, strict=True)])
    return held, stated


def rank_pool(pool: CandidatePool, profile: FusionProfile, now: datetime, *, top_k: int,
              similarity_threshold: float = 0.0, distinct: bool = True,
              near_duplicate: float = NEAR_DUPLICATE, speaker_and_chain: bool = True) -> Ranking:
    """The top `top_k` of the pool for `profile`, with the near-duplicates that fell out:

    the `retrievable` candidates → fuse (`core.retrieval.fusion.fuse`, best first; with the speaker and
    chain parts unless `speaker_and_chain` is False, as for one leg searched alone) → `distinct_contents`
    (when `distinct`) → similarity (the query's own cosine) >= similarity_threshold →
    `drop_near_duplicates` (when near_duplicate < 1: 1 keeps near-duplicates) → the first top_k.
    """
    kept = retrievable_pool(pool, profile).candidates
    held, stated = attribute_parts(kept, pool.attribute)
    scored = fuse(kept, profile, now, speaker_and_chain=speaker_and_chain, text_ideal=pool.text_ideal,
                  held=held, stated=stated)
    passed: Iterable[ScoredMemory] = distinct_contents(scored) if distinct else scored
    passed = (s for s in passed if s.score.similarity >= similarity_threshold)
    if near_duplicate < 1:
        return drop_near_duplicates(passed, pool, near_duplicate, limit=top_k)
    return Ranking(list(islice(passed, top_k)))


def rank(pool: CandidatePool, profile: FusionProfile, now: datetime, *, top_k: int,
         similarity_threshold: float = 0.0, distinct: bool = True,
         near_duplicate: float = NEAR_DUPLICATE) -> list[ScoredMemory]:
    """`rank_pool`'s results alone."""
    return rank_pool(pool, profile, now, top_k=top_k, similarity_threshold=similarity_threshold,
                     distinct=distinct, near_duplicate=near_duplicate).results


def floor_relevance(m: ScoredMemory, search_type: str = "hybrid") -> float:
    """The relevance the floor reads of a memory: the score without recency (`ScoreParts.relevance`), or the
    one leg's when only one ran (semantic, or the text's coverage). A memory is handed for what it says,
    never for being recent."""
    return {"vector": m.score.semantic, "text": m.score.coverage}.get(search_type, m.score.relevance)


def above_floor(items: list[ScoredMemory], floor: float, search_type: str = "hybrid"
                ) -> tuple[list[ScoredMemory], int]:
    """The memories of a turn's top k it hands to synthesis, and how many it leaves out: none when no
    memory's relevance (`floor_relevance`) reaches the floor, else every one reaching the floor, or half of
    it and `BEST_SHARE` of the best's relevance, unless the best states the attribute the question asks
    (`ScoreParts.stated`) (`core.retrieval.fusion.handed_by_floor`)."""
    handed = handed_by_floor([floor_relevance(m, search_type) for m in items], floor, [m.score.stated for m in items])
    kept = [m for m, h in zip(items, handed, strict=True) if h]
    return kept, len(items) - len(kept)


# What a question that asks for a time alone says besides its time: question words, pronouns, auxiliaries, and
# the verbs of doing, happening, talking and changing ("What did I do last weekend?", "What did we talk about in
# spring?", "What changed since the summer?", "Anything new this week?", "What have I been up to lately?").
# A word outside it ("Biscuit", "run", "cook", "live") asks about something, whose memories the floor reads.
_ONLY_TIME = frozenset({
    "a", "about", "after", "all", "am", "an", "and", "any", "anything", "anyone", "are", "around", "at", "be",
    "been", "before", "between", "by", "can", "could", "did", "do", "does", "doing", "done", "during", "else",
    "everything", "for", "from", "get", "got", "go", "going", "gone", "happen", "happened", "happening",
    "happens", "has", "have", "having", "how", "i", "i'd", "i've", "in", "is", "it", "it's", "its", "just",
    "lately", "me", "mine", "my", "new", "of", "on", "or", "our", "over", "recently", "remind", "say", "said",
    "since", "so", "some", "something", "still", "talk", "talked", "talking", "tell", "the", "then", "there",
    "this", "through", "throughout", "till", "to", "told", "until", "up", "us", "was", "we", "we've", "went",
    "were", "what", "what's", "whats", "when", "which", "while", "who", "will", "with", "would", "you", "your",
    "change", "changed", "changes", "discuss", "discussed", "mention", "mentioned", "summarise", "summarize",
    "summary", "recap"})
_QUESTION_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")


def asks_only_time(question: str) -> bool:
    """Whether a question asks for a time alone: once its time expression is taken out ("last weekend"), every
    word left is one a question about anything says (`_ONLY_TIME`). Such a question shares no word with what
    the time holds ("What did I do last weekend?" and "This Saturday I went hiking in the Mendip Hills"), so a
    turn restricted to that time hands the window's memories by time, not by the floor (`core.conversation.turn`).
    """
    text = question.lower().replace("’", "'")
    if (said := find_time_expression(text)) is not None:
        text = text.replace(said.lower(), " ")
    words = _QUESTION_WORD.findall(text)
    return bool(words) and all(w in _ONLY_TIME for w in words)


def in_time(memory: MemoryRow, start: datetime, end: datetime) -> bool:
    """Whether a memory's time overlaps [start, end): its event time's period (a day, a month, a year, to the
    hour), as a window on the event time reads it (`core.retrieval.hybrid_sql.WINDOW`), else its stored time."""
    e = memory.event_time
    parts = {name: value for name, value in (("year", e.year), ("month", e.month), ("day", e.day), ("hour", e.hour))
             if value >= (0 if name == "hour" else 1)}
    span = range_of_parts(parts, start)
    return span[0] < end and span[1] > start if span else start <= memory.created_at < end


def boosted_by_time(ranked: list[ScoredMemory], hint: TimeHint, among: int = BOOSTED_AMONG) -> list[ScoredMemory]:
    """A ranked list with the time a query names counting: its first `among` re-sorted
    (`core.retrieval.fusion.time_boosted`), the rest as they were, so the top k for any k is still a prefix of
    the top K. Scores are unchanged: `combined` stays the fusion's, `relevance` what the floor reads."""
    head = ranked[:among]
    order = time_boosted([m.score.combined for m in head], [in_time(m.memory, hint.start, hint.end) for m in head])
    return [head[i] for i in order] + ranked[among:]


def time_boost_note(hint: TimeHint, results: Sequence[ScoredMemory], asked: str = "query") -> str:
    """What the boost did, as a reason line says it: "the query's time 'last March' (2026-03-01 00:00 –
    2026-04-01 00:00) ranks the memories of then higher (+0.1 among the best 25): 3 of the 5 found are of
    then; none is left out for it" (`results`: the search's, before a floor or a budget hands some)."""
    of_then = sum(in_time(m.memory, hint.start, hint.end) for m in results)
    return (f"the {asked}'s time {hint.expression!r} ({hint.start:%Y-%m-%d %H:%M} – {hint.end:%Y-%m-%d %H:%M}) "
            f"ranks the memories of then higher (+{TIME_BOOST:g} among the best {BOOSTED_AMONG}): "
            f"{of_then} of the {len(results)} found {'is' if of_then == 1 else 'are'} of then; none is left out for it")
