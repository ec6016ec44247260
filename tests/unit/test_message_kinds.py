"""The rule-based message kinds measured on a labelled set of realistic chat messages
(tests/data/message_kinds.jsonl, written before the rules: facts, plans, preferences and events,
questions, thanks and small talk, corrections, requests). Precision and recall per kind are printed."""

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from core.formation.kinds import MESSAGE_KINDS, classify, statement_sentences
from core.formation.observations import event_time, rules_formation

MESSAGES = [json.loads(line) for line in
            (Path(__file__).parents[1] / "data" / "message_kinds.jsonl").read_text(encoding="utf-8").splitlines()]
# (precision, recall) the rules reach on the set, printed by the test below (0.97–1.00 each when written),
# less a little room. The rules were written after the set, reading it: these are figures on the data they
# were made with, not on unseen chat.
FLOORS = {"statement": (0.97, 0.97), "question": (0.97, 0.97), "acknowledgement": (0.97, 0.97),
          "correction": (0.95, 0.97), "instruction": (0.95, 0.95)}


def test_the_set_is_large_and_covers_every_kind():
    kinds = [m["kind"] for m in MESSAGES]
    assert len(MESSAGES) >= 300 and len({m["text"] for m in MESSAGES}) == len(MESSAGES)
    assert all(kinds.count(kind) >= 30 for kind in MESSAGE_KINDS)


def test_precision_and_recall_per_kind():
    predicted = [classify(m["text"]) for m in MESSAGES]
    lines, failing = [], []
    for kind in MESSAGE_KINDS:
        flagged = [m for m, p in zip(MESSAGES, predicted) if p == kind]
        actual = [m for m in MESSAGES if m["kind"] == kind]
        hits = sum(m["kind"] == kind for m in flagged)
        precision, recall = hits / max(1, len(flagged)), hits / max(1, len(actual))
        lines.append(f"{kind:<16} precision {precision:.3f}  recall {recall:.3f}  ({len(actual)} labelled)")
        if precision < FLOORS[kind][0] or recall < FLOORS[kind][1]:
            failing.append(kind)
    accuracy = sum(p == m["kind"] for m, p in zip(MESSAGES, predicted)) / len(MESSAGES)
    wrong = [f"{m['text']!r}: {m['kind']} read as {p}" for m, p in zip(MESSAGES, predicted) if p != m["kind"]]
    print(f"\nmessage kinds over {len(MESSAGES)} messages, accuracy {accuracy:.3f}\n" + "\n".join(lines)
          + "\nwrong on:\n  " + "\n  ".join(wrong))
    assert not failing, failing


FOLLOWUPS = [json.loads(line) for line in
             (Path(__file__).parents[1] / "data" / "followups.jsonl").read_text(encoding="utf-8").splitlines()]


def test_held_out_follow_ups():
    """The same rules on a set they were not written from: the 252 follow-ups labelled for the feedback
    rules (tests/data/followups.jsonl), whose "neutral" ones may read as statements or instructions.
    Its acknowledgements include thanks followed by a question ("Thanks. What should I do next?"), a
    question here, so their recall is understated."""
    predicted = [classify(m["text"]) for m in FOLLOWUPS]
    lines = []
    floors = {"correction": (0.95, 0.95), "acknowledgement": (0.95, 0.75), "question": (0.9, 0.95)}
    for kind, (p_floor, r_floor) in floors.items():
        flagged = [m for m, p in zip(FOLLOWUPS, predicted) if p == kind]
        hits = sum(m["kind"] == kind for m in flagged)
        precision = hits / max(1, len(flagged))
        recall = hits / sum(m["kind"] == kind for m in FOLLOWUPS)
        lines.append(f"{kind:<16} precision {precision:.3f}  recall {recall:.3f}")
        assert precision >= p_floor and recall >= r_floor, lines
    neutral = [p for m, p in zip(FOLLOWUPS, predicted) if m["kind"] == "neutral"]
    told = sum(p in ("statement", "instruction") for p in neutral) / len(neutral)
    print(f"\nheld out, {len(FOLLOWUPS)} follow-ups:\n" + "\n".join(lines)
          + f"\nneutral read as statement or instruction: {told:.3f}")
    assert told >= 0.95


