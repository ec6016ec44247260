"""Memory formation on the real servers: message kinds in the index, observations and their event times,
what a profile retrieves, corrections that supersede, the LLM's reading, and `workbench formation run`."""

import json
from datetime import UTC, datetime, timedelta

import pytest

from core import usecases as uc
from core.admin import deletion
from core.conversation.thoughts import CATEGORY_ASSISTANT, CATEGORY_USER, Thought
from core.formation import observations
from core.formation.important import derived_id
from core.formation.kinds import statement_sentences
from core.formation.supersede import Mended
from core.runtime import Workbench
from tests.support.cli import in_process_cli
from tests.support.clock import Clock

TUESDAY = datetime(2026, 11, 24, 10, 0, tzinfo=UTC)


def turn(wb, instance, chain, text, clock, **options):
    clock.advance(30)
    return uc.remember(wb, uc.UiRememberParams(thought=text, chain_id=chain, instance=instance, **options),
                       clock=clock)


def rows(wb, instance):
    with wb.index.pool.connection() as conn:
        found = conn.execute("SELECT id, kind, content, metadata, ev_year, ev_month, ev_day FROM memory "
                             "WHERE instance = %s ORDER BY created_at, id", (instance,)).fetchall()
    return [dict(zip(("id", "kind", "content", "metadata", "year", "month", "day"), r)) for r in found]


def test_a_statement_becomes_an_observation_with_its_event_time(workbench, instance):
    clock = Clock(TUESDAY)
    r = turn(workbench, instance, "trip", "Hi! My flight to Lisbon leaves next Friday. Is that enough time?",
             clock)
    found = {row["id"]: row for row in rows(workbench, instance)}
    user = found[r.thought1_id]
    assert user["metadata"]["message_kind"] == "question"  # it asks; what it tells is kept all the same
    (obs_id,) = user["metadata"]["observations"]
    obs = found[obs_id]
    assert obs["kind"] == "observation" and obs["content"] == "My flight to Lisbon leaves next Friday."
    assert obs["metadata"].items() >= {"source_thought": r.thought1_id, "speaker": "user",
                                       "message_kind": "statement", "event_time_stated": "next Friday"}.items()
    assert (obs["year"], obs["month"], obs["day"]) == (2026, 11, 27)  # read against the message's time


def test_an_apology_for_a_pause_is_not_remembered(workbench, instance):
    """"Sorry, I got pulled away." speaks about the conversation, not the user's world: it is no fact, in
    a message of its own or before a question, nor a sentence of the session's summary."""
    clock = Clock(datetime.now(UTC) - timedelta(hours=1))
    turn(workbench, instance, "p", "Priya meets the team on Friday.", clock)
    turn(workbench, instance, "p", "Sorry, I got pulled away. What is next for Priya?", clock)
    turn(workbench, instance, "p", "Sorry, I got pulled away.", clock, next_thought_needed=False)
    found = rows(workbench, instance)
    assert [r["content"] for r in found if r["kind"] == "observation"] == ["Priya meets the team on Friday."]
    assert [r["metadata"]["message_kind"] for r in found if r["kind"] == "user"] == [
        "statement", "question", "acknowledgement"]
    assert not [r for r in found if "pulled away" in r["content"] and r["kind"] != "user"]


def test_questions_and_thanks_stay_in_the_transcript_but_are_not_retrieved(workbench, instance):
    clock = Clock(datetime.now(UTC) - timedelta(hours=1))
    turn(workbench, instance, "c", "What should I pack for the Lisbon trip?", clock)
    turn(workbench, instance, "c", "Thanks!", clock)
    turn(workbench, instance, "c", "The Lisbon trip is on 14 March.", clock)
    kinds = {row["content"]: row["metadata"].get("message_kind") for row in rows(workbench, instance)
             if row["kind"] == "user"}
    assert kinds == {"What should I pack for the Lisbon trip?": "question", "Thanks!": "acknowledgement",
                     "The Lisbon trip is on 14 March.": "statement"}
    r = turn(workbench, instance, "d", "When is the Lisbon trip?", clock)
    assert [(c.kind, c.content) for c in r.context][:1] == [("observation", "The Lisbon trip is on 14 March.")]
    assert all(c.kind != "user" for c in r.context)
    # A profile that retrieves questions too finds the earlier one; the Tune page compares the two.
    uc.save_profile(workbench, uc.SaveProfile(profile=uc.FusionProfile(
        name="with-questions", retrieve_kinds=["statement", "question", "correction", "instruction"])))
    wider = turn(workbench, instance, "d", "Lisbon trip pack", clock, profile="with-questions")
    assert "What should I pack for the Lisbon trip?" in [c.content for c in wider.context]


def test_a_correction_supersedes_the_fact_it_corrects(workbench, instance):
    clock = Clock(datetime.now(UTC) - timedelta(hours=1))
    told = turn(workbench, instance, "work", "My dentist appointment is on Thursday at 3pm.", clock)
    turn(workbench, instance, "work", "I also need to renew my passport.", clock)
    corrected = turn(workbench, instance, "work", "Sorry, the dentist is at 4pm, not 3pm.", clock)
    found = {row["id"]: row for row in rows(workbench, instance)}
    old = found[found[told.thought1_id]["metadata"]["observations"][0]]
    new_id = found[corrected.thought1_id]["metadata"]["observations"][0]
    assert old["metadata"]["superseded_by"] == new_id
    assert found[new_id]["metadata"]["supersedes"] == old["id"]
    passport = next(r for r in found.values() if r["content"] == "I also need to renew my passport.")
    assert "superseded_at" not in passport["metadata"]
    r = turn(workbench, instance, "later", "When is the dentist?", clock)
    contents = [c.content for c in r.context]
    assert contents[0] == f"The dentist is at 4pm, not 3pm. (correcting: {old['content']})"
    assert old["content"] not in contents
    # Kept, and found by a profile that asks for superseded facts too.
    uc.save_profile(workbench, uc.SaveProfile(profile=uc.FusionProfile(name="history", include_superseded=True)))
    everything = turn(workbench, instance, "later", "When is the dentist?", clock, profile="history")
    assert old["content"] in [c.content for c in everything.context]
    history = uc.fact_history(workbench, uc.FactHistoryRequest(instance=instance, memory_id=old["id"]))
    assert [f.id for f in history.facts] == [old["id"], new_id]
    assert history.facts[0].superseded_at == corrected_time(workbench, instance, corrected.thought1_id)


