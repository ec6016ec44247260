"""Which words a query about an attribute adds (`core.retrieval.attributes`), read from formation's table of
attributes (`core.formation.updates.ATTRIBUTES`)."""

from __future__ import annotations

import pytest

from core.formation.subjects import SELF
from core.formation.updates import ATTRIBUTES, ROLES
from core.retrieval.attributes import ATTRIBUTE_WEIGHT, asked_of, asking, attribute_words, naming


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


@pytest.mark.parametrize(("query", "of"), [
    ("Where do I live?", {SELF}),
    ("What car do we drive now?", {SELF}),
    ("What is my diet?", {SELF}),
    ("Where does my sister live now?", {"sister"}),
    ("Where does Dana live?", {"dana"}),
    ("Where is the venue's address?", None),
])
def test_whom_a_question_asks_an_attribute_of(query, of):
    assert asked_of(query) == (of if of is None else frozenset(of))


# (question, memory, said by, counted): a memory counts as stating the attribute only of whom the question asks
# it, read as formation reads whom a fact is about (`core.formation.updates.stated_of`).
OF_WHOM = [
    ("Where do I live?", "I moved to Lisbon last month.", "user", True),
    ("Where do I live?", "We relocated to Porto in May.", None, True),
    ("Where do I live?", "Just moved to Lisbon!", "user", True),  # "I" dropped
    ("Where do I live?", "Dana moved to billing.", "user", False),  # someone else's move
    ("Where do I live?", "My sister Clara moved to Rotterdam.", "user", False),
    ("Where does Dana live?", "Dana moved to Denver last spring.", "user", True),
    ("Where does Dana live?", "Dana Whitfield moved to Denver.", "user", True),  # no subject read: she is named
    ("Where does Dana live?", "I moved to Lisbon last month.", "user", False),
    ("Where does my sister live now?", "My sister Clara moved to Rotterdam for her new job.", "user", True),
    ("Where does my sister live now?", "I moved to Lisbon last month.", "user", False),
    ("Where does Melanie live?", "Melanie: We moved to Denver last year.", None, True),  # a speaker's "we"
    ("Where does Melanie live?", "Caroline: We moved to Denver last year.", None, False),
    ("Who is my boss?", "Dana Whitfield is my manager; she runs the platform org.", "user", True),
    ("Who is my boss?", "I report to Dana now.", "user", True),
    ("Who is my boss?", "Priya is the acting manager while Dana is out.", "user", False),  # nobody's said
    ("Who is my boss?", "Install cert-manager on the staging cluster.", "user", False),
    ("Who is my boss?", "Aisha's manager is Tom Becker.", "user", False),
    ("Who is my boss?", "Tom reports to Dana.", "user", False),
    ("Who is Aisha's boss?", "Aisha's manager is Tom Becker.", "user", True),
    ("Who is the boss of the checkout team?", "Install cert-manager on the staging cluster.", "user", True),
    ("What is my diet?", "I'm vegan now.", "user", True),
    ("What is my diet?", "Ana is vegan.", "user", False),
]


@pytest.mark.parametrize(("query", "memory", "speaker", "counted"), OF_WHOM)
def test_a_memory_states_an_attribute_only_of_whom_it_says(query, memory, speaker, counted):
    ask = asking(query, 1)
    assert ask is not None and ask.states(memory, speaker) is counted


def test_diet_names_a_diet_and_asks_with_its_ways():
    """"What is my diet?" names the diet (formation's table: "diet" names it, no diet is "diet") and
    searches its ways; a memory holding "diet" already covers it."""
    assert "diet" in naming()["diet"]
    assert {"vegan", "vegetarian", "keto"} <= added("What is my diet?").keys()
    assert not asking("What is my diet?", 1).states("My diet is vegan.", "user")
