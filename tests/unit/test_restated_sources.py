"""Where a fact an LLM restated was said in its message (`core.admin.sources.restated_from`): the message's
statements go to the facts sharing the most content words with them."""

import pytest

from core.admin.sources import restated_from, stems

MESSAGE = ("I live in Lisbon near the old tower. My sister Marta is a nurse at the children's hospital. "
           "I have a dog. He is called Rex.")
LIVES = "The user lives in Lisbon, close to an old tower."
MARTA = "The user's sister Marta works as a nurse in a children's hospital."
REX = "The user has a dog named Rex."


@pytest.mark.parametrize(("fact", "others", "found"), [
    (LIVES, [MARTA, REX], ["I live in Lisbon near the old tower."]),
    (MARTA, [LIVES, REX], ["My sister Marta is a nurse at the children's hospital."]),
    # A sentence that refers back stays with the one before it: one statement.
    (REX, [LIVES, MARTA], ["I have a dog. He is called Rex."]),
    # Sharing "Lisbon" with the first statement and more with the second: the second alone.
    ("Marta the nurse lives in Lisbon too.", [LIVES], ["My sister Marta is a nurse at the children's hospital."]),
    # Drawn from two statements: both.
    ("Marta the nurse has a dog called Rex.", [LIVES], ["My sister Marta is a nurse at the children's hospital.",
                                                        "I have a dog. He is called Rex."]),
    ("The user enjoys jazz.", [LIVES], []),  # no word in common: nothing sound to redact
])
def test_a_restated_fact_is_found_in_the_statements_it_shares_most_words_with(fact, others, found):
    assert restated_from(fact, others, MESSAGE) == found


def test_a_statement_told_better_by_another_fact_is_still_the_fact_s_own_when_it_has_no_other():
    said = "My sister Ana, who lives in Porto, is a vegetarian chef at the Casa Verde restaurant."
    assert restated_from("Ana lives in Porto.", ["Ana is a vegetarian chef at Casa Verde restaurant."],
                         said) == [said]


def test_stems_leave_out_function_words_and_how_an_llm_names_the_user():
    assert stems("The user's sister lives in Lisbon") == stems("my sister lived in lisbon") == {"sister", "liv",
                                                                                                  "lisbon"}
