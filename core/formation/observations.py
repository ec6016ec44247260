"""Statements become `observation` memories (seed 001's type, MemoryScope's observation).

Each user message is classified (`core.formation.kinds`, or the LLM with the same labels). A statement
or a correction leaves one observation per fact: offline one per statement (`kinds.told_statements`: its
sentences without small talk and questions, a sentence that refers back kept with the one before), with
an LLM the facts it extracts in plain words. So a correction supersedes the statement it corrects, and
"I live in Lisbon. My sister is a nurse." corrected to Porto still tells who the sister is (one
observation per message had hidden the whole message). Of a correction's facts, those that read as
corrections by their own words correct (else the first, `correcting_facts`); the others are statements.
An observation carries the speaker, the chain, the event time when one is stated ("next Friday" read
against the message's time), the message's kind and its source thought (`source_thought`); the message's
own row keeps its kind (`message_kind`) and the ids of its observations (`observations`), through which
it is retrieved (`core.retrieval.ranking.retrievable`). Questions and acknowledgements stay in the
transcript with their kind; the profile's `retrieve_kinds` decides what is retrieved.

A statement of two facts of the user's joined by "and I" ("I moved to Porto last month and I work as a nurse.")
is two facts (`core.formation.clauses`); the same fact told again in one message (a sentence repeated 49 times)
is one observation, at its first place (`_distinct`).

Observation ids derive from the thought's (and the statement's place), so forming a message again rewrites
the same rows; a supersession already recorded on them is kept, and a correction formed again chooses
again (`core.formation.supersede.supersede` releases what it no longer supersedes). The place of a fact
forgotten from a message (`core.admin.deletion`) is never given again (`_placed`). A clause cut from a sentence
after its first takes a place after the message's sentences, so no sentence's place moves when older rules
formed the message whole.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, time

from core.conversation.feedback import NO_INTERJECTION, OTHER_NO_INTERJECTION
from core.conversation.metrics import TurnMetrics
from core.conversation.prompts import quoted
from core.conversation.thoughts import CATEGORY_METRICS, CATEGORY_USER, Thought
from core.errors import ProviderError
from core.formation.clauses import clauses
from core.formation.event_dates import direction_of, occurrence, said_outright
from core.formation.kinds import classify, reads_as_correction, told_statements
from core.formation.relations import with_relations
from core.formation.updates import says_a_change
from core.index.memory_index import MemoryIndex
from core.index.records import event_time_of
from core.llm import LLM, Message
from core.models import DELETED, MESSAGE_KINDS, EventTime, MemoryContext, MemoryRecord, MessageKind
from core.retrieval.timeparse import PERIOD_END, TimeHint, parse_time_hint

# A fact's statements forgotten before and after it (`_placed`), and the words left.
_FORGOTTEN = re.compile(rf"((?:\s*{re.escape(DELETED)})*)\s*(.*?)\s*((?:{re.escape(DELETED)}\s*)*)",
                        re.DOTALL)
_ANY_WORD = re.compile(r"\w")
_WORDS = re.compile(r"\w+")
_RAN_ON = re.compile(rf"\b(?:and|but|und|aber)\s+(?:{re.escape(DELETED)}\s*)+(?=\w)", re.IGNORECASE)
OBSERVED = ("statement", "correction")  # the kinds whose facts become observations
SUPERSESSION_KEYS = ("superseded_at", "superseded_by", "superseded_also")
FORGOTTEN_PLACES = "forgotten_places"  # on a message's row: the places of the facts forgotten from it
JSON_RETRIES = 2
SERVER_FAILURES = 3  # messages in a row on which the LLM server failed: not asked again (`Formation`)
MIN_TOLD_WORDS = 4  # a question's other sentences are kept as a fact from this many words ("Thanks!" is not)
# What opens a correction before the fact it tells ("No, it was Lyon" → "It was Lyon"). Its "no" is the
# interjection feedback reads as a correction (`NO_INTERJECTION`): the determiner in "No dogs are allowed
# in my building" is part of the fact, and taking it off stores the fact's opposite.
_CORRECTION_OPENER = re.compile(
    rf"^\W*(?:(?:{NO_INTERJECTION}|actually|sorry|oops|wait|hmm+|well|correction|not\s+quite|not\s+true|"
    # "Update: actually we moved to Porto…": the news opener, not "Update the doc, not the README"
    r"(?:(?:a\s+|quick\s+|small\s+|an\s+)?update(?=\s*[:—–]))|"
    r"that(?:'s|\s+is|\s+was)\s+(?:wrong|incorrect|not\s+(?:quite\s+)?(?:it|right|correct|true)"
    r"|not\s+what\s+i\s+(?:said|meant|asked|wanted))|that\s+(?:isn't|wasn't)\s+(?:it|right|correct|true)"
    r"|scratch\s+that|let\s+me\s+correct\s+that|i\s+meant|i\s+misspoke|i\s+changed\s+my\s+mind"
    r"|i\s+got\s+(?:that|it)\s+wrong|you(?:'ve|\s+have)\s+got\s+it\s+(?:backwards|wrong)"
    r"|(?:you(?:'re|\s+are)\s+mixing|i\s+mixed|you\s+mixed)\s+(?:them|it|that|things)\s+up)"
    r"\b[\s,.:;!—-]*"
    # The same in Portuguese and German (`kinds.OTHER_NO_INTERJECTION`, the interjection only: "Não como
    # carne" keeps its "Não"). "Eigentlich" stays: German puts the verb second, and "Heißt sie Anna." without
    # it would ask.
    rf"|(?:{OTHER_NO_INTERJECTION}|na\s+verdade|na\s+realidade|enganei-me|me\s+enganei|engano\s+meu"
    r"|(?:isso|isto)\s+(?:est[áa]|[ée])\s+errad[oa]|errad[oa]|n[ãa]o\s+(?:[ée]|est[áa])\s+(?:verdade|cert[oa])"
    r"|corre[cç][ãa]o|das\s+stimmt\s+(?:so\s+)?nicht|das\s+ist\s+(?:falsch|nicht\s+(?:richtig|korrekt|wahr))"
    r"|stimmt\s+nicht|falsch|korrektur|ich\s+habe?\s+mich\s+(?:geirrt|vertan|verschrieben|vertippt))"
    r"(?![\w-])[\s,.:;!—-]*)+", re.IGNORECASE)
FORMATION_SYSTEM = (
    "You read one message a user wrote to their assistant and decide what it leaves as memory. Reply with "
    'one JSON object: {"kind": K, "facts": [F, ...]}. K is one of statement (a fact, preference, plan or '
    "event), question, acknowledgement (thanks or small talk), correction (it corrects something said "
    "before), instruction (a request to do something). For a statement or a correction, facts are the "
    "facts it tells, each a short sentence in plain words that stands alone (name the subject; for a "
    "correction, the corrected fact in full, using the earlier messages); otherwise facts is [].")


def observation_id(instance: str, thought_id: str, n: int) -> str:
    return f"obs-{hashlib.sha256(f'{instance}/{thought_id}'.encode()).hexdigest()[:20]}-{n}"


def place_of(instance: str, thought_id: str, observation: str) -> int | None:
    """The place in its message of an observation formed from `thought_id` (the number its id ends in);
    None for a row formed from the message otherwise (its important copy)."""
    prefix = observation_id(instance, thought_id, 0)[:-1]
    place = observation.removeprefix(prefix)
    return int(place) if observation.startswith(prefix) and place.isdigit() else None


def event_time(text: str, said_at: datetime) -> tuple[EventTime, str | None]:
    """The time a statement says its event happens, read against the moment it was said, and the words
    that said it; the moment itself (and None) when it states none. A date said without its year is the
    occurrence the sentence means (`event_dates`): "I signed up for the half marathon on October 13" said in
    April is next October's, "I ran it on October 13" last October's, "I'm meeting Jonas on Friday" the
    coming Friday."""
    outright, spoken = said_outright(text)
    hint = parse_time_hint(spoken, said_at)
    if hint is None:
        return event_time_of(said_at), None
    start = occurrence(hint, said_at, outright or direction_of(spoken, hint.expression), strict=bool(outright))
    moment = _period_held(hint, start, said_at)
    if outright:  # "last October 13", as it was said
        return moment, f"{'last' if outright == 'previous' else 'next'} {hint.expression.removeprefix('in ')}"
    return moment, hint.expression


def _period_held(hint: TimeHint, start: datetime, said_at: datetime) -> EventTime:
    """The event time of a statement whose time `hint` names a period starting at `start` (its occurrence):
    the narrowest period an `EventTime` holds it in. A date or a clock time is its day or hour; a month, or a
    part of one ("early October", "the first week of August"), its month; a whole year ("next year", "in
    2019") its year; a state's start ("vegan since January", "since the summer") the year or month it began
    in. Any other period (a week, a weekend, a season, "recently", "the last two weeks") is its day or its
    month when it lies within one, else the moment it was said: "My running plan for this week is 41 km"
    said on Monday 3 August is in August.

    Before, such a period was its year ("this week" → 2026), and a window matches every period that
    overlaps it: a year's weekly plans and work notes (27 % of a year's observations) came back for every
    window of their year, where the runs of "the first week of August" were."""
    parts = hint.parts
    if parts.keys() & {"day", "weekday", "hour"}:
        return EventTime(year=start.year, month=start.month, day=start.day, weekday=start.weekday(),
                         hour=start.hour if "hour" in parts else -1)
    if "month" in parts:
        return EventTime(year=start.year, month=start.month)
    end = start + (hint.end - hint.start)
    if _whole_year(start, end):
        return EventTime(year=start.year)
    if re.match(r"since\b", hint.expression, re.IGNORECASE):  # up to now: when it began ("since 2019")
        return EventTime(year=start.year, month=-1 if (start.month, start.day) == (1, 1) else start.month)
    last = end - PERIOD_END
    if (start.year, start.month) != (last.year, last.month):
        return event_time_of(said_at)
    if start.day == last.day:
        return EventTime(year=start.year, month=start.month, day=start.day, weekday=start.weekday())
    return EventTime(year=start.year, month=start.month)


def _whole_year(start: datetime, end: datetime) -> bool:
    """Whether [start, end) is a calendar year."""
    return (start.month, start.day, start.time()) == (1, 1, time()) and end == start.replace(year=start.year + 1)


# The version of the rules (`core.formation.kinds`, `updates`, `lookups`, …), recorded on each message they
# formed. Change it with the rules: a plain `workbench formation run` then forms again what older rules
# formed (a data directory kept across versions held facts today's rules supersede, or never make).
RULES = "2026-12-07.17"  # .2: an age update supersedes every earlier age of that person; .3: diets, words no
# longer so ("no more black coffee"), "my new manager will be…", "Actually, I <a state>", praise of an idea;
# 12-07.1: a question or request announced ("Actually, I have a question…"), a terse state ("allergic to
# penicillin"), "no more bus rides", "I report to Dana", a product line upgraded ("an iPhone 16");
# 12-07.2: a terse state by its form or a time it has held ("lactose intolerant since childhood"), a switch
# to another thing of its kind ("I switched to a Kobo" after "I use a Kindle") or naming what it replaces;
# 12-07.3: a correction of an attribute supersedes the fact stating it, not one that only names its new value
# ("Actually I moved to Porto." and "I live in Lisbon.", not "…the Porto half marathon…"); 12-07.4: Portuguese
# and German small talk, corrections ("Não, eu moro no Porto.", "Eigentlich heißt sie Anna."), requests and
# facts handed over ("Merk dir: …"); English notes with the subject dropped ("Lives with two cats") and states
# taking "in" ("claustrophobic in lifts"); 12-07.5: an event time is the narrowest period that holds the time
# said (`_period_held`: "this week" in August is August, not 2026; one across two months, a season or "recently"
# the moment it was said), a weekday said on that weekday is that day ("On Sunday I baked…" said on Sunday, not
# the Sunday before), and a goal said in words is replaced by another of its activity ("My goal now is to run a
# full marathon" after "…a half marathon", `updates._GOAL_IN_WORDS`); 12-07.6: a "now" opening a clause says a
# change ("Now my aim is to run a marathon."), "Just moved to Lisbon!" is the user's, "diet" names a diet
# without being one ("My diet is keto now."); 12-07.7: Portuguese and German homes and jobs in the attribute
# table, and their changes told in passing ("Mudámo-nos para o Porto.", "Ich arbeite jetzt bei Siemens."), so a
# change or a correction in one language supersedes the fact told in another; German "Doch, …" corrects;
# Portuguese and German receipts ("Anotado.", "Notiert.", "Alles klar, gemerkt.") are acknowledgements;
# 12-07.8: Portuguese and German ages, cars, diets and managers ("Tenho 34 anos.", "Ich fahre jetzt einen Tesla.",
# "Agora sou vegetariana.", "Meine neue Chefin ist Dana Weber."), clauses joined by "e"/"und", German names after
# an article ("bei der Telekom", "in der Schweiz", "im Allgäu"); 12-07.9: whom one lives or works with is no home
# or employer ("Moro com a Ana e o Tomás em Lisboa", "I work with Priya at Stripe"), a subject the user opens is
# the user's ("Ich und meine Frau sind nach Hamburg gezogen"), "Ich fahre Tesla" and "Dirijo um Corolla" are cars;
# 12-07.10: a car said by a verb of driving is the name the verb takes ("Conduzo um projeto na Sonae", "I drive
# for Uber" name none), whom one lives or works with is no name used, a list of people and pets keeps its clause
# ("I live with two roommates and a cat in Lisbon"), "e" typed for "é" ("O meu chefe e o Paulo."), and the
# Portuguese and German "my <noun> is" ("O meu médico é o Dr. Silva", "Mein Zahnarzt ist Dr. Meier"); 12-07.11: the
# full-width "？" and the Arabic "؟" end a question ("我住在哪里？"); 12-07.12: a tool one works with is a name used
# ("I work with Python", so "I switched from Python to Go" replaces it), "e" is "é" only where genders agree and
# the noun is no relative ("O meu irmão e a Ana." lists two people), a German single surname after "ist" ("Mein
# Arzt ist Meier"; not "Mein Chef ist Lehrer"), where one drives one's car to is no car ("I drive my car to
# Porto"), and a clause opening with a mark after "Well…" no longer stops formation; 12-07.13: a correction said
# again word for word is a repetition, which corrects what its earlier self corrected and supersedes nothing (it
# superseded its earlier self: "We land at Itami, not Kansai." superseded by "We land at Itami, not Kansai."); 12-07.14:
# a subject joined to another ("Não, o meu irmão e a Ana vieram jantar.") names no fact by its own words alone;
# "trabalho com", "arbeite mit" read as "work with" ("Trabalho com Python" names a tool used), and a name one works
# with of no list ("I work with Ruby", "Ich arbeite mit Looker") is a companion a switch naming it replaces ("I
# switched from Ruby to Go"); a possessive in a switch names an owner ("Tom's old laptop"); 12-07.15: a German noun
# after an article or a possessive is no name one works with ("Ich arbeite mit dem Team": no companion "Team"); a
# switch said in Portuguese or German names what it replaces ("Mudei do Ruby para Go", "Troquei o Android por um
# iPhone", "Ich bin von Ruby auf Go umgestiegen"); a name joined to a thing is no subject of two people ("Will and
# power of attorney signed…", "Netflix, Spotify and iCloud come out of…"); 12-07.16: a brand written "iPhone",
# "iCloud", "eBay", "macOS" is a name a switch gives up ("I switched from iPhone to Pixel", "Troquei o iPhone por um
# Pixel"); stopping without a switch names what is no longer used ("I no longer use Evernote", "Deixei de usar o
# Evernote", "Ich nutze Evernote nicht mehr"; a qualification, "… for work", only that use); "o Rui" after an article
# joined by "e" is a subject of two people ("Não, o Rui e a Ana foram ao cinema"); a German noun by its ending joined
# by "und" is a thing ("Testament und Vollmacht wurden unterschrieben"); 12-07.17: a statement of two facts of the
# user's joined by "and I" / "but I" / "und ich" is two ("I moved to Porto last month and I work as a nurse";
# not "My wife and I moved…", "… and I love it"), a cut clause placed after the message's sentences; a fact told
# again in one message is one observation, at its first place (a sentence repeated 49 times made 49)


@dataclass
class Formed:
    """A user message read: its kind, its facts, how they were read (`rules` or `llm`), and, for a
    correction, which of its facts correct (`correcting`, their positions; the others are statements told
    with it)."""

    kind: MessageKind
    facts: list[str]
    by: str = "rules"
    note: str | None = None  # with an LLM configured: why the rules read the message instead
    correcting: tuple[int, ...] = ()
    # A clause cut from a sentence after its first (`clauses`): its position → the position of the sentence's first
    # clause. Placed after the message's sentences (`_placed`), and dated by the sentence when it says no time.
    joined: dict[int, int] = field(default_factory=dict)

    def kind_of(self, n: int) -> MessageKind:
        """The kind of the `n`-th fact itself: a question's told part is a statement, and so is a fact a
        correction tells besides what it corrects."""
        if self.kind == "correction":
            return "correction" if n in self.correcting else "statement"
        return "statement" if self.kind == "question" else self.kind


def correcting_facts(said: list[str]) -> tuple[int, ...]:
    """Which of a correction's statements correct: those that read as corrections by their own words, else
    the first (the message opened with the correction: "No. I said Tuesday. Also, …"). "No, it was Lyon.
    My talk went well." corrects with its first statement and tells the second."""
    own = tuple(n for n, s in enumerate(said) if reads_as_correction(s))
    return own or ((0,) if said else ())