def test_a_correction_of_a_correction_says_what_it_corrects_once(workbench, instance):
    """The fact a correction corrects is quoted by its own words: a correction of a correction does not
    carry the whole history in its text (`fact_history` shows that), which grew with each correction."""
    clock = Clock(datetime.now(UTC) - timedelta(hours=1))
    turn(workbench, instance, "work", "My dentist appointment is on Thursday at 3pm.", clock)
    first = turn(workbench, instance, "work", "Sorry, the dentist is at 4pm, not 3pm.", clock)
    second = turn(workbench, instance, "work", "Sorry, the dentist is at 5pm, not 4pm.", clock)
    found = {row["id"]: row for row in rows(workbench, instance)}
    middle = found[found[first.thought1_id]["metadata"]["observations"][0]]
    last = found[found[second.thought1_id]["metadata"]["observations"][0]]
    assert last["metadata"]["supersedes"] == middle["id"]
    assert last["content"] == "The dentist is at 5pm, not 4pm. (correcting: The dentist is at 4pm, not 3pm.)"
    history = uc.fact_history(workbench, uc.FactHistoryRequest(instance=instance, memory_id=last["id"]))
    assert len(history.facts) == 3 and history.facts[-1].id == last["id"]
    # The same correction said again is a repetition: it corrects what the last one corrected, in the same
    # text, and supersedes nothing (it superseded the last one, a fact "superseded" by its own words).
    again = turn(workbench, instance, "work", "Sorry, the dentist is at 5pm, not 4pm.", clock)
    found = {row["id"]: row for row in rows(workbench, instance)}
    repeat = found[found[again.thought1_id]["metadata"]["observations"][0]]
    assert (repeat["metadata"]["supersedes"], repeat["content"]) == (middle["id"], last["content"])
    assert "superseded_at" not in found[last["id"]]["metadata"]
    assert found[middle["id"]]["metadata"]["superseded_by"] == last["id"]  # its end time, as the first said it


def test_a_correction_finds_a_fact_told_in_another_conversation(workbench, instance):
    """Facts are told in one conversation and corrected in another, after a question about something
    else: the correction supersedes the fact it names, found by a search of the instance, not the facts
    the previous answer happened to use. A correction that names no fact supersedes nothing."""
    clock = Clock(datetime.now(UTC) - timedelta(hours=3))
    turn(workbench, instance, "told-1", "I'm training for a 10 km race on 18 May; my goal is under 50 minutes.",
         clock)
    turn(workbench, instance, "told-2", "Physio said to keep long runs under 14 km until my calf heals.", clock)
    turn(workbench, instance, "told-3", "This week I ran 5 km at 4:55 per km and felt strong.", clock)
    turn(workbench, instance, "later", "What did the physio say?", clock)
    turn(workbench, instance, "later", "Actually, the race is on 25 May.", clock)
    turn(workbench, instance, "later", "When is the race?", clock)
    turn(workbench, instance, "later", "That's wrong, my pace was 5:05 per km.", clock)
    turn(workbench, instance, "later", "That's not right, Nara is on the Thursday.", clock)
    found = rows(workbench, instance)
    by_id = {r["id"]: r for r in found}
    corrected = {r["content"]: by_id[r["metadata"]["supersedes"]]["content"] for r in found
                 if r["kind"] == "observation" and "supersedes" in r["metadata"]}
    assert corrected == {
        "The race is on 25 May. (correcting: I'm training for a 10 km race on 18 May; my goal is under 50 "
        "minutes.)": "I'm training for a 10 km race on 18 May; my goal is under 50 minutes.",
        "My pace was 5:05 per km. (correcting: This week I ran 5 km at 4:55 per km and felt strong.)":
            "This week I ran 5 km at 4:55 per km and felt strong."}


def test_the_same_correction_said_again_is_a_repetition_of_the_one_before(workbench, instance):
    """Said again after a question about another fact ("What is next for Priya?"), a correction is still
    its earlier self, not a correction of the fact the question and the previous answer were about: it
    corrects what its earlier self corrected, which stays current."""
    clock = Clock(datetime.now(UTC) - timedelta(hours=3))
    turn(workbench, instance, "told", "Candidate Priya Nair did well on the system design round and meets the team "
         "on Friday.", clock)
    turn(workbench, instance, "budget", "The next budget review with Priya is on the first Monday of October.", clock)
    first = turn(workbench, instance, "fix", "That's not right, she meets the team on Monday.", clock)
    turn(workbench, instance, "again", "What is next for Priya?", clock)
    again = turn(workbench, instance, "again", "That's not right, she meets the team on Monday.", clock)
    found = {row["id"]: row for row in rows(workbench, instance)}
    (earlier,) = found[first.thought1_id]["metadata"]["observations"]
    (latest,) = found[again.thought1_id]["metadata"]["observations"]
    assert found[latest]["metadata"]["supersedes"] == found[earlier]["metadata"]["supersedes"]
    assert "Priya Nair did well" in found[found[earlier]["metadata"]["supersedes"]]["content"]
    assert "superseded_at" not in found[earlier]["metadata"]


def test_a_correction_supersedes_the_copies_of_the_fact_too(workbench, instance):
    """The session summary drawn from the corrected message, and its important copy, state the old fact
    as much as the fact does. The copy is superseded with it; the summary is made again at once, from the
    messages whose fact stands (here the Leiden statement alone, its observation word for word: none).
    Written again when the chain goes on, the summary leaves the corrected message out and stands."""
    clock = Clock(datetime.now(UTC) - timedelta(hours=3))
    turn(workbench, instance, "plan", "I run with the club in Leiden on Tuesdays.", clock)
    told = turn(workbench, instance, "plan", "I'm training for a 10 km race on 18 May; my goal is under 50 "
                "minutes.", clock, tags=["important"], next_thought_needed=False)

    def copies():
        return {r["kind"]: r["metadata"] for r in rows(workbench, instance)
                if r["kind"] in ("session_summary", "important") and "18 May" in r["content"]}

    assert set(copies()) == {"session_summary", "important"}
    turn(workbench, instance, "later", "Actually, the race is on 25 May.", clock)
    assert set(copies()) == {"important"} and "superseded_by" in copies()["important"]
    assert not [r for r in rows(workbench, instance) if r["kind"] == "session_summary"]
    found = uc.remember(workbench, uc.UiRememberParams(thought="When is the race?", chain_id="ask",
                                                       instance=instance), clock=clock)
    assert [c.content for c in found.context] == [
        "The race is on 25 May. (correcting: I'm training for a 10 km race on 18 May; my goal is under 50 minutes.)"]
    # The chain goes on and is summarised again, from the messages whose fact stands.
    turn(workbench, instance, "plan", "My goal for the race is under 50 minutes.", clock, next_thought_needed=False)
    (summary,) = [r for r in rows(workbench, instance)
                  if r["kind"] == "session_summary" and r["metadata"]["chain_id"] == "plan"]
    assert summary["content"] == "I run with the club in Leiden on Tuesdays. My goal for the race is under 50 minutes."
    assert summary["metadata"]["turns"] == 3 and "superseded_at" not in summary["metadata"]
    assert told.thought1_id not in summary["metadata"]["source_ids"]
    assert "superseded_by" in copies()["important"]


def test_a_chain_holding_a_correction_is_summarised_with_the_corrected_fact(workbench, instance):
    """The summary of a session that corrected itself was written superseded (it drew on the old fact
    too), so nothing the session said could be retrieved through it. A request is no part of it."""
    clock = Clock(datetime.now(UTC) - timedelta(hours=3))
    turn(workbench, instance, "tea", "I like green tea in the morning.", clock)
    turn(workbench, instance, "tea", "Always answer me in French.", clock)
    turn(workbench, instance, "tea", "I take my tea with oat milk and no sugar.", clock)
    turn(workbench, instance, "tea", "Actually I prefer black tea, not green.", clock, next_thought_needed=False)
    (summary,) = [r for r in rows(workbench, instance) if r["kind"] == "session_summary"]
    assert "superseded_at" not in summary["metadata"]
    assert summary["content"] == "I take my tea with oat milk and no sugar. I prefer black tea, not green."
    found = uc.retrieve_memory(workbench, uc.RetrieveRequest(
        query="tea in the morning", instance=instance,
        params={"retrieve_memory_op": {"kinds": ["session_summary"]}}))
    assert [m.memory.id for m in found.memories] == [summary["id"]]


