"""What a memory's vector is made from (`core.index.records.embedding_text`): a reply with the message before
it, at most its last BEFORE_WORDS words; an observation, a fact formation states to stand alone, its own words,
unless it supersedes a fact, which then comes first."""

from datetime import UTC, datetime

from core.index.records import BEFORE_WORDS, embedding_text, embedding_text_of
from core.models import MemoryContext, MemoryRecord

PASTE = " ".join(f"w{i}" for i in range(900))  # a pasted message of 900 words


def record(kind: str, before: list[str], **metadata) -> MemoryRecord:
    return MemoryRecord(instance="i", id="m", kind=kind, content="My cat is called Miso.", metadata=metadata,
                        created_at=datetime(2026, 1, 1, tzinfo=UTC), context=MemoryContext(before=before))


def test_a_reply_is_embedded_after_the_last_words_of_the_message_before_it():
    assert embedding_text(record("user", ["Do you have pets?"])) == "Do you have pets? My cat is called Miso."
    long = record("user", [PASTE])
    kept = long.context.before[0].split()  # as the row keeps it
    assert len(kept) > BEFORE_WORDS
    assert embedding_text(long) == " ".join(kept[-BEFORE_WORDS:]) + " My cat is called Miso."


def test_an_observation_is_embedded_as_its_own_words():
    assert embedding_text(record("observation", [PASTE])) == "My cat is called Miso."
    assert embedding_text_of("My cat is called Miso.", ["Do you have pets?"], alone=True) == "My cat is called Miso."


def test_an_observation_that_supersedes_a_fact_is_embedded_after_it():
    """Formation puts the fact it replaces first in its context: a question in that fact's words finds it."""
    update = record("observation", ["My cat is called Tom."], supersedes="obs-1")
    assert embedding_text(update) == "My cat is called Tom. My cat is called Miso."


def test_a_memory_without_a_message_before_is_its_words():
    assert embedding_text(record("user", [])) == "My cat is called Miso."
