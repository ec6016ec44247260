"""Whom a fact is about, as far as rules can tell: the user ("I", "we", "my car") or someone else ("Tomás
had his test", "he is", "my son", "Ana is my sister"). A correction supersedes a fact about the same
subject: "Tomás … is allergic to eggs, not to peanuts" is no correction of "I'm allergic to peanuts",
whatever words they share (`core.formation.supersede.choose`).

Each clause (sentences, and their parts after ";", ":" or a dash) is read from its first words:
- the user: "I …", "we …", "Jonas and I …", "my …" / "our …" (what is the user's: "my car", "our flat"),
  "the user …" (the LLM's facts);
- someone else: "he …", "she …", "his …", "her …", "my son …", "our daughter Inês …", "the user's wife …",
  a name the clause goes on to call "he" or "his" ("Tomás had his allergy test"), "Ana is my sister";
- nobody known ("It was Lyon.", "The race is on 25 May.", "Leo is turning seven."), and words about
  what was said ("I said Tuesday", "I meant …", "I think …"): these constrain nothing.
"""

from __future__ import annotations

import re

from core.conversation.feedback import _APOSTROPHES

SELF, OTHER = "self", "other"
PEOPLE = ("son", "sons", "daughter", "daughters", "kid", "kids", "child", "children", "baby", "wife",
          "husband", "partner", "boyfriend", "girlfriend", "fiance", "fiancee", "fiancé", "fiancée", "mother",
          "mom", "mum", "father", "dad", "parents", "parent", "brother", "brothers", "sister", "sisters",
          "sibling", "siblings", "grandmother", "grandfather", "grandma", "grandpa", "granny", "grandson",
          "granddaughter", "aunt", "uncle", "cousin", "niece", "nephew", "boss", "manager", "colleague",
          "coworker", "co-worker", "friend", "friends", "neighbour", "neighbor", "roommate", "flatmate",
          "teacher", "doctor", "stepson", "stepdaughter", "in-laws", "mother-in-law", "father-in-law")
# The same people in Portuguese and German, after "o meu", "a minha", "mein", "meine", "unsere" …: "Nein,
# meine Tochter ist allergisch gegen Eier." is about the daughter, not a correction of "Ich bin allergisch
# gegen Nüsse." (`OTHER_PEOPLE`; "ele", "ela", "er" first, too: not "sie", which is also "they" and "you").
OTHER_PEOPLE = ("filho", "filha", "filhos", "filhas", "mulher", "marido", "esposa", "namorado", "namorada", "mãe",
                "pai", "pais", "irmão", "irmã", "irmãos", "avó", "avô", "tio", "tia", "primo", "prima", "sobrinho",
                "sobrinha", "chefe", "colega", "amigo", "amiga", "vizinho", "vizinha", "sohn", "tochter", "kinder",
                "kind", "frau", "mann", "partner", "partnerin", "freund", "freundin", "mutter", "vater", "eltern",
                "bruder", "schwester", "oma", "opa", "onkel", "tante", "cousin", "cousine", "chef", "chefin",
                "kollege", "kollegin", "nachbar", "nachbarin")
_OTHER_MINE = r"(?:(?:o|a|os|as)\s+)?(?:meu|minha|meus|minhas|nosso|nossa|nossos|nossas)|mein|meine|meinem|meinen|meiner|unser|unsere|unserem|unseren"
_PERSON = "|".join(re.escape(p) for p in sorted(PEOPLE, key=len, reverse=True))
_OTHER_PERSON = "|".join(re.escape(p) for p in sorted(OTHER_PEOPLE, key=len, reverse=True))
_CLAUSES = re.compile(r"(?<=[.!?])\s+|[;:]\s+|\s+[—–-]+\s+")
_JOIN = re.compile(r"^\W*(?:(?:and|but|so|also|then|now|today|yesterday|actually)\b[\s,]*)*", re.IGNORECASE)
# Words about what was said, not the world: "I said Tuesday", "I meant the Orsay", "I'm pretty sure it was".
_SPEECH = re.compile(r"(?:i|we)\s+(?:said|say|meant|mean|told|think|thought|believe|guess|asked|wrote|"
                     r"was\s+talking|were\s+talking|mixed|got|misspoke)\b"
                     r"|i'm\s+(?:pretty\s+|quite\s+|fairly\s+)?sure\b"
                     r"|(?:it|that|this|there)(?:'s|\s+is|\s+was)\b", re.IGNORECASE)
_OTHERS = re.compile(rf"(?:(?:my|our|the\s+user's)\s+(?:[\w-]+\s+){{0,2}}?(?:{_PERSON})(?![\w-])"
                     rf"|(?:{_OTHER_MINE})\s+(?:[\w-]+\s+)?(?:{_OTHER_PERSON})(?![\w-])"
                     r"|(?:he|she|he's|she's|his|her|him|ele|ela)\b"
                     r"|er\s+(?!(?:i|we|you|um|uh|the|a|so|well)\b)(?=\w))", re.IGNORECASE)  # not "Er, I…" nor "Er I…"
_SELF = re.compile(r"(?:i|i'm|i've|i'd|i'll|we|we're|we've|we'd|we'll|me|myself|my|our|the\s+user|eu|n[óo]s|ich|wir)\b"
                   rf"|(?:{_OTHER_MINE})\s|[\w\s'-]{{1,40}}?\band\s+i\b", re.IGNORECASE)
# A name first: someone else when the clause calls them "he"/"his" or says who they are to the user.
_NAMED = re.compile(r"(?!(?:my|our|the|this|that|these|those|it|i|we|you|your|a|an|his|her|their|there|"
                    r"here|what|when|where|who|how|which)\b)"
                    r"(?-i:[A-ZÀ-Þ])[\w'-]*(?:\s+(?-i:[A-ZÀ-Þ])[\w'-]*)?\s+"
                    rf"(?:.*\b(?:his|her|he|she|him)\b"
                    rf"|(?:is|was)\s+(?:my|our)\s+(?:{_PERSON})\b)", re.IGNORECASE)


def clause_subject(clause: str) -> str | None:
    """SELF, OTHER or None for one clause (see the module)."""
    clause = clause.translate(_APOSTROPHES).strip()
    clause = clause[_JOIN.match(clause).end():]
    if not clause or _SPEECH.match(clause):
        return None
    if _OTHERS.match(clause) or _NAMED.match(clause):
        return OTHER
    if _SELF.match(clause):
        return SELF
    return None


def subjects(text: str) -> set[str]:
    """Whom the text's clauses are about (SELF, OTHER; empty when none is known)."""
    return {s for clause in _CLAUSES.split(text) if (s := clause_subject(clause))}


def person(phrase: str) -> str | None:
    """Whom a contrasted phrase names: "not me" names the user, "not my brother" someone else."""
    phrase = phrase.translate(_APOSTROPHES).strip()
    if re.match(r"(?:me|us|i|we|myself|ourselves)\b", phrase, re.IGNORECASE):
        return SELF
    if re.match(rf"(?:him|her|them|he|she|(?:my|our)\s+(?:[\w-]+\s+)?(?:{_PERSON})\b)", phrase,
                re.IGNORECASE):
        return OTHER
    return None