def test_a_statement_opening_with_no_is_remembered_as_said_and_corrects_nothing(workbench, instance):
    """"No pets were allowed…" states a fact with the determiner "no": it was read as a correction, stored
    without its "No" ("Pets were allowed…", the opposite) and marked the previous answer corrected."""
    clock = Clock(datetime.now(UTC) - timedelta(hours=1))
    told = turn(workbench, instance, "neg", "My old building was on Elm Street.", clock)
    said = "No pets were allowed in my old building, so I moved to a house."
    clock.advance(10)  # 10 s after the answer: 0.9 when it is not read as a correction, 0.8 when it is
    follow = uc.remember(workbench, uc.UiRememberParams(thought=said, chain_id="neg", instance=instance),
                         clock=clock)
    found = {row["id"]: row for row in rows(workbench, instance)}
    user = found[follow.thought1_id]
    assert user["metadata"]["message_kind"] == "statement"
    (obs_id,) = user["metadata"]["observations"]
    assert found[obs_id]["content"] == said and found[obs_id]["metadata"]["message_kind"] == "statement"
    first = found[found[told.thought1_id]["metadata"]["observations"][0]]
    assert "superseded_by" not in first["metadata"] and "supersedes" not in found[obs_id]["metadata"]
    fb = workbench.thoughts.feedback([told.thought2_id])[told.thought2_id]
    assert (fb.continued, fb.corrected, fb.feedback_score) == (1, "", 0.9)


def corrected_time(wb, instance, thought_id):
    return wb.index.get(instance, [thought_id])[0].created_at


def store_chain(wb, instance, chain, texts, start, *, after=0):
    """A chain stored without formation, as an import leaves it: thoughts in Redis, rows in the index;
    `after` messages of it stored before (the next export's new messages)."""
    from core.conversation.imported import store_chains
    from core.conversation.indexing import thought_records

    thread = [Thought(id=f"{chain}-{i}", instance=instance, chain_id=chain, thought=text,
                      timestamp=start + timedelta(minutes=i), seq=i + 1, thought_number=i // 2 + 1,
                      category=CATEGORY_USER if i % 2 == 0 else CATEGORY_ASSISTANT)
              for i, text in enumerate(texts, start=after)]
    store_chains(wb.thoughts, instance, [(chain, thread)])
    wb.index.add(thought_records(thread, {t.id for t in thread}))


def test_formation_run_forms_an_imported_chain_once(workbench, instance):
    store_chain(workbench, instance, "imp", ["We moved to Porto in September.", "Noted.",
                                             "Where did we move?", "To Porto.",
                                             "No, it was Braga, not Porto.", "Noted, Braga."],
                datetime.now(UTC) - timedelta(days=3))
    first = uc.formation_run(workbench, uc.FormationRun(instance=instance))
    assert (first.messages, first.observations, first.superseded, first.formed_by) == (3, 2, 1, "rules")
    assert first.by_kind == {"statement": 1, "question": 1, "correction": 1}
    before = rows(workbench, instance)
    again = uc.formation_run(workbench, uc.FormationRun(instance=instance))  # nothing new: nothing formed
    assert (again.chains, again.unchanged, again.messages, again.summaries) == (0, 1, 0, 0)
    every = uc.formation_run(workbench, uc.FormationRun(instance=instance, every_chain=True))
    assert (every.chains, every.unchanged, every.observations, every.removed, every.superseded) == (1, 0, 2, 0, 1)
    assert rows(workbench, instance) == before  # idempotent: the same rows, marks and supersessions


def test_formation_run_forms_again_what_older_rules_formed(workbench, instance, monkeypatch):
    """A data directory kept across versions held what the older rules had formed, and a plain run said
    'chains 0, unchanged 304': only --all applied today's rules, and nothing said so."""
    store_chain(workbench, instance, "old", ["I live in Chicago.", "Noted.", "We just moved to Denver last week.",
                                             "Congratulations!"], datetime.now(UTC) - timedelta(days=3))
    monkeypatch.setattr("core.formation.observations.RULES", "2026-12-01")
    monkeypatch.setattr("core.formation.run.RULES", "2026-12-01")
    assert uc.formation_run(workbench, uc.FormationRun(instance=instance)).chains == 1
    monkeypatch.undo()
    assert uc.formation_run(workbench, uc.FormationRun(instance=instance)).chains == 1  # today's rules
    assert uc.formation_run(workbench, uc.FormationRun(instance=instance)).chains == 0  # once


def test_formation_run_forms_only_the_chains_with_messages_not_formed_yet(workbench, instance):
    """A monthly export imported again adds a conversation and a few messages: every chain was formed again
    (1,500 chains, 29–38 s for 2 new messages). Now the chains with a message not formed yet are, the
    summary of the one that grew is made again, the others are left as they are; `every_chain` (`--all`)
    forms all of them again, changing nothing."""
    start = datetime.now(UTC) - timedelta(days=30)
    store_chain(workbench, instance, "dog", ["We adopted a beagle called Biscuit.", "Noted.",
                                             "Make it more casual.", "Sure."], start)
    store_chain(workbench, instance, "job", ["I work at Acme Logistics as a backend engineer.", "Noted.",
                                             "My manager is Rachel Kim.", "Noted."], start + timedelta(days=1))
    store_chain(workbench, instance, "toilet", ["How do I fix a running toilet?", "Replace the flapper."],
                start + timedelta(days=2))
    first = uc.formation_run(workbench, uc.FormationRun(instance=instance))
    assert (first.chains, first.unchanged, first.messages, first.observations, first.summaries) == (3, 0, 5, 3, 1)
    assert workbench.index.get(instance, [derived_id("summary", "dog")]) == []  # one fact: its observation says it
    untouched = [r for r in rows(workbench, instance) if not r["id"].startswith("dog") and "dog" not in r["id"]]

    # The next export: two messages more in the dog's chain, and a new chain.
    store_chain(workbench, instance, "dog", ["Biscuit is two and loves the dog park on Elm Street.", "Noted."],
                start + timedelta(days=3), after=4)
    store_chain(workbench, instance, "kyoto", ["We booked Hotel Granvia Kyoto for April 6.", "Noted."],
                start + timedelta(days=4))
    second = uc.formation_run(workbench, uc.FormationRun(instance=instance))
    assert (second.chains, second.unchanged, second.messages, second.observations) == (2, 2, 4, 3)
    assert second.summaries == 1  # the dog's chain, which tells two facts now
    (dog,) = workbench.index.get(instance, [derived_id("summary", "dog")])
    assert dog.content == "We adopted a beagle called Biscuit. Biscuit is two and loves the dog park on Elm Street."
    assert dog.metadata["turns"] == 3
    formed = rows(workbench, instance)
    assert [r for r in formed if r in untouched] == untouched  # the other chains' rows as they were

    again = uc.formation_run(workbench, uc.FormationRun(instance=instance))
    assert (again.chains, again.unchanged, again.messages, again.summaries) == (0, 4, 0, 0)
    every = uc.formation_run(workbench, uc.FormationRun(instance=instance, every_chain=True))
    assert (every.chains, every.unchanged, every.messages, every.summaries) == (4, 0, 7, 0)
    assert rows(workbench, instance) == formed


