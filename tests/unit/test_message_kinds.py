"""The rule-based message kinds measured on a labelled set of realistic chat messages
(tests/data/message_kinds.jsonl, written before the rules: facts, plans, preferences and events,
questions, thanks and small talk, corrections, requests; then look-ups typed without a question mark, "the
recipe my mother sent last week", and statements like them, "The recipe my mother sent last week was
delicious.", in three batches, the last two before the rules read them; then an agent's 40 search phrases
and 14 search phrases and terse reports like them, labelled with their reason before the rules read them;
then a user pass's 38, "Great idea.", updates and "Actually, I…", labelled before the rules read them; then a
formation pass's 30, questions announced ("Actually, I have a question about…") and terse states ("allergic
to penicillin"), labelled before the rules read them; then 93 (batch "langform"): Portuguese and German small
talk, corrections and requests with their `lang`, and English terse notes and search phrases like them, labelled
before the rules read them).
Precision and recall per kind are printed."""

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from core.conversation.feedback import is_correction
from core.formation.kinds import (
    MESSAGE_KINDS,
    classify,
    sentences,
    statement_sentences,
    told_before_question,
    told_statements,
)
from core.formation.lookups import looks_up, searched_for
from core.formation.observations import event_time, rules_formation

MESSAGES = [json.loads(line) for line in
            (Path(__file__).parents[1] / "data" / "message_kinds.jsonl").read_text(encoding="utf-8").splitlines()]
# (precision, recall) the rules reach on the set, printed by the test below (0.97–1.00 each when written),
# less a little room. The rules were written after the set, reading it: these are figures on the data they
# were made with, not on unseen chat.
# Questions' precision was 0.95 while a second formation pass's five terse notes read as searches ("Lives with
# two cats", "claustrophobic in lifts"); read as statements since rules 2026-12-07.4 (0.986), it is 0.97 again.
FLOORS = {"statement": (0.97, 0.97), "question": (0.97, 0.97), "acknowledgement": (0.97, 0.97),
          "correction": (0.95, 0.97), "instruction": (0.95, 0.95)}


def test_the_set_is_large_and_covers_every_kind():
    kinds = [m["kind"] for m in MESSAGES]
    assert len(MESSAGES) >= 300 and len({m["text"] for m in MESSAGES}) == len(MESSAGES)
    assert all(kinds.count(kind) >= 30 for kind in MESSAGE_KINDS)


def test_precision_and_recall_per_kind():
    predicted = [classify(m["text"]) for m in MESSAGES]
    lines, failing = [], []
    for kind in MESSAGE_KINDS:
        flagged = [m for m, p in zip(MESSAGES, predicted) if p == kind]
        actual = [m for m in MESSAGES if m["kind"] == kind]
        hits = sum(m["kind"] == kind for m in flagged)
        precision, recall = hits / max(1, len(flagged)), hits / max(1, len(actual))
        lines.append(f"{kind:<16} precision {precision:.3f}  recall {recall:.3f}  ({len(actual)} labelled)")
        if precision < FLOORS[kind][0] or recall < FLOORS[kind][1]:
            failing.append(kind)
    accuracy = sum(p == m["kind"] for m, p in zip(MESSAGES, predicted)) / len(MESSAGES)
    wrong = [f"{m['text']!r}: {m['kind']} read as {p}" for m, p in zip(MESSAGES, predicted) if p != m["kind"]]
    print(f"\nmessage kinds over {len(MESSAGES)} messages, accuracy {accuracy:.3f}\n" + "\n".join(lines)
          + "\nwrong on:\n  " + "\n  ".join(wrong))
    assert not failing, failing


FOLLOWUPS = [json.loads(line) for line in
             (Path(__file__).parents[1] / "data" / "followups.jsonl").read_text(encoding="utf-8").splitlines()]