def rules_formation(text: str) -> Formed:
    """The rules' kind, and the message's statements as its facts, one each (`kinds.told_statements`). A
    question that also tells something ("I moved to Porto. Do you know it?", "Inês turns 7 on October 10,
    ideas for a party?") leaves its told part too. A correction's facts lose the words that open the
    correction ("No, it was Lyon" → "It was Lyon"); a statement left empty by that ("That's wrong.") is none."""
    kind = classify(text)
    if kind not in (*OBSERVED, "question"):
        return Formed(kind, [])
    said = told_statements(text)
    if kind == "question" and len(" ".join(said).split()) < MIN_TOLD_WORDS:
        return Formed(kind, [])
    if kind != "correction":
        return _cut(Formed(kind, said))
    correcting = set(correcting_facts(said))
    facts, positions = [], []
    for n, statement in enumerate(said):
        fact = _CORRECTION_OPENER.sub("", statement).strip() if n in correcting else statement
        if not fact and len(said) > 1:  # "That's wrong. …": the correction is in the statement after it
            correcting.add(n + 1)
            continue
        fact = fact or statement
        if n in correcting:
            positions.append(len(facts))
        facts.append(fact[:1].upper() + fact[1:])
    return _cut(Formed(kind, facts, correcting=tuple(positions) or (0,) * bool(facts)))