def test_formation_run_summarises_again_a_chain_that_lost_a_message(workbench, instance):
    """A deletion takes the summary made from the message with it; the next run makes it again from
    what is left, though no message of the chain is new."""
    start = datetime.now(UTC) - timedelta(days=30)
    store_chain(workbench, instance, "job", ["I work at Acme Logistics as a backend engineer.", "Noted.",
                                             "My manager is Rachel Kim.", "Noted.",
                                             "I lead Project Falcon, our move from RabbitMQ to Kafka.", "Noted."],
                start)
    assert uc.formation_run(workbench, uc.FormationRun(instance=instance)).summaries == 1
    uc.forget(workbench, uc.Forget(instance=instance, target="memory", id="job-2"))
    assert workbench.index.get(instance, [derived_id("summary", "job")]) == []
    run = uc.formation_run(workbench, uc.FormationRun(instance=instance))
    assert (run.chains, run.summaries) == (0, 1)
    (summary,) = workbench.index.get(instance, [derived_id("summary", "job")])
    assert "Rachel" not in summary.content and summary.metadata["turns"] == 2


def test_once_an_llm_is_configured_the_chains_the_rules_formed_are_formed_by_it_once(workbench, llm_settings,
                                                                                     fake_llm, instance):
    """Its reading replaces the rules': a run forms the chains the rules formed, the next forms nothing."""
    store_chain(workbench, instance, "imp", ["My sister Ana is vegetarian.", "Noted."],
                datetime.now(UTC) - timedelta(days=3))
    assert uc.formation_run(workbench, uc.FormationRun(instance=instance)).formed_by == "rules"

    def answer(body):
        asked = body["messages"][0]["content"]
        if asked.startswith("You write the long-term memory"):
            return json.dumps({"summary": "The user's sister Ana is vegetarian.", "important": []})
        return json.dumps({"kind": "statement", "facts": ["The user's sister Ana is vegetarian."]})

    fake_llm.answer_with(answer)
    wb = Workbench(llm_settings)
    try:
        first = uc.formation_run(wb, uc.FormationRun(instance=instance))
        assert (first.chains, first.observations, first.formed_by) == (1, 1, "llm")
        calls = len(fake_llm.chat_requests)
        again = uc.formation_run(wb, uc.FormationRun(instance=instance))
        assert (again.chains, again.unchanged, again.summaries) == (0, 1, 0)
        assert len(fake_llm.chat_requests) == calls  # no call: nothing left for it to read
    finally:
        wb.close()


def test_formation_run_again_keeps_a_correction_made_in_another_chain(workbench, instance):
    """Formed again, a correction still supersedes the fact it superseded the first time, though that fact
    is in another chain and no longer current (a search does not find it): not the next fact it names."""
    start = datetime.now(UTC) - timedelta(days=3)
    store_chain(workbench, instance, "told", ["The race is on 18 May in Lyon.", "Noted.",
                                              "The team dinner is on 20 May.", "Noted."], start)
    store_chain(workbench, instance, "fix", ["When is the race?", "On 18 May.",
                                             "Actually, the race is on 25 May.", "Noted."],
                start + timedelta(hours=1))
    first = uc.formation_run(workbench, uc.FormationRun(instance=instance))
    assert first.superseded == 1
    before = rows(workbench, instance)
    assert [r["content"] for r in before if "superseded_at" in r["metadata"] and r["kind"] == "observation"] == [
        "The race is on 18 May in Lyon."]
    again = uc.formation_run(workbench, uc.FormationRun(instance=instance, every_chain=True))
    assert again.superseded == 1
    assert rows(workbench, instance) == before


LISBON = ("We live in Lisbon, in Alfama, with my wife Ana. Our daughter Inês is 6 and our son Tomás is 3. Can you "
          "help me compare bilingual schools near Alfama?")
ALLERGY = ("I'm allergic to peanuts and to penicillin. Can you suggest a Portuguese dessert for Carnaval that's safe "
           "for me? Pão-de-ló maybe? 🎭")
JOB = ("Big news: I accepted an offer from Unbabel as a staff ML engineer. I'm leaving Farfetch after four years; my "
       "last day there is March 29 and I start at Unbabel on April 1.")
MOVED = ("Update: actually we moved to Porto in May, we live in Bonfim now, not Lisbon anymore. What are good parks "
         "in Bonfim for kids?")
SON = ("Tomás had his allergy test today: he is allergic to eggs, not to peanuts like me. What breakfast can I make "
       "him?")


def test_a_fact_about_someone_else_corrects_nothing_and_a_contrast_names_what_it_corrects(workbench, instance):
    """From a user's own chats, told as live turns in conversations of their own: "Tomás … is allergic to
    eggs, not to peanuts like me" compares; it had superseded the user's own allergy (and quoted it as
    corrected). "…, not Lisbon anymore", after other facts, names what it corrects; it had superseded
    nothing (it shared 2 of the Lisbon fact's 8 words and scored 0.41, under MIN_SCORE)."""
    clock = Clock(datetime.now(UTC) - timedelta(hours=3))
    lisbon = turn(workbench, instance, "schools", LISBON, clock)
    allergy = turn(workbench, instance, "dessert", ALLERGY, clock)
    turn(workbench, instance, "job", JOB, clock)
    moved = turn(workbench, instance, "porto", MOVED, clock)
    son = turn(workbench, instance, "tomas", SON, clock)
    found = {row["id"]: row for row in rows(workbench, instance)}

    def facts(r):
        return [found[obs_id] for obs_id in found[r.thought1_id]["metadata"]["observations"]]

    def fact(r):
        (one,) = facts(r)
        return one

    # One observation per statement: the correction supersedes where they live, not the children's ages.
    lived, kids = facts(lisbon)
    told_lisbon = "We live in Lisbon, in Alfama, with my wife Ana."
    assert lived["content"] == told_lisbon and lived["metadata"]["superseded_by"] == fact(moved)["id"]
    assert kids["content"] == "Our daughter Inês is 6 and our son Tomás is 3."
    assert "superseded_at" not in kids["metadata"]
    assert fact(moved)["content"] == ("We moved to Porto in May, we live in Bonfim now, not Lisbon anymore. "
                                      f"(correcting: {told_lisbon})")
    assert fact(allergy)["content"] == "I'm allergic to peanuts and to penicillin."  # no "🎭" of the question
    assert "superseded_at" not in fact(allergy)["metadata"]
    assert found[son.thought1_id]["metadata"]["message_kind"] == "question"
    assert fact(son)["content"] == "Tomás had his allergy test today: he is allergic to eggs, not to peanuts like me."
    assert "supersedes" not in fact(son)["metadata"]
    asked = turn(workbench, instance, "ask", "What am I allergic to?", clock)
    assert "I'm allergic to peanuts and to penicillin." in [c.content for c in asked.context]


