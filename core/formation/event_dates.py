"""Which occurrence a date said without its year means: "I signed up for the Denver Half Marathon on
October 13", said on 28 April, is next October's; "I ran it on October 13" last October's.

The time parser reads a date without a year as its latest occurrence (`parse_time_hint` prefers the past,
as a question about what happened wants). A statement's event is read by the words that govern the date,
the nearest marker before it in its clause (else the first after it):
- a plan, a sign-up, a booking, the future, or the present (a state, an arrangement, a timetable: "is on",
  "I'm meeting", "leaves", "turns 7", "we fly") → the next occurrence (or the current one: today, this
  month);
- the past ("ran", "was born", "went", "we moved") → the previous one (or the current one);
- nothing that tells → the nearest one.
"last"/"next" before a month say it outright ("last October 13"); "this October" is this year's. A date
with its year, a relative one ("yesterday", "next Friday", "in two weeks") and a period ("last month")
are read as said.

Before, only a sentence with a word of a fixed list ("will", "is on", "booked"…) was read forward, and
"I signed up for … on October 13" said in April went to the October before.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Literal

from core.retrieval.timeparse import TimeHint

Direction = Literal["next", "previous", "nearest"]

_MONTH = (r"(?:january|february|march|april|may|june|july|august|september|october|november|december|"
          r"jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)\.?")
_WEEKDAY = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
# A date the parser reads relative to now, or with its year, or a period: read as said.
_AS_SAID = re.compile(r"\d{4}|\b(?:today|tomorrow|yesterday|tonight|ago|last|next|this|past|since|recently|lately|"
                      r"weeks?|weekends?|months?|years?|spring|summer|autumn|fall|winter|morning|afternoon|"
                      r"evening|night)\b", re.IGNORECASE)
# "last October 13", "next May": the parser does not read these; the word says which one.
_SAID_OUTRIGHT = re.compile(rf"\b(last|next)\s+(?={_MONTH}(?![\w]))", re.IGNORECASE)
_THIS_MONTH = re.compile(rf"^this\s+{_MONTH}$", re.IGNORECASE)

# Markers of the occurrence meant (lower-case words; a contraction's "'m", "'re", "'ll", "'ve" alone).
_AHEAD = re.compile(
    r"signup|register(?:s|ed|ing)?|enrol(?:l)?(?:s|ed|ing)?|book(?:s|ed|ing)?|reserv(?:e|es|ed|ing)|"
    r"schedul(?:e|es|ed|ing)|plan(?:s|ned|ning)?|arrang(?:e|es|ed|ing)|invited|tickets?|rsvp(?:'d|ed)?|due|"
    r"deadline|will|won't|'ll|shall|gonna|going|hop(?:e|es|ing)|wants?|needs?|intend(?:s|ed)?|expect(?:s|ed)?|"
    r"until|till|upcoming|coming|soon|is|are|am|'re|'m|be|isn't|aren't|have|has|starts?|begins?|ends?|opens?|"
    r"closes?|leaves?|departs?|arrives?|lands?|returns?|happens?|runs|falls|comes|expires?|renews?|finishes|"
    r"turns|takes")
_BEHIND = re.compile(
    r"was|were|wasn't|weren't|had|did|didn't|went|ran|got|came|saw|took|gave|made|met|left|flew|drove|rode|"
    r"ate|drank|bought|sold|paid|sent|told|said|found|began|became|won|lost|wrote|spent|felt|kept|held|brought|"
    r"thought|born|broke|fell|heard|knew|led|sat|slept|spoke|stood|swam|taught|threw|woke|wore|sang|grew|"
    r"been|already|ago|yesterday|'ve|(?!\w*eed$|hundred$)\w{3,}ed")
# What turns the "-ed" after it into an adjective or a passive: "I'm excited", "we were married".
_BEFORE_ADJECTIVE = re.compile(r"am|'m|is|are|'re|'s|was|were|be|been|being|so|very|really|too|quite|"
                               r"pretty|get|gets|got|feel|feels|felt|seem|seems")
_SUBJECT = re.compile(r"i|we|you|they")  # before a plain verb: the present ("we fly", "I start")
_IS = re.compile(r"(?:it|that|this|there|he|she|what|who|where|when|here)'s")
# Where a clause ends: a stop or a comma, a dash between words (not "13–15 September"), a conjunction.
_CLAUSE_END = re.compile(r"[,;:.!?()]|—|\s[–-]+\s|\b(?:and|but|because|while|although|though|whereas)\b",
                         re.IGNORECASE)
_TOKEN = re.compile(r"[a-z]+(?:'[a-z]+)?")


def said_outright(text: str) -> tuple[Direction | None, str]:
    """"last"/"next" before a month name, which the parser leaves unread: the occurrence it names, and the
    text as the parser reads a plain date ("last October 13" → "October 13", "next May" → "in May")."""
    match = _SAID_OUTRIGHT.search(text)
    if match is None:
        return None, text
    with_day = re.match(rf"{_MONTH}\s+\d", text[match.end():], re.IGNORECASE)
    return ("previous" if match.group(1).lower() == "last" else "next",
            text[:match.start()] + ("" if with_day else "in ") + text[match.end():])


def direction_of(text: str, expression: str) -> Direction:
    """The occurrence of `expression` (a date in `text`) the sentence means (see the module docstring)."""
    plain = text.replace("’", "'").replace("‘", "'")
    at = plain.lower().find(expression.lower())
    if at < 0:
        return "nearest"
    before = _CLAUSE_END.split(plain[:at])[-1]
    after = _CLAUSE_END.split(plain[at + len(expression):])[0]
    return _marker(_words(before), backwards=True) or _marker(_words(after), backwards=False) or "nearest"


def _words(clause: str) -> list[str]:
    return _TOKEN.findall(re.sub(r"\bsign(?:s|ed|ing)?\s+up\b", "signup", clause.lower()))


def _marker(words: list[str], *, backwards: bool) -> Direction | None:
    """The direction the nearest marker among the clause's `words` gives (read from the date outwards)."""
    order = range(len(words) - 1, -1, -1) if backwards else range(len(words))
    for i in order:
        word, previous = words[i], words[i - 1] if i else ""
        own = _own(word)
        if _AHEAD.fullmatch(own) or _IS.fullmatch(word):
            return "next"
        if _BEHIND.fullmatch(own):
            if own.endswith("ed") and _BEFORE_ADJECTIVE.fullmatch(_own(previous)):
                continue  # "I'm excited", "we were married": the verb before says which
            return "previous"
        if _SUBJECT.fullmatch(previous) and not word.endswith("ing") and "'" not in word:
            return "next"  # "we fly to Kyoto on April 6"
    return None


