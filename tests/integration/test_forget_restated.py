"""Forgetting a fact an LLM formed in its own words forgets it in the message it was restated from: the
statements of the message sharing the most words with it become "[deleted]" (`core.admin.sources`), and
the chain's summary made from the message goes. Before, the observation's row went and the message (and
an LLM summary restating it) kept saying the fact."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from core import usecases as uc
from core.admin.explorer import export_chain
from core.formation.important import derived_id
from core.models import DELETED
from core.runtime import Workbench
from core.usecases.memories import NOTHING_THERE
from tests.integration.test_deletion_complete import (  # noqa: F401 — fixtures among them
    files_holding,
    greppable_redis,
    postgres_hits,
    redis_values,
    wait_for_redis_files,
    wal_dropped,
)
from tests.integration.test_formation import store_chain

MARKER = "qzvrestated7730"
TOWN = "Vilaqzv8841"  # a town found nowhere else
CITY = "Lisbqzv3307"  # the home city: other tests' data on these servers holds "Lisbon"
NIGHTS = "My sister Marta is a nurse at the children's hospital, and she mostly works the night shift in winter."
TOWER = f"The {MARKER} tower is right next to my flat in {CITY}, by the river."
TOMAS = "My brother Tomas teaches chemistry at the local school."
FACTS = {"Marta": "The user's sister Marta works nights as a nurse in a children's hospital.",
         MARKER: f"The user lives in a flat in {CITY} beside the {MARKER} tower.",
         "Tomas": "The user's brother Tomas is a chemistry teacher at a local school."}


@pytest.fixture
def llm_wb(llm_settings, fake_llm):
    wb = Workbench(llm_settings.model_copy(update={"formation_llm": True}))

    def answer(body):
        asked = body["messages"][0]["content"]
        if asked.startswith("You write the long-term memory"):
            told = json.dumps(body["messages"][1:])
            return json.dumps({"summary": (f"The user lives by the {MARKER} tower; " if MARKER in told else "")
                               + "Tomas teaches chemistry.", "important": []})
        if '"kind": K' in asked:
            said = body["messages"][1]["content"].split("Message:")[-1]
            if "ana" in said:
                return json.dumps({"kind": "statement", "facts": ["The user's sister Ana is vegetarian.",
                                                                  f"Ana lives in {TOWN}."]})
            return json.dumps({"kind": "statement", "facts": [f for k, f in FACTS.items() if k in said]})
        return "Noted."

    fake_llm.answer_with(answer)
    yield wb
    wb.close()


def formed(wb, instance, message_id):
    [message] = wb.index.records(instance, ids=[message_id])
    return message, {o.content: o.id for o in wb.index.records(instance, ids=message.metadata["observations"])}


@pytest.mark.usefixtures("wal_dropped")
def test_forgetting_a_restated_fact_redacts_the_statement_it_came_from(llm_wb, instance, data_dir,
                                                                      greppable_redis):  # noqa: F811
    wb, r = llm_wb, greppable_redis
    store_chain(wb, instance, "flat", [f"{NIGHTS} {TOWER} {TOMAS}", "Noted."], datetime.now(UTC) - timedelta(days=3))
    run = uc.formation_run(wb, uc.FormationRun(instance=instance))
    assert (run.formed_by, run.summaries) == ("llm", 1)
    message, facts = formed(wb, instance, "flat-0")
    assert set(facts) == set(FACTS.values()) and message.metadata["formed_by"] == "llm"
    assert MARKER in wb.index.get(instance, [derived_id("summary", "flat")])[0].content

    report = uc.forget(wb, uc.Forget(target="memory", id=facts[FACTS[MARKER]], instance=instance))

    assert report.notes[:2] == [
        ("removed from the message it came from in chain 'flat': the fact was restated by an LLM, and the "
         "statement sharing the most words with it became [deleted] (the message's other statements stay)"),
        ("the chain's summary, made from the message, was deleted: `workbench formation run` makes it again "
         "from what is left")]
    [kept] = [t for t in wb.thoughts.chain_thoughts(instance, "flat") if t.id == "flat-0"]
    assert kept.thought == f"{NIGHTS} {DELETED} {TOMAS}"
    message, left = formed(wb, instance, "flat-0")
    assert message.content == kept.thought
    assert left == {FACTS["Marta"]: facts[FACTS["Marta"]], FACTS["Tomas"]: facts[FACTS["Tomas"]]}
    assert {k: v for k, v in redis_values(r).items() if MARKER.lower() in v.lower()} == {}
    assert postgres_hits(wb, MARKER) == [] and postgres_hits(wb, CITY) == []
    assert MARKER not in export_chain(wb, instance, "flat")
    wait_for_redis_files(r)
    assert files_holding(data_dir / "redis", MARKER) == []
    assert files_holding(data_dir / "pg", MARKER) == []
    # The next run summarises the chain again, from what is left (the LLM is told the redacted message).
    assert uc.formation_run(wb, uc.FormationRun(instance=instance)).summaries == 1
    [summary] = wb.index.get(instance, [derived_id("summary", "flat")])
    assert summary.content == "Tomas teaches chemistry." and postgres_hits(wb, MARKER) == []


def test_a_sentence_that_told_two_facts_goes_with_either(llm_wb, instance):
    """One sentence told both facts: forgetting one takes the sentence, and the message, which said nothing
    else, goes with its other fact (the note says so)."""
    wb = llm_wb
    store_chain(wb, instance, "ana", [f"my sister ana doesn't eat meat, she's in {TOWN.lower()}", "Noted.",
                                      "I work at Spotify.", "Ok."], datetime.now(UTC) - timedelta(days=3))
    uc.formation_run(wb, uc.FormationRun(instance=instance))
    _, facts = formed(wb, instance, "ana-0")

    report = uc.forget(wb, uc.Forget(target="memory", id=facts[f"Ana lives in {TOWN}."], instance=instance))

    assert ("the message it came from in chain 'ana' was deleted: the fact was restated by an LLM, and the "
            "statements sharing the most words with it were all the message said (its 1 other fact went with "
            "it)") in report.notes
    assert [t.thought for t in wb.thoughts.chain_thoughts(instance, "ana")] == ["Noted.", "I work at Spotify.", "Ok."]
    assert postgres_hits(wb, TOWN) == []
    assert not any("vegetarian" in m.content for m in wb.index.records(instance, chains=["ana"]))


def test_a_forgotten_restated_fact_keeps_its_id_out_of_reach(llm_wb, instance):
    """The LLM's facts carry no "[deleted]" where one was forgotten: formed again (`formation run --all`),
    the message's other facts keep their ids, none takes the forgotten one's, and forgetting it again
    removes nothing (before, the fact after it took its id, and a retried forget deleted that one)."""
    wb = llm_wb
    store_chain(wb, instance, "flat", [f"{NIGHTS} {TOWER} {TOMAS}", "Noted."], datetime.now(UTC) - timedelta(days=3))
    uc.formation_run(wb, uc.FormationRun(instance=instance))
    _, facts = formed(wb, instance, "flat-0")
    gone = facts.pop(FACTS[MARKER])
    uc.forget(wb, uc.Forget(target="memory", id=gone, instance=instance))

    for _ in range(2):  # the second run reads the places the first carried onto the message's row
        run = uc.formation_run(wb, uc.FormationRun(instance=instance, every_chain=True))
        assert (run.formed_by, run.observations) == ("llm", 2)
        message, left = formed(wb, instance, "flat-0")
        assert left == facts and message.metadata["forgotten_places"] == [int(gone.rsplit("-", 1)[1])]
        assert wb.index.get(instance, [gone]) == []

    again = uc.forget(wb, uc.Forget(target="memory", id=gone, instance=instance))
    assert not again.removed_anything and NOTHING_THERE in again.notes[0]
    assert formed(wb, instance, "flat-0")[1] == facts
