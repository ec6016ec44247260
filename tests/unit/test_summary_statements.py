"""What an extractive session summary is made of (`core.formation.summaries.statement_sentences`): the
statements formation keeps of each user message that tell something, not requests, thanks, remarks on the
answer or pasted code. Measured on the labelled sets: no labelled fact is left out but one, and the filler
of a user's ChatGPT import is."""

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from core.conversation.thoughts import CATEGORY_ASSISTANT, CATEGORY_USER, Thought
from core.formation.observations import rules_formation
from core.formation.summaries import (
    extractive_summary,
    repeats_an_observation,
    statement_sentences,
    tells_something,
)

DATA = Path(__file__).parents[1] / "data"


def thoughts(*said: str) -> list[Thought]:
    return [Thought(id=f"m{i}", instance="i", chain_id="c", thought=text, timestamp=datetime.now(UTC),
                    category=CATEGORY_USER if i % 2 == 0 else CATEGORY_ASSISTANT)
            for i, text in enumerate(x for text in said for x in (text, "Sure, here you go."))]


# The filler that filled a 1,000-conversation import's summaries (826 summaries, 1,681 sentences: 828 of
# them instructions; "Hmm, that didn't work." in 85, "Make it more casual." in 82).
FILLER = ["Make it more casual.", "Hmm, that didn't work.", "Good, now in bullet points.", "Can you make it shorter?",
          "Thanks, that helps.", "Perfect, thank you!", "Can you put that in a table?", "Why is that?",
          "Explain how mortgages work in simple terms.", "Write a status update for Project Falcon for this week.",
          "That's too expensive, cheaper options?", "Great. One more question:", "Can you double-check that?",
          ("I get this error when running a rate limiter with Redis in Go:\n\n```\nredis.exceptions.ConnectionError: "
           "Error 111 connecting to localhost:6379. Connection refused.\n```")]


@pytest.mark.parametrize("message", FILLER)
def test_filler_leaves_nothing_to_summarise_but_what_it_tells(message):
    told = [s for _, s in statement_sentences(thoughts(message))]
    assert all("```" not in s and "refused" not in s for s in told)
    assert told in ([], ["I get this error when running a rate limiter with Redis in Go."])


def test_a_request_s_message_leaves_nothing_and_a_statement_s_message_its_facts():
    said = thoughts("Make it more casual. Here in Chicago it's been really hot all week.",
                    "Hmm, that didn't work. I work at Acme Logistics and the team is stretched thin right now.",
                    "Maya has a fever of 101, when should I call the pediatrician?")
    assert statement_sentences(said) == [
        ("m2", "I work at Acme Logistics and the team is stretched thin right now."),
        ("m4", "Maya has a fever of 101.")]
    assert extractive_summary(thoughts(*FILLER[:-1])) is None


def test_no_labelled_fact_is_taken_for_filler():
    """The facts of tests/data/told_facts.jsonl and of the statements and corrections of
    tests/data/message_kinds.jsonl (279): one is left out, a remark on what the assistant showed."""
    facts = [f for line in (DATA / "told_facts.jsonl").read_text(encoding="utf-8").splitlines()
             for f in json.loads(line)["facts"]]
    for line in (DATA / "message_kinds.jsonl").read_text(encoding="utf-8").splitlines():
        message = json.loads(line)
        if message["kind"] in ("statement", "correction"):
            facts += rules_formation(message["text"]).facts
    left_out = [f for f in facts if not tells_something(f)]
    print(f"\n{len(facts)} labelled facts, {len(left_out)} taken for filler: {left_out}")
    assert left_out == ["That video you showed me about knots helped a lot."]


@pytest.mark.parametrize("statement, tells", [
    ("That didn't work.", False), ("It's too long.", False), ("That's not what I asked.", False),
    ("Now in bullet points.", False), ("With more detail on the second point.", False),
    ("Thanks for the tips!", False), ("[photo: IMG_4032.jpeg]", False), ("[file: notes.pdf] [photo: a.jpg]", False),
    ("That's why we moved to Denver.", True), ("It was my sister, not my brother.", True),
    ("This weekend we go camping.", True), ("In May we moved to Porto.", True), ("I'm vegetarian.", True),
    ("The basil needs watering every morning.", True), ("It's three cats now, we got another one.", True)])
def test_what_tells_something(statement, tells):
    assert tells_something(statement) is tells


def test_a_summary_that_one_observation_says_word_for_word_repeats_it():
    observations = ["Project Falcon moves our shipment tracking from RabbitMQ to Kafka.", "I live in Chicago."]
    assert repeats_an_observation("Project Falcon moves our shipment tracking from RabbitMQ to Kafka.", observations)
    assert repeats_an_observation("project falcon moves our shipment tracking", observations)
    assert not repeats_an_observation("I live in Chicago. Project Falcon moves our shipment tracking from "
                                      "RabbitMQ to Kafka.", observations)
    assert not repeats_an_observation("Falcon moves", [])
