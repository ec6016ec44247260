"""The rules `core.formation.supersede.choose` reads a correction with: its words (accents aside), what its
contrast says is no longer so, and whom it and a candidate fact are about (`core.formation.subjects`)."""

import pytest

from core.formation.subjects import OTHER, SELF, subjects
from core.formation.supersede import _judges, contrasted, shared, states, words


def test_accented_names_are_one_word_each():
    """Split at "ê" and "á", "Inês" had become "in" (a stop word) and "s", "Tomás" "tom"."""
    assert {"ines", "tomas"} <= words("Our daughter Inês is 6 and our son Tomás is 3.")
    assert words("Inês goes to Escola Básica") == words("Ines goes to Escola Basica")


@pytest.mark.parametrize("text, was, whom", [
    (("Update: actually we moved to Porto in May, we live in Bonfim now, not Lisbon anymore. What are good "
      "parks in Bonfim for kids?"), {"lisbon"}, set()),
    ("Sorry, the ryokan is for three nights, not four.", {"four"}, set()),
    ("No, Tomás is 4 now, not 3.", {"3"}, set()),
    ("Not exactly, the rent is 1,200 not 1,400.", {"1", "400"}, set()),
    ("Actually, my husband is allergic to penicillin, not me.", set(), {SELF}),
    ("Tomás had his allergy test today: he is allergic to eggs, not to peanuts like me.", set(), set()),
    ("Are you sure it is Lyon, not Paris?", set(), set())])
def test_what_a_contrast_says_is_no_longer_so(text, was, whom):
    assert contrasted(text) == (was, whom)


@pytest.mark.parametrize("text, about", [
    ("I'm allergic to peanuts and to penicillin.", {SELF}),
    ("Tomás had his allergy test today: he is allergic to eggs, not to peanuts like me.", {OTHER}),
    ("My son is allergic to eggs, not peanuts.", {OTHER}),
    ("We live in Lisbon, in Alfama, with my wife Ana. Our daughter Inês is 6 and our son Tomás is 3.",
     {SELF, OTHER}),
    ("My car is a silver Honda Civic.", {SELF}), ("Jonas and I have lunch on Friday.", {SELF}),
    ("Ana is my sister.", {OTHER}), ("The user's son is allergic to eggs.", {OTHER}),
    ("It was Lyon.", set()), ("I said Tuesday, not Thursday.", set()), ("Leo is turning seven on Saturday.", set()),
    ("The race is on 25 May.", set())])
def test_whom_a_fact_is_about(text, about):
    assert subjects(text) == about


def test_the_lisbon_correction_shares_few_words_with_the_fact_it_corrects():
    """Why the contrast counts: "we live in Bonfim now, not Lisbon anymore" holds 2 of the 9 words of the
    Lisbon fact (under NAMES, 0.25); the fact holds what the contrast says is no longer so."""
    message = ("Update: actually we moved to Porto in May, we live in Bonfim now, not Lisbon anymore. What are "
               "good parks in Bonfim for kids?")
    fact = words("We live in Lisbon, in Alfama, with my wife Ana. Our daughter Inês is 6 and our son Tomás is 3.")
    assert shared(words(message), fact) < 0.25 and contrasted(message)[0] <= fact


@pytest.mark.parametrize("text, fact, said", [
    ("I live in Lisbon. My sister is a nurse. I drink green tea.", "I live in Lisbon.", True),
    ("My sister is a nurse. I drink green tea.", "I live in Lisbon.", False),
    ("No, it was Lyon.", "It was Lyon.", True),  # a correction's fact without its opener
    # A statement of two sentences is said when both are.
    ("My sister lives in Berlin. She is a nurse. I like tea.", "My sister lives in Berlin. She is a nurse.", True),
    ("My sister lives in Berlin.", "My sister lives in Berlin. She is a nurse.", False),
    ("I live in Porto now.", "I live in Lisbon.", False), ("Thanks!", "Ok.", False)])
def test_whether_a_text_says_a_statement(text, fact, said):
    """A session summary is superseded with a statement when it says it (`states`): a summary of the
    message's other statements stays current."""
    assert states(text, fact) is said


@pytest.mark.parametrize("correction, fact, judges", [
    ("Actually, that restaurant was great.", "We had dinner at Taberna do Largo last night; the restaurant was packed.",
     True),
    ("Actually, the food was awful.", "The food at Taberna was amazing.", False),  # an opinion said again
    ("Actually, the race is on 25 May.", "The race is on 18 May.", False)])
def test_an_opinion_corrects_no_fact_but_an_opinion(correction, fact, judges):
    assert _judges(words(correction), words(fact)) is judges
