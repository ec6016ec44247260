"""Rules 2026-12-07.15 (batch "langform7" of tests/data/supersessions.jsonl, labelled before the rules read it): a
German noun after an article or a possessive is no name one works with ("Ich arbeite mit dem Team an der App"); a
switch said in Portuguese or German names what it replaces, as "I switched from Ruby to Go" does ("Mudei do Ruby para
Go", "Ich bin von Ruby auf Go umgestiegen"); and a capitalised thing joined by "and" to another is no subject of two
people ("Will and power of attorney signed last week", `joined_subjects`)."""

import pytest

from core.formation.subjects import SELF
from core.formation.updates import USES, joined_subjects, read, replaces, says_a_change


@pytest.mark.parametrize("text, companions", [
    ("Ich arbeite mit dem Team an der App.", set()),
    ("Ich arbeite mit meinem Kollegen.", set()),
    ("Ich arbeite mit der Firma.", set()),
    ("Ich arbeite mit den Teams in Berlin und München.", set()),
    ("Ich arbeite mit meinem Chef an der Präsentation.", set()),
    ("Ich arbeite mit Lena.", {"lena"}),  # a name alone is still one
    ("Ich arbeite mit Looker.", {"looker"}),
    ("Ich arbeite mit meinem Kollegen Jonas.", {"jonas"}),  # a name after the noun
    ("Ich arbeite mit Lena und dem Team.", {"lena"}),
    ("Ich arbeite mit meinem MacBook.", {"macbook"}),  # a thing's name after a possessive
    ("Ich arbeite mit meinem ThinkPad.", {"thinkpad"}),
    ("Agora trabalho com o Miguel.", {"miguel"}),  # a Portuguese article before a name, as before
    ("I work with Priya.", {"priya"}),
])
def test_a_german_noun_is_no_name_one_works_with(text, companions):
    assert {v for who, names in read(text).companions if SELF in who for v in names} == companions


@pytest.mark.parametrize("text, was", [
    ("Mudei do Ruby para Go.", {"ruby"}),
    ("Mudei de Python para Rust.", {"python"}),
    ("Passámos do Django para o FastAPI.", {"django"}),
    ("Troquei o Android por um iPhone.", {"android"}),
    ("Troquei o Golf por um Tesla.", {"golf"}),
    ("Substituí o Julia pelo Python.", {"julia"}),
    ("Ich bin von Ruby auf Go umgestiegen.", {"ruby"}),
    ("Ich habe von Android zu iPhone gewechselt.", {"android"}),
    ("Wir sind von Spotify zu Tidal gewechselt.", {"spotify"}),
    ("Letztes Jahr bin ich von Ruby auf Go umgestiegen.", {"ruby"}),
    ("Ich bin jetzt vom Auto aufs Fahrrad umgestiegen.", {"auto"}),
    ("Ich habe Evernote durch Notion ersetzt.", {"evernote"}),
    ("Ich habe meinen alten Golf gegen einen Tesla getauscht.", {"golf"}),
    # someone else's switch, a part replaced, a switch not made
    ("A minha irmã mudou de Python para Go.", set()),
    ("O meu irmão trocou o Android por um iPhone.", set()),
    ("Lena ist von Python auf Go umgestiegen.", set()),
    ("Mein Team ist von Jira zu Linear gewechselt.", set()),
    ("Troquei o ecrã do Android por um novo.", set()),
    ("Talvez mude do Ruby para Go.", set()),
    ("Ich würde gerne von Ruby auf Go umsteigen.", set()),
])
def test_a_switch_in_portuguese_or_german_names_what_it_replaces(text, was):
    reading = read(text)
    assert {v for who, attribute, values in reading.old if attribute == USES and SELF in who for v in values} == was
    assert says_a_change(text) is bool(was)


@pytest.mark.parametrize("switch, fact, replaced_it", [
    ("Mudei do Ruby para Go.", "I work with Ruby.", True),
    ("Mudei de Python para Rust.", "Trabalho com Python.", True),
    ("Troquei o Android por um iPhone.", "I use Android.", True),
    ("Troquei o Golf por um Tesla.", "I drive a Golf.", True),
    ("Ich bin von Ruby auf Go umgestiegen.", "Ich arbeite mit Ruby.", True),
    ("Ich habe von Android zu iPhone gewechselt.", "I use Android.", True),
    ("Ich habe Evernote durch Notion ersetzt.", "I use Evernote for my notes.", True),
    ("Wir sind von Looker auf Metabase umgestiegen.", "Ich arbeite mit Looker.", True),
    ("I switched from MacBook to ThinkPad.", "Ich arbeite mit meinem MacBook.", True),
    ("Mudei do Porto para Lisboa.", "I love the francesinha in Porto.", False),  # a city is no thing used
    ("Mudei do Porto para Lisboa.", "I live in Porto.", False),  # a home: not read as a switch of a thing
    ("Ich bin von Python auf Go umgestiegen.", "Ich arbeite bei Siemens.", False),
    ("Ich bin von Python auf Go umgestiegen.", "Ich arbeite mit Lena.", False),
    ("We switched from Team Foundation Server to GitHub.", "Ich arbeite mit meinem Team an der App.", False),
    ("We replaced Teams with Slack.", "Ich arbeite mit den Teams in Berlin und München.", False),
    ("I stopped using Chef.", "Ich arbeite mit meinem Chef an der Präsentation.", False),
])
def test_a_switch_replaces_what_it_names(switch, fact, replaced_it):
    assert replaces(read(switch), read(fact)) is replaced_it


@pytest.mark.parametrize("text, joined", [
    ("Will and power of attorney signed last week.", []),  # a noun without an article: a thing
    ("Netflix, Spotify and iCloud come out of the joint card.", []),  # "iCloud" is a thing's name
    ("No, Netflix and Spotify come out of the joint account.", []),
    ("No, Dropbox and iCloud come out of the joint account.", []),
    ("Não, Spotify e Netflix saem da conta conjunta.", []),
    ("Nein, Spotify und Netflix gehen vom gemeinsamen Konto ab.", []),
    # people, as before
    ("No, Tom and Ana came to dinner.", ["Tom"]),
    ("Nein, Jonas und Lena waren beim Essen.", ["Jonas"]),
    ("No, Tom and his wife came to dinner.", ["Tom"]),
    ("No, Tom and the kids moved to Porto.", ["Tom"]),
    ("No, Tom and everyone came.", ["Tom"]),
    ("No, Tom and two friends came.", ["Tom"]),
    ("Não, o meu irmão e a Ana vieram jantar.", ["o meu irmão"]),
    ("No, my sister and Tom are coming on Friday.", ["my sister"]),
    # unsure, read as people: a noun after an article
    ("Will and the power of attorney were signed.", ["Will"]),
])
def test_a_thing_joined_to_another_is_no_subject_of_people(text, joined):
    assert joined_subjects(text) == joined