def test_held_out_follow_ups():
    """The same rules on a set they were not written from: the 252 follow-ups labelled for the feedback
    rules (tests/data/followups.jsonl), whose "neutral" ones may read as statements or instructions.
    Its acknowledgements include thanks followed by a question ("Thanks. What should I do next?"), a
    question here, so their recall is understated."""
    predicted = [classify(m["text"]) for m in FOLLOWUPS]
    lines = []
    floors = {"correction": (0.95, 0.95), "acknowledgement": (0.95, 0.75), "question": (0.9, 0.95)}
    for kind, (p_floor, r_floor) in floors.items():
        flagged = [m for m, p in zip(FOLLOWUPS, predicted) if p == kind]
        hits = sum(m["kind"] == kind for m in flagged)
        precision = hits / max(1, len(flagged))
        recall = hits / sum(m["kind"] == kind for m in FOLLOWUPS)
        lines.append(f"{kind:<16} precision {precision:.3f}  recall {recall:.3f}")
        assert precision >= p_floor and recall >= r_floor, lines
    neutral = [p for m, p in zip(FOLLOWUPS, predicted) if m["kind"] == "neutral"]
    told = sum(p in ("statement", "instruction") for p in neutral) / len(neutral)
    print(f"\nheld out, {len(FOLLOWUPS)} follow-ups:\n" + "\n".join(lines)
          + f"\nneutral read as statement or instruction: {told:.3f}")
    assert told >= 0.95


@pytest.mark.parametrize("text, kind", [
    ("When is my Lisbon trip?", "question"), ("Thanks!", "acknowledgement"),
    ("No, it was Lyon", "correction"), ("My Lisbon trip is next Friday.", "statement"),
    ("Remember that my locker code is 4412.", "statement"), ("Write me a poem", "instruction"),
    ("Can you remind me what my locker code is?", "question"), ("Could you draft a reply?", "instruction"),
    ("No problem, thanks!", "acknowledgement"), ("No thanks.", "acknowledgement"),
    ("No worries at all.", "acknowledgement"), ("No, it was level 4", "correction"),
    ("No. I said Tuesday.", "correction"), ("No dogs are allowed in my building.", "statement")])
def test_kinds_of_the_issue_s_examples(text, kind):
    assert classify(text) == kind


@pytest.mark.parametrize("text, kind", [
    ("Great idea.", "acknowledgement"), ("Fair point!", "acknowledgement"), ("That's a good plan.", "acknowledgement"),
    ("Love that idea!", "acknowledgement"), ("Perfect, thanks", "acknowledgement"), ("Great thanks!", "acknowledgement"),
    ("Great ideas usually come to me on my morning runs.", "statement"),
    ("Good call centres are hard to find in my town.", "statement"),
    ("Nice people run the bakery on our corner.", "statement")])
def test_praise_of_what_the_assistant_said_is_an_acknowledgement(text, kind):
    """Praise with a word for what the assistant said, before a pause or the end; a praise word opening a
    fact ("Good call centres…") keeps the fact whole."""
    assert classify(text) == kind
    if kind == "statement":
        assert statement_sentences(text) == text


@pytest.mark.parametrize("text, corrects", [
    ("Actually, I started eating fish again, so I'm pescatarian now.", True),
    ("Actually, I live in Denver now.", True), ("Actually, I don't eat meat anymore.", True),
    ("Actually, I have another question.", False), ("Actually, I'd like to add that my sister is coming too.", False),
    ("Actually, I think we should leave earlier.", False)])
def test_actually_and_a_state_that_replaces_one_corrects(text, corrects):
    """"Actually, I…" corrects when it states a value of an attribute or a change; not when it goes on to
    something new."""
    assert (classify(text) == "correction") is corrects


@pytest.mark.parametrize("text, kind, facts", [
    ("Actually, I have a question about the visa.", "question", []),
    ("Actually, quick question about the visa.", "question", []),
    ("Actually, I have a question about my new job at Globex.", "question", []),
    ("Actually, I wanted to ask about the train times. We land in Porto at 9.", "question",
     ["We land in Porto at 9."]),
    ("Actually, I need your help with a cover letter.", "instruction", []),
    ("I have a question for my doctor about the new medication, so I booked an appointment.", "statement",
     ["I have a question for my doctor about the new medication, so I booked an appointment."]),
    ("I need to ask my landlord about the deposit.", "statement",
     ["I need to ask my landlord about the deposit."]),
    ("Actually, I moved to Denver last month.", "correction", ["I moved to Denver last month."])])
