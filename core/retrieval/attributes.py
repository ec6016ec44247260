"""What a query about an attribute adds: "Where do I live now?" also searches "moved", "relocated",
"address", and finds the statements that superseded what it finds, so "We just moved to Denver last week."
(no word in common with it) comes in place of "I live in Chicago …", the fact the move superseded.

The attributes are formation's (`core.formation.updates.ATTRIBUTES`: residence, employer, vehicle, goal,
diet, each named by a few ways of saying it; and `ROLES`: a manager, "boss", "supervisor", "I report to"),
read here for the word of each way that is one word (`naming`: "live", "moved", "relocated", … for a
residence; "work", "job", "hired", … for an employer; not "report": "the nightly report"). A query holding
one of those words asks about the attribute, and:
- searches the attribute's other words too, each standing for the query's word
  (`core.retrieval.relations.Related`): in the text leg at ATTRIBUTE_WEIGHT times that word's idf, so the
  query's own words lead; in the query's vector (static word vectors) at ATTRIBUTE_WEIGHT all together,
  shared among them, so five words of a residence do not outweigh the query's one. An inflection of a word
  the query holds adds nothing ("lives" for "live": the text leg reads one stem);
- ranks in its text leg the memory that superseded each of the leg's best matches, with that match's
  score (`core.retrieval.hybrid_sql`, `sp`): formation supersedes a fact with the statement of its change
  (`core.formation.supersede`), and the superseded fact is what a question about its attribute finds best
  ("I live in Chicago …"; "I drive a 2015 Honda Civic." for "What car do I drive now?", whose answer "We
  sold the Civic and bought a 2021 Subaru Outback." names no vehicle's word).
No statement is added: the table is the code's, and a query naming no attribute runs the statement it ran
before, byte for byte.

Measured (benchmarks/README.md, "A question about an attribute"). A two-year ChatGPT import formed as a
user forms it (34,622 memories; 15 questions with their answers): "Where do I live now?" retrieves "We
just moved to Denver last week." first (before: not among the search's first 10; its words alone lifted
it from beyond the text leg's 300th to its 28th, out of the pool: hundreds of travel tips say "lively" at
full weight); "What car do I drive now?" finds "We sold the Civic…" 6th in the search (before: not in the
first 10); "…now aiming for 1:55 instead of 2:05" 4th → 3rd. LoCoMo dev (41 of its 1,033 questions name an
attribute, none of its turns superseded) R@5 / R@10 0.7101 / 0.7907 → 0.7081 / 0.7902. The search costs
+0.08 ms p50 paired over LoCoMo's questions; for those naming an attribute +1.1 ms on the import and
+3.0 ms on LoCoMo (a machine at load 8): each added word's postings, and the leg's postings scored a
second time for the superseded.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache

from core.conversation.feedback import _APOSTROPHES
from core.formation.relations import asked, role_holder, role_of
from core.formation.subjects import SELF
from core.formation.updates import ATTRIBUTES, ROLES, stated_of
from core.index.text import INDEXED_CHARS
from core.retrieval.relations import Related
from core.retrieval.speakers import transcript_label

ATTRIBUTE_WEIGHT = 0.5

_WORD = re.compile(r"[^\W\d_]+")
# A way that is one word: the word, its endings ("work(?:s|ing)?"), and at most a preposition after it
# ("moved\s+(?:to|into|…)", "started\s+at"); not "rent\s+(?:a|an|…)\s+…flat", whose first word alone says
# much else ("if you rent a car").
_ONE_WORD = re.compile(r"([a-z]+)(?:\(\?:[a-z|]+\)\?)?(?:\\s\+(?:[a-z]+|\(\?:[a-z|]+\)))?")
_SUFFIX = re.compile(r"(?:ing|ed|es|s)$")


def _ways(pattern: str) -> list[str]:
    """The alternatives of `pattern` at its top level: the ways an attribute is named."""
    ways, depth, start = [], 0, 0
    for i, c in enumerate(pattern):
        if c == "\\":
            continue
        depth += (c == "(") - (c == ")")
        if c == "|" and depth == 0 and pattern[i - 1] != "\\":
            ways.append(pattern[start:i])
            start = i + 1
    return [*ways, pattern[start:]]


@cache
def naming() -> dict[str, tuple[str, ...]]:
    """attribute → the first word of each way formation names it (a way opening with a choice of words,
    "(?:am|'m|as) a … at", has none)."""
    return {attribute: tuple(dict.fromkeys(m.group(1) for way in _ways(pattern) if (m := _ONE_WORD.fullmatch(way))))
            for attribute, pattern in {**ATTRIBUTES, **ROLES}.items()}


def _stem(word: str) -> str:
    """A crude stem, enough to tell an inflection of a word: "lives", "living", "lived" → "liv"."""
    return _SUFFIX.sub("", word).removesuffix("e")


def attribute_words(query: str) -> list[Related]:
    """The other words of each attribute the query names, each standing for the query's word that names
    it (see the module); none when it names no attribute."""
    own = set(_WORD.findall(query.lower()))
    stems = {_stem(w) for w in own}
    added: dict[str, Related] = {}
    for words in naming().values():
        asked = [w for w in words if w in own]
        other = [w for w in {_stem(w): w for w in reversed(words)}.values() if _stem(w) not in stems][::-1]
        if not asked or not other:
            continue
        for word in other:
            added.setdefault(word, Related(word, asked[0], ATTRIBUTE_WEIGHT, ATTRIBUTE_WEIGHT / len(other)))
    return list(added.values())


@dataclass(frozen=True)
class AttributeAsk:
    """What relevance reads of a query naming an attribute: a memory that states the attribute in one of
    its other ways ("I moved to Lisbon last month." for "Where do I live?") answers the word the query
    names it by, as a memory holding that word would. The text leg scores the other ways at
    ATTRIBUTE_WEIGHT, which ranks the query's own words first but leaves such a memory's coverage of the
    query at half its word or less: in a new instance "live", found in no memory, counts the mean idf in
    the ideal match while "moved", in the only memory, weighs almost nothing, so the memory's coverage
    read 0.05 and the turn said no memory matches (relevance 0.31 against the floor 0.33).

    held = (1 - ATTRIBUTE_WEIGHT) / the query's searched words: the rest of the word's share of an ideal
    match (`core.index.text.text_leg`: each word of the query counts the mean idf), added to the coverage
    of each memory the text leg found that `states` an attribute the query names (`core.retrieval.fusion.fuse`).

    Only of whom the query asks it (`of`, `asked_of`): "Dana moved to billing." says nothing of where I
    live, "Dana Whitfield is my manager" nothing of Aisha's manager. Whom a memory states it of is read as
    formation reads whom a fact is about (`core.formation.updates.stated_of`, the clause of each way; a
    manager's holder by the possessive before it, `core.formation.relations.role_holder`)."""

    stating: re.Pattern[str]  # formation's ways of naming the attributes the query names, a group each
    asked: frozenset[str]  # the stems of the query's words that name them
    held: float
    # attribute → whom the query asks it of ({SELF}, names, relations; `asked_of`), None: anyone
    of: Mapping[str, frozenset[str] | None] = field(default_factory=dict)

    def holds_its_word(self, content: str) -> bool:
        """Whether a memory holds the query's word for an attribute it names ("live" of "Where do I live?")."""
        return not self.asked.isdisjoint(_stem(w) for w in _WORD.findall(content.lower()))

    def states(self, content: str, speaker: str | None = None, *, in_its_words: bool = False) -> bool:
        """Whether a memory states an attribute the query names without the query's word for it (one
        holding that word already covers it; with `in_its_words`, in any of its ways, the query's own
        included: "I drive a Tesla." for "What car do I drive?"), of whom the query asks it. `speaker`: who
        said the memory (`core.retrieval.speakers.speaker_of`: "user" for the user's; a transcript's
        "Caroline: I moved…" states Caroline's home)."""
        if self.stating.search(content) is None or not in_its_words and self.holds_its_word(content):
            return False
        if all(of is None for of in self.of.values()):
            return True
        label = transcript_label(content)
        speaker = speaker or label
        text = content.split(":", 1)[1] if label else content
        named = frozenset(_WORD.findall(content.lower())) | frozenset(_WORD.findall((speaker or "").lower()))
        return any(_is_of(_whom(m, clause, who), self.of.get(m.lastgroup or ""), speaker, named)
                   for clause, who in stated_of(text) for m in self.stating.finditer(clause))


def _whom(m: re.Match[str], clause: str, who: frozenset[str] | None) -> frozenset[str] | None:
    """Whom a way of naming an attribute, found in a clause about `who`, states it of: a manager named by a
    noun is the holder's ("Dana Whitfield is my manager": the user's; "Aisha's manager": Aisha's; "the
    product manager": unknown), any other way the clause's subject's ("I report to Dana", "Dana moved")."""
    if not _ROLE_GROUP.fullmatch(m.lastgroup or "") or not m.group().isalpha():
        return who
    holder = role_holder(clause, m.start())
    return frozenset({SELF}) if holder == "user" else frozenset({holder}) if holder else None


def _is_of(whom: frozenset[str] | None, of: frozenset[str] | None, speaker: str | None,
           named: frozenset[str]) -> bool:
    """Whether a way stated of `whom` (None: unknown) answers a query asking of `of` (None: anyone): the user
    ({SELF}) only in the user's own words ("I moved…", "we moved", "my new manager…"); a person when it is
    stated of them, or of someone unknown in a memory naming them ("Dana Whitfield moved to Denver": formation
    reads no subject there). "I" in a transcript's line is its speaker."""
    if of is None:
        return True
    if whom is not None:
        whom = frozenset(role_of(w) for w in whom)
        if SELF in whom and speaker and speaker.lower() != "user":
            whom = whom - {SELF} | frozenset(_WORD.findall(speaker.lower()))
    if of == {SELF}:
        return whom is not None and SELF in whom
    return bool(whom & of) if whom is not None else bool(of & named)


# Whom a question asks about: the user, by a first person as its subject ("Where do I live?") or, when it
# names no relation, as an owner ("What is my diet?", `asked_of`).
_I = re.compile(r"\b(?:i|we)\b", re.IGNORECASE)
_MY = re.compile(r"\b(?:my|our|mine|ours)\b", re.IGNORECASE)
_ROLE_GROUP = re.compile("|".join(map(re.escape, ROLES)))


def asked_of(query: str) -> frozenset[str] | None:
    """Whom a question asks an attribute of, as formation reads whom a fact is about: {SELF} when its
    subject is the user ("Where do I live?", "What car do we drive?"), the relations it names with a
    possessive ("Where does my sister live now?": {"sister"}, `core.formation.relations.asked`), {SELF}
    again for an owner with none ("What is my diet?"), its names ("Where does Dana live?": {"dana"}); None
    when it names no one."""
    query = query.translate(_APOSTROPHES)
    roles, names = asked(query)
    if _I.search(query):
        return frozenset({SELF})
    if roles:
        return frozenset(key.split("/", 1)[1] for key in roles)
    if _MY.search(query):
        return frozenset({SELF})
    return frozenset(names) or None


def _role_asked_of(query: str, words: tuple[str, ...]) -> frozenset[str] | None:
    """Whose role (a manager) a question asks: the holders of its words for it ("Who is my boss?": the
    user; "Who is Aisha's manager?": Aisha); None when no possessive says ("the product manager")."""
    query = query.translate(_APOSTROPHES)
    holders = {role_holder(query, m.start()) for m in re.finditer(rf"\b(?:{'|'.join(words)})\b", query,
                                                                  re.IGNORECASE)}
    if not holders or None in holders or "" in holders:
        return None
    return frozenset(SELF if h == "user" else h for h in holders if h)


@cache
def _stating(attributes: frozenset[str]) -> re.Pattern[str]:
    """The ways formation names any of `attributes`, as whole words, each attribute's a group of its name."""
    ways = {**ATTRIBUTES, **ROLES}
    return re.compile("|".join(rf"(?P<{a}>\b(?:{ways[a]})\b)" for a in sorted(attributes)), re.IGNORECASE)


def _named(query: str) -> dict[str, list[str]]:
    """attribute → the query's words that name it, for each attribute the query names."""
    own = set(_WORD.findall(query.lower()))
    named = {a: [w for w in words if w in own] for a, words in naming().items()}
    return {a: said for a, said in named.items() if said}


def asking(query: str, searched: int) -> AttributeAsk | None:
    """What relevance reads of the attributes the query names, its `searched` words counted
    (`attribute_ask`); None when it names none."""
    if not (named := _named(query)):
        return None
    person = asked_of(query)
    return AttributeAsk(_stating(frozenset(named)), frozenset(_stem(w) for said in named.values() for w in said),
                        (1 - ATTRIBUTE_WEIGHT) / max(1, searched),
                        {a: _role_asked_of(query, naming()[a]) if a in ROLES else person for a in named})


def attribute_ask(conn, query: str) -> AttributeAsk | None:
    """What relevance reads of the attributes the query names (`AttributeAsk`); None when it names none.
    The query's searched words are counted as the text leg reads them (its distinct lexemes), one short
    statement on the search's connection."""
    if not _named(query):
        return None
    searched = conn.execute("SELECT length(memory_query_words(left(%s, %s)))", (query, INDEXED_CHARS)).fetchone()[0]
    return asking(query, searched or 0)
