"""An assistant's reply that says nothing ("Got it.", "Thanks for the update!") against one that tells a fact
("Noted: Ana is vegetarian.", "Lisbon."): `core.formation.kinds.says_nothing`, measured on
tests/data/assistant_replies.jsonl (80 replies: batch "first", 60 labelled before the rule was written; batch
"second", 20 labelled before the rule read them, of which it first read 13 right: 3 of 10 empty, 10 of 10
telling), and what the index
row of such a reply records (`core.conversation.indexing.thought_record`)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from core.conversation.indexing import empty_reply, thought_record
from core.conversation.thoughts import CATEGORY_ASSISTANT, CATEGORY_USER, Thought
from core.formation.kinds import says_nothing

LABELLED = [json.loads(line) for line in
            (Path(__file__).parents[1] / "data" / "assistant_replies.jsonl").read_text().splitlines() if line]


def test_the_labelled_replies_are_read_right():
    said = [(r["says_nothing"], says_nothing(r["text"])) for r in LABELLED]
    hit = sum(truth and got for truth, got in said)
    precision = hit / max(1, sum(got for _, got in said))
    recall = hit / sum(truth for truth, _ in said)
    print(f"\nassistant replies ({len(said)}): says nothing precision {precision:.3f} recall {recall:.3f}")
    wrong = [r["text"] for r, (truth, got) in zip(LABELLED, said, strict=True) if truth != got]
    assert len(LABELLED) == 80 and sum(t for t, _ in said) == 40
    assert not wrong, wrong


@pytest.mark.parametrize("reply", [
    "Noted: Ana is vegetarian.",              # a fact after the receipt
    "Thanks! Your table is booked for 8pm.",  # a fact after the thanks
    "Have a look at the second draft.",       # "have a …" that is no wish
    "Enjoy the soup: it's made with chickpeas and spinach.",
    "No.",                                     # an answer, though terse
    "Sure, the password is tulip-42.",
    "🎉",                                      # no words: not read as a reply that says nothing
    "",
    "ok, " * 2000 + "and the code is 4412",   # read at once: backtracking took minutes over such a text
])
def test_near_misses_say_something(reply):
    assert not says_nothing(reply)


@pytest.mark.parametrize("reply", [
    "Got it!\n\nLet me know if there's anything else I can do for you.",
    "Answer #12: noted.",
    "Thank you so much for sharing that with me! 😊",
    "I'm so sorry to hear that.",
    "Congratulations on the new flat!",
])
def test_more_replies_that_say_nothing(reply):
    assert says_nothing(reply)


def _thought(text: str, category: str) -> Thought:
    return Thought(id="t1", instance="i", chain_id="c", thought=text, thought_number=1, total_thoughts=1,
                   next_thought_needed=True, category=category, timestamp=datetime(2026, 12, 1, tzinfo=UTC))


def test_the_row_of_an_empty_reply_is_an_acknowledgement():
    """Kept in the index, left out of retrieval as a user's acknowledgement is (`retrieve_kinds`)."""
    row = thought_record(_thought("Thanks for the update!", CATEGORY_ASSISTANT))
    assert row.kind == "assistant" and row.metadata["message_kind"] == "acknowledgement"
    told = thought_record(_thought("Noted: Ana is vegetarian.", CATEGORY_ASSISTANT))
    assert "message_kind" not in told.metadata


def test_a_users_thanks_is_left_to_formation():
    """A user's message gets its kind from formation (`core.formation.observations`), not from here."""
    user = _thought("Thanks for the update!", CATEGORY_USER)
    assert not empty_reply(user) and "message_kind" not in thought_record(user).metadata