def _cut(formed: Formed) -> Formed:
    """The rules' facts with each statement of two facts of the user's cut in two (`clauses`). A correcting fact
    stays whole: what it corrects is read from all its words (`core.formation.supersede`)."""
    facts: list[str] = []
    correcting: list[int] = []
    joined: dict[int, int] = {}
    for n, fact in enumerate(formed.facts):
        if n in formed.correcting:
            correcting.append(len(facts))
            facts.append(fact)
            continue
        while fact:
            # A cut clause forgotten with its full stop ran into the next sentence ("… and [deleted] My sister is
            # a doctor."): that sentence is one of its own, at its own place.
            ran_on = _RAN_ON.search(fact)
            parts = clauses(fact[:ran_on.end()].rstrip()) if ran_on else []
            if len(parts) > 1:
                fact = fact[ran_on.end():]
            else:
                parts, fact = clauses(fact), ""
            joined |= {len(facts) + k: len(facts) for k in range(1, len(parts))}
            facts += parts
    return Formed(formed.kind, facts, formed.by, formed.note, tuple(correcting), joined)


def llm_formation(llm: LLM, model: str, text: str, before: list[str]) -> Formed:
    """The LLM's kind and facts for a message (JSON, asked again twice when a reply is not), else the
    rules' with what was wrong as its note. A failure of the server itself (after its SDK's retries)
    is raised as the `ProviderError`: `Formation` counts those towards giving up on the server."""
    earlier = "\n".join(f"- {quoted(m[:500])}" for m in reversed(before)) or "(none)"
    messages = [Message(role="system", content=FORMATION_SYSTEM),
                Message(role="user",
                        content=f"Earlier messages, oldest first:\n{earlier}\n\nMessage: {quoted(text)}")]
    error = ""
    for _ in range(1 + JSON_RETRIES):
        reply = llm.complete(messages, model=model, temperature=0.0, max_tokens=400, json_mode=True)
        try:
            return _parse_reply(reply.text)
        except ValueError as e:
            error = str(e)
            messages += [Message(role="assistant", content=reply.text[:2000]),
                         Message(role="user", content=f"That was not the asked JSON ({error}). Reply with "
                                                      'the JSON object only: {"kind": ..., "facts": [...]}.')]
    return _by_rules(text, f"{error}, after {1 + JSON_RETRIES} tries")