@pytest.mark.parametrize("text, kind", [
    ("When is my Lisbon trip?", "question"), ("Thanks!", "acknowledgement"),
    ("No, it was Lyon", "correction"), ("My Lisbon trip is next Friday.", "statement"),
    ("Remember that my locker code is 4412.", "statement"), ("Write me a poem", "instruction"),
    ("Can you remind me what my locker code is?", "question"), ("Could you draft a reply?", "instruction"),
    ("No problem, thanks!", "acknowledgement"), ("No thanks.", "acknowledgement"),
    ("No worries at all.", "acknowledgement"), ("No, it was level 4", "correction"),
    ("No. I said Tuesday.", "correction"), ("No dogs are allowed in my building.", "statement")])
def test_kinds_of_the_issue_s_examples(text, kind):
    assert classify(text) == kind


def test_the_offline_observation_is_the_statement_without_small_talk_or_questions():
    assert statement_sentences("My sister Ana is vegetarian.") == "My sister Ana is vegetarian."
    assert statement_sentences("Hi! I moved to Porto. Do you know it?") == "I moved to Porto."
    assert (statement_sentences("Perfect, and the load test target is 1,200 requests per second.")
            == "The load test target is 1,200 requests per second.")
    assert statement_sentences("And the cut-over slipped to April.") == "And the cut-over slipped to April."


@pytest.mark.parametrize("text, fact", [
    ("Actually, the race is on 25 May.", "The race is on 25 May."),
    ("That's not it, the window is in the bedroom.", "The window is in the bedroom."),
    ("Hmm, that's not it, I finished Middlemarch, not Persuasion.", "I finished Middlemarch, not Persuasion."),
    ("That's not what I said, the meeting is on Wednesday.", "The meeting is on Wednesday."),
    ("You've got it backwards, Tom is my brother.", "Tom is my brother."),
    ("You're mixing them up: Miso is the black one.", "Miso is the black one."),
    ("Oops, I got that wrong: the recital is next Friday.", "The recital is next Friday."),
    ("Actually I changed my mind, I'm going with the green sofa.", "I'm going with the green sofa."),
    ("Actually it's three cats now, we got another one.", "It's three cats now, we got another one."),
])
def test_the_rules_fact_of_a_correction_leaves_its_opening_out(text, fact):
    assert rules_formation(text).facts == [fact]


@pytest.mark.parametrize("text", [
    "No dogs are allowed in my building.", "No one in my family eats pork.", "No sugar in my coffee, ever.",
    "No pets were allowed in my old building, so I moved to a house.", "No-one at work knows I play the cello."])
def test_a_statement_opening_with_no_is_stored_as_said(text):
    """The determiner "no" is part of the fact: read as a correction, these were stored without it, as
    their opposite ("Dogs are allowed in my building.")."""
    formed = rules_formation(text)
    assert (formed.kind, formed.facts) == ("statement", [text])


@pytest.mark.parametrize("text, fact", [
    ("No, it was level 4", "It was level 4"), ("No. I said Tuesday.", "I said Tuesday."),
    ("No it was level 4.", "It was level 4."), ("Nope, the party is on Saturday.", "The party is on Saturday."),
    # A correction for another reason keeps a determiner "no": only the interjection is taken off.
    ("No pets are allowed there, I got that wrong.", "No pets are allowed there, I got that wrong.")])
def test_a_correction_loses_only_an_interjection_no(text, fact):
    assert rules_formation(text).kind == "correction" and rules_formation(text).facts == [fact]


@pytest.mark.parametrize("text, day", [
    ("My flight to Lisbon leaves next Friday.", (2026, 11, 27)),          # read against the message's time
    ("I'm meeting Jonas for lunch on Friday.", (2026, 11, 27)),           # a plan: the coming Friday
    ("I ran my first half marathon on Friday.", (2026, 11, 20)),          # an event: the last one
    ("The conference in Lisbon is on 14 March.", (2027, 3, 14)),          # a plan: next year's
    ("We went to Lyon in May 2024.", (2024, 5, -1)),
    ("We planned the trip last month.", (2026, 10, -1))])
def test_an_observation_s_event_time_is_the_one_stated(text, day):
    moment, said = event_time(text, datetime(2026, 11, 24, 10, tzinfo=UTC))  # a Tuesday
    assert (moment.year, moment.month, moment.day) == day and said
