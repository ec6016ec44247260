"""Seed 003's semantic indices: session summaries of ended and abandoned chains, and important items."""

from datetime import UTC, datetime, timedelta

from core import usecases as uc
from core.admin.deletion import delete_chain, delete_memory
from core.conversation.thoughts import CATEGORY_USER, Thought
from core.conversation.turn import Remember, UiRememberParams
from core.formation.important import derived_id, mark_important
from core.formation import summaries
from core.formation.summaries import (
    centrality,
    extractive_summary,
    summarise_instance,
    summarise_quiet,
)
from core.retrieval.hybrid import SearchRequest, hybrid_search
from core.models import MemoryRecord
from core.runtime import Workbench
from tests.support.clock import Clock

TRIP = ["I'm flying to Lisbon next Friday for the architecture conference.",
        "What should I pack for Lisbon?",
        "My hotel in Lisbon is near the Alfama district. Thanks for the tips!"]


def talk(wb, instance, chain, messages, *, clock=None, end=False):
    rm = Remember(wb, clock=clock)
    results = []
    for i, text in enumerate(messages):
        results.append(rm.run(UiRememberParams(thought=text, chain_id=chain,
                                               next_thought_needed=not (end and i == len(messages) - 1)),
                              instance=instance))
        if clock:
            clock.advance(30)
    return results


def summary_of(wb, instance, chain):
    return next(iter(wb.index.get(instance, [derived_id("summary", chain)])), None)


def search(wb, instance, query, kinds):
    return hybrid_search(wb.pool(), wb.embedder, SearchRequest(query=query, instance=instance, kinds=kinds)).results


def test_an_ended_chain_is_summarised_at_once_and_searchable(workbench, instance):
    turns = talk(workbench, instance, "trip", TRIP, end=True)
    summary = summary_of(workbench, instance, "trip")
    assert summary is not None and summary.kind == "session_summary" and summary.chain_id == "trip"
    # Offline: the user's statements, never the question or the thanks, in the order they were said.
    assert summary.content == ("I'm flying to Lisbon next Friday for the architecture conference. "
                               "My hotel in Lisbon is near the Alfama district.")
    meta = summary.metadata
    assert (meta["turns"], meta["method"], meta["reason"]) == (3, "extractive", "ended")
    assert meta["source_ids"] == [turns[0].thought1_id, turns[2].thought1_id]
    assert meta["started_at"] < meta["ended_at"]
    found = search(workbench, instance, "Lisbon conference trip", ["session_summary"])
    assert [m.memory.id for m in found] == [summary.id]


def test_an_abandoned_chain_is_summarised_by_the_sweep_once(workbench, instance):
    clock = Clock(datetime.now(UTC) - timedelta(hours=2))
    talk(workbench, instance, "garden", ["I planted tomatoes and basil in the back garden.",
                                         "The basil needs watering every morning."], clock=clock)
    assert summary_of(workbench, instance, "garden") is None  # not ended: only the sweep summarises it
    swept = uc.sweep_instance(workbench, uc.InstanceRequest(instance=instance))
    assert (swept.abandoned_marked, swept.summarised) == (1, 1)
    summary = summary_of(workbench, instance, "garden")
    assert summary.metadata["reason"] == "quiet" and "tomatoes" in summary.content
    # Again, by the sweep or by the formation run: nothing new, still one summary for the chain.
    assert uc.sweep_instance(workbench, uc.InstanceRequest(instance=instance)).summarised == 0
    assert summarise_instance(workbench, instance) == 0
    assert summarise_quiet(workbench, instance, limit=50) == 0
    rows = search(workbench, instance, "garden tomatoes basil", ["session_summary"])
    assert [m.memory.id for m in rows] == [summary.id]


