"""Who is who: the relations a memory states between a name and a role, and what a query asks of them."""

import pytest

from core.formation.relations import asked, role_of, stated_relations, with_relations


def rel(role: str, name: str, holder: str = "user") -> dict:
    return {"holder": holder, "role": role, "name": name}


@pytest.mark.parametrize(("text", "relations"), [
    ("My daughter Inês loves drawing.", [rel("daughter", "Inês")]),
    ("Inês, my daughter, loves drawing.", [rel("daughter", "Inês")]),
    ("Inês is my daughter.", [rel("daughter", "Inês")]),
    ("My boss, Mr. Tanaka, approved the plan.", [rel("boss", "Tanaka")]),  # the title finds every Mr
    ("my boss Mr. Tanaka said no", [rel("boss", "Tanaka")]),
    ("My manager is Miguel.", [rel("manager", "Miguel")]),
    ("My dog’s name is Max.", [rel("dog", "Max")]),
    ("I have a daughter named Inês.", [rel("daughter", "Inês")]),
    ("The user's daughter is named Inês.", [rel("daughter", "Inês")]),  # an LLM's fact
    ("My little sister Ana and I went to Porto.", [rel("sister", "Ana")]),
    ("Our daughter Inês is 6 and our son Tomás is 3.", [rel("daughter", "Inês"), rel("son", "Tomás")]),
    ("My kids Ana and Leo love the beach.", [rel("child", "Ana"), rel("child", "Leo")]),
    ("Meet Toby, my puppy. He's a bundle of joy.", [rel("dog", "Toby")]),
    ("Andrew: That one is Max, my childhood dog.", [rel("dog", "Max", "Andrew")]),  # a transcript's speaker
    # no relation
    ("Inês turns 7 on October 10.", []),
    ("My girlfriend, Toby and I are going camping.", []),  # a list after the comma, not a name
    ("Hey Caroline, my kids loved it!", []),                # a greeting, not an apposition
    ("My friend's dog Max is cute.", []),                   # the friend's dog
    ("I went with my friends Saturday.", []),
    ("This is my sister.", []),
    ("Seeing my kids' faces so happy.", []),
])
def test_the_relations_a_text_states(text, relations):
    assert stated_relations(text) == relations


def test_an_observation_s_speaker_holds_its_relations():
    meta = with_relations({"speaker": "user"}, "Note: my boss is Miguel.")  # "Note:" is no speaker here
    assert meta["relations"] == [rel("boss", "Miguel")]
    assert with_relations({"a": 1}, "Nothing of the kind.") == {"a": 1}


@pytest.mark.parametrize(("word", "role"), [("kids", "child"), ("children", "child"), ("Mum", "mother"),
                                            ("daughters", "daughter"), ("boss", "boss"), ("puppy", "dog")])
def test_roles_are_stored_singular_under_one_name(word, role):
    assert role_of(word) == role


@pytest.mark.parametrize(("query", "roles", "names"), [
    ("How old is my daughter?", {"user/daughter": "daughter"}, {}),
    ("What do Melanie's kids like?", {f"melanie/{r}": "kids" for r in
                                      ("child", "son", "daughter", "stepson", "stepdaughter")}, {"melanie": "Melanie"}),
    ("What does Audrey view her pets as?", {f"audrey/{r}": "pets" for r in ("pet", "dog", "cat")},
     {"audrey": "Audrey"}),  # "her": the name before it
    ("How old is her son?", {"/son": "son"}, {}),  # nobody named: anyone's
    ("Is Andrew searching for a pet?", {}, {"andrew": "Andrew"}),  # "a pet" is nobody known
    ("When is Inês’s birthday?", {}, {"inês": "Inês"}),
])
def test_what_a_query_asks_of_the_relations(query, roles, names):
    assert asked(query) == (roles, names)
