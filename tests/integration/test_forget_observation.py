"""Forgetting an observation, the id an assistant is given for a fact it retrieved, forgets the fact: the
statement goes from the user's message it was formed from too (the whole message when it said nothing
else, else the statement's words, the message's other facts kept), and from every store, export and
file (DESIGN.md §10). Before, the observation's row alone went and the message kept saying it."""

from __future__ import annotations

import anyio
import pytest

from core import usecases as uc
from core.admin import deleted
from core.admin.deletion import statement_in
from core.admin.explorer import ExplorerSearch, export_chain, search_memory
from core.admin.redaction import DELETED
from core.conversation.turn import Remember, UiRememberParams
from tests.integration.test_api_endpoints import api, client  # noqa: F401 — fixtures
from tests.integration.test_deletion_complete import (  # noqa: F401 — fixtures among them
    files_holding,
    greppable_redis,
    postgres_hits,
    redis_values,
    wait_for_redis_files,
    wal_dropped,
)
from tests.integration.test_mcp_http import http_session, url  # noqa: F401 — a fixture
from tests.support.chatgpt_export import conversation, write_export
from tests.support.mcp_client import ok

MARKER = "qzvforget5521"  # one lexeme found nowhere else
RUNS = f"I run about 20 miles a week on the {MARKER} trail."
LIVES = f"I live in Lisbon near the {MARKER} tower."
SISTER = "My sister Marta is a nurse at the children's hospital."


def turn(wb, instance, chain, text):
    return Remember(wb).run(UiRememberParams(thought=text, chain_id=chain), instance=instance)


def observation_of(result, words: str) -> str:
    """The id the assistant was given for the fact holding `words` (from the turn's context)."""
    [found] = [c.id for c in result.context if words in c.content]
    assert found.startswith("obs-")
    return found


def nowhere(wb, instance, r, needle: str) -> None:
    assert {k: v for k, v in redis_values(r).items() if needle.lower() in v.lower()} == {}
    assert postgres_hits(wb, needle) == []
    assert search_memory(wb, ExplorerSearch(query=needle, instance=instance, mode="text")).hits == []


@pytest.mark.usefixtures("wal_dropped")
def test_forgetting_the_fact_of_a_one_statement_message_deletes_the_message(workbench, instance, data_dir,
                                                                             greppable_redis):  # noqa: F811
    wb, r = workbench, greppable_redis
    said = turn(wb, instance, "intro", RUNS)
    turn(wb, instance, "intro", SISTER)
    asked = turn(wb, instance, "intro", "How far do I run each week?")
    elsewhere = turn(wb, instance, "later", "How many miles do I run on the trail each week?")
    fact = observation_of(asked, MARKER)
    assert MARKER in export_chain(wb, instance, "intro") and MARKER in elsewhere.answer

    report = uc.forget(wb, uc.Forget(target="memory", id=fact, instance=instance))

    assert report.thoughts >= 1 and report.copies >= 2
    assert "the message it came from in chain 'intro' said nothing else and was deleted" in report.notes
    assert said.thought1_id not in {t.id for t in wb.thoughts.chain_thoughts(instance, "intro")}
    nowhere(wb, instance, r, MARKER)
    assert MARKER not in export_chain(wb, instance, "intro")
    wait_for_redis_files(r)
    assert files_holding(data_dir / "redis", MARKER) == []
    assert files_holding(data_dir / "pg", MARKER) == []
    # The other fact of the chain stays; an import of the message's file leaves the message out.
    again = uc.retrieve_memory(wb, uc.RetrieveRequest(query="What does my sister do?", instance=instance))
    assert any("nurse" in m.memory.content for m in again.memories)
    assert {fact, said.thought1_id} <= set(deleted.members(r, instance, "memory"))