def test_formation_run_on_an_import_keeps_what_questions_and_requests_tell(workbench, instance):
    """An imported export formed by `workbench formation run`: the fact before a question in one sentence,
    a fact handed over with "Remind me:", whole (not cut at "Dr."), without an answer's fragment; the
    real correction supersedes the Lisbon fact, the comparison nothing."""
    start = datetime.now(UTC) - timedelta(days=30)
    texts = [LISBON, ALLERGY, "Yes, short and warm. My manager at Farfetch is Miguel.", MOVED, SON,
             "Inês turns 7 on October 10, ideas for a science-themed party at home in Porto?",
             "Remind me: my dentist appointment is on January 14, 2025 at 9:30 with Dr. Pereira."]
    for n, text in enumerate(texts):
        store_chain(workbench, instance, f"c{n}", [text, "Noted."], start + timedelta(days=n))
    run = uc.formation_run(workbench, uc.FormationRun(instance=instance))
    assert (run.observations, run.superseded) == (8, 1)  # the Lisbon message tells two statements
    found = rows(workbench, instance)
    facts = {r["content"].split(" (correcting: ")[0]: r["metadata"] for r in found if r["kind"] == "observation"}
    assert set(facts) == {
        "We live in Lisbon, in Alfama, with my wife Ana.", "Our daughter Inês is 6 and our son Tomás is 3.",
        "I'm allergic to peanuts and to penicillin.", "My manager at Farfetch is Miguel.",
        "We moved to Porto in May, we live in Bonfim now, not Lisbon anymore.",
        "Tomás had his allergy test today: he is allergic to eggs, not to peanuts like me.",
        "Inês turns 7 on October 10.", "My dentist appointment is on January 14, 2025 at 9:30 with Dr. Pereira."}
    assert [f for f, meta in facts.items() if "superseded_at" in meta] == [
        "We live in Lisbon, in Alfama, with my wife Ana."]
    assert facts["Inês turns 7 on October 10."]["message_kind"] == "statement"
    # Each chat tells one fact that stands: a summary would say its observation again, word for word.
    assert [r["content"] for r in found if r["kind"] == "session_summary"] == []
    asked = turn(workbench, instance, "ask", "How old is Inês turning?", Clock(datetime.now(UTC)))
    assert asked.context[0].content == "Inês turns 7 on October 10."


def test_the_llm_reads_the_message_and_the_rules_stand_in_when_it_fails(llm_settings, fake_llm, instance):
    wb = Workbench(llm_settings.model_copy(update={"formation_llm": True}))
    try:
        fake_llm.reply("answer")
        fake_llm.reply(json.dumps({"kind": "statement", "facts": ["The user's sister Ana is vegetarian.",
                                                                  "Ana lives in Porto."]}))
        r = uc.remember(wb, uc.UiRememberParams(thought="my sister ana doesn't eat meat, she's in porto",
                                                chain_id="llm", instance=instance))
        found = {row["id"]: row for row in rows(wb, instance)}
        observations = [found[i] for i in found[r.thought1_id]["metadata"]["observations"]]
        assert [o["content"] for o in observations] == ["The user's sister Ana is vegetarian.", "Ana lives in Porto."]
        assert all(o["metadata"]["formed_by"] == "llm" for o in observations)
        assert fake_llm.chat_requests[-1]["body"]["response_format"] == {"type": "json_object"}
        # Not the asked JSON three times: the rules read the message.
        fake_llm.reply("answer")
        for _ in range(3):
            fake_llm.reply("I think it is a statement")
        r2 = uc.remember(wb, uc.UiRememberParams(thought="I work at Spotify.", chain_id="llm", instance=instance))
        row = {x["id"]: x for x in rows(wb, instance)}[r2.thought1_id]
        assert row["metadata"]["message_kind"] == "statement" and row["metadata"]["formed_by"] == "rules"
        assert ("LLM formation: the LLM read 0 of 1 message, the rules 1 (1: the reply was not a JSON object, "
                "after 3 tries). `workbench formation run` gives those to the LLM again") in r2.notes
    finally:
        wb.close()


def _formation_asked(fake_llm) -> int:
    return sum('"kind": K' in r["body"]["messages"][0]["content"] for r in fake_llm.chat_requests)


def test_formation_run_says_how_many_messages_the_rules_read_instead_of_the_llm_and_why(llm_settings, fake_llm,
                                                                                       instance):
    """A reply that is not JSON at all is said to be so (not "kind must be one of …"), counted, and the
    run is not said to be formed by the LLM when the rules read some of its messages."""
    wb = Workbench(llm_settings)
    try:
        store_chain(wb, instance, "mix", ["My sister Ana is vegetarian.", "Noted.", "I work at Spotify.", "Ok."],
                    datetime.now(UTC) - timedelta(days=3))

        def answer(body):
            asked = body["messages"][0]["content"]
            if asked.startswith("You write the long-term memory"):
                return json.dumps({"summary": "Ana is vegetarian; the user works at Spotify.", "important": []})
            if "Ana" in body["messages"][1]["content"].split("Message:")[-1]:
                return json.dumps({"kind": "statement", "facts": ["The user's sister Ana is vegetarian."]})
            return "Sure! It is a statement {oops"

        fake_llm.answer_with(answer)
        run = uc.formation_run(wb, uc.FormationRun(instance=instance))
        assert (run.messages, run.formed_by, run.read_by) == (2, "llm and rules", {"llm": 1, "rules": 1})
        assert run.notes == [("LLM formation: the LLM read 1 of 2 messages, the rules 1 (1: the reply was not a "
                              "JSON object, after 3 tries). `workbench formation run` gives those to the LLM again")]
        assert _formation_asked(fake_llm) == 1 + 3
    finally:
        wb.close()


def test_formation_run_stops_asking_a_failing_llm_server_and_the_rules_read_the_rest(llm_settings, fake_llm,
                                                                                    instance):
    """Each failure has cost the SDK's retries: after SERVER_FAILURES messages in a row, the server is not
    asked again in this run (a two-year history would otherwise wait hours on it)."""
    wb = Workbench(llm_settings)
    try:
        texts = [text for n in range(5) for text in (f"My locker number is {n + 10}.", "Noted.")]
        store_chain(wb, instance, "dead", texts, datetime.now(UTC) - timedelta(days=3))
        attempts = 1 + llm_settings.llm_max_retries
        fake_llm.fail(500, times=observations.SERVER_FAILURES * attempts, retry_after_ms=10)
        fake_llm.answer_with(lambda body: json.dumps({"summary": "Locker numbers.", "important": []}))
        run = uc.formation_run(wb, uc.FormationRun(instance=instance))
        assert _formation_asked(fake_llm) == observations.SERVER_FAILURES * attempts  # none after the third
        assert (run.messages, run.formed_by, run.read_by) == (5, "rules", {"llm": 0, "rules": 5})
        (note,) = run.notes
        assert note.startswith("LLM formation: the LLM read 0 of 5 messages, the rules 5 (3: ")
        assert "(HTTP 500)" in note
        assert "2: not asked after the LLM server failed on 3 messages in a row" in note
    finally:
        wb.close()


