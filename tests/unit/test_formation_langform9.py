"""Rules 2026-12-07.17 (tests/data/clause_splits.jsonl, batch "langform9", labelled before the rules read it): a
statement of two facts of the user's joined by "and I" / "but I" / "und ich" is two facts
(`core.formation.clauses`), never a joined subject ("My wife and I moved to Porto."), an object, or a clause that
refers back; a fact told again in one message is one observation, at its first place, and the other facts keep
their places (`observations._distinct`, `_placed`)."""

import json
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from core.conversation.thoughts import CATEGORY_USER, Thought
from core.formation.clauses import clauses
from core.formation.observations import _distinct, _placed, rules_formation
from core.formation.summaries import statement_sentences

CASES = [json.loads(line) for line in
         (Path(__file__).parents[1] / "data" / "clause_splits.jsonl").read_text().splitlines() if line.strip()]
# Portuguese drops the subject ("… e trabalho como enfermeira"): the rules do not cut it (`clauses`' docstring).
NOT_READ = {"pt"}


def _words(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.casefold()))


@pytest.mark.parametrize("case", CASES, ids=[c["text"][:48] for c in CASES])
def test_the_labelled_sentences(case):
    facts = rules_formation(case["text"]).facts
    if case["text"].startswith("When "):  # read as a question by its "When" (kinds._WH), as before: no fact
        assert facts == []
    elif case["split"] and case["lang"] in NOT_READ:
        assert [_words(f) for f in facts] == [_words(case["text"])]
    else:
        assert [_words(f) for f in facts] == [_words(f) for f in case["facts"]]


def test_a_cut_clause_keeps_the_message_s_words():
    """The first clause is the message's words, without a full stop added (a forget finds them in the
    message), and the next one opens with a capital."""
    assert clauses("I'm a nurse, and we rent a flat in Kreuzberg.") == ["I'm a nurse", "We rent a flat in Kreuzberg."]
    assert clauses("I moved to Porto, and now I work from home.") == ["I moved to Porto", "Now I work from home."]
    assert clauses("I live in Porto and I love it there and I work as a nurse.") == [
        "I live in Porto and I love it there", "I work as a nurse."]
    assert clauses("I live in Porto and I work as a nurse and I love it.") == [
        "I live in Porto", "I work as a nurse and I love it."]


@pytest.mark.parametrize("text, parts", [
    # a clause a forget took out is cut where it was, so the other keeps its place
    ("I moved to Porto last month and [deleted].", ["I moved to Porto last month", "[deleted]."]),
    ("[deleted] and I work as a nurse at São João hospital.", ["[deleted]", "I work as a nurse at São João hospital."]),
    ("My sister lives in Porto and [deleted].", ["My sister lives in Porto and [deleted]."]),
])
def test_a_forgotten_clause(text, parts):
    assert clauses(text) == parts


def test_a_cut_clause_is_placed_after_the_sentences():
    """A message older rules formed sentence by sentence keeps each sentence's place (and the supersessions on
    it); the clause cut off takes the next place after them."""
    formed = rules_formation("I moved to Porto last month and I work as a nurse. My sister is a doctor.")
    assert formed.facts == ["I moved to Porto last month", "I work as a nurse.", "My sister is a doctor."]
    assert formed.joined == {1: 0}
    assert _placed(formed.facts, later=frozenset(formed.joined)) == [
        (0, 0, "I moved to Porto last month"), (1, 2, "I work as a nurse."), (2, 1, "My sister is a doctor.")]
    # forgotten: the clause by its "[deleted]", a sentence by its place on the message's row
    redacted = rules_formation("I moved to Porto last month and [deleted]. My sister is a doctor.")
    assert _placed(redacted.facts, later=frozenset(redacted.joined)) == [
        (0, 0, "I moved to Porto last month"), (2, 1, "My sister is a doctor.")]
    head_gone = rules_formation("[deleted] and I work as a nurse. [deleted]")
    assert _placed(head_gone.facts, later=frozenset(head_gone.joined)) == [(1, 2, "I work as a nurse.")]
    # the cut clause forgotten with its full stop runs into the next sentence, which keeps its own place
    ran_on = rules_formation("I moved to Porto last month and [deleted] My sister is a doctor. I hiked.")
    assert _placed(ran_on.facts, later=frozenset(ran_on.joined)) == [
        (0, 0, "I moved to Porto last month"), (2, 1, "My sister is a doctor."), (3, 2, "I hiked.")]


def test_a_correcting_fact_stays_whole():
    formed = rules_formation("No, I live in Porto and I work as a nurse.")
    assert (formed.kind, formed.facts, formed.correcting) == ("correction", ["I live in Porto and I work as a nurse."],
                                                              (0,))
    told = rules_formation("No, it was Lyon. I gave a talk there and I met Ana.")
    assert told.facts == ["It was Lyon.", "I gave a talk there", "I met Ana."] and told.correcting == (0,)


def test_a_repeated_fact_is_kept_once_at_its_first_place():
    text = "I hiked the Rota Vicentina hiking trail last spring. " * 49 + "My knee hurts."
    formed = rules_formation(text)
    placed, _ = _distinct(_placed(formed.facts, later=frozenset(formed.joined)), formed.correcting)
    assert placed == [(0, 0, "I hiked the Rota Vicentina hiking trail last spring."), (49, 49, "My knee hurts.")]
    # case, spacing and punctuation aside; a forgotten place is still passed over
    facts = ["I live in Porto.", "i live  in porto!", "[deleted]", "My sister is a doctor.", "I LIVE IN PORTO"]
    assert _distinct(_placed(facts, frozenset({4})), ()) == ([(0, 0, "I live in Porto."),
                                                              (3, 3, "My sister is a doctor.")], ())


def test_a_correction_said_again_after_its_fact_corrects_through_it():
    placed = [(0, 0, "I live in Porto."), (1, 1, "I live in Porto."), (2, 2, "I work as a nurse.")]
    assert _distinct(placed, (1,)) == ([(0, 0, "I live in Porto."), (2, 2, "I work as a nurse.")], (0,))


def test_a_summary_s_statements_end_as_sentences():
    at = datetime(2026, 12, 1, tzinfo=UTC)
    said = [Thought(id="m", instance="i", chain_id="c", thought="I moved to Porto last month and I work as a nurse.",
                    timestamp=at, seq=1, category=CATEGORY_USER)]
    assert statement_sentences(said) == [("m", "I moved to Porto last month."), ("m", "I work as a nurse.")]


def test_a_cut_clause_that_says_no_time_takes_its_sentence_s():
    from core.formation.observations import Formation
    from core.models import MemoryRecord

    at = datetime(2026, 12, 7, 10, tzinfo=UTC)
    record = MemoryRecord(instance="i", id="m", kind="user", content="m", created_at=at)
    formed = rules_formation("I went to the gym yesterday and I ran 5k. I live in Porto and I drive a Tesla.")
    made = [Formation(None)._observation(record, formed, fact, n, n) for n, fact in enumerate(formed.facts)]
    assert [(o.content, o.event_time.day, o.metadata.get("event_time_stated")) for o in made] == [
        ("I went to the gym yesterday", 6, "yesterday"), ("I ran 5k.", 6, "yesterday"),
        ("I live in Porto", 7, None), ("I drive a Tesla.", 7, None)]  # the moment said