def test_a_question_or_a_request_announced_is_no_fact_and_no_correction(text, kind, facts):
    """"Actually, I have a question about…" announces what comes next: no correction, no fact (what it is
    about is its topic); asking someone else is a plan told."""
    formed = rules_formation(text)
    assert (formed.kind, formed.facts) == (kind, facts)
    assert not is_correction("Actually, quick question about the visa.")


@pytest.mark.parametrize("text, kind", [
    ("allergic to penicillin", "statement"), ("Vegetarian since 2019", "statement"),
    ("severely allergic to shellfish", "statement"), ("afraid of flying", "statement"),
    ("fluent in Portuguese and Spanish", "statement"), ("pregnant with our second child", "statement"),
    ("vegetarian restaurants near Alfama", "question"),
    ("allergic reaction symptoms in toddlers", "question"),
    ("vegan in Lisbon", "question"), ("patients allergic to penicillin", "question"),
    # a state by its form, and a time it has held (formation pass 2)
    ("lactose intolerant since childhood", "statement"), ("type 1 diabetic since 2015", "statement"),
    ("nervous about the driving test on Friday", "statement"), ("pescatarian for ten years", "statement"),
    ("server unreachable since the last deploy", "question"), ("left-handed scissors for kids", "question")])
def test_a_state_and_its_complement_first_is_a_terse_statement(text, kind):
    """A state said of a person first, with its own complement, is a predicate with "I'm" dropped; before a
    noun, or after one, it is part of a noun phrase: a search."""
    assert classify(text) == kind


@pytest.mark.parametrize("text, kind", [
    # a note with its subject dropped before a verb of a person's life in -s (`lookups.NOTE_VERBS`)
    ("Lives with two cats", "statement"), ("Works at Siemens since 2019", "statement"),
    ("Prefers window seats on long flights", "statement"), ("Owns a 2015 Golf", "statement"),
    # a plural noun first, even of a verb's form: a search
    ("trains to Porto on Sunday", "question"), ("walks near Sintra for kids", "question"),
    ("drinks with low sugar", "question"), ("uses of baking soda", "question"),
    ("flights to Lisbon in May", "question"),  # "May" after "in" is the month, no verb
    # a state taking "in": a derived word or an adjective's form, before a bare plural or a language
    ("claustrophobic in lifts", "statement"), ("conversational in Italian", "statement"),
    ("nervous in crowds", "statement"), ("proficient in Spanish", "statement"),
    ("clinic in Braga", "question"), ("music in the car", "question"), ("logic in templates", "question"),
    ("tutorial in Spanish", "question"), ("vegan in Lisbon", "question")])
def test_a_terse_note_is_a_statement_and_a_search_phrase_like_it_a_question(text, kind):
    assert classify(text) == kind


def test_the_offline_observation_is_the_statement_without_small_talk_or_questions():
    assert statement_sentences("My sister Ana is vegetarian.") == "My sister Ana is vegetarian."
    assert statement_sentences("Hi! I moved to Porto. Do you know it?") == "I moved to Porto."
    assert (statement_sentences("Perfect, and the load test target is 1,200 requests per second.")
            == "The load test target is 1,200 requests per second.")
    assert statement_sentences("And the cut-over slipped to April.") == "And the cut-over slipped to April."


@pytest.mark.parametrize("text, fact", [
    ("Actually, the race is on 25 May.", "The race is on 25 May."),
    ("That's not it, the window is in the bedroom.", "The window is in the bedroom."),
    ("Hmm, that's not it, I finished Middlemarch, not Persuasion.", "I finished Middlemarch, not Persuasion."),
    ("That's not what I said, the meeting is on Wednesday.", "The meeting is on Wednesday."),
    ("You've got it backwards, Tom is my brother.", "Tom is my brother."),
    ("You're mixing them up: Miso is the black one.", "Miso is the black one."),
    ("Oops, I got that wrong: the recital is next Friday.", "The recital is next Friday."),
    ("Actually I changed my mind, I'm going with the green sofa.", "I'm going with the green sofa."),
    ("Actually it's three cats now, we got another one.", "It's three cats now, we got another one."),
])
def test_the_rules_fact_of_a_correction_leaves_its_opening_out(text, fact):
    assert rules_formation(text).facts == [fact]


