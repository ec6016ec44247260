"""Behaviour feedback for an answer, read from the user's next turn: whether the user continued,
corrected the answer or acknowledged it, how long they took, and the score that follows; an answer
with no follow-up within ABANDON_AFTER_S is marked abandoned.

Pure functions: the thought store applies them.
"""

from __future__ import annotations

import re

from pydantic import BaseModel

ABANDON_AFTER_S = 600.0

# Replies are read after typographic apostrophes become plain ones ("That’s" → "That's").
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'"})
# Interjections that may open a reply before its first real word: "Hmm no, …", "Well, no, …", "Ok thanks".
_FILLER = r"(?:(?:hmm+|hm|mm+|well|uh|um|err?|erm|oh|ah|wait|sorry|ok|okay|yes|yeah|yep|right|so)\W+)*"

# An acknowledgement opens the reply (after an interjection): "Thanks to Marie…", "I got it from the
# library" and "Perfect weather today" say nothing about the answer. PRAISE words count only when a pause
# or the end follows them ("Perfect, I'll use that"), or a word of praise ("Great answer"), or a word for
# what the assistant said or did and a pause or the end (PRAISED: "Good idea.", "Fair point, but…"; not
# "Good call centres are…").
ACKNOWLEDGEMENTS = ("thanks", "thank you", "thx", "ty", "cheers", "much appreciated", "got it", "gotcha",
                    "understood", "noted", "makes sense", "that makes sense", "that works", "that helps",
                    "that helped", "sounds good", "spot on", "love it", "good to know", "nice one",
                    "that's it", "that's right", "that's correct", "that's the one", "that's helpful",
                    "that's very helpful", "that's really helpful", "that's great", "that's perfect",
                    "very helpful", "exactly what")
PRAISE = ("great", "perfect", "excellent", "fantastic", "brilliant", "wonderful", "lovely", "awesome",
          "nice", "cool", "exactly", "correct", "super", "good", "fair", "smart", "solid", "clever")
PRAISED = ("answer", "job", "idea", "point", "plan", "one", "call", "suggestion", "tip", "catch", "thinking",
           "move", "choice", "advice", "work")
# Corrections are looked for in statements only: "What should be my next step?" and "Is this actually
# true?" ask, they do not correct. A reply that opens with the interjection "no" (`NO_INTERJECTION`)
# corrects unless an idiom follows ("no problem", "no rush", "no, nothing else").
NOT_CORRECTING_NO = ("problem", "worries", "worry", "rush", "hurry", "need", "idea", "thanks", "thank",
                     "matter", "nothing", "not yet", "doubt", "way", "one more")
CORRECTIONS = ("incorrect", "not true", "not correct", "not right", "isn't right", "isn't correct",
               "isn't true", "mistaken", "misunderstood", "misread", "misheard", "backwards",
               "the other way round", "the other way around", "confusing me", "you confused",
               "you're thinking of", "mixed them up", "mixed it up", "mixed that up", "try again",
               "correction:", "correct that", "not what i asked", "not what i said", "not what i meant",
               "not what i wanted", "not quite", "not exactly", "not really", "it should be",
               "it should have been", "don't think that's right", "don't think that's correct",
               "don't think that's true")


def _phrases(phrases: tuple[str, ...]) -> str:
    """The phrases as regex alternatives, any run of spaces between words."""
    return "|".join(re.escape(p).replace(r"\ ", r"\s+") for p in phrases)


_ACK = re.compile(
    rf"^\W*{_FILLER}(?:(?:{_phrases(ACKNOWLEDGEMENTS)})(?!\w)(?!\s+to\b)"
    rf"|(?:{_phrases(PRAISE)})(?:\s*(?:[,.!;:—-]|$)|\s+(?:answer|job|thanks|thank)\b"
    rf"|\s+(?:{_phrases(PRAISED)})\s*(?:[,.!;:—-]|$)))", re.IGNORECASE)
# "No" corrects only as an interjection: before a pause or the end ("No, it was Lyon", "No.", "No!",
# "no — last month's"), doubled ("No no, …", "Nooo"), or before a word the determiner "no" never comes
# before ("No it was level 4", "No I said Tuesday", "no that's wrong", "No the party is Saturday").
# "No dogs are allowed in my building", "No one in my family eats pork", "No-one …", "No sugar in my
# coffee" and "No. 5 is my bus" state a fact: read as corrections, formation had stored them without
# their "No", as their opposite. "Nope" and "nah" are never determiners. Formation strips the same "no"
# from a correction's fact (`core.formation.observations`), so the two readings cannot disagree.
AFTER_INTERJECTION_NO = ("no", "nope", "not", "wait", "actually", "sorry", "i", "i'm", "im", "i'd", "i've",
                         "ive", "i'll", "you", "you're", "youre", "you've", "your", "we", "we're", "he",
                         "he's", "she", "she's", "they", "they're", "it", "it's", "its", "that", "that's",
                         "thats", "this", "there", "there's", "the", "my", "his", "her", "our", "their",
                         "what")
