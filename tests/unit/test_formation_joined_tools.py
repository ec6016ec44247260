"""Rules 2026-12-07.14 (batch "langform6" of tests/data/supersessions.jsonl, labelled before the rules read it): a
subject joined to another ("Não, o meu irmão e a Ana vieram jantar.") says nothing of its own, so a correction names
no fact by its words alone (`updates.joined_subjects`, `supersede.choose`); and a name after "work with", "trabalho
com", "arbeite mit" is a tool of the list (a name used, as in English) or a companion, tool or colleague, which a
switch that names it as a thing used replaces ("I switched from Ruby to Go" after "I work with Ruby")."""

import pytest

from core.formation.subjects import SELF
from core.formation.updates import USES, joined_subjects, read, replaces


@pytest.mark.parametrize("text, joined", [
    ("Não, o meu irmão e a Ana vieram jantar.", ["o meu irmão"]),
    ("No, my brother and Ana came to dinner.", ["my brother"]),
    ("Não, a minha irmã e o Tomás foram ao cinema.", ["a minha irmã"]),
    ("Nein, mein Bruder und Lena waren beim Essen.", ["mein Bruder"]),
    ("No, my sister and Tom are coming on Friday.", ["my sister"]),
    ("No, Tom and Ana moved to Porto.", ["Tom"]),  # a name before a verb
    # "e" typed for "é", one clause: the boss is Paulo
    ("Não, o meu chefe e o Paulo.", []),
    ("Não, o meu irmão é o Paulo.", []),
    ("No, it was Lyon and Paris.", []),
    ("No, Lyon and Paris.", []),  # names listed, no verb: no subject
    ("No, I live in Porto and work at Sonae.", []),
    ("Ich und meine Frau sind nach Hamburg gezogen.", []),  # the user opens the subject: one clause
])
def test_the_subjects_a_statement_joins_to_another(text, joined):
    assert joined_subjects(text) == joined


@pytest.mark.parametrize("text, used, companions", [
    # Portuguese and German read a tool one works with as English does ("I work with Python")
    ("Trabalho com Python.", {"python"}, set()),
    ("Ich arbeite mit Python.", {"python"}, set()),
    ("Eu trabalho com Kubernetes e Terraform.", {"kubernetes", "terraform"}, set()),
    ("Trabalho com Python na Farfetch.", {"python"}, set()),
    # a name of no list, tool or colleague, is a companion, in each language ("Ruby", "Julia" are first names too)
    ("I work with Ruby.", set(), {"ruby"}),
    ("I work with Julia every day.", set(), {"julia"}),
    ("I work with Elm at work.", set(), {"elm"}),
    ("Trabalho com Ruby.", set(), {"ruby"}),
    ("Ich arbeite mit Looker.", set(), {"looker"}),
    ("I work with Priya.", set(), {"priya"}),
    ("Agora trabalho com o Miguel.", set(), {"miguel"}),
    ("I work with Priya and Python.", {"python"}, {"priya"}),
    ("I live with Anna.", set(), set()),  # whom one lives with: a person or a pet, as before
    ("Moro com a Ana em Lisboa.", set(), set()),
    ("Jantei com a Ana.", set(), set()),  # "com" and "mit" are read after a verb of living or working only
])
def test_what_one_works_with_is_a_name_used_or_a_companion(text, used, companions):
    reading = read(text)
    assert {v for c in reading.claims if c.attribute == USES and SELF in c.who for v in c.values} == used
    assert {v for who, names in reading.companions if SELF in who for v in names} == companions


@pytest.mark.parametrize("switch, fact, replaced_it", [
    ("I switched from Python to Go.", "Trabalho com Python.", True),
    ("I switched from Python to Rust.", "Ich arbeite mit Python.", True),
    ("I switched from Ruby to Go.", "I work with Ruby.", True),
    ("I stopped using Julia.", "I work with Julia every day.", True),
    ("We replaced Looker with Metabase.", "Ich arbeite mit Looker.", True),
    ("I stopped using Tom's old laptop.", "I work with Tom.", False),  # the owner of what is given up
    ("Julia switched from Python to Go.", "I work with Julia.", False),  # her switch
    ("I switched from Python to Go.", "Trabalho com a Ana.", False),
    ("Agora trabalho com a Priya.", "Trabalho com Python.", False),  # a colleague now replaces no tool
])
def test_a_switch_replaces_what_one_worked_with(switch, fact, replaced_it):
    assert replaces(read(switch), read(fact)) is replaced_it