@pytest.mark.usefixtures("wal_dropped")
def test_forgetting_one_fact_of_a_message_keeps_its_other_facts(workbench, instance, data_dir,
                                                                 greppable_redis):  # noqa: F811
    wb, r = workbench, greppable_redis
    said = turn(wb, instance, "intro", f"{LIVES} {SISTER}")
    asked = turn(wb, instance, "intro", "Where do I live?")
    fact = observation_of(asked, MARKER)
    [message] = wb.index.records(instance, ids=[said.thought1_id])
    [sister] = [o for o in message.metadata["observations"] if o != fact]

    report = uc.memory_delete(wb, uc.MemoryRef(instance=instance, memory_id=fact))

    assert (report.thoughts, report.index_rows) == (0, 1) and report.copies >= 2
    assert report.notes[0] == ("removed from the message it came from in chain 'intro' (the message's other "
                               "statements stay)")
    # The message reads as a turn still, without the forgotten words; its row is made again from that.
    [kept] = [t for t in wb.thoughts.chain_thoughts(instance, "intro") if t.id == said.thought1_id]
    assert kept.thought == f"{DELETED} {SISTER}"
    [message] = wb.index.records(instance, ids=[said.thought1_id])
    assert message.content == kept.thought and message.metadata["observations"] == [sister]
    nowhere(wb, instance, r, MARKER)
    assert "Lisbon" not in export_chain(wb, instance, "intro")
    wait_for_redis_files(r)
    assert files_holding(data_dir / "redis", MARKER) == []
    assert files_holding(data_dir / "pg", MARKER) == []
    # The other fact is retrieved as before, found by its words, and its own row is untouched.
    again = uc.retrieve_memory(wb, uc.RetrieveRequest(query="What does my sister do?", instance=instance))
    assert sister in {m.memory.id for m in again.memories}
    found = search_memory(wb, ExplorerSearch(query="nurse hospital", instance=instance, mode="text")).hits
    assert {sister, said.thought1_id} <= {h.id for h in found}
    # The message stays, so its id is not recorded as deleted: an import finds it there and leaves it.
    assert said.thought1_id not in deleted.members(r, instance, "memory")
    # Formed again (new rules, or `formation run --all`), the message leaves its other fact as it was: the
    # forgotten statement's place stays empty, so a retried forget of its id never forgets another fact.
    uc.formation_run(wb, uc.FormationRun(instance=instance, every_chain=True))
    [message] = wb.index.records(instance, ids=[said.thought1_id])
    assert message.metadata["observations"] == [sister]
    assert [o.content for o in wb.index.records(instance, ids=[sister])] == [SISTER]
    retried = uc.forget(wb, uc.Forget(target="memory", id=fact, instance=instance))
    assert not retried.removed_anything


def test_an_import_of_the_same_file_does_not_bring_the_facts_back(keyword_workbench, instance, tmp_path):
    wb, t = keyword_workbench, 1_714_550_400.0
    path = write_export(tmp_path / "export.json", [conversation("Intro", "c-intro", [
        ("user", RUNS, t), ("assistant", "Nice distance.", t + 5),
        ("user", f"{LIVES} {SISTER}", t + 60), ("assistant", "Noted.", t + 65)])])
    [chain] = [c.chain_id for c in uc.import_file(wb, uc.ImportFile(path=path, instance=instance)).outcome.chains]
    uc.formation_run(wb, uc.FormationRun(instance=instance))
    facts = [m for m in wb.index.records(instance, chains=[chain])
             if m.kind == "observation" and MARKER in m.content]
    assert len(facts) == 2
    for fact in facts:
        uc.forget(wb, uc.Forget(target="memory", id=fact.id, instance=instance))

    again = uc.import_file(wb, uc.ImportFile(path=path, instance=instance))

    # The one-statement message went and is left out; the other stays, as forgetting left it.
    assert again.outcome.left_out.messages == 1 and again.outcome.created.messages == 0
    assert [t.thought for t in wb.thoughts.chain_thoughts(instance, chain)] == [
        "Nice distance.", f"{DELETED} {SISTER}", "Noted."]
    assert postgres_hits(wb, MARKER) == []


