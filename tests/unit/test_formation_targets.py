"""Which fact a correction of an attribute supersedes (`core.formation.supersede._targets`, 2026-12-06): the
one stating the attribute's old value, not one that only mentions its new value ("Actually I moved to
Porto." corrects "I live in Lisbon.", not "I signed up for the Porto half marathon…"). The labelled cases
(tests/data/supersessions.jsonl, batch "shared name") are formed for real by `python -m
benchmarks.corrections`; these pin the reading offline."""

import json
from pathlib import Path

import pytest

from core.formation.supersede import _changes, _names, _states, mentions_only
from core.formation.updates import read, replaces

CASES = Path(__file__).parents[1] / "data" / "supersessions.jsonl"
MARATHON = "I signed up for the Porto half marathon on 2 November; my goal is under 1 hour 55."


def test_a_text_s_names_are_its_capitalised_words_but_a_sentence_s_first():
    assert _names("Actually, my dentist is Dr. Lee.") == {"dr", "lee"}
    assert "porto" in _names("Actually I moved to Porto.") and "actually" not in _names("Actually I moved to Porto.")
    assert _names("Maya is 6. She loves Lisbon.") == {"lisbon"}


@pytest.mark.parametrize("said, fact", [
    ("Actually I moved to Porto.", MARATHON),
    ("Actually we live in Porto now.", "Our favourite restaurant is a tasca in Porto called Casa Guedes."),
    ("No, I live in Valencia.", "My flight to Valencia leaves at 7:40 on Friday."),
    ("Actually, I work at Globex.", "I went to the Globex developer conference in Berlin last spring."),
    ("Actually, my dentist is Dr. Lee.", "Dr. Lee gave a talk about flossing at the library."),  # a title aside
    ("Actually, Maya is 6.", "Maya's swimming gala is on 6 June."),  # the subject's name aside
    ("Actually, I'm vegetarian.", "The vegetarian place near the office does a great curry."),
    ("No, my sister lives in Braga.", "We had lunch in Braga with my sister."),
])
def test_a_fact_named_by_the_new_value_alone_is_only_mentioned(said, fact):
    assert mentions_only(said, _changes(read(said)), fact)


@pytest.mark.parametrize("said, fact", [
    ("Actually I moved to Porto.", "I live in Lisbon."),  # holds no new value
    # it states the attribute: the one corrected
    ("Actually, I rent a flat in Braga for the summer, not Porto.", "I rent a flat in Braga, near the station."),
    ("Sorry, my job interview at Globex is on Friday, not Thursday.", "I have a job interview at Globex on Thursday."),
    # named by more than the value: a word, or what the contrast says is no longer so
    ("Actually, I work at Globex.", "I met the Globex team at a conference about remote work."),
    ("Actually I moved to Porto, not Lisbon.", "I ran the Porto half marathon from Lisbon."),
])
def test_a_fact_named_by_more_or_stating_the_attribute_is_not(said, fact):
    assert not mentions_only(said, _changes(read(said)), fact)


@pytest.mark.parametrize("said", [
    "Actually, the Porto half marathon is on 9 November.",  # no attribute
    "Actually, I'm driving to Porto, not flying.",  # a vehicle's values are any name of its clause
    "No, my job interview with Globex is on Friday.",  # a name used: any name after "with"
])
def test_a_correction_of_no_attribute_or_a_loose_one_changes_none(said):
    assert _changes(read(said)) == []


def test_the_labelled_shared_names():
    """Each correction of the batch: no fact it only mentions is the one labelled; where it mentions one and
    corrects one, the one it corrects states the attribute and is replaced (what `_targets` supersedes)."""
    cases = [json.loads(line) for line in CASES.read_text(encoding="utf-8").splitlines() if line.strip()]
    cases = [c for c in cases if c.get("batch") == "shared name" and c["group"] != "update"]
    moved = 0
    for case in cases:
        said = read(case["later"])
        claims = _changes(said)
        mentioned = [fact for fact in case["told"] if claims and mentions_only(case["later"], claims, fact)]
        assert case["corrects"] not in mentioned, case["later"]
        if mentioned and case["corrects"]:
            assert _states(read(case["corrects"]), claims) and replaces(said, read(case["corrects"]),
                                                                         correction=True), case["later"]
        moved += bool(mentioned)
    assert len(cases) == 21 and moved == 13  # 11 corrections of an attribute, 2 with no fact stating it
