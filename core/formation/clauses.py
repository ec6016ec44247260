"""A statement of two facts of the user's, each with its own subject, read as two: "I moved to Porto last month
and I work as a nurse at São João hospital." tells "I moved to Porto last month" and "I work as a nurse at São
João hospital.". Kept whole, its vector was the mean of both: "Where do I live?" read its relevance 0.326,
under the floor 0.33 (its semantic part 0.152), where "I moved to Lisbon last month." alone reads 0.455.

A sentence is cut before "and"/"but" (", and", "and now", German "und"/"aber") only where:
- the sentence opens with the user as its subject ("I", "I'm", "We", …; German "Ich", "Wir"), so "My wife and
  I moved to Porto.", "Ana and I …" keep their joined subject;
- the clause after it opens with its own first-person subject and a word that can follow one ("I at the beach"
  is an object: "a photo of Ana and I at the beach"); without one ("… and started working as a nurse") it
  shares the first clause's subject and stays with it;
- the clause before it holds no verb that takes a clause ("I think my wife and I will move", "I said I would
  call and I did", "Ich glaube, dass …") nor a subordinating word before a subject ("After I moved … and I
  started …, I was exhausted");
- the clause after it refers back to nothing ("and I love it", "and I walk him", "… und ich liebe es") and is
  no ellipsis ("and I never could", "and I always have", "but I quit in 2019").
Portuguese is not cut: it drops the subject ("Mudei-me para o Porto e trabalho como enfermeira"), and a verb
by its ending alone is no clean reading ("Gosto de pão e queijo": "queijo" ends as "trabalho" does).

A fact cut off before the join keeps the words the message says, without a full stop added, so a forget of it
finds them in the message (`core.admin.sources.statement_in`) and takes out those words alone. A clause a forget
took out ("I moved to Porto and [deleted]", "[deleted] and I work as a nurse.") is cut there as it was, so each
remaining clause keeps its place (`core.formation.observations._placed`).
"""

from __future__ import annotations

import re

from core.conversation.feedback import _APOSTROPHES
from core.models import DELETED

_FORGOTTEN = re.escape(DELETED)
# The user as a subject, in English and German.
_EN_SELF = r"(?:i|i'm|i've|i'd|i'll|we|we're|we've|we'd|we'll)"
_DE_SELF = r"(?:ich|wir)"
# A sentence that opens with the user as its subject (or with a clause a forget took out).
_OPENS_WITH_SELF = re.compile(rf"^\W*(?:(?:{_EN_SELF}|{_DE_SELF})(?![\w'-])|{_FORGOTTEN})", re.IGNORECASE)
# Where a second clause with its own subject begins: the join, then the subject and a word it can take (no
# preposition, article or conjunction: "Ana and I at the beach").
_NOT_AFTER_SUBJECT = (r"(?:and|or|but|at|in|on|of|to|for|from|with|by|the|a|an|und|oder|aber|mit|von|zu|im|am|"
                      r"auch|nicht)(?![\w'])")
_JOIN = re.compile(
    rf"\s*,?\s+(?:(?:and|but)\s+(?=(?:(?:now|then|also)\s+)?{_EN_SELF}\s+(?!{_NOT_AFTER_SUBJECT})\w)"
    rf"|(?:und|aber)\s+(?={_DE_SELF}\s+(?!{_NOT_AFTER_SUBJECT})\w)"
    rf"|(?:and|but|und|aber)\s+(?={_FORGOTTEN}))", re.IGNORECASE)
# What makes the clause before the join no clause of its own: a verb that takes a clause ("I think my wife and
# I …", "I said I would call and I did") or "that"/"dass" opening one, or a subordinating word before a
# subject ("After I moved to Porto and I started…").
_TAKES_A_CLAUSE = re.compile(
    r"\b(?:think|thought|believe|believed|guess|hope|hoped|know|knew|said|say|says|told|tell|wish|feel|felt|"
    r"heard|hear|suppose|assume|mean|meant|sure|realised|realized|noticed|promised|decided|that|whether|"
    r"glaube|glaubte|denke|dachte|hoffe|weiß|wusste|sagte|meine|finde|dass|ob)\b"
    r"|\b(?:if|when|whenever|because|since|while|although|though|unless|until|before|after|once|as|where|"
    r"weil|wenn|als|obwohl|nachdem|bevor|während|damit|falls)\s+(?:i|we|you|he|she|they|it|there|my|our|your|"
    r"his|her|their|ich|wir|du|er|sie|es|mein|meine|unser|unsere)\b", re.IGNORECASE)
# A clause that refers back to the one before: a pronoun or a place named there ("and I love it there").
_REFERS_BACK = re.compile(
    r"\b(?:it|its|it's|he|she|him|her|his|hers|they|them|their|theirs|there|"
    r"(?:this|that|these|those)(?!\s+(?:morning|afternoon|evening|night|week|weekend|month|year|time|day|spring|"
    r"summer|autumn|fall|winter)s?\b)|"
    r"es|er|sie|ihn|ihm|ihr|ihnen|dort|daran|darauf|damit|dafür|davon|dies|diese|dieser|dieses)\b", re.IGNORECASE)
# A clause that only repeats the verb before it ("and I never could", "and I always have", "and we do too"), or
# whose verb leaves out what it quit or started ("but I quit in 2019").
_AUXILIARY = (r"(?:do|does|did|don't|doesn't|didn't|can|can't|could|couldn't|will|won't|would|wouldn't|have|"
              r"haven't|has|hasn't|had|hadn't|am|was|wasn't|were|weren't|should|shouldn't|must|not|never|always|"
              r"still|also|really|just|too|either|as\s+well|definitely|certainly|sometimes|often)")
_ELLIPSIS = re.compile(
    rf"^\W*(?:now\s+|then\s+|also\s+)?{_EN_SELF}(?:(?:\s+|\s*,\s*){_AUXILIARY})*\W*$"
    rf"|^\W*{_EN_SELF}\s+(?:(?:never|also|finally|just|then)\s+)?(?:quit|stopped|started|gave\s+up|tried|finished)"
    r"(?=\s+(?:in|on|at|last|this|yesterday|today|when|after|before|years?|months?|weeks?|\d)\b|\W*$)"
    rf"|^\W*{_DE_SELF}(?:\s+(?:auch|nicht|nie|schon|immer))*\W*$", re.IGNORECASE)


def clauses(statement: str) -> list[str]:
    """The facts a statement tells, cut where the user joins a second clause with its own first-person subject
    (see the module docstring): `[statement]` when it is one fact. A clause after the first is capitalised."""
    text = statement.translate(_APOSTROPHES)  # one character for one: the offsets hold for `statement`
    if not _OPENS_WITH_SELF.match(text):
        return [statement]
    out, start = [], 0
    joins = list(_JOIN.finditer(text))
    for n, join in enumerate(joins):
        if _TAKES_A_CLAUSE.search(text[start:join.start()]):
            break  # what follows is what the user thinks, says, or did when: no fact of its own
        clause = text[join.end():joins[n + 1].start() if n + 1 < len(joins) else len(text)]
        if clause.lstrip().startswith(DELETED) or not (_REFERS_BACK.search(clause) or _ELLIPSIS.match(clause)):
            out.append(statement[start:join.start()].strip())
            start = join.end()
    if not out:
        return [statement]
    rest = statement[start:].strip()
    return [*out, rest[:1].upper() + rest[1:]]