def _by_rules(text: str, why: str) -> Formed:
    """The rules' reading of a message the LLM did not read, and why (`Formed.note`)."""
    formed = rules_formation(text)
    formed.note = why
    return formed


def _parse_reply(text: str) -> Formed:
    """The reply's kind and facts; a ValueError says what was wrong with it (the LLM is told, and then
    the user)."""
    match = re.search(r"\{.*\}", text, re.DOTALL)
    try:
        loaded = json.loads(match.group(0)) if match else None
    except ValueError:
        loaded = None
    if not isinstance(loaded, dict) or loaded.get("kind") not in MESSAGE_KINDS:
        raise ValueError(f"kind must be one of {', '.join(MESSAGE_KINDS)}" if isinstance(loaded, dict)
                         else "the reply was not a JSON object")
    facts = loaded.get("facts") or []
    if not isinstance(facts, list) or not all(isinstance(f, str) for f in facts):
        raise ValueError("facts must be a list of strings")
    kind = loaded["kind"]
    facts = [f.strip() for f in facts if f.strip()]
    return Formed(kind, facts, by="llm", correcting=correcting_facts(facts) if kind == "correction" else ())


@dataclass
class Correction:
    """An observation made from a correction, waiting for the memory it supersedes to be chosen."""

    observation: MemoryRecord
    message: Thought
    question: str | None  # the user's previous message, when it asked something
    previous_context: list[str] = field(default_factory=list)  # the memories the previous answer used
    said: str = ""  # what the correction says: its message, or its own statement among several
    update: bool = False  # a statement that replaces an earlier state ("We just moved to Denver"), no correction

    def __post_init__(self):
        self.said = self.said or self.message.thought