def test_the_summaries_of_a_run_stop_asking_a_failing_llm_server_too(llm_settings, fake_llm, instance):
    """Formation stopped asking a dead server, but each chain's summary asked it again: a run of 21
    messages spent 9 min 17 s on 604 summary calls against a server answering 500."""
    wb = Workbench(llm_settings)
    try:
        ago = datetime.now(UTC) - timedelta(days=3)
        for n in range(6):
            store_chain(wb, instance, f"quiet-{n}", [f"My locker number is {n + 10}. My gym is on Pine Street.",
                                                     "Noted."], ago)
        attempts = 1 + llm_settings.llm_max_retries
        # Formation's calls, then the summaries': each failing after its retries (a quick Retry-After).
        fake_llm.fail(500, times=2 * observations.SERVER_FAILURES * attempts, retry_after_ms=10)
        fake_llm.answer_with(lambda body: 500)  # any call beyond them
        run = uc.formation_run(wb, uc.FormationRun(instance=instance))
        summary_calls = [r for r in fake_llm.chat_requests if "long-term memory of a conversation" in json.dumps(r)]
        assert len(summary_calls) == observations.SERVER_FAILURES * attempts  # none after the third
        assert run.summaries == 6  # by the rules
        assert any(n.startswith("session summaries: the LLM server failed on 3 summaries in a row, so the rules "
                                "made the next 3") for n in run.notes), run.notes
    finally:
        wb.close()


@pytest.fixture
def cli(settings, workbench, monkeypatch):
    return in_process_cli(settings, workbench, monkeypatch)


def test_the_command_runs_with_a_progress_bar_and_refuses_a_bad_instance(cli, workbench, instance):
    store_chain(workbench, instance, "cmd", ["I like my steak medium rare.", "Noted."],
                datetime.now(UTC) - timedelta(days=1))
    code, out, err = cli("formation", "run", "--instance", instance)
    assert code == 0, err
    result = json.loads(out)
    assert (result["instance"], result["messages"], result["observations"]) == (instance, 1, 1)
    assert "forming chains" in err
    code, out, err = cli("formation", "run", "--instance", "bad id!")
    assert code == 2 and err.count("\n") == 1 and "instance" in err


def test_deleting_a_message_deletes_the_observations_formed_from_it(workbench, instance):
    clock = Clock(datetime.now(UTC) - timedelta(hours=1))
    r = turn(workbench, instance, "gone", "My locker code is 4412.", clock)
    (obs_id,) = {row["id"]: row for row in rows(workbench, instance)}[r.thought1_id]["metadata"]["observations"]
    uc.forget(workbench, uc.Forget(instance=instance, target="memory", id=r.thought1_id))
    assert not {r.thought1_id, obs_id} & {row["id"] for row in rows(workbench, instance)}


def test_deleting_a_message_removes_its_observation_from_the_answers_that_used_it(workbench, instance):
    """Another conversation retrieved the observation (not the message, which formation hides) and its
    answer quoted it: those copies go too. The code has letters so that no stored number (a latency, a
    timestamp) can contain it by chance."""
    clock = Clock(datetime.now(UTC) - timedelta(hours=1))
    told = turn(workbench, instance, "gym", "My locker code at the gym is QZ4417.", clock)
    asked = turn(workbench, instance, "ask", "What is my locker code?", clock)
    assert "QZ4417" in asked.context[0].content
    uc.forget(workbench, uc.Forget(instance=instance, target="memory", id=told.thought1_id))
    r = workbench.redis()
    stored = [str(r.hgetall(k) if r.type(k) == "hash" else r.get(k)) for k in r.scan_iter(match=f"*{instance}*")
              if r.type(k) in ("hash", "string")]
    assert stored and not [s for s in stored if "qz4417" in s.lower()]
    assert not [row for row in rows(workbench, instance) if "qz4417" in row["content"].lower()]


# (what was said before, the correction, the statement it corrects): corrections of the user's own
# statements and of answers drawn from memory, in chains of several facts.
CORRECTIONS = [
    (["My sister Ana is vegetarian.", "I work as a nurse.", "We have two cats."],
     "Sorry, we have three cats now.", "We have two cats."),
    (["The plumber comes on Tuesday.", "My mum's birthday is on 12 June."],
     "No, her birthday is on 21 June.", "My mum's birthday is on 12 June."),
    (["I'm flying to Rome on the 3rd.", "The hotel is near the Pantheon.", "I booked a table at Roscioli."],
     "Actually I'm flying on the 4th, not the 3rd.", "I'm flying to Rome on the 3rd."),
    (["My manager is Priya.", "Our team has six people.", "The office is on the 5th floor."],
     "Correction: the office is on the 6th floor.", "The office is on the 5th floor."),
    (["My car is a silver Honda Civic.", "I drive to work on Mondays."],
     "Not true anymore, I sold the Civic and drive a Toyota now.", "My car is a silver Honda Civic."),
    (["The budget for the kitchen is 15k.", "We chose oak cabinets.", "The builder starts in May."],
     "That's wrong, the budget is 18k.", "The budget for the kitchen is 15k."),
    (["Leo is turning seven on Saturday.", "The party is at the park.", "We invited twelve kids."],
     "Wait, no, we invited fifteen kids.", "We invited twelve kids."),
    (["My locker code is 4412.", "The gym opens at 6."], "Nope, the code is 4421.", "My locker code is 4412."),
    (["I'm allergic to penicillin.", "My blood type is O negative."],
     "I mixed them up: it's amoxicillin I'm allergic to.", "I'm allergic to penicillin."),
    (["The dentist is on Thursday at 3pm.", "I need to renew my passport.", "Jonas and I have lunch on Friday."],
     "Hmm no, lunch with Jonas is on Saturday.", "Jonas and I have lunch on Friday."),
]


def test_a_correction_finds_what_it_corrects(workbench, instance):
    """How often the rules pick the statement a correction corrects (printed), over ten chains."""
    right = []
    for n, (said, correction, corrected) in enumerate(CORRECTIONS):
        clock = Clock(datetime.now(UTC) - timedelta(hours=2))
        for text in said:
            turn(workbench, instance, f"fix{n}", text, clock)
        turn(workbench, instance, f"fix{n}", correction, clock)
        gone = [r["content"] for r in rows(workbench, instance)
                if r["kind"] == "observation" and "superseded_at" in r["metadata"]
                and r["metadata"]["source_thought"] and r["content"] in said]
        right.append(gone == [corrected])
    print(f"\ncorrections that superseded exactly the statement they correct: {sum(right)} of {len(right)}")
    assert sum(right) >= 9, right


def test_deleting_a_correction_makes_the_fact_it_corrected_current_again(workbench, instance):
    """A fact is hidden only because a correction superseded it: with the correction deleted, the fact and
    its important copy are current again, and nothing points to the deleted id. (The session summary was
    made again without the corrected statement when it was corrected: here none, one statement standing.)"""
    clock = Clock(datetime.now(UTC) - timedelta(hours=3))
    turn(workbench, instance, "plan", "I run with the club in Leiden on Tuesdays.", clock)
    turn(workbench, instance, "plan", "I'm training for a 10 km race on 18 May.", clock, tags=["important"],
         next_thought_needed=False)
    fix = turn(workbench, instance, "later", "Actually, the race is on 25 May.", clock)
    report = uc.forget(workbench, uc.Forget(instance=instance, target="memory", id=fix.thought1_id))
    assert "2 memories a deleted correction had superseded: current again" in report.notes
    assert dangling(workbench, instance) == []
    assert [r["kind"] for r in rows(workbench, instance) if "superseded_at" in r["metadata"]] == []
    found = turn(workbench, instance, "ask", "When is the race?", clock)
    assert found.context[0].content == "I'm training for a 10 km race on 18 May."