def test_a_superseded_fact_and_one_whose_message_is_gone_are_forgotten_too(keyword_workbench, instance):
    wb = keyword_workbench
    turn(wb, instance, "home", f"I live in Lisbon near the {MARKER} tower.")
    turn(wb, instance, "home", "Actually, I moved to Porto last month.")
    # The correction's own observation quotes what it corrects ("…(correcting: I live in Lisbon…)").
    [lisbon] = [m for m in wb.index.records(instance, chains=["home"])
                if m.kind == "observation" and m.metadata.get("superseded_by")]
    assert MARKER in lisbon.content
    report = uc.forget(wb, uc.Forget(target="memory", id=lisbon.id, instance=instance))
    assert report.thoughts >= 1 and postgres_hits(wb, MARKER) == []
    assert not any(MARKER in t.thought for t in wb.thoughts.chain_thoughts(instance, "home"))
    [porto] = [m for m in wb.index.records(instance, chains=["home"]) if m.kind == "observation"]
    assert porto.content.startswith("I moved to Porto") and "superseded_by" not in porto.metadata

    # Data from before deletions took observations with their message: the message went, its row stayed.
    said = turn(wb, instance, "old", "I swim three kilometres every Sunday morning.")
    [row] = wb.index.records(instance, ids=[said.thought1_id])
    [fact] = row.metadata["observations"]
    wb.thoughts.delete_thought(instance, "old", said.thought1_id)
    report = uc.forget(wb, uc.Forget(target="memory", id=fact, instance=instance))
    assert report.index_rows == 1
    assert report.notes == ["the message it came from in chain 'old' had been deleted already"]
    assert wb.index.records(instance, ids=[fact]) == []


def test_forgetting_an_important_copy_forgets_the_message_it_copies(keyword_workbench, instance):
    """An important copy states the whole message: its id forgotten, the message goes, as it does when its
    one fact is forgotten. Before, the copy's row alone went and the message kept saying it."""
    wb = keyword_workbench
    said = Remember(wb).run(UiRememberParams(thought=f"{LIVES} {SISTER}", chain_id="intro", tags=["important"]),
                            instance=instance)
    turn(wb, instance, "intro", "I ride to work on a red bicycle.")
    [copy] = [m for m in wb.index.records(instance, chains=["intro"]) if m.kind == "important"]
    assert copy.metadata["source_thought"] == said.thought1_id and MARKER in copy.content

    report = uc.forget(wb, uc.Forget(target="memory", id=copy.id, instance=instance))

    assert report.thoughts >= 1
    assert "the message it came from in chain 'intro' said nothing else and was deleted" in report.notes
    left = wb.thoughts.chain_thoughts(instance, "intro")
    assert said.thought1_id not in {t.id for t in left} and any("bicycle" in t.thought for t in left)
    assert postgres_hits(wb, MARKER) == []
    assert not any("Marta" in m.content for m in wb.index.records(instance, chains=["intro"]))
    assert {copy.id, said.thought1_id} <= set(deleted.members(wb.redis(), instance, "memory"))


def test_forget_over_mcp_forgets_the_fact_the_assistant_was_given(url, instance, workbench):  # noqa: F811
    async def scenario() -> None:
        async with http_session(url) as s:
            told = await ok(s, "ui_remember", {"thought": f"{LIVES} {SISTER}"})
            asked = await ok(s, "ui_remember", {"thought": "Where do I live?", "chain_id": told["chain_id"]})
            [fact] = [c["id"] for c in asked["context"] if MARKER in c["content"]]
            report = await ok(s, "forget", {"target": "memory", "id": fact})
            assert report["notes"][0].startswith("removed from the message it came from in chain")
            recalled = await ok(s, "retrieve_memory",
                                {"query": "Where do I live? Where does my sister work?"})
            assert not any(MARKER in m["content"] for m in recalled["memories"])
            assert any("nurse" in m["content"] for m in recalled["memories"])

    anyio.run(scenario)
    assert postgres_hits(workbench, MARKER) == []


def test_forget_over_http_deletes_a_one_statement_message(client, instance, workbench):  # noqa: F811
    told = client.post("/remember", json={"thought": RUNS, "chain_id": "runs"}).json()
    asked = client.post("/remember", json={"thought": "How far do I run?", "chain_id": "runs"}).json()
    [fact] = [c["id"] for c in asked["context"] if MARKER in c["content"]]
    report = client.delete(f"/memories/{fact}").json()
    assert report["thoughts"] >= 1
    assert "the message it came from in chain 'runs' said nothing else and was deleted" in report["notes"]
    exported = client.get("/chains/runs/export").text
    assert MARKER not in exported and told["thought1_id"] not in exported
    assert postgres_hits(workbench, MARKER) == []