def test_the_sweep_in_two_parts_marks_then_summarises(workbench, instance):
    """The Chat page marks abandoned answers itself and leaves the summaries to a thread: the two parts
    do what the whole sweep does."""
    clock = Clock(datetime.now(UTC) - timedelta(hours=2))
    talk(workbench, instance, "bikes", ["My road bike has a carbon frame and 22 gears.",
                                        "I ride it to the office in Leiden every day."], clock=clock)
    req = uc.InstanceRequest(instance=instance)
    assert uc.mark_abandoned(workbench, req) == 1 and summary_of(workbench, instance, "bikes") is None
    assert uc.summarise_quiet_chains(workbench, req).summarised == 1
    assert "carbon frame" in summary_of(workbench, instance, "bikes").content
    assert (uc.mark_abandoned(workbench, req), uc.summarise_quiet_chains(workbench, req).summarised) == (0, 0)


def test_a_chain_deleted_while_it_is_summarised_leaves_nothing(workbench, instance, monkeypatch):
    """A deletion that runs between the summary's reading of the chain and its writes (the sweep runs in the
    background): what the summary writes afterwards goes too."""
    clock = Clock(datetime.now(UTC) - timedelta(hours=2))
    talk(workbench, instance, "pin", ["My bank card PIN hint is the year we met.", "I keep it in my wallet."],
         clock=clock)
    made = summaries.extractive_summary

    def deleted_meanwhile(thoughts):
        delete_chain(workbench, instance, "pin")
        return made(thoughts)

    monkeypatch.setattr(summaries, "extractive_summary", deleted_meanwhile)
    assert uc.summarise_quiet_chains(workbench, uc.InstanceRequest(instance=instance)).summarised == 0
    with workbench.pool().connection() as conn:
        left = conn.execute("SELECT kind FROM memory WHERE instance = %s AND chain_id = %s",
                            (instance, "pin")).fetchall()
    assert left == []


def test_a_chain_that_grew_is_summarised_again(workbench, instance):
    clock = Clock(datetime.now(UTC) - timedelta(hours=3))
    talk(workbench, instance, "car", ["My car is a blue Volvo estate from 2015.", "Can you make it shorter?"],
         clock=clock)
    # One fact and a request: the summary would be its observation again, word for word. None is made.
    assert summarise_instance(workbench, instance) == 0 and summary_of(workbench, instance, "car") is None
    clock.advance(3600)
    talk(workbench, instance, "car", ["The Volvo goes in for its brake service on Tuesday."], clock=clock)
    progress = []
    assert summarise_instance(workbench, instance, progress=lambda done, total: progress.append((done, total))) == 1
    assert progress == [(1, 1)]
    summary = summary_of(workbench, instance, "car")
    assert summary.metadata["turns"] == 3 and summary.content == (
        "My car is a blue Volvo estate from 2015. The Volvo goes in for its brake service on Tuesday.")


def test_a_chain_still_going_is_left_to_the_sweep(workbench, instance):
    talk(workbench, instance, "live", ["I'm learning to play the cello this winter."])
    assert summarise_instance(workbench, instance) == 0


def test_the_important_tag_fills_the_important_index(workbench, instance):
    rm = Remember(workbench)
    tagged = rm.run(UiRememberParams(thought="My passport expires on 3 June 2027", chain_id="docs",
                                     tags=["important", "travel"]), instance=instance)
    rm.run(UiRememberParams(thought="My passport photo is from a booth at the station", chain_id="docs"),
           instance=instance)
    found = search(workbench, instance, "passport", ["important"])
    assert [m.memory.content for m in found] == ["My passport expires on 3 June 2027"]
    assert found[0].memory.metadata == {"source_thought": tagged.thought1_id, "reason": "tag", "importance": 0.5}
    assert found[0].memory.id == derived_id("important", tagged.thought1_id)
    delete_memory(workbench, instance, tagged.thought1_id)  # its copy goes with it
    assert search(workbench, instance, "passport", ["important"]) == []


def test_importance_above_the_setting_marks_a_thought(workbench, instance):
    def thought(text, importance):
        return Thought(id=f"t-{importance}", instance=instance, chain_id="imp", thought=text,
                       timestamp=datetime.now(UTC), category=CATEGORY_USER, importance=importance)

    assert workbench.settings.important_at == 0.8
    assert mark_important(workbench, [thought("Mum's birthday is on 12 April", 0.9),
                                      thought("It rained this afternoon", 0.5)]) == 1
    [row] = search(workbench, instance, "birthday", ["important"])
    assert row.memory.metadata["reason"] == "importance"


