"""The explorer's search marks a fact a later correction superseded, with when and what superseded it:
the observation itself, the user message that told it, and the same fields through the CLI's `memory
search` and the HTTP API's `/memories/search` (one core function behind all three). The current fact is
not marked."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from core import usecases as uc
from tests.support.api import thread_server
from tests.support.cli import in_process_cli
from tests.support.clock import Clock

TOLD, ASKED, CORRECTED = "My conference last spring was in Paris.", "Where was my conference?", "No, it was Lyon."


@pytest.fixture
def corrected(workbench, instance):
    """A fact told, asked about, and corrected in one chain; returns the turns."""
    clock = Clock(datetime.now(UTC) - timedelta(hours=1))
    turns = []
    for text in (TOLD, ASKED, CORRECTED):
        clock.advance(30)
        turns.append(uc.remember(workbench, uc.UiRememberParams(thought=text, chain_id="conf", instance=instance),
                                 clock=clock))
    return turns


def search(wb, instance, **kw) -> list[uc.Hit]:
    return uc.memory_search(wb, uc.ExplorerSearch(query="conference Paris Lyon", instance=instance, **kw)).hits


def test_a_superseded_fact_is_marked_with_when_and_by_what(workbench, instance, corrected):
    history = uc.fact_history(workbench, uc.FactHistoryRequest(
        instance=instance, memory_id=next(h.id for h in search(workbench, instance, kinds=["observation"])
                                          if h.content == TOLD))).facts
    old, new = history  # the told fact, then the correction's
    hits = {h.id: h for h in search(workbench, instance, kinds=["observation"])}
    assert hits[old.id].superseded_at == old.superseded_at is not None
    assert hits[old.id].superseded_by == new.id
    # The correction's fact in its own words, without the note of what it corrected.
    assert new.content.startswith("It was Lyon. (correcting: ")
    assert hits[old.id].superseded_by_content == "It was Lyon."
    assert hits[new.id].superseded_at is None and hits[new.id].superseded_by is None  # the current fact

    # The user message that told it states the same outdated fact: marked through its observation.
    messages = {h.content: h for h in search(workbench, instance, kinds=["user"])}
    assert messages[TOLD].id == corrected[0].thought1_id
    assert (messages[TOLD].superseded_at, messages[TOLD].superseded_by) == (old.superseded_at, new.id)
    assert messages[CORRECTED].superseded_at is None

    # The newest memories, before any search, carry the same mark.
    recent = {h.id: h for h in uc.recent(workbench, uc.RecentRequest(instance=instance, limit=50))}
    assert recent[old.id].superseded_by == new.id and recent[new.id].superseded_at is None


def test_added_metadata_that_only_looks_like_a_mark_is_not_one(workbench, instance):
    """The metadata of a memory added through the API is the caller's: a mark that is not a time, or
    observations that are not ids, are no supersession (and no error)."""
    uc.add_memory(workbench, uc.AddMemory(instance=instance, content="The Paris conference badge is blue.",
                                          metadata={"superseded_at": "yesterday", "superseded_by": 7}))
    uc.add_memory(workbench, uc.AddMemory(instance=instance, content="The Lyon conference badge is red.",
                                          metadata={"observations": 5}))
    hits = search(workbench, instance, mode="text")
    assert len(hits) == 2 and all(h.superseded_at is None and h.superseded_by is None for h in hits)


def test_the_cli_and_the_http_api_return_the_same_mark(workbench, settings, instance, corrected, monkeypatch):
    expected = {h.id: (h.superseded_at, h.superseded_by, h.superseded_by_content)
                for h in search(workbench, instance, mode="text")}
    assert any(by for _, by, _ in expected.values())

    run = in_process_cli(settings, workbench, monkeypatch)
    code, out, err = run("--instance", instance, "memory", "search", "conference Paris Lyon", "--mode", "text")
    assert code == 0, err
    said = {h["id"]: (h["superseded_at"], h["superseded_by"], h["superseded_by_content"])
            for h in json.loads(out)["hits"]}

    created = uc.create_key(workbench, uc.CreateKey(name=f"k-{uuid.uuid4().hex[:10]}", instances=[instance]))
    with thread_server(workbench) as url, httpx.Client(
            base_url=f"{url}/v1/instances/{instance}", timeout=60,
            headers={"Authorization": f"Bearer {created.secret}"}) as client:
        got = client.post("/memories/search", json={"query": "conference Paris Lyon", "mode": "text"})
    assert got.status_code == 200, got.text
    served = {h["id"]: (h["superseded_at"], h["superseded_by"], h["superseded_by_content"])
              for h in got.json()["hits"]}

    as_json = {i: (at and at.isoformat().replace("+00:00", "Z"), by, words)
               for i, (at, by, words) in expected.items()}
    assert said == served == as_json


def test_a_message_whose_other_statements_stand_is_marked_only_for_the_one_corrected(workbench, instance):
    """Formation keeps one observation per statement: a correction of one leaves the message's others
    current, so the message is not marked superseded, only that statement of it."""
    clock = Clock(datetime.now(UTC) - timedelta(hours=1))
    told = "My conference last spring was in Paris. My sister is a nurse."
    for text in (told, ASKED, CORRECTED):
        clock.advance(30)
        uc.remember(workbench, uc.UiRememberParams(thought=text, chain_id="two", instance=instance), clock=clock)
    hits = {h.content: h for h in search(workbench, instance, mode="text")}
    message = hits[told]
    assert message.superseded_at is None and message.superseded_by is None
    [part] = message.superseded_statements
    assert part.statement == "My conference last spring was in Paris."
    assert part.superseded_by_content == "It was Lyon." and part.superseded_at is not None
    found = uc.memory_search(workbench, uc.ExplorerSearch(query="sister nurse", instance=instance, mode="text",
                                                          kinds=["observation"])).hits
    [sister] = [h for h in found if h.content == "My sister is a nurse."]
    assert sister.superseded_at is None
    assert hits["My conference last spring was in Paris."].superseded_by == part.superseded_by
