"""Two readings of the formation rules (2026-12-06): a terse state said without "I'm" (`core.formation.lookups
.tells_a_state`: by its form and its complement, or a time it has held, not a closed list of words), and a
switch to another thing of the same kind (`core.formation.updates`: `KINDS`, and a switch that names what it
replaces). The labelled sets measure them (tests/data/message_kinds.jsonl and supersessions.jsonl, batch
"formation pass 2"); these pin the reasons."""

import pytest

from core.formation.kinds import classify
from core.formation.lookups import searched_for
from core.formation.updates import read, replaces


@pytest.mark.parametrize("text", [
    "lactose intolerant since childhood", "diabetic since 2015", "type 1 diabetic since 2015",
    "colour blind since birth", "insulin dependent since 2015", "epileptic since my teens",
    "anaemic since my second pregnancy", "pescatarian for ten years", "vegan for about five years now",
    "sensitive to caffeine after 2pm", "nervous about the driving test on Friday",
    "eligible for the staff discount", "responsible for the Q3 roadmap at work",
    "hypersensitive to noise since the concussion", "on metformin since the diagnosis",
    "left-handed", "colour blind", "self-employed since March"])
def test_a_terse_state_is_a_statement(text):
    """A predicate with "I'm" dropped: a word that describes by its form and a preposition it takes, or a
    predicate and a time it has held."""
    assert not searched_for(text) and classify(text) == "statement"


@pytest.mark.parametrize("text", [
    # a word before the state that may be its subject: a time of a life only ("since 2015", "since childhood")
    "server unreachable since the last deploy", "dashboard unresponsive on mobile",
    # a state before a noun, or after a plural: a noun phrase
    "lactose intolerant recipes for kids", "diabetic friendly desserts for Christmas", "plants toxic to cats",
    "children sensitive to loud noise", "electric cars eligible for the tax credit",
    "allergic rhinitis treatment options", "left-handed scissors for kids",
    # a preposition a noun phrase takes ("with", "in"), no time ("for beginners")
    "compatible with iPhone 12", "vegan for beginners", "vegetarian restaurants near Alfama",
    "memory leak in the websocket gateway", "disk full on the build runner", "inflation since 2020"])
def test_a_search_phrase_like_a_state_stays_a_search(text):
    assert searched_for(text) and classify(text) == "question"


@pytest.mark.parametrize("update, fact, replaced_it", [
    ("I switched to a Kobo.", "I use a Kindle.", True),
    ("I switched to a Kobo Libra now.", "I have a Kindle Paperwhite.", True),
    ("I moved from Spotify to Tidal.", "I listen to music on Spotify.", True),
    ("Switched from Spotify to Apple Music this week.", "I use Spotify for podcasts and music.", True),
    ("Replaced my Garmin with an Apple Watch.", "I wear a Garmin Forerunner 255.", True),
    ("My Kobo died, so I bought a Kindle.", "I read on my Kobo.", True),
    ("I bought a Kindle to replace my Kobo.", "I read on my Kobo.", True),
    ("I moved my account from Monzo to Revolut.", "I bank with Monzo.", True),  # a name of no kind, named
    ("Traded the Golf in for a Tesla Model 3.", "I drive a Golf.", True),
    ("Gave up on Duolingo, using Babbel now.", "I use Duolingo for Spanish.", True),
    ("I drive a Tesla now.", "I drive a Golf.", True),
    # a purchase is no switch: one may keep both; another kind; someone else; a plan; the same line
    ("I bought a new Kindle.", "I read on my Kobo.", False),
    ("I switched to a Kobo.", "I listen to music on Spotify.", False),
    ("I switched to audiobooks on Audible.", "I use a Kindle.", False),
    ("My wife switched to a Kobo.", "I use a Kindle.", False),
    ("My team moved from Chrome to Firefox.", "I use Chrome at work.", False),
    ("I'm thinking of switching to a Kobo.", "I use a Kindle.", False),
    ("I also got Tidal for the hi-fi albums.", "I listen to music on Spotify.", False),
    ("I switched to a new Kindle Oasis.", "I use a Kindle.", False),
    ("We moved from Porto to Lisbon.", "I love the francesinha in Porto.", False),
    # a name used is replaced only when a switch names it, not by "not X anymore" of something else
    ("My new manager is Rita Sousa, not Miguel anymore.", "I have lunch with Miguel on Fridays.", False),
    ("I'm on edge since the layoffs, now I switched to decaf.", "I use Chrome at work.", False),
])
def test_a_switch_replaces_the_thing_of_its_kind(update, fact, replaced_it):
    assert replaces(read(update), read(fact)) is replaced_it


def test_a_thing_of_a_kind_is_no_home():
    """"moved from Spotify to Tidal" names no city: a correction saying it supersedes no home."""
    said = read("Actually, I moved from Spotify to Tidal.")
    assert not any(c.attribute == "residence" for c in said.claims)
    assert not replaces(said, read("I live in Lisbon."), correction=True)
    assert classify("Actually I switched to a Kobo.") == "correction"