class Formation:
    """Forms the user messages of a batch of rows being indexed (see the module docstring).

    With an LLM, it counts who read each message and why the rules stood in (`notes`). A server that
    failed on `SERVER_FAILURES` messages in a row is not asked again by this formation (`stop_asking`):
    each failure has already cost the SDK's retries, and asking again for every message of a long
    history would wait hours on a dead server. The rules read the rest, and the next `workbench formation
    run` gives those messages to the LLM again."""

    def __init__(self, index: MemoryIndex, llm: LLM | None = None, model: str | None = None):
        self.index = index
        self.llm = llm if llm is not None and llm.configured and model is not None else None
        self.model = model
        self.read_by: Counter[str] = Counter()  # "llm" / "rules": who read how many messages
        self.why_rules: Counter[str] = Counter()  # with an LLM: why the rules read how many messages
        self._failed_in_a_row = 0
        self._stopped: str | None = None  # why the LLM is no longer asked

    def stop_asking(self, why: str) -> None:
        """Ask the LLM no more: the rules read the messages left. `why` completes "not asked after …"
        (a caller that just saw the server fail need not wait for it to fail again)."""
        self._stopped = why

    def read(self, message: Thought, before: list[str]) -> Formed:
        formed = self._read(message.thought, before)
        self.read_by[formed.by] += 1
        if formed.note:
            self.why_rules[formed.note] += 1
        return formed

    def _read(self, text: str, before: list[str]) -> Formed:
        if self.llm is None or self.model is None:
            return rules_formation(text)
        if self._stopped:
            return _by_rules(text, f"not asked after {self._stopped}")
        try:
            formed = llm_formation(self.llm, self.model, text, before)
        except ProviderError as e:
            self._failed_in_a_row += 1
            if self._failed_in_a_row == SERVER_FAILURES:
                self.stop_asking(f"the LLM server failed on {SERVER_FAILURES} messages in a row")
            return _by_rules(text, str(e).rstrip("."))
        self._failed_in_a_row = 0
        return formed

    @property
    def notes(self) -> list[str]:
        """How many messages the rules read instead of the LLM, and why (none when it read them all)."""
        if not self.why_rules:
            return []
        total, ruled = sum(self.read_by.values()), sum(self.why_rules.values())
        reasons = "; ".join(f"{n}: {why}" for why, n in self.why_rules.items())
        return [(f"LLM formation: the LLM read {self.read_by['llm']} of {total} "
                 f"message{'s' * (total != 1)}, the rules {ruled} ({reasons}). `workbench formation run` "
                 "gives those to the LLM again")]

    def form(self, records: list[MemoryRecord], threads: dict[tuple[str, str], list[Thought]]
             ) -> tuple[list[MemoryRecord], list[Correction]]:
        """The rows with each user message's kind and observations added, and the corrections among them."""
        by_id = {(t.instance, t.id): t for thread in threads.values() for t in thread}
        out: list[MemoryRecord] = []
        corrections: list[Correction] = []
        # Only a message a forget redacted can have forgotten places: a live turn's costs no query.
        forgotten = self._forgotten([r for r in records if r.kind == "user" and DELETED in
                                     getattr(by_id.get((r.instance, r.id)), "thought", "")])
        for record in records:
            message = by_id.get((record.instance, record.id))
            if record.kind != "user" or message is None or message.category != CATEGORY_USER:
                out.append(record)
                continue
            formed = self.read(message, record.context.before)
            places = forgotten.get((record.instance, record.id), frozenset())
            placed, formed.correcting = _distinct(_placed(formed.facts, places, frozenset(formed.joined)),
                                                  formed.correcting)
            observations = [self._observation(record, formed, fact, n, place) for n, place, fact in placed]
            meta = {**record.metadata, "message_kind": formed.kind, "formed_by": formed.by}
            if places:  # the next formation skips them too
                meta[FORGOTTEN_PLACES] = sorted(places)
            if formed.by == "rules":  # which rules: a later version forms the message again (`formation.run`)
                meta["rules"] = RULES
            if observations:
                meta["observations"] = [o.id for o in observations]
            out.append(record.model_copy(update={"metadata": meta}))
            out += observations
            if formed.kind == "correction" and observations:
                question, context = _previous_turn(threads.get((record.instance, record.chain_id), []), message)
                # What a correction says is the message when it tells one fact; among several, the
                # correcting statement's own words ("No, it was Lyon. I gave a talk there." names Lyon).
                one = len(observations) == 1
                corrections += [Correction(o, message, question, context, message.thought if one else o.content)
                                for (n, _, _), o in zip(placed, observations, strict=True)
                                if n in formed.correcting]
            # A statement that says a change supersedes the state it replaces (`core.formation.updates`).
            corrections += [Correction(o, message, None, said=o.content, update=True)
                            for (n, _, _), o in zip(placed, observations, strict=True)
                            if formed.kind_of(n) == "statement" and says_a_change(o.content)]
        return self._keep_supersessions(out), corrections

    def _observation(self, record: MemoryRecord, formed: Formed, fact: str, n: int, place: int
                     ) -> MemoryRecord:
        moment, said = event_time(fact, record.created_at)
        if said is None and n in formed.joined.keys() | formed.joined.values():
            # A clause cut from a sentence ("I went to the gym yesterday and I ran 5k"): the time its sentence says.
            head = formed.joined.get(n, n)
            for other in [head, *(m for m, h in formed.joined.items() if h == head)]:
                moment, said = event_time(formed.facts[other], record.created_at)
                if said is not None:
                    break
        meta = {"source_thought": record.id, "speaker": "user", "message_kind": formed.kind_of(n),
                "formed_by": formed.by}
        if said:
            meta["event_time_stated"] = said
        meta = with_relations(meta, fact)  # "my daughter Inês": who is who, for retrieval
        return MemoryRecord(instance=record.instance, id=observation_id(record.instance, record.id, place),
                            kind="observation", content=fact, created_at=record.created_at,
                            chain_id=record.chain_id, event_time=moment, tags=record.tags, metadata=meta,
                            context=MemoryContext(before=record.context.before))

    def _forgotten(self, records: list[MemoryRecord]) -> dict[tuple[str, str], frozenset[int]]:
        """The places of the facts forgotten from the user messages `records` (those holding "[deleted]"), as
        their rows recorded them (`core.admin.deletion`): an LLM's facts hold no "[deleted]" where one was, and
        without them the message's next fact would take a forgotten fact's id, and a forget retried with it
        delete that fact."""
        ids: dict[str, list[str]] = {}
        for r in records:
            if r.kind == "user":
                ids.setdefault(r.instance, []).append(r.id)
        out: dict[tuple[str, str], frozenset[int]] = {}
        for instance, these in ids.items():
            if not self.index.partition_exists(instance):
                continue
            with self.index.pool.connection() as conn:
                rows = conn.execute(f"SELECT id, metadata->'{FORGOTTEN_PLACES}' FROM memory WHERE instance = %s "
                                    f"AND id = ANY(%s) AND metadata ? '{FORGOTTEN_PLACES}'",
                                    (instance, these), prepare=False).fetchall()
            out |= {(instance, i): frozenset(places) for i, places in rows}
        return out

    def _keep_supersessions(self, records: list[MemoryRecord]) -> list[MemoryRecord]:
        """Rewriting an observation keeps what a later correction recorded on it, and, for a correction's,
        what it superseded (`supersede` then finds it again, wherever it was said)."""
        by_key = {(r.instance, r.id): i for i, r in enumerate(records) if r.kind == "observation"}
        for instance in {inst for inst, _ in by_key}:
            ids = [i for inst, i in by_key if inst == instance]
            if not self.index.partition_exists(instance):
                continue
            for row in self.index.get(instance, ids):
                kept = {k: row.metadata[k] for k in (*SUPERSESSION_KEYS, "supersedes") if k in row.metadata}
                if kept:
                    i = by_key[(instance, row.id)]
                    records[i] = records[i].model_copy(update={"metadata": {**records[i].metadata, **kept}})
        return records