@pytest.mark.parametrize("text", [
    "No dogs are allowed in my building.", "No one in my family eats pork.", "No sugar in my coffee, ever.",
    "No pets were allowed in my old building, so I moved to a house.", "No-one at work knows I play the cello."])
def test_a_statement_opening_with_no_is_stored_as_said(text):
    """The determiner "no" is part of the fact: read as a correction, these were stored without it, as
    their opposite ("Dogs are allowed in my building.")."""
    formed = rules_formation(text)
    assert (formed.kind, formed.facts) == ("statement", [text])


@pytest.mark.parametrize("text, fact", [
    ("No, it was level 4", "It was level 4"), ("No. I said Tuesday.", "I said Tuesday."),
    ("No it was level 4.", "It was level 4."), ("Nope, the party is on Saturday.", "The party is on Saturday."),
    # A correction for another reason keeps a determiner "no": only the interjection is taken off.
    ("No pets are allowed there, I got that wrong.", "No pets are allowed there, I got that wrong.")])
def test_a_correction_loses_only_an_interjection_no(text, fact):
    assert rules_formation(text).kind == "correction" and rules_formation(text).facts == [fact]


@pytest.mark.parametrize("text, day", [
    ("My flight to Lisbon leaves next Friday.", (2026, 11, 27)),          # read against the message's time
    ("I'm meeting Jonas for lunch on Friday.", (2026, 11, 27)),           # a plan: the coming Friday
    ("I ran my first half marathon on Friday.", (2026, 11, 20)),          # an event: the last one
    ("The conference in Lisbon is on 14 March.", (2027, 3, 14)),          # a plan: next year's
    ("We went to Lyon in May 2024.", (2024, 5, -1)),
    ("We planned the trip last month.", (2026, 10, -1))])
def test_an_observation_s_event_time_is_the_one_stated(text, day):
    moment, said = event_time(text, datetime(2026, 11, 24, 10, tzinfo=UTC))  # a Tuesday
    assert (moment.year, moment.month, moment.day) == day and said


@pytest.mark.parametrize("text", [
    "Tomás had his allergy test today: he is allergic to eggs, not to peanuts like me.",
    "My wife runs 10 km every morning, not 5 like me.", "Ana is vegetarian, not vegan like her sister.",
    "My parents live in Lisbon, not Porto like us.", "He drinks tea, not coffee as I do."])
def test_a_comparison_is_no_correction(text):
    """"X, not Y like me" compares: read as a contrast ("Lyon, not Paris"), the son's egg allergy had
    superseded the user's own peanut allergy."""
    assert not is_correction(text) and classify(text) == "statement"


@pytest.mark.parametrize("text", ["It's Lyon, not Paris like you said.", "No, Tomás is allergic to eggs, not peanuts.",
                                  "Actually, my husband is allergic to penicillin, not me."])
def test_a_contrast_still_corrects(text):
    assert is_correction(text)


@pytest.mark.parametrize("text, told", [
    ("Inês turns 7 on October 10, ideas for a science-themed party at home in Porto?", "Inês turns 7 on October 10."),
    ("I drive a 2019 Renault Zoe, can it handle snow chains?", "I drive a 2019 Renault Zoe."),
    ("I started a new job at Siemens last week — how do I ask for a parking spot?",
     "I started a new job at Siemens last week."),
    ("If I move to Porto, what should I pack?", None), ("Quick question, what time does the pharmacy close?", None),
    ("For the party on Saturday, how many pizzas should I order?", None), ("The meeting is at 3, isn't it?", None),
    ("The meeting with the bank is at 3 pm, is that right?", None), ("And the dentist, what time was it?", None),
    ("What did I plant in the garden, and when should I water it?", None),
    ("You mentioned you were allergic to pets earlier, how bad is it?", None)])
def test_a_statement_before_a_question_in_one_sentence_is_told(text, told):
    assert told_before_question(text) == told
    formed = rules_formation(text)
    assert (formed.kind, formed.facts) == ("question", [told] if told else [])