@pytest.mark.parametrize(("statement", "text", "found"), [
    ("I live in Lisbon.", "I live in Lisbon. My sister is a nurse.", "I live in Lisbon."),
    ("It was Lyon.", "No, it was Lyon.", "it was Lyon."),  # a correction's fact loses its opener
    ("A dog. He is Rex.", "A dog.\n He is Rex.", "A dog.\n He is Rex."),  # statements joined by a space
    ("The user lives in Lisbon.", "I live in Lisbon.", None),  # an LLM's own words
    ("in Lisbon", "I live in Lisbonne.", None),  # whole words only
])
def test_a_statement_is_found_as_the_message_says_it(statement, text, found):
    assert statement_in(statement, text) == found



# The forgotten statement crosses the title's cut (120 characters): the marker ends at the 120th.
NIGHTS = "My sister Marta is a nurse at the children's hospital, and she mostly works the night shift in winter."
TOWER = f"The {MARKER} tower is right next to my flat in Lisbon, by the river."
TOMAS = "My brother Tomas teaches chemistry at the local school."


@pytest.mark.usefixtures("wal_dropped")
def test_a_forgotten_statement_across_the_title_s_cut_leaves_no_head_in_the_title(workbench, instance, data_dir,
                                                                                 greppable_redis):  # noqa: F811
    """The title is the first message's first 120 characters: it held the statement's head, which a
    replacement of the whole statement never found. It is cut again from the redacted message."""
    wb, r = workbench, greppable_redis
    said = turn(wb, instance, "flat", f"{NIGHTS} {TOWER} {TOMAS}")
    assert MARKER in wb.thoughts.chain_meta(instance, "flat")["title"]
    asked = turn(wb, instance, "flat", "What is next to my flat?")
    fact = observation_of(asked, MARKER)
    [message] = wb.index.records(instance, ids=[said.thought1_id])
    kept = [o for o in message.metadata["observations"] if o != fact]
    assert len(kept) == 2

    report = uc.forget(wb, uc.Forget(target="memory", id=fact, instance=instance))

    assert report.notes[0].startswith("removed from the message it came from in chain 'flat'")
    redacted = f"{NIGHTS} {DELETED} {TOMAS}"
    assert wb.thoughts.chain_meta(instance, "flat")["title"] == redacted[:120]
    assert uc.chains(wb, uc.ChainList(instance=instance, title=MARKER)).total == 0
    assert uc.chains(wb, uc.ChainList(instance=instance, title="night shift")).total == 1
    assert MARKER not in export_chain(wb, instance, "flat") and "tower" not in export_chain(wb, instance, "flat")
    nowhere(wb, instance, r, MARKER)
    wait_for_redis_files(r)
    assert files_holding(data_dir / "redis", MARKER) == []
    assert files_holding(data_dir / "pg", MARKER) == []
    # The message's other statements stay, their observations with their ids.
    [message] = wb.index.records(instance, ids=[said.thought1_id])
    assert message.content == redacted and message.metadata["observations"] == kept
    assert [o.content for o in wb.index.records(instance, ids=kept)] in ([NIGHTS, TOMAS], [TOMAS, NIGHTS])


def test_a_neighbour_s_context_cut_inside_the_forgotten_statement_is_cut_again(keyword_workbench, instance):
    """A neighbour's context keeps a message's first 4,000 characters: a statement crossing that cut left its
    head in the next rows' context (and so their postings and vectors)."""
    wb = keyword_workbench
    garden = ("My garden has " + ", ".join(f"bed {n} of roses" for n in range(300)))[:3960].rstrip(", ") + "."
    text = f"{garden} {TOWER} {TOMAS}"
    assert text.index(MARKER) + len(MARKER) < 4000 < text.index(TOWER) + len(TOWER)
    said = turn(wb, instance, "long", text)
    turn(wb, instance, "long", "I also keep bees.")
    assert any(MARKER in m for row in wb.index.records(instance, chains=["long"]) if row.id != said.thought1_id
               for m in row.context.before)
    [message] = wb.index.records(instance, ids=[said.thought1_id])
    [fact] = [o.id for o in wb.index.records(instance, ids=message.metadata["observations"]) if MARKER in o.content]

    uc.forget(wb, uc.Forget(target="memory", id=fact, instance=instance))

    assert postgres_hits(wb, MARKER) == []
    rows = wb.index.records(instance, chains=["long"])
    assert any(m.startswith(garden[:100]) and DELETED in m
               for row in rows for m in row.context.before)
