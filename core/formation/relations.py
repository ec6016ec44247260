"""Who is who: the relations a speaker states between a name and a role ("my daughter Inês").

A person is spoken of by name in one message and by role in the next: "My daughter Inês loves drawing.",
then "Inês turns 7 on October 10.", then "How old is my daughter?". The question and the answer share no
word, and the embedder puts them nowhere near each other. Once the user has said who their daughter is,
a memory assistant is expected to know it. So formation records, on the memory that states it, each
relation it reads: who holds it (the speaker: "user" in a chat, "Caroline" in a transcript line
"Caroline: …"), the role and the name. Retrieval then reads "my daughter" in a question as "Inês" too,
and "Inês" as "my daughter" (`asked`; `core.retrieval.relations`).

The relation lives in the stating memory's metadata (`relations`): deleting the memory, or the message it
was formed from, or its chain, deletes the relation with it, and forming the message again writes it again.

The rules read five shapes, a role being one of `ROLES` (people and pets), after at most two modifiers
("my best friend", "my childhood dog"), and a name one to three capitalised words, a title allowed
("Mr. Tanaka"):
  my daughter Inês / our son Tomás / my boss, Mr. Tanaka       (a plural role takes a list: my kids Ana and Leo)
  Inês, my daughter,  / meet Toby, my puppy.                   (the role phrase closes the apposition)
  Ana is my sister
  my manager is Miguel / my dog's name is Max
  I have a daughter named Inês
"The user's daughter" reads as "my daughter" (an LLM's facts say so). Not read: "my girlfriend, Toby and I"
(a list, not a name), "Hey Caroline, my kids loved it" (a greeting, not an apposition).
"""

from __future__ import annotations

import re

from core.conversation.feedback import _APOSTROPHES
from core.formation.subjects import PEOPLE
from core.retrieval.speakers import transcript_label

PETS = ("dog", "dogs", "cat", "cats", "puppy", "kitten", "pet", "pets")
ROLES = tuple(p for p in PEOPLE if p.isalpha()) + PETS
# One name for what is said several ways; plurals are read as their singular (`role_of`).
SAME_ROLE = {"mom": "mother", "mum": "mother", "mommy": "mother", "mummy": "mother", "dad": "father",
             "grandma": "grandmother", "granny": "grandmother", "grandpa": "grandfather", "kid": "child",
             "children": "child", "baby": "child", "coworker": "colleague", "neighbor": "neighbour",
             "fiancee": "fiance", "fiancé": "fiance", "fiancée": "fiance", "puppy": "dog", "kitten": "cat",
             "flatmate": "roommate"}
# A role a question asks about also stands for the roles under it: "my kids" are my son and my daughter.
UNDER = {"child": ("son", "daughter", "stepson", "stepdaughter"), "parent": ("mother", "father"),
         "sibling": ("brother", "sister"), "pet": ("dog", "cat")}

_ROLE = "|".join(sorted(ROLES, key=len, reverse=True))
_MOD = r"(?:[a-z]+\s+){0,2}?"  # "best", "little", "older", "childhood": lower-case words only
_MINE = r"(?:my|our|the\s+user's)"
_CAP = r"[A-ZÀ-ÖØ-Þ]"
# Capitalised words that open a clause or a question but name nobody ("This is my sister", "Hey Ana, …",
# "Did my son …?"), and days and months that follow a role ("with my friends Saturday").
_NOT_NAMES = frozenset(re.findall(r"\S+", """i he she it we you they this that these those there here what who
whom whose which where when why how my our your his her their the a an and but so also then today tomorrow
yesterday hey hi hello thanks meet yes no oh well is are was were do does did can could will would should has
have had tell show list give remind please monday tuesday wednesday thursday friday saturday sunday january
february march july september october november december"""))
_NAME_WORD = rf"{_CAP}[^\W\d_]+(?:-{_CAP}?[^\W\d_]+)?"
_NAME = rf"(?:(?:Mr|Mrs|Ms|Dr|Prof|Miss)\.?\s+)?{_NAME_WORD}(?:\s+{_NAME_WORD}){{0,2}}"
_NAMES = rf"{_NAME}(?:\s*,\s*{_NAME})*(?:,?\s+and\s+{_NAME})?"
_NAMED = r"(?:named|called)"

# The five shapes, as (pattern, its role's group, its name's group), read case-insensitively but for names.
_SHAPES = [
    # my daughter Inês / my boss, Mr. Tanaka / my kids Ana and Leo
    (rf"\b{_MINE}\s+{_MOD}({_ROLE})\b(,?)\s+(?-i:({_NAMES}))", 1, 3),
    # Inês, my daughter, … / meet Toby, my puppy.
    (rf"(?-i:({_NAME})),\s+{_MINE}\s+{_MOD}({_ROLE})(?=\s*(?:[,.!?;)]|$|\s[—–-]))", 2, 1),
    # Ana is my sister
    (rf"(?-i:({_NAME}))\s+(?:is|was|'s)\s+{_MINE}\s+{_MOD}({_ROLE})\b", 2, 1),
    # my manager is Miguel / my dog's name is Max
    (rf"\b{_MINE}\s+{_MOD}({_ROLE})(?:'s\s+name)?\s+(?:is|was)\s+(?:{_NAMED}\s+)?(?-i:({_NAME}))", 1, 2),
    # I have a daughter named Inês / we have two kids called Ana and Leo
    (rf"\b(?:i|we)\s+(?:have|had|'ve\s+got)\s+(?:a|an|one|two|three)\s+{_MOD}({_ROLE})\s+{_NAMED}"
     + rf"\s+(?-i:({_NAMES}))", 1, 2),
]
_PATTERNS = [(re.compile(p, re.IGNORECASE), r, n) for p, r, n in _SHAPES]
_SEPARATOR = re.compile(r"\s*,\s*(?:and\s+)?|\s+and\s+")
_LIST_GOES_ON = re.compile(r",?\s+and\b")
_TITLE = re.compile(r"\b(?:Mr|Mrs|Ms|Dr|Prof|Miss)\.?\s+")


