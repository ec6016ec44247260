"""A write that stores the first memory of an instance says so, naming the known instances the caller may use:
an assistant that mistyped the instance would otherwise split the user's memory in silence. Said once, on
the write that created it, by every front end (the use case says it), at the cost of one small read."""

from __future__ import annotations

import uuid

import httpx
import pytest

from core import usecases as uc
from core.conversation.thoughts import ThoughtStore
from core.index.memory_index import MemoryIndex
from core.services import EmbeddedRedis
from core.usecases.base import new_instance_note
from tests.support.api import thread_server


def note_for(instance: str, *known: str) -> str:
    return f"instance {instance!r} is new: this is its first memory (known instances: {', '.join(known)})"


@pytest.fixture
def known(workbench, instance) -> str:
    """`instance`, holding one memory: the instance the caller meant."""
    uc.add_memory(workbench, uc.AddMemory(instance=instance, content="The car is on level 3"))
    return instance


@pytest.fixture
def typo() -> str:
    return f"t-{uuid.uuid4().hex[:12]}-typo"


def scoped(*instances: str) -> uc.Principal:
    return uc.Principal(name="assistant", instances=list(instances))


def test_a_turn_in_a_new_instance_says_so_once_and_keeps_it_with_the_turn(workbench, known, typo):
    caller = scoped(known, typo)
    first = uc.remember(workbench, uc.UiRememberParams(thought="hello", instance=typo), caller=caller)
    assert first.notes[0] == note_for(typo, known)
    # The turn's metrics thought keeps it: the Chat page shows the turn's notes from there.
    stored = uc.conversation(workbench, uc.ConversationRef(instance=typo, chain_id=first.chain_id))
    assert stored.messages[-1].metrics.notes[0] == note_for(typo, known)

    second = uc.remember(workbench, uc.UiRememberParams(thought="hello again", instance=typo), caller=caller)
    assert not any("is new" in n for n in second.notes), second.notes
    assert typo in uc.instance_names(workbench)
    # The same turn streamed (the Chat page) in a known instance: nothing said.
    *_, streamed = uc.remember_stream(workbench, uc.UiRememberParams(thought="and again", instance=typo))
    assert not any("is new" in n for n in streamed.notes)


def test_add_memory_and_a_bank_step_in_a_new_instance_say_so_once(workbench, known, typo):
    caller = scoped(known, typo)
    added = uc.add_memory(workbench, uc.AddMemory(instance=typo, content="Ada likes teal"), caller=caller)
    assert added.notes == [note_for(typo, known)]
    assert uc.add_memory(workbench, uc.AddMemory(instance=typo, content="Ada likes tea"), caller=caller).notes == []

    bank_typo = f"{typo}-b"
    caller = scoped(known, bank_typo)
    first = uc.bank_add(workbench, uc.BankAdd(instance=bank_typo, bank="trip", entry=uc.MemoryEntry(
        skill_name="search", thinking="find a flight", command="flights", result="BA117")), caller=caller)
    assert first.notes[0] == note_for(bank_typo, known)
    again = uc.bank_add(workbench, uc.BankAdd(instance=bank_typo, bank="trip", entry=uc.MemoryEntry(
        skill_name="book", thinking="book it", command="book BA117", result="booked")), caller=caller)
    assert not any("is new" in n for n in again.notes)
    assert bank_typo in uc.instance_names(workbench)


def test_the_note_names_only_the_instances_the_caller_may_use(workbench, known, typo):
    assert new_instance_note(workbench, typo, scoped(typo)) == (
        f"instance {typo!r} is new: this is its first memory (no other instance this key may use holds memory)")
    # The check claims the instance (only one first write is told): the local user's is about another typo.
    typo = f"{typo}-2"
    local = new_instance_note(workbench, typo)  # the local user: every instance but the shared one
    assert local.startswith(f"instance {typo!r} is new: this is its first memory (known instances: ")
    assert uc.SHARED_INSTANCE not in local
    others = [n for n in uc.instance_names(workbench) if n != typo]
    if len(others) > 10:
        assert local.endswith(f" and {len(others) - 10} more)")