def _own(word: str) -> str:
    """A contraction's own part ("i'm" → "'m", "we've" → "'ve"), but for "it's", "that's"… (is)."""
    return word[word.index("'"):] if "'" in word and not _IS.fullmatch(word) else word


def occurrence(hint: TimeHint, said_at: datetime, direction: Direction, *, strict: bool = False) -> datetime:
    """The start of the occurrence of `hint` the `direction` names, `hint` being the parser's reading
    (its latest occurrence) of a date said at `said_at`; the parser's own when the date is not one that
    recurs (it has its year, is relative to now, or is a period). One under way as it was said is the one
    meant, unless `strict` ("last October" said in October is the year before's)."""
    expression = hint.expression.strip()
    if _THIS_MONTH.match(expression):  # this year's
        return _shifted(hint.start, said_at.year - hint.start.year, years=True)
    if _AS_SAID.search(expression):
        return hint.start
    if re.search(rf"\b{_WEEKDAY}\b", expression, re.IGNORECASE):
        step, years = 7, False
    elif re.search(rf"\b{_MONTH}(?!\w)", expression, re.IGNORECASE):
        step, years = 1, True
    elif "hour" in hint.parts and re.search(r"^at\b|[ap]\.?m\.?$", expression, re.IGNORECASE):
        step, years = 1, False  # "at 3pm"; a bare "2:05" may be a race time as well: read as said
    else:
        return hint.start
    start, end = hint.start, hint.end
    if start > said_at:  # the parser's reading lies ahead: the latest one begun is a step back
        start, end = _shifted(start, -step, years=years), _shifted(end, -step, years=years)
    elif _shifted(start, step, years=years) <= said_at:  # "Sunday" said on a Sunday: the parser's is a week back
        start, end = _shifted(start, step, years=years), _shifted(end, step, years=years)
    under_way = end > said_at
    if under_way and not strict:
        return start
    ahead = _shifted(start, step, years=years)
    behind = _shifted(start, -step, years=years) if under_way else start
    if direction == "next":
        return ahead
    if direction == "previous":
        return behind
    return ahead if ahead - said_at < said_at - end else start  # the nearest (never under way here)


def _shifted(moment: datetime, steps: int, *, years: bool) -> datetime:
    """`moment` `steps` years (or days) on; 29 February a year on is 28 February."""
    if not years:
        return moment + timedelta(days=steps)
    try:
        return moment.replace(year=moment.year + steps)
    except ValueError:
        return moment.replace(year=moment.year + steps, day=28)