def role_of(word: str) -> str:
    """A role word as relations are stored: lower-cased, singular, one name for each ("kids" → "child",
    "mum" → "mother")."""
    word = word.lower()
    if word not in SAME_ROLE and word.endswith("s") and word[:-1] in ROLES:
        word = word[:-1]
    return SAME_ROLE.get(word, word)


def _plural(word: str) -> bool:
    return word.lower() in ("children", "parents") or (word.lower().endswith("s") and word[:-1].lower() in ROLES)


def _name(found: str) -> str | None:
    """A name without its title and the capitalised words before it that name nobody ("Meet Ana" → "Ana",
    "Mr. Tanaka" → "Tanaka": "Mr" would find every Mr)."""
    words = _TITLE.sub("", found).split()
    while words and words[0].lower() in _NOT_NAMES:
        words.pop(0)
    return " ".join(words) or None


def stated_relations(text: str, speaker: str | None = None) -> list[dict[str, str]]:
    """The relations `text` states, each {"holder", "role", "name"}, in order, once each. The holder is
    its `speaker`, as `core.retrieval.speakers.speaker_of` reads a memory's: the one named (an observation's
    "user"), else the speaker of a transcript line ("Caroline: my daughter …"), else the user."""
    text = text.translate(_APOSTROPHES)
    holder = speaker or transcript_label(text) or "user"
    found: list[dict[str, str]] = []
    for pattern, role_group, names_group in _PATTERNS:
        for m in pattern.finditer(text):
            role, names = m.group(role_group), _SEPARATOR.split(m.group(names_group))
            if not _plural(role):
                # "my girlfriend, Toby and I": after a comma, a list is no name
                if names_group == 3 and m.group(2) and (len(names) > 1 or _LIST_GOES_ON.match(text, m.end())):
                    continue
                names = names[:1]
            for name in filter(None, map(_name, names)):
                relation = {"holder": holder, "role": role_of(role), "name": name}
                if relation not in found:
                    found.append(relation)
    return found


def with_relations(metadata: dict, text: str) -> dict:
    """`metadata` with the relations `text` states (`relations`), when it states any; its speaker, when
    it names one, holds them."""
    speaker = metadata.get("speaker")
    relations = stated_relations(text, speaker if isinstance(speaker, str) and speaker.strip() else None)
    return {**metadata, "relations": relations} if relations else metadata


# -- what a query asks ------------------------------------------------------------------------------

_ROLE_WORDS = frozenset(ROLES)
_WORD = re.compile(r"[a-z]+", re.IGNORECASE)
# Whose role it is: the words before it end with "my", "our", "Name's" or "his", "her", "their" (at most two
# modifiers between). A role with none ("a pet", "the kids") names nobody known.
_HOLDER = re.compile(rf"(?:\b(my|our|the\s+user's)|(?<![\w'])(?-i:({_CAP}[^\W\d_]+))(?:'s|')|\b(his|her|their))\s+"
                     rf"(?:[a-z]+\s+){{0,2}}$", re.IGNORECASE)
_QUERY_NAME = re.compile(rf"(?<![\w'])({_CAP}[^\W\d_]+)")


def asked(query: str) -> tuple[dict[str, str], dict[str, str]]:
    """What a query asks of the relations, each with the query's word it comes from: the roles it names
    with a possessive, as "holder/role" ("user/daughter" for "my daughter", "melanie/child" for "Melanie's
    kids"; "her", "his" and "their" are the last name before them, "Audrey … her dogs", or anyone's, "/dog";
    a role stands for those under it too, `UNDER`); and its capitalised words, lower-cased, which may be
    names."""
    query = query.translate(_APOSTROPHES)
    names = {w.lower(): w for w in _QUERY_NAME.findall(query) if w.lower() not in _NOT_NAMES}
    roles: dict[str, str] = {}
    for m in _WORD.finditer(query):
        if m.group().lower() not in _ROLE_WORDS:
            continue
        holder = role_holder(query, m.start())
        if holder is None:
            continue
        role = role_of(m.group())
        for r in (role, *UNDER.get(role, ())):
            roles.setdefault(f"{holder}/{r}", m.group())
    return roles, names


def role_holder(text: str, at: int) -> str | None:
    """Whose role the word at `at` of `text` (apostrophes made one, `_APOSTROPHES`) is, read from the words
    before it (`_HOLDER`): "user" after "my", "our", "the user's"; a name, lower-cased, after "Name's"; the
    last name before "his", "her", "their" ("" when none); None without a possessive ("the product manager",
    "cert-manager"). Retrieval reads with it whose manager a memory names (`core.retrieval.attributes`)."""
    whose = _HOLDER.search(text, 0, at)
    if whose is None:
        return None
    if whose.group(1):
        return "user"
    if whose.group(2):
        return whose.group(2).lower()
    before = [w for w in _QUERY_NAME.findall(text, 0, whose.start()) if w.lower() not in _NOT_NAMES]
    return before[-1].lower() if before else ""