def test_the_check_looks_one_instance_up_in_one_store_for_a_known_instance(workbench, known, typo, monkeypatch):
    """One key lookup in the instances Redis keeps (a turn), or among the index's partitions (a write to the
    index); the other only for an instance the first does not know, and the lists, for the note, only for
    an instance neither knows (read whole at every write, they cost an add 0.52 of its 1.47 ms among 800
    instances)."""
    uc.remember(workbench, uc.UiRememberParams(thought="where is the car?", instance=known))  # now in Redis too
    reads = []

    def counted(store, name):
        read = getattr(store, name)
        return lambda self, *args: reads.append((type(self), name)) or read(self, *args)

    for store in (MemoryIndex, ThoughtStore):
        for name in ("instances", "has_instance"):
            monkeypatch.setattr(store, name, counted(store, name))
    uc.remember(workbench, uc.UiRememberParams(thought="and the keys?", instance=known))
    assert reads == [(ThoughtStore, "has_instance")]
    reads.clear()
    uc.add_memory(workbench, uc.AddMemory(instance=known, content="The keys are in the blue bowl"))
    assert reads == [(MemoryIndex, "has_instance")]
    reads.clear()
    added = uc.add_memory(workbench, uc.AddMemory(instance=typo, content="Ada likes teal"), caller=scoped(known, typo))
    assert added.notes == [note_for(typo, known)]
    assert reads == [(MemoryIndex, "has_instance"), (ThoughtStore, "has_instance"), (MemoryIndex, "instances"),
                     (ThoughtStore, "instances")]


def test_over_http_the_key_sees_its_own_instances_only(workbench, known, typo):
    other = f"{typo}-m"
    created = uc.create_key(workbench, uc.CreateKey(name=f"k-{uuid.uuid4().hex[:10]}",
                                                    instances=[known, typo, other]))
    with thread_server(workbench) as url, httpx.Client(
            base_url=url, timeout=60, headers={"Authorization": f"Bearer {created.secret}"}) as client:
        turn = client.post(f"/v1/instances/{typo}/remember", json={"thought": "hello"})
        assert turn.status_code == 200, turn.text
        assert turn.json()["notes"][0] == note_for(typo, known)
        added = client.post(f"/v1/instances/{other}/memories", json={"content": "Ada likes teal"})
        assert added.status_code == 201, added.text
        assert added.json()["notes"] == [note_for(other, *sorted([known, typo]))]
        step = client.post(f"/v1/instances/{typo}/banks/trip/entries", json={"entry": {
            "skill_name": "search", "thinking": "find a flight", "command": "flights", "result": "BA117"}})
        assert step.status_code == 201 and not any("is new" in n for n in step.json()["notes"])


def test_a_store_that_is_down_fails_no_write_and_tells_nothing(fault_dir, fault_wb, typo):
    """add_memory needs Postgres only: with Redis down it stores the memory, and says nothing of the instance
    it could not check."""
    redis_server = EmbeddedRedis(fault_dir)
    redis_server.stop()
    try:
        added = uc.add_memory(fault_wb, uc.AddMemory(instance=typo, content="Ada likes teal"))
    finally:
        redis_server.ensure_running()
    assert added.notes == [] and fault_wb.index.get(typo, [added.id])


def test_the_configured_instance_is_never_told_it_is_new(workbench, monkeypatch):
    """A fresh install's first turn goes to the configured instance: no typo to warn of."""
    fresh = f"t-{uuid.uuid4().hex[:12]}-fresh"
    monkeypatch.setattr(workbench.settings, "instance", fresh)
    first = uc.remember(workbench, uc.UiRememberParams(thought="I live in Lisbon.", instance=fresh))
    assert not any("is new" in n for n in first.notes)