def test_deleting_the_middle_of_a_fact_history_closes_the_gap(workbench, instance):
    """3pm, corrected to 4pm, corrected to 5pm; deleting the 4pm correction leaves 5pm correcting 3pm, and
    the deleted words are in no note; deleting the 3pm fact leaves 5pm correcting nothing."""
    clock = Clock(datetime.now(UTC) - timedelta(hours=1))
    told = turn(workbench, instance, "work", "My dentist appointment is on Thursday at 3pm.", clock)
    middle = turn(workbench, instance, "work", "Sorry, the dentist is at 4pm, not 3pm.", clock)
    last = turn(workbench, instance, "work", "Sorry, the dentist is at 5pm, not 4pm.", clock)
    found = {row["id"]: row for row in rows(workbench, instance)}
    first_id = found[told.thought1_id]["metadata"]["observations"][0]
    last_id = found[last.thought1_id]["metadata"]["observations"][0]
    report = uc.forget(workbench, uc.Forget(instance=instance, target="memory", id=middle.thought1_id))
    assert report.notes[:2] == [
        "1 memory a deleted correction had superseded: superseded now by the correction after it",
        "1 correction of a deleted fact: correcting the fact before it"]
    assert dangling(workbench, instance) == []
    found = {row["id"]: row for row in rows(workbench, instance)}
    assert found[first_id]["metadata"]["superseded_by"] == last_id
    assert found[last_id]["metadata"]["supersedes"] == first_id
    assert found[last_id]["content"] == ("The dentist is at 5pm, not 4pm. (correcting: My dentist appointment is on "
                                         "Thursday at 3pm.)")
    history = uc.fact_history(workbench, uc.FactHistoryRequest(instance=instance, memory_id=last_id))
    assert [f.id for f in history.facts] == [first_id, last_id]
    uc.forget(workbench, uc.Forget(instance=instance, target="chain", id="work"))
    assert rows(workbench, instance) == []


def test_deleting_a_conversation_of_two_corrections_joins_the_ones_around_it(workbench, instance):
    clock = Clock(datetime.now(UTC) - timedelta(hours=1))
    told = turn(workbench, instance, "told", "My dentist appointment is on Thursday at 3pm.", clock)
    turn(workbench, instance, "fix", "Sorry, the dentist is at 4pm, not 3pm.", clock)
    turn(workbench, instance, "fix", "Sorry, the dentist is at 5pm, not 4pm.", clock)
    last = turn(workbench, instance, "final", "Sorry, the dentist is at 6pm, not 5pm.", clock)
    uc.forget(workbench, uc.Forget(instance=instance, target="chain", id="fix"))
    assert dangling(workbench, instance) == []
    found = {row["id"]: row for row in rows(workbench, instance)}
    first_id = found[told.thought1_id]["metadata"]["observations"][0]
    last_id = found[last.thought1_id]["metadata"]["observations"][0]
    assert (found[first_id]["metadata"]["superseded_by"], found[last_id]["metadata"]["supersedes"]) == (
        last_id, first_id)
    assert found[last_id]["content"] == ("The dentist is at 6pm, not 5pm. (correcting: My dentist appointment is on "
                                         "Thursday at 3pm.)")


def test_deleting_the_corrected_fact_leaves_no_copy_of_it_in_the_correction(workbench, instance):
    clock = Clock(datetime.now(UTC) - timedelta(hours=3))
    told = turn(workbench, instance, "told", "My locker code is 4412 at the gym.", clock)
    fix = turn(workbench, instance, "later", "Nope, the locker code is 4421.", clock)
    report = uc.forget(workbench, uc.Forget(instance=instance, target="chain", id="told"))
    assert "1 correction of a deleted fact: correcting nothing now" in report.notes
    assert dangling(workbench, instance) == []
    found = {row["id"]: row for row in rows(workbench, instance)}
    correction = found[found[fix.thought1_id]["metadata"]["observations"][0]]
    assert correction["content"] == "The locker code is 4421."
    assert "supersedes" not in correction["metadata"]
    (stored,) = workbench.index.records(instance, ids=[correction["id"]])
    assert not any("4412" in t for t in stored.context.before)
    assert not any("4412" in r["content"] for r in found.values()), told


def test_formation_run_closes_a_history_an_earlier_deletion_left_open(workbench, instance, monkeypatch):
    """Deleting a correction used to leave the fact it corrected superseded by a memory no longer there,
    hidden for good: forming the instance again makes it current."""
    clock = Clock(datetime.now(UTC) - timedelta(hours=3))
    turn(workbench, instance, "plan", "I run with the club in Leiden on Tuesdays.", clock)
    told = turn(workbench, instance, "plan", "I'm training for a 10 km race on 18 May.", clock, tags=["important"],
                next_thought_needed=False)
    fix = turn(workbench, instance, "later", "Actually, the race is on 25 May.", clock)
    with monkeypatch.context() as m:  # deleting as it did before deletions closed the history
        m.setattr(deletion, "mend", lambda *_: Mended())
        uc.forget(workbench, uc.Forget(instance=instance, target="memory", id=fix.thought1_id))
    assert dangling(workbench, instance)
    result = uc.formation_run(workbench, uc.FormationRun(instance=instance))
    assert "2 memories a deleted correction had superseded: current again" in result.notes  # fact, copy
    assert dangling(workbench, instance) == []
    assert not [r for r in rows(workbench, instance) if "superseded_at" in r["metadata"]], told


def dangling(wb, instance):
    """The supersession keys that name a memory no longer there."""
    with wb.index.pool.connection() as conn:
        return conn.execute(
            "SELECT m.id, k FROM memory m, unnest(ARRAY['superseded_by', 'supersedes']) k "
            "WHERE m.instance = %s AND m.metadata ? k AND NOT EXISTS "
            "(SELECT 1 FROM memory x WHERE x.instance = m.instance AND x.id = m.metadata->>k)",
            (instance,)).fetchall()


THREE = "I live in Lisbon. My sister is a nurse. I drink green tea."