@pytest.mark.parametrize("text, kind, facts", [
    ("Remind me: my dentist appointment is on January 14, 2025 at 9:30 with Dr. Pereira.", "statement",
     ["My dentist appointment is on January 14, 2025 at 9:30 with Dr. Pereira."]),
    ("Don't forget: the parking permit number is 55-A.", "statement", ["The parking permit number is 55-A."]),
    ("FYI, Ana is allergic to shellfish.", "statement", ["Ana is allergic to shellfish."]),
    ("Remind me to call the bank on Monday.", "instruction", []),
    ("Remind me, what's the wifi name at home?", "question", []),
    ("Note: keep the answers short from now on.", "instruction", [])])
def test_a_fact_handed_over_to_keep_is_a_statement_without_its_opener(text, kind, facts):
    formed = rules_formation(text)
    assert (formed.kind, formed.facts) == (kind, facts)


@pytest.mark.parametrize("text, fact", [
    ("Yes, short and warm. My manager at Farfetch is Miguel.", "My manager at Farfetch is Miguel."),
    ("Yes, Ana is vegetarian too.", "Ana is vegetarian too."),
    ("I'm allergic to peanuts and to penicillin. Can you suggest a dessert? Pão-de-ló maybe? 🎭",
     "I'm allergic to peanuts and to penicillin."),
    ("We got the keys today! 🎉 The flat is in Bonfim.", "We got the keys today! 🎉 The flat is in Bonfim."),
    ("The meeting with Mr. Smith is on Friday. What should I prepare?", "The meeting with Mr. Smith is on Friday."),
    ("I bring snacks, e.g. fruit and nuts, to every hike. Any other ideas?",
     "I bring snacks, e.g. fruit and nuts, to every hike.")])
def test_a_fact_keeps_no_fragment_no_stray_emoji_and_is_not_cut_at_an_abbreviation(text, fact):
    assert statement_sentences(text) == fact


def test_sentences_end_where_a_sentence_ends():
    assert sentences("No. I said Tuesday.") == ["No.", "I said Tuesday."]
    assert sentences("No. 5 is my bus. Ok?") == ["No. 5 is my bus.", "Ok?"]
    assert sentences("Apples, pears, etc. and more. My car is red.") == ["Apples, pears, etc. and more.",
                                                                        "My car is red."]
    assert sentences("Ask J. K. Rowling at 9 a.m. tomorrow. Fine!") == ["Ask J. K. Rowling at 9 a.m. tomorrow.",
                                                                       "Fine!"]


@pytest.mark.parametrize("text, statements", [
    ("I live in Lisbon. My sister is a nurse. I drink green tea.",
     ["I live in Lisbon.", "My sister is a nurse.", "I drink green tea."]),
    # A sentence that refers back is one statement with the one before: alone, "She is a nurse." says nobody's.
    ("My sister lives in Berlin. She is a nurse.", ["My sister lives in Berlin. She is a nurse."]),
    ("I bought a car last week. It's a Toyota. I park it at work.",
     ["I bought a car last week. It's a Toyota.", "I park it at work."]),
    # "This weekend" opens a time, not a reference.
    ("I live in Lisbon. This weekend we went to the beach.",
     ["I live in Lisbon.", "This weekend we went to the beach."]),
    ("We got the keys today! 🎉 The flat is in Bonfim.", ["We got the keys today! 🎉", "The flat is in Bonfim."]),
    ("Hi! I moved to Porto. Do you know it?", ["I moved to Porto."])])
def test_a_message_tells_one_statement_per_sentence(text, statements):
    """One observation per statement (`rules_formation`): a correction of one of them supersedes that one."""
    assert told_statements(text) == statements
    assert rules_formation(text).facts == statements
    assert statement_sentences(text) == " ".join(statements)


@pytest.mark.parametrize("text, facts, correcting", [
    ("No, the conference was in Lyon, not Paris. I gave a talk about Postgres there too.",
     ["The conference was in Lyon, not Paris.", "I gave a talk about Postgres there too."], (0,)),
    ("I loved the trip. Actually, it was Lyon, not Paris.", ["I loved the trip.", "It was Lyon, not Paris."], (1,)),
    # What opens the correction, alone in its sentence, hands the correction to the statement after it.
    ("That's wrong. The meeting is on Wednesday. My boss is Ana.",
     ["The meeting is on Wednesday.", "My boss is Ana."], (0,)),
    ("No. I said Tuesday.", ["I said Tuesday."], (0,))])