def test_extractive_summary_ranks_sentences_by_centrality():
    # The sentences sharing the chain's words are central; the aside is not.
    scores = centrality(["the trip to Lisbon in May", "Lisbon in May is warm", "my cat likes boxes"])
    assert scores[0] > scores[2] and scores[1] > scores[2]
    assert centrality(["one sentence only"]) == [1.0]
    only_questions = [Thought(id="q", instance="i", chain_id="c", thought="Where is Lisbon?",
                              timestamp=datetime.now(UTC), category=CATEGORY_USER)]
    assert extractive_summary(only_questions) is None


def test_a_sentence_said_again_is_summarised_once():
    said = ["Actually, the race is on 25 May.", "This week I ran 5 km at 4:55 per km and felt strong.",
            "actually the race is on 25 May"]
    thoughts = [Thought(id=f"m{i}", instance="i", chain_id="c", thought=text, timestamp=datetime.now(UTC),
                        category=CATEGORY_USER) for i, text in enumerate(said)]
    draft = extractive_summary(thoughts)
    # The correction as formation keeps its fact: without its opening "Actually,".
    assert draft.text == "The race is on 25 May. This week I ran 5 km at 4:55 per km and felt strong."
    assert draft.source_ids == ["m0", "m1"]


def test_the_llm_summarises_and_picks_important_messages(workbench, llm_settings, fake_llm, instance):
    clock = Clock(datetime.now(UTC) - timedelta(hours=2))
    turns = talk(workbench, instance, "trip", TRIP, clock=clock)
    assert summarise_instance(workbench, instance) == 1  # offline first: extractive
    wb = Workbench(llm_settings)
    try:
        fake_llm.reply("Sure! Here is the summary.")  # not the JSON asked: asked once more
        fake_llm.reply('{"summary": "The user flies to Lisbon next Friday for a conference and stays near '
                       'Alfama.", "important": [1, 7]}')
        assert summarise_instance(wb, instance) == 1  # an LLM now configured: made again, by it
        summary = summary_of(wb, instance, "trip")
        assert summary.metadata["method"] == "llm" and summary.content.startswith("The user flies to Lisbon")
        assert len(fake_llm.chat_requests) == 2
        prompt = fake_llm.chat_requests[-1]["body"]["messages"][-1]["content"]
        assert prompt.startswith(f"[1] user: {TRIP[0]}") and "assistant:" in prompt
        found = search(wb, instance, "Lisbon", ["important"])
        assert [(m.memory.metadata["source_thought"], m.memory.metadata["reason"]) for m in found] == \
            [(turns[0].thought1_id, "llm")]  # 7 is no message: ignored
        assert summarise_instance(wb, instance) == 0  # current: no call, no new summary
        assert len(fake_llm.chat_requests) == 2
    finally:
        wb.close()


def test_a_failed_llm_falls_back_to_the_extractive_summary(workbench, llm_settings, fake_llm, instance):
    clock = Clock(datetime.now(UTC) - timedelta(hours=2))
    talk(workbench, instance, "trip", TRIP, clock=clock)
    wb = Workbench(llm_settings)
    try:
        fake_llm.fail(500, times=3, retry_after_ms=1)
        assert summarise_instance(wb, instance) == 1
        assert summary_of(wb, instance, "trip").metadata["method"] == "extractive"
    finally:
        wb.close()