def _placed(facts: list[str], forgotten: frozenset[int] = frozenset(), later: frozenset[int] = frozenset()
            ) -> list[tuple[int, int, str]]:
    """(position, place, fact) of each fact, without the statements forgetting took out of the message
    (`DELETED` in their place, `core.admin.deletion`): each keeps its place, the number in its observation's
    id, so the other facts keep theirs and a retried forget of a forgotten id finds nothing. An LLM's facts
    say no `DELETED`: the places the message's row recorded as `forgotten` are passed over instead. The facts
    at the positions `later` (a clause cut from a sentence after its first, `Formed.joined`) take the places
    after all the others', in order: a message older rules formed sentence by sentence keeps each sentence's
    place, and so the supersessions recorded on it (`Formation._keep_supersessions`)."""
    out, place = [], 0
    for n in [*(n for n in range(len(facts)) if n not in later), *sorted(later)]:
        before, said, after = _FORGOTTEN.fullmatch(facts[n]).groups()  # any text: each part may be empty
        place += before.count(DELETED)
        if _ANY_WORD.search(said):
            while place in forgotten:
                place += 1
            out.append((n, place, said))
            place += 1
        place += after.count(DELETED)
    return sorted(out)


def _distinct(placed: list[tuple[int, int, str]], correcting: tuple[int, ...]
              ) -> tuple[list[tuple[int, int, str]], tuple[int, ...]]:
    """`placed` without a fact said again in the message (the same words, case, spacing and punctuation aside):
    each is kept once, at its first place, and the others' places stay as they were. A message repeating one
    sentence 49 times had made 49 observations of one text, which filled the top k of searches about anything
    near it. A correction said again after the fact it repeats corrects through that fact (`correcting`, the
    positions of the correcting facts, as they become)."""
    first: dict[str, int] = {}
    kept, correcting_now = [], set(correcting)
    for n, place, fact in placed:
        words = " ".join(_WORDS.findall(fact.casefold()))
        if words in first:
            if n in correcting_now:
                correcting_now.add(first[words])
            continue
        first[words] = n
        kept.append((n, place, fact))
    return kept, tuple(sorted(n for n in correcting_now if any(n == k for k, _, _ in kept)))


def _previous_turn(thread: list[Thought], message: Thought) -> tuple[str | None, list[str]]:
    """The question before `message` in its chain (None when the user's previous message asked nothing),
    and the ids of the memories the answer to it was given from (its metrics thought's context): a
    correction right after an answer most likely corrects what that answer said."""
    earlier = [t for t in thread if (t.seq, t.timestamp) < (message.seq, message.timestamp) and t.id != message.id]
    previous = next((t.thought for t in reversed(earlier) if t.category == CATEGORY_USER), None)
    question = previous if previous is not None and classify(previous) == "question" else None
    context: list[str] = []
    for t in reversed(earlier):
        if t.category == CATEGORY_METRICS:
            context = [c.id for c in TurnMetrics.from_fields(t.to_hash()).context]
            break
        if t.category == CATEGORY_USER:
            break
    return question, context
