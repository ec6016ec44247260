"""Synthetic but realistic memories for the speed benchmark: conversations between a user and an
assistant about everyday topics, with varied vocabulary and lengths, spread over a year.

Deterministic for a seed, so two runs (and ours and the peer's) index the same texts. Each chain is a
conversation of 4–12 turns about one or two topics; sentences are built from topic nouns, names,
places, verbs and fillers with a Zipf-like skew, so a few words are common and most are rare, as in
real text. Queries are questions about what one memory says, never copies of it.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from itertools import groupby
from pathlib import Path
from typing import Literal

from core.index.records import event_time_of
from core.index.text import conversation_context
from core.models import MemoryContext, MemoryRecord

TOPICS: dict[str, str] = {
    "travel": "flight hotel passport luggage airport train itinerary beach museum visa ferry hostel "
              "souvenir map guidebook layover backpack cruise sunset harbour mountains",
    "cooking": "recipe oven garlic pasta risotto sourdough spices curry dumplings marinade skillet "
               "basil tomatoes broth pastry dessert lentils tofu barbecue pancakes",
    "fitness": "marathon gym treadmill yoga stretching squats cycling swimming coach protein "
               "sprint injury knee physiotherapy hiking rowing pilates kettlebell triathlon",
    "work": "deadline meeting manager promotion spreadsheet client budget presentation report "
            "quarter colleague interview contract invoice proposal onboarding roadmap",
    "software": "database deploy server bug refactor python kubernetes latency cache migration "
                "repository review pipeline container index query schema release",
    "family": "sister brother parents grandmother cousin wedding birthday nephew daughter son "
              "anniversary reunion babysitter holidays niece uncle",
    "pets": "dog puppy cat kitten vet leash aquarium parrot hamster adoption grooming kibble "
            "collar shelter walk training rabbit",
    "music": "guitar piano concert album playlist violin choir drums festival lyrics band "
             "rehearsal vinyl jazz orchestra clarinet headphones",
    "health": "doctor appointment prescription allergy sleep migraine dentist therapy vitamins "
              "checkup blood pressure insurance clinic vaccine meditation",
    "home": "apartment lease renovation kitchen garden plumber furniture paint balcony mortgage "
            "landlord roof curtains sofa heating",
    "finance": "savings pension taxes investment loan stocks mortgage budget salary bonus "
               "expenses crypto insurance refund account",
    "books": "novel author chapter library poetry biography fantasy thriller bookshelf audiobook "
             "memoir manuscript publisher bestseller",
    "gardening": "tomatoes seedlings compost roses greenhouse soil pruning tulips herbs lawn "
                 "fertilizer orchard watering cucumbers",
    "learning": "course exam spanish lecture homework certificate tutor vocabulary university "
                "scholarship thesis seminar grammar workshop",
    "cars": "engine tyres mechanic insurance electric charging garage brakes license parking "
            "roadtrip battery dashboard mileage",
    "art": "painting canvas sketch pottery sculpture gallery watercolor portrait exhibition "
           "photography clay mural easel",
    "volunteering": "charity shelter fundraiser donation community mentor food bank cleanup "
                    "volunteers nonprofit campaign",
    "sports": "football tennis match league tournament referee stadium season goalkeeper "
              "basketball chess medal scoreboard",
}
NAMES = ["Alice", "Bob", "Carmen", "Dmitri", "Elena", "Farah", "George", "Hana", "Ivan", "Julia", "Kenji",
         "Lena", "Marco", "Nadia", "Omar", "Priya", "Quinn", "Rosa", "Samir", "Tomas", "Uma", "Viktor",
         "Wen", "Yusuf", "Zoe", "Aiko", "Bruno", "Chloe", "Diego", "Esme"]
PLACES = ["Lisbon", "Berlin", "Nairobi", "Osaka", "Toronto", "Lima", "Oslo", "Seville", "Hanoi", "Krakow",
          "Dublin", "Austin", "Porto", "Quito", "Zurich", "Marseille", "Vancouver", "Tbilisi", "Cairo",
          "Melbourne"]
VERBS = ["booked", "finished", "started", "cancelled", "planned", "tried", "fixed", "bought", "moved",
         "postponed", "visited", "cleaned", "organised", "shared", "forgot", "remembered", "recommended",
         "compared", "scheduled", "enjoyed", "skipped"]
ADJS = ["great", "stressful", "expensive", "quiet", "busy", "relaxing", "tricky", "new", "old", "early",
        "late", "amazing", "boring", "cheap", "huge", "tiny", "noisy", "lovely"]
FILLERS = ["I think", "honestly", "by the way", "as I said", "last time", "again", "maybe",
           "to be fair", "if possible", "this week", "next month", "on Sunday", "yesterday", "soon"]
USER_OPENERS = ["Can you remember that", "Note that", "Just so you know,", "Reminder:", "Update:",
                "I wanted to tell you that", "Quick question about", "So,"]
ASSISTANT_OPENERS = ["Got it:", "Noted —", "Sure.", "Understood,", "Thanks for the update:",
                     "Here is what I have:", "Okay,"]
QUESTION_FRAMES = ["What did I say about the {a} and the {b}?", "When did {n} mention the {a}?",
                   "Which {a} did we talk about with {n}?", "What was the plan for the {a} in {p}?",
                   "Did I tell you about the {a} or the {b}?", "Remind me about {a} and {b}",
                   "what happened with the {a}", "{a} {b} {n}"]


def _zipf(rng: random.Random, items: list[str], s: float = 1.1) -> str:
    """An item with probability ∝ 1 / rank^s: a few common, many rare."""
    weights = _ZIPF_CACHE.get((len(items), s))
    if weights is None:
        weights = _ZIPF_CACHE[(len(items), s)] = [1 / (i + 1) ** s for i in range(len(items))]
    return rng.choices(items, weights)[0]


_ZIPF_CACHE: dict[tuple[int, float], list[float]] = {}
_TOPIC_WORDS = {t: words.split() for t, words in TOPICS.items()}


def _clause(rng: random.Random, topic: str) -> str:
    words = _TOPIC_WORDS[topic]
    shape = rng.randrange(6)
    a, b = _zipf(rng, words), _zipf(rng, words)
    if shape == 0:
        return f"{rng.choice(NAMES)} {rng.choice(VERBS)} the {a} for the {b}"
    if shape == 1:
        return f"the {a} in {rng.choice(PLACES)} was {rng.choice(ADJS)}"
    if shape == 2:
        return f"we {rng.choice(VERBS)} the {a} {rng.choice(FILLERS)}"
    if shape == 3:
        return f"{rng.choice(FILLERS)} the {a} and the {b} are {rng.choice(ADJS)}"
    if shape == 4:
        return f"I {rng.choice(VERBS)} {rng.randint(2, 90)} {a} with {rng.choice(NAMES)}"
    return f"my {a} needs a {rng.choice(ADJS)} {b}"


def _text(rng: random.Random, topics: list[str], opener: str) -> str:
    # Lengths from a few words to a long paragraph: 1–9 clauses, most short.
    n = min(9, max(1, int(rng.lognormvariate(0.7, 0.7))))
    clauses = [_clause(rng, rng.choice(topics)) for _ in range(n)]
    return f"{opener} {'. '.join(clauses)}."


@dataclass(frozen=True)
class Turn:
    instance: str
    chain_id: str
    index: int
    role: str
    text: str
    at: datetime


def instance_sizes(n: int, instances: int) -> list[int]:
    """Unequal instances, as real users are: the first holds about half, the rest share the remainder."""
    if instances == 1:
        return [n]
    first = n // 2
    rest = [(n - first) // (instances - 1)] * (instances - 1)
    rest[-1] += n - first - sum(rest)
    return [first, *rest]


def conversations(n: int, *, instances: int = 5, prefix: str = "bench", seed: int = 7,
                  start: datetime | None = None, chain_prefix: str = "c") -> Iterator[Turn]:
    """`n` turns in total over `instances` instances, in chains of 4–12 turns, over the past year."""
    rng = random.Random(seed)
    start = start or datetime(2025, 1, 1, tzinfo=UTC)
    topics = list(TOPICS)
    for i, size in enumerate(instance_sizes(n, instances)):
        instance = f"{prefix}-{i}"
        made, chain = 0, 0
        while made < size:
            length = min(rng.randint(4, 12), size - made)
            chosen = rng.sample(topics, rng.choice((1, 1, 2)))
            at = start + timedelta(seconds=rng.uniform(0, 365 * 86400))
            for k in range(length):
                role = "user" if k % 2 == 0 else "assistant"
                opener = rng.choice(USER_OPENERS if role == "user" else ASSISTANT_OPENERS)
                yield Turn(instance, f"{chain_prefix}{chain:06d}", k, role, _text(rng, chosen, opener), at)
                at += timedelta(seconds=rng.uniform(20, 600))
            made += length
            chain += 1


def records(turns: Iterable[Turn], *, context: Literal["before", "both"] | None = "before"
            ) -> Iterator[MemoryRecord]:
    """The turns as memory-index records with their conversation as context: the three messages before
    each, as `sync_index` indexes ui_remember's thoughts ("before"); the three before and after, as a
    conversation import does ("both", `with_conversation_context`); or none. Each record is made once,
    with its context (`conversation_context`, the window the import path uses), as a caller of `bulk_load`
    makes it: `with_conversation_context` copies every record made before (2.4 s of CPU per 100,000),
    which a timed load would otherwise pay."""
    for _, chain in groupby(turns, key=lambda t: (t.instance, t.chain_id)):
        chain = list(chain)
        texts = [t.text for t in chain]
        for i, t in enumerate(chain):
            near = conversation_context(texts, i, after=context == "both") if context else MemoryContext()
            yield MemoryRecord(instance=t.instance, id=f"{t.chain_id}-{t.index}", kind=t.role, content=t.text,
                               created_at=t.at, chain_id=t.chain_id, event_time=event_time_of(t.at),
                               context=near)


def write_turns(turns: Iterable[Turn], path: Path) -> Path:
    """The turns as JSON lines in `path`: made before a measurement, so making up their text is not timed."""
    with path.open("w") as f:
        for t in turns:
            f.write(json.dumps([t.instance, t.chain_id, t.index, t.role, t.text, t.at.isoformat()]) + "\n")
    return path


def read_turns(path: Path) -> Iterator[Turn]:
    """The turns `write_turns` wrote, one line at a time (a million turns are never all in memory)."""
    with path.open() as f:
        for line in f:
            instance, chain_id, index, role, text, at = json.loads(line)
            yield Turn(instance, chain_id, index, role, text, datetime.fromisoformat(at))


def queries(n: int, *, instances: list[tuple[str, int]], seed: int = 11) -> list[tuple[str, str]]:
    """`n` distinct (instance, question) pairs, instances drawn in proportion to their size."""
    rng = random.Random(seed)
    names, weights = [i for i, _ in instances], [s for _, s in instances]
    out: dict[tuple[str, str], None] = {}  # insertion-ordered, so the order is the seed's
    while len(out) < n:
        words = _TOPIC_WORDS[rng.choice(list(TOPICS))]
        q = rng.choice(QUESTION_FRAMES).format(a=_zipf(rng, words), b=_zipf(rng, words), n=rng.choice(NAMES),
                                               p=rng.choice(PLACES))
        out[(rng.choices(names, weights)[0], q)] = None
    return list(out)