def test_deleting_a_message_leaves_no_copy_in_the_summaries_or_important_index(workbench, instance):
    said = "My locker code at the gym is 4417"
    turns = talk(workbench, instance, "gym", [said, "I go climbing on Tuesdays and Thursdays.",
                                              "The climbing wall closes at 10 pm on weekdays."], end=True)
    Remember(workbench).run(UiRememberParams(thought=said, chain_id="gym2", tags=["important"]), instance=instance)
    assert "4417" in summary_of(workbench, instance, "gym").content
    delete_memory(workbench, instance, turns[0].thought1_id)
    assert summary_of(workbench, instance, "gym") is None  # made from it: gone with it, then made again
    assert summarise_instance(workbench, instance) == 1
    with workbench.pool().connection() as conn:
        left = conn.execute("SELECT chain_id, kind FROM memory WHERE instance = %s AND content LIKE %s",
                            (instance, "%4417%")).fetchall()
    assert {chain for chain, _ in left} == {"gym2"}  # only where it was said again
    assert ("gym2", "important") in left
    assert "climbing" in summary_of(workbench, instance, "gym").content


def test_the_memoryscope_pipeline_selects_the_summaries_index(workbench, instance):
    from core.retrieval.memoryscope import ScopeParams, run_memoryscope

    talk(workbench, instance, "trip", TRIP, end=True)
    # Seed 001's type ratios name its four types; a session summary is given one to pass fuse_rerank.
    params = ScopeParams.from_flat({"op.retrieve_memory_op.params.kinds": ["session_summary"],
                                    "op.fuse_rerank_op.params.fuse_ratio_dict": {"session_summary": 1.0}})
    r = run_memoryscope(workbench, "Lisbon conference", instance=instance, params=params)
    assert [(m.memory.kind, m.memory.chain_id) for m in r.memories] == [("session_summary", "trip")]


FALCON = ["Write a status update for Project Falcon for this week.", "Make it more casual.", "Hmm, that didn't work.",
          "Good, now in bullet points.", "Thanks, that helps.",
          "Project Falcon moves our shipment tracking service from RabbitMQ to Kafka.",
          "Make it more casual. Here in Chicago it's been really hot all week.",
          "I lead it with Rachel Kim, my manager at Acme Logistics."]


def test_a_summary_holds_the_statements_that_tell_something(workbench, instance):
    """A ChatGPT import's summaries were made of requests and filler: "Make it more casual. Here in Chicago
    it's been really hot all week.", "Write a status update for Project Falcon…"; for "What was Project
    Falcon about?" five such summaries filled the top 5. Now only the statements formation keeps, that tell
    something: no request (nor what follows it in a request's message), thanks, or remark on the answer."""
    clock = Clock(datetime.now(UTC) - timedelta(hours=2))
    turns = talk(workbench, instance, "falcon", FALCON, clock=clock)
    assert summarise_instance(workbench, instance) == 1
    summary = summary_of(workbench, instance, "falcon")
    assert summary.content == ("Project Falcon moves our shipment tracking service from RabbitMQ to Kafka. "
                               "I lead it with Rachel Kim, my manager at Acme Logistics.")
    assert summary.metadata["source_ids"] == [turns[5].thought1_id, turns[7].thought1_id]
    assert summary.metadata["rules"] == summaries.SUMMARY_RULES


def test_a_chain_of_requests_and_one_fact_has_no_summary(workbench, instance):
    """The summary would say word for word what the fact's observation says: a second copy of it, which
    ranked beside it. One the older rules made ("Make it more casual. …") goes when the chain is summarised
    again; the question finds the fact itself, and no summary."""
    clock = Clock(datetime.now(UTC) - timedelta(hours=2))
    said = FALCON[:6]
    talk(workbench, instance, "heron", said, clock=clock)
    # What the rules before made of it, as an import formed by them left it.
    users = len(said)
    workbench.index.add([MemoryRecord(
        instance=instance, id=derived_id("summary", "heron"), kind="session_summary", chain_id="heron",
        content="Write a status update for Project Falcon for this week. Make it more casual. Hmm, that didn't work.",
        created_at=datetime.now(UTC) - timedelta(hours=1),
        metadata={"chain_id": "heron", "turns": users, "method": "extractive", "reason": "quiet", "source_ids": []})])
    assert summarise_instance(workbench, instance) == 0
    assert summary_of(workbench, instance, "heron") is None
    [asked] = talk(workbench, instance, "ask", ["What was Project Falcon about?"])
    assert ("observation", FALCON[5]) in [(c.kind, c.content) for c in asked.context]
    assert all(c.kind != "session_summary" for c in asked.context)
    assert summarise_instance(workbench, instance) == 0  # nothing due: the chain is marked as looked at
    assert summaries.unsummarised(workbench, instance) == ["ask"]  # still going: left to the sweep