def test_a_correction_corrects_with_its_correcting_statement_and_tells_the_others(text, facts, correcting):
    formed = rules_formation(text)
    assert (formed.kind, formed.facts, formed.correcting) == ("correction", facts, correcting)
    assert [formed.kind_of(n) for n in range(len(facts))] == [
        "correction" if n in correcting else "statement" for n in range(len(facts))]


@pytest.mark.parametrize("text", [
    "latest wiki note I wrote", "the recipe my mother sent last week", "the book I'm reading",
    "photos we took at the zoo", "everything I told you about the kitchen", "Ana's phone number",
    "the podcast Rita sent me", "notes from yesterday's standup", "Remind me: the recipe my mother sent"])
def test_a_look_up_without_a_question_mark_is_a_question_and_leaves_no_observation(text):
    """Stored as a fact, "latest wiki note I wrote" ranked first for the very question it asks."""
    formed = rules_formation(text)
    assert (formed.kind, formed.facts) == ("question", [])


def test_an_agent_s_search_phrases_are_questions():
    """The 40 messages an agent sent through `remember` (tests/data/message_kinds.jsonl, batch "h2u agent's
    search phrases", each labelled with its reason): 20 were stored as facts ("redis evictions in
    production") and retrieved as facts for other questions. Those with a finite verb are labelled
    statements ("helm chart upgrade failed"): read alone, they report. Printed: the share read right, and
    how many leave an observation."""
    agent = [m for m in MESSAGES if m.get("batch") == "h2u agent's search phrases"]
    right = sum(classify(m["text"]) == m["kind"] for m in agent) / len(agent)
    observed = [m["text"] for m in agent if rules_formation(m["text"]).facts]
    print(f"\nan agent's {len(agent)} search phrases: read right {right:.3f}; {len(observed)} leave an "
          f"observation: {observed}")
    assert len(agent) == 40 and right >= 0.95
    assert all(m["kind"] == "statement" for m in agent if m["text"] in observed)


@pytest.mark.parametrize("text", [
    "memory leak in the websocket gateway", "python 3.12 upgrade problems", "redis evictions in production",
    "the customer who reported missing emails", "cors error when calling the api from the admin panel",
    "disk full on the build runner", "Hi, connection pool exhaustion in the billing service",
    "gift ideas for my sister's birthday"])
def test_a_search_phrase_is_a_question_and_leaves_no_observation(text):
    formed = rules_formation(text)
    assert (formed.kind, formed.facts) == ("question", [])


@pytest.mark.parametrize("text", [
    "helm chart upgrade failed", "oauth callback returns invalid_grant", "our staging cluster runs on Kubernetes",
    "Went to the dentist this morning", "Feeling much better after the surgery",
    "Memory leak in the websocket gateway.", "Note: memory leak in the websocket gateway",
    "We moved to Porto last month. Great neighbourhood", "Green tea", "the kids love the new park"])
def test_a_verb_a_full_stop_or_another_sentence_makes_a_statement(text):
    """A finite verb asserts, even in a headline; a full stop or an opener handing a fact over makes the
    phrase a sentence the user wrote; a subject dropped before a verb is still a clause."""
    assert not searched_for(text) and classify(text) == "statement"


@pytest.mark.parametrize("text", [
    "latest news: I got the job", "Latest wiki note I wrote is about Postgres.",
    "The recipe my mother sent last week uses saffron.", "My brother Tom moved to Berlin last year.",
    "Our dog Rex died yesterday.", "Last week I wrote a note about the deploy.", "My mum thinks I work too much.",
    "Sometimes I work from home.", "Photos from the wedding look amazing.", "The contract for the flat ends in May.",
    "Dinner with Ana on Friday at 8."])
def test_a_statement_about_a_thing_is_no_look_up(text):
    assert not looks_up(text) and classify(text) == "statement"