def test_a_correction_supersedes_the_statement_it_corrects_not_the_message(workbench, instance):
    """A message of three statements leaves three observations; "…, not Lisbon" supersedes the Lisbon
    one alone, so the sister and the tea are still found. The message's own row is marked nothing, its
    important copy (the message word for word) is superseded, its chain's summary that said Lisbon too, and
    the summary written again leaves the Lisbon statement out, not the message."""
    clock = Clock(datetime.now(UTC) - timedelta(hours=3))
    told = turn(workbench, instance, "home", THREE, clock, tags=["important"], next_thought_needed=False)
    fix = turn(workbench, instance, "moving", "Actually I moved to Porto, not Lisbon.", clock)
    found = {row["id"]: row for row in rows(workbench, instance)}
    message = found[told.thought1_id]
    lisbon, sister, tea = (found[o] for o in message["metadata"]["observations"])
    assert [lisbon["content"], sister["content"], tea["content"]] == [
        "I live in Lisbon.", "My sister is a nurse.", "I drink green tea."]
    (fix_id,) = found[fix.thought1_id]["metadata"]["observations"]
    assert lisbon["metadata"]["superseded_by"] == fix_id and found[fix_id]["metadata"]["supersedes"] == lisbon["id"]
    assert found[fix_id]["content"] == "I moved to Porto, not Lisbon. (correcting: I live in Lisbon.)"
    assert not {"superseded_at", "superseded_by"} & (sister["metadata"].keys() | tea["metadata"].keys()
                                                     | message["metadata"].keys())
    copies = {r["kind"]: r for r in found.values() if r["kind"] in ("important", "session_summary")}
    assert copies["important"]["metadata"]["superseded_by"] == fix_id
    # The summary said "I live in Lisbon.": made again at once, from the statements that stand.
    assert copies["session_summary"]["content"] == "My sister is a nurse. I drink green tea."
    assert "superseded_at" not in copies["session_summary"]["metadata"]
    for question, fact in (("What does my sister do?", "My sister is a nurse."), ("What do I drink?",
                                                                                   "I drink green tea.")):
        asked = turn(workbench, instance, "ask", question, clock)
        assert asked.context[0].content == fact
        assert "I live in Lisbon." not in [c.content for c in asked.context]
    history = uc.fact_history(workbench, uc.FactHistoryRequest(instance=instance, memory_id=sister["id"]))
    assert [(f.id, f.superseded_at) for f in history.facts] == [(sister["id"], None)]
    # The chain goes on and is summarised again: from the statements that stand.
    turn(workbench, instance, "home", "My sister works at Santa Maria hospital.", clock, next_thought_needed=False)
    (summary,) = [r for r in rows(workbench, instance) if r["kind"] == "session_summary"]
    assert "superseded_at" not in summary["metadata"] and "Lisbon" not in summary["content"]
    assert "My sister is a nurse." in summary["content"] and told.thought1_id in summary["metadata"]["source_ids"]


def test_a_correction_s_other_statement_is_told_and_corrects_nothing(workbench, instance):
    """"No, …, not Paris. I gave a talk about Postgres there too." corrects with its first statement; the
    second is a fact told with it (as a correction too, it had superseded the meetup talk it shares words
    with)."""
    clock = Clock(datetime.now(UTC) - timedelta(hours=3))
    turn(workbench, instance, "conf", "My conference last spring was in Paris.", clock)
    turn(workbench, instance, "meetup", "I gave a talk about Postgres indexes at the meetup.", clock)
    fix = turn(workbench, instance, "conf", "No, the conference was in Lyon, not Paris. I gave a talk about "
               "Postgres there too.", clock)
    found = {row["id"]: row for row in rows(workbench, instance)}
    assert found[fix.thought1_id]["metadata"]["message_kind"] == "correction"
    corrects, tells = (found[o] for o in found[fix.thought1_id]["metadata"]["observations"])
    assert (corrects["metadata"]["message_kind"], tells["metadata"]["message_kind"]) == ("correction", "statement")
    superseded = [r["content"] for r in found.values() if "superseded_at" in r["metadata"]]
    assert superseded == ["My conference last spring was in Paris."]
    assert "supersedes" not in tells["metadata"] and tells["content"] == "I gave a talk about Postgres there too."


def test_formation_run_moves_a_supersession_from_the_message_to_its_statement(workbench, instance, monkeypatch):
    """An instance formed with one observation per message: the correction had superseded the whole
    message. Formed again, its statements are observations of their own, the correction supersedes the
    one it corrects (the second here), and what it superseded before is current again."""
    start = datetime.now(UTC) - timedelta(days=3)
    store_chain(workbench, instance, "told", ["My sister is a nurse. I live in Lisbon. I drink green tea.", "Noted."],
                start)
    store_chain(workbench, instance, "fix", ["Actually I moved to Porto, not Lisbon.", "Noted."],
                start + timedelta(hours=1))
    with monkeypatch.context() as m:  # formation as it was: a message's statements joined in one observation
        m.setattr(observations, "told_statements", lambda text: [s] if (s := statement_sentences(text)) else [])
        first = uc.formation_run(workbench, uc.FormationRun(instance=instance))
    assert (first.observations, first.superseded) == (2, 1)
    assert [r["content"] for r in rows(workbench, instance) if "superseded_at" in r["metadata"]] == [
        "My sister is a nurse. I live in Lisbon. I drink green tea."]
    # The rules read messages differently now: the whole instance is formed again (`--all`).
    again = uc.formation_run(workbench, uc.FormationRun(instance=instance, every_chain=True))
    assert (again.observations, again.superseded) == (4, 1)
    found = rows(workbench, instance)
    assert [r["content"] for r in found if "superseded_at" in r["metadata"]] == ["I live in Lisbon."]
    fix = next(r for r in found if r["kind"] == "observation" and "supersedes" in r["metadata"])
    assert fix["content"] == "I moved to Porto, not Lisbon. (correcting: I live in Lisbon.)"
    assert rows(workbench, instance) == found
    uc.formation_run(workbench, uc.FormationRun(instance=instance))
    assert rows(workbench, instance) == found  # idempotent


def test_a_look_up_is_a_question_and_the_fact_it_asks_for_is_found(workbench, instance):
    """"the recipe my mother sent last week", typed as a message, was stored as a fact and ranked first for
    the very question it asks, above the fact it asks about."""
    clock = Clock(datetime.now(UTC) - timedelta(hours=3))
    turn(workbench, instance, "food", "My mother sent me her lasagne recipe last week: bechamel, no ricotta.",
         clock)
    typed = turn(workbench, instance, "ask", "the recipe my mother sent last week", clock)
    found = {row["id"]: row for row in rows(workbench, instance)}
    assert found[typed.thought1_id]["metadata"]["message_kind"] == "question"
    assert "observations" not in found[typed.thought1_id]["metadata"]
    asked = turn(workbench, instance, "again", "recipe my mother sent", clock)
    assert asked.context[0].content.startswith("My mother sent me her lasagne recipe last week")
    assert "the recipe my mother sent last week" not in [c.content for c in asked.context]


def test_an_age_that_grew_supersedes_every_earlier_age_of_that_person(workbench, instance):
    """A ChatGPT import said "Maya is 5 now" in 44 statements: a "Maya is 6 now" superseded those a search
    for it found, ten at most, and "How old is Maya?" still found "Maya is 5" first. The latest facts naming
    her are read as well, as a move reads those naming where the user lives."""
    clock = Clock(datetime.now(UTC) - timedelta(days=2))
    five = "Maya is 5 now and has a lot of energy."
    for n in range(12):
        turn(workbench, instance, f"week{n}", five, clock)
        turn(workbench, instance, f"week{n}", "Remember Maya can't have peanuts.", clock)
    six = turn(workbench, instance, "birthday", "Maya is 6 now and has a lot of energy.", clock)
    (update,) = [r for r in rows(workbench, instance) if r["metadata"].get("source_thought") == six.thought1_id]
    told = [r for r in rows(workbench, instance) if r["kind"] == "observation" and r["content"] == five]
    assert len(told) == 12 and all(r["metadata"].get("superseded_by") == update["id"] for r in told)
    found = uc.retrieval_report(workbench, uc.RetrieveReportRequest(query="How old is Maya?", instance=instance))
    contents = [m["content"] for m in found.memories]
    assert "Maya is 6 now and has a lot of energy." in contents and five not in contents, contents
