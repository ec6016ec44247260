"""Rules 2026-12-07.16 (batch "langform8" of tests/data/supersessions.jsonl, labelled before the rules read it): a
brand written with lower-case letters before its capitals ("iPhone", "iCloud", "eBay", "macOS") is a name a switch
gives up; stopping without a switch names what the user no longer uses ("I no longer use Evernote", "Deixei de usar
o Evernote", "Ich nutze Evernote nicht mehr"), a qualification only that use; a Portuguese name after an article
joined by "e" is a subject of two people ("Não, o Rui e a Ana foram ao cinema."), and a German noun by its ending
joined by "und" a thing ("Testament und Vollmacht wurden unterschrieben.", `joined_subjects`)."""

import pytest

from core.formation.subjects import SELF
from core.formation.updates import USES, joined_subjects, read, replaces, says_a_change, values


@pytest.mark.parametrize("text, found", [
    ("I switched from iPhone to Pixel.", {"iphone", "pixel"}),
    ("We moved our photos to iCloud.", {"icloud"}),
    ("I sell on eBay and Etsy.", {"ebay", "etsy"}),
    ("My Mac runs macOS.", {"mac", "macos"}),
    ("The battery holds 5000 mAh and charges at 7 kW.", {"5000", "7"}),  # units are no names
    ("The pH is 7.", {"7"}),
])
def test_a_brand_in_lower_case_first_is_a_name(text, found):
    assert values(text) == found


def _no_longer_used(text):
    return {v for who, attribute, was in read(text).old if attribute == USES and SELF in who for v in was}


@pytest.mark.parametrize("text, was", [
    ("I switched from iPhone to Pixel.", {"iphone"}),
    ("Troquei o iPhone por um Pixel.", {"iphone"}),
    ("Ich bin vom iPhone auf ein Pixel umgestiegen.", {"iphone"}),
    ("I replaced my iPad with a Kindle.", {"ipad"}),
    ("I switched from macOS to Linux.", {"macos"}),
    ("Troquei o eBay pelo Vinted.", {"ebay"}),
    ("I no longer use Evernote.", {"evernote"}),
    ("I don't use Evernote anymore.", {"evernote"}),
    ("We no longer use Looker.", {"looker"}),
    ("Deixei de usar o Evernote.", {"evernote"}),
    ("Já não uso o Monzo.", {"monzo"}),
    ("Não uso mais o Evernote.", {"evernote"}),
    ("Ich nutze Evernote nicht mehr.", {"evernote"}),
    ("Ich benutze Spotify nicht mehr.", {"spotify"}),
    ("Wir nutzen kein Jira mehr.", {"jira"}),
    ("Evernote nutze ich nicht mehr.", {"evernote"}),
    # someone else's, a part, a wish, a qualification, less use, a plain negation
    ("My sister switched from iPhone to Pixel.", set()),
    ("I replaced my iPhone's screen with a new one.", set()),
    ("Troquei a capa do iPhone por uma nova.", set()),
    ("Talvez troque o iPhone por um Pixel.", set()),
    ("Ich würde vom iPhone auf ein Pixel umsteigen.", set()),
    ("I no longer use Evernote for work.", set()),
    ("I don't use Evernote as much anymore.", set()),
    ("I no longer use Evernote's web clipper.", set()),
    ("I don't use Evernote.", set()),
    ("Não uso o Evernote.", set()),
    ("Deixei de usar o Evernote no trabalho.", set()),
    ("A minha irmã deixou de usar o Evernote.", set()),
    ("Talvez deixe de usar o Evernote.", set()),
    ("Ich nutze Evernote nicht mehr für die Arbeit.", set()),
    ("Meine Frau nutzt Evernote nicht mehr.", set()),
    ("Ich würde Evernote nicht mehr nutzen.", set()),
])
def test_what_a_switch_or_a_stop_gives_up(text, was):
    assert _no_longer_used(text) == was


@pytest.mark.parametrize("update, fact, replaced_it", [
    ("I switched from iPhone to Pixel.", "I use an iPhone.", True),
    ("Troquei o iPhone por um Pixel.", "I use an iPhone.", True),
    ("I switched from iCloud to Google Photos.", "I keep my photos on iCloud.", True),
    ("I no longer use Evernote.", "I use Evernote.", True),
    ("I don't use Evernote anymore.", "I use Evernote.", True),
    ("Ich nutze Evernote nicht mehr.", "I use Evernote.", True),
    ("Wir nutzen Jira nicht mehr.", "Ich arbeite mit Jira.", True),
    ("We no longer use Looker.", "I work with Looker.", True),  # a companion the user says was a thing used
    ("I no longer use Evernote for work.", "I use Evernote for work.", True),
    ("I no longer use Evernote for work.", "I use Evernote.", False),  # still used
    ("I replaced my iPhone's screen with a new one.", "I use an iPhone.", False),
    ("My sister switched from iPhone to Pixel.", "I use an iPhone.", False),
])
def test_a_switch_or_a_stop_replaces_what_it_names(update, fact, replaced_it):
    assert replaces(read(update), read(fact)) is replaced_it


@pytest.mark.parametrize("text", ["I don't use Evernote anymore.", "Deixei de usar o Evernote.",
                                  "Ich nutze Evernote nicht mehr.", "Já não uso o Monzo."])
def test_a_stop_says_a_change(text):
    assert says_a_change(text)


@pytest.mark.parametrize("text, joined", [
    # a Portuguese name after an article, before a verb
    ("Não, o Rui e a Ana foram ao cinema.", ["o Rui"]),
    ("Não, a Ana e o Tomás vieram jantar.", ["a Ana"]),
    ("Não, o Rui e a Ana.", []),  # a list, no verb
    ("O Rui e o meu irmão.", []),  # "e" may be "é" typed
    ("Não, o Spotify e a Netflix saem da conta conjunta.", []),  # things
    ("Não, o meu irmão e a Ana vieram jantar.", ["o meu irmão"]),  # as before
    # a German noun by its ending
    ("Testament und Vollmacht wurden unterschrieben.", []),
    ("Nein, Testament und Vollmacht liegen im Safe.", []),
    ("Nein, Rechnung und Mahnung kamen gestern.", []),
    # names of people, as before
    ("Nein, Jonas und Heike waren im Kino.", ["Jonas"]),
    ("Nein, Lena und Clement kommen am Freitag.", ["Lena"]),  # "-ment" is no noun's ending here
    ("No, Tom and Ana came to dinner.", ["Tom"]),
    ("No, Young and Tom came.", ["Young"]),  # "-ung" after "o" is a name's
])
def test_joined_subjects(text, joined):
    assert joined_subjects(text) == joined