NO_INTERJECTION = (r"(?:nope|nah)(?![\w'])|no{2,}(?![\w'])"
                   r"|no(?=\s*(?:[,!;:…—–]|\.(?!\s*\d)|$)|\s+-(?!\w)"
                   rf"|\s+(?:{_phrases(AFTER_INTERJECTION_NO)})(?![\w']))")
# "Oh no, I forgot my umbrella" is dismay, not a correction.
_LEADING_NO = re.compile(rf"^\W*{_FILLER}(?<!\boh\s)(?:{NO_INTERJECTION})"
                         rf"(?!\W*(?:{_phrases(NOT_CORRECTING_NO)})\b)", re.IGNORECASE)
# What a comparison compares with: "not to peanuts like me", "not vegan like her sister", "not 5 as I do".
# "like you said" corrects: a verb after "you" is not a comparison.
COMPARED = (r"(?:\b(?:un)?like\s+(?:me|us|him|them|myself|mine|ours|his|hers|theirs"
            r"|(?:my|our|his|her|their)\s+\w+"
            r"|you(?!\s+(?:said|say|thought|think|wrote|meant|suggested|assumed|put\s+it|had\s+it)\b))\b"
            r"|\bas\s+(?:i|we|he|she|they|my\s+\w+)\s+(?:am|are|is|do|does|did|was|were|have|has)\b)")
_CORRECTION = re.compile(
    rf"(?<!\w)(?:{_phrases(CORRECTIONS)})(?!\w)"
    # "That's not …" unless an idiom follows ("That's not a problem").
    r"|(?<!\w)(?:that's|thats|that is|that was|this is|that isn't|that wasn't)\s+not\b"
    r"(?!\s+(?:an?\s+)?(?:problem|issue|big deal|urgent|necessary|needed|important|possible)\b)"
    # "wrong", unless it is about something else: "what's wrong with…", "nothing's wrong", "she was wrong".
    r"|(?<!what's )(?<!what is )(?<!nothing's )(?<!nothing is )(?<!she was )(?<!he was )(?<!they were )"
    r"(?<!\w)wrong(?!\w)(?!\s+with\b)"
    # "I meant …" opening a clause (not "the one I meant"); "Actually, <a fact>" but not "Actually, I…",
    # "Actually, let me…", "Actually, quick question…", which go on to something new.
    r"|(?:^|[,.;:!—-]\s*)i\s+meant\b"
    r"|^\W*actually\b,?\s+(?!(?:i|i'[a-z]+|let|let's|can|could|please|also|one more"
    r"|(?:(?:a|one|another)\s+)?(?:quick\s+)?questions?)\b)"
    # A contrast: "Lyon, not Paris", "1,200 not 1,400"; not a comparison ("he is allergic to eggs, not to
    # peanuts like me": a fact about him, read as a correction it had superseded my own allergy).
    rf"|,\s*not\s+(?!sure\b|yet\b|now\b|today\b|only\b)(?![^,.;:!?]*{COMPARED})\w|\d\s+not\s+\d",
    re.IGNORECASE)

# A sentence ends at ".", "!" or "?" before a space; not after a title or an abbreviation that a name or
# more words follow ("with Dr. Pereira", "Mr. Smith", "e.g. fruit", "J. K. Rowling", "the U.S. embassy"),
# nor after "etc." or "a.m." before a lower-case word, nor in "No. 5". Split at "Dr.", a stored fact had
# stopped at "with Dr." and lost the name.
_TITLES = ("Dr", "Mr", "Mrs", "Ms", "Mx", "Prof", "St", "Jr", "Sr", "Mt", "Fr", "Rev", "Sgt", "Capt", "Gen",
           "vs", "cf", "approx", "e.g", "i.e", "viz")
_MID_SENTENCE = ("etc", "a.m", "p.m")


def _after(words) -> str:
    """Lookbehinds: not right after one of these words and its dot (as given, lower or title case)."""
    forms = {f for w in words for f in (w, w.lower(), w[:1].upper() + w[1:])}
    return "".join(rf"(?<!\b{re.escape(f)}\.)" for f in sorted(forms))


_SENTENCE_END = re.compile(rf"(?<=[.!?])(?<!\b[A-Z]\.){_after(_TITLES)}"
                           rf"(?:{_after(_MID_SENTENCE)}\s+|\s+(?![\sa-z]))(?!\d(?<=\b[Nn]o\.\s\d))")


def is_acknowledgement(text: str) -> bool:
    """A reply that opens by thanking or agreeing and does not go on to correct ("Thanks, but…")."""
    return bool(_ACK.search(text.translate(_APOSTROPHES))) and not is_correction(text)


def is_correction(text: str) -> bool:
    """A reply that opens with the interjection "no" (not "No dogs are allowed…"), or says outside a
    question that the answer was wrong."""
    text = text.translate(_APOSTROPHES).strip()
    if _LEADING_NO.search(text):
        return True
    statements = [s for s in _SENTENCE_END.split(text) if not s.rstrip().endswith("?")]
    return any(_CORRECTION.search(s) for s in statements)


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