def test_a_chain_that_told_nothing_has_no_summary(workbench, instance):
    clock = Clock(datetime.now(UTC) - timedelta(hours=2))
    talk(workbench, instance, "q", ["How do I make shakshuka?", "Make it more casual.", "Hmm, that didn't work.",
                                    "Good, now in bullet points.", "Perfect, thank you!"], clock=clock)
    assert summarise_instance(workbench, instance) == 0 and summary_of(workbench, instance, "q") is None


CIVIC, OUTBACK = "I drive a 2015 Honda Civic.", "We sold the Civic and bought a 2021 Subaru Outback."
HOME = ["I drive a 2015 Honda Civic. My sister Ana is a nurse in Porto.", "We are planning a trip to Lisbon in March."]


def retrieved(wb, instance, query):
    report = uc.retrieval_report(wb, uc.RetrieveReportRequest(query=query, instance=instance))
    return [m["content"] for m in report.memories]


def test_a_summary_drawn_on_a_fact_an_update_supersedes_is_made_again_from_what_stands(workbench, instance):
    """A session said "I drive a 2015 Honda Civic." and was summarised; a later one says the Civic was
    sold. The summary was marked superseded with the fact, so everything else the session said was lost to
    retrieval until a `workbench formation run`; the turn that superseded the fact makes it again at once,
    from the statements that stand, and "What car do I drive now?" finds the Outback first."""
    clock = Clock(datetime.now(UTC) - timedelta(hours=3))
    talk(workbench, instance, "home", HOME, clock=clock, end=True)
    assert CIVIC in summary_of(workbench, instance, "home").content
    talk(workbench, instance, "car", [OUTBACK], clock=clock)
    summary = summary_of(workbench, instance, "home")
    assert summary.content == "My sister Ana is a nurse in Porto. We are planning a trip to Lisbon in March."
    assert "superseded_at" not in summary.metadata
    found = retrieved(workbench, instance, "What car do I drive now?")
    assert found[0] == OUTBACK, found
    assert not any("Civic" in text for text in found[1:]), found
    assert summaries.unsummarised(workbench, instance) == ["car"]  # still going: nothing else is due


PASTED = ("I get this error when running unit tests for a FastAPI endpoint in Bash:\n\n```\npsycopg.errors."
          'UniqueViolation: duplicate key value violates unique constraint "users_email_key"\n``` '
          "Maya is 5 now and has a lot of energy.")


def test_a_superseded_statement_after_pasted_code_is_left_out_of_the_summary(workbench, instance):
    """Formation reads "Maya is 5 now…" out of a message that pastes code first, but the message's
    sentences run the code and the statement together: the statement was not found to leave it out, and
    the summary said "Maya is 5 now" as current after "Maya is 6 now" had superseded it (a ChatGPT import:
    first for "How old is Maya?")."""
    clock = Clock(datetime.now(UTC) - timedelta(hours=3))
    talk(workbench, instance, "maya", ["Remember Maya can't have peanuts.", PASTED,
                                       "Our dog Biscuit needs a walk twice a day."], clock=clock)
    talk(workbench, instance, "birthday", ["Maya is 6 now and has a lot of energy."], clock=clock)
    assert summarise_instance(workbench, instance) == 1  # the birthday's one fact is its observation
    summary = summary_of(workbench, instance, "maya")
    assert summary.content == "Remember Maya can't have peanuts. Our dog Biscuit needs a walk twice a day."
    assert "superseded_at" not in summary.metadata
    found = retrieved(workbench, instance, "How old is Maya?")
    assert found[0] == "Maya is 6 now and has a lot of energy.", found
    assert not any("Maya is 5" in text for text in found), found
