"""Which words a query about an attribute adds (`core.retrieval.attributes`), read from formation's table of
attributes (`core.formation.updates.ATTRIBUTES`)."""

from __future__ import annotations

import pytest

from core.formation.updates import ATTRIBUTES, ROLES
from core.retrieval.attributes import ATTRIBUTE_WEIGHT, attribute_words, naming


def added(query: str) -> dict[str, str]:
    return {r.word: r.stands for r in attribute_words(query)}


def test_each_attribute_is_named_by_the_first_word_of_its_ways():
    assert naming().keys() == ATTRIBUTES.keys() | ROLES.keys()
    assert {"live", "moved", "relocated", "address"} <= set(naming()["residence"])
    assert {"work", "job", "employer", "started"} <= set(naming()["employer"])
    assert {"drive", "car", "vehicle"} <= set(naming()["vehicle"])
    assert {"goal", "aim", "target"} <= set(naming()["goal"])
    # A way whose first word alone says much else is left out: "rent … a flat" is not "rent a car"
    assert "rent" not in naming()["residence"] and "joined" not in naming()["employer"]
    # "report to" names a manager, "the nightly report" none
    assert {"manager", "boss", "supervisor"} == set(naming()["manager"])


@pytest.mark.parametrize(("query", "word", "stands"), [
    ("Where do I live now?", "moved", "live"),
    ("Where do I work now?", "job", "work"),
    ("What car do I drive now?", "vehicle", "drive"),
    ("What is my goal time for the half marathon?", "aim", "goal"),
])
def test_a_question_about_an_attribute_adds_its_other_words(query, word, stands):
    assert added(query)[word] == stands


def test_the_added_words_weigh_less_than_the_query_s_own():
    words = attribute_words("Where do I live now?")
    assert all(r.weight == ATTRIBUTE_WEIGHT < 1 for r in words)
    # in the query's vector, all of them together weigh ATTRIBUTE_WEIGHT
    assert sum(r.in_vector for r in words) == pytest.approx(ATTRIBUTE_WEIGHT)


def test_inflections_of_the_query_s_words_add_nothing():
    assert not {"live", "lives", "living", "moved"} & added("Which city did I live in before we moved?").keys()
    assert list(added("What is my goal?")).count("aiming") == 0  # "aim" stands for both


def test_a_question_naming_no_attribute_adds_nothing():
    assert attribute_words("How old is Maya?") == []
    assert attribute_words("Evenings in the old town are lively") == []
