"""`workbench demo reset` removes what the demo made and nothing else: a user's own chains, bank,
memory and past tasks named like the demo's survive it, and a demo load never writes into them."""

from __future__ import annotations

import pytest

from core import demo
from core.bank import MemoryBank, MemoryEntry, list_banks
from core.conversation.keys import demo_items_key
from core.conversation.turn import Remember, UiRememberParams
from core.demo import bank, conversations, feedback, marks, past_tasks, tune
from core.models import MemoryRecord
from core.past_tasks.store import ProducedTextInput
from core.runtime import Workbench


@pytest.fixture
def demo_wb(settings, instance):
    """The demo works on the INSTANCE setting: a fresh one per test."""
    wb = Workbench(settings.model_copy(update={"instance": instance}))
    yield wb
    wb.close()


def say_to(lines: list[str]):
    return lines.append


def chain_texts(wb, chain: str) -> list[str]:
    return [t.thought for t in wb.thoughts.chain_thoughts(wb.settings.instance, chain)
            if t.category == "ui_remember:user"]


def test_reset_removes_only_what_the_demo_made(demo_wb):
    wb, instance = demo_wb, demo_wb.settings.instance
    remember = Remember(wb)
    # The user's own things, named as the demo names its own.
    for chain in ("lisbon-trip", "fb-0612-1"):
        remember.run(UiRememberParams(thought=f"My own note in {chain}", chain_id=chain), instance=instance)
    MemoryBank(wb, instance, "nginx-502").add_entry(MemoryEntry(command="nginx -t", result="syntax is ok"))
    wb.index.add([MemoryRecord(instance=instance, id=f"{tune.PREFIX}obs-1", kind="observation",
                               content="My own observation under a demo id.",
                               created_at="2024-01-01T00:00:00Z")])
    [mine] = wb.past_tasks.ingest([ProducedTextInput(instance=instance, user_id="maria.lopez", task="note",
                                                     title="My own note", production="Mine, not the demo's.",
                                                     source_key="mine/1")])
    # A demo feedback session (the real part runs 500 turns): made as the part makes one, marked first.
    marks.mark(wb, feedback.MARK, ["fb-0612-2"])
    remember.run(UiRememberParams(thought="Which day did we plan for Nara?", chain_id="fb-0612-2"),
                 instance=instance)

    said: list[str] = []
    for part in (conversations, past_tasks, bank, tune):
        part.load(wb, say_to(said))

    # The load left the user's things alone and said so.
    assert chain_texts(wb, "lisbon-trip") == ["My own note in lisbon-trip"]
    assert any("'lisbon-trip' is not the demo's" in line for line in said)
    assert any("'nginx-502' is not the demo's" in line for line in said)
    assert len(MemoryBank(wb, instance, "nginx-502").get_all_memories()) == 1
    assert wb.index.records(instance, ids=[f"{tune.PREFIX}obs-1"])[0].content.startswith("My own")
    assert chain_texts(wb, "q3-budget") and {"deploy-flask-app", "disk-cleanup"} <= {
        b.name for b in list_banks(wb, instance)}
    assert len(wb.past_tasks.list_texts(instance, "maria.lopez")) > 1

    demo.reset(wb, say_to(said))

    assert chain_texts(wb, "lisbon-trip") == ["My own note in lisbon-trip"]
    assert chain_texts(wb, "fb-0612-1") == ["My own note in fb-0612-1"]
    assert chain_texts(wb, "fb-0612-2") == [] and chain_texts(wb, "q3-budget") == []
    assert {c.chain_id for c in wb.thoughts.chains(instance, limit=100)} == {"lisbon-trip", "fb-0612-1"}
    assert [b.name for b in list_banks(wb, instance)] == ["nginx-502"]
    assert len(MemoryBank(wb, instance, "nginx-502").get_all_memories()) == 1
    assert [t.user_task_execution_pk for t in wb.past_tasks.list_texts(instance, "maria.lopez")] == [
        mine.user_task_execution_pk]
    assert wb.past_tasks.users(instance) == ["maria.lopez"]
    assert wb.past_tasks.tool_executions(instance, "maria.lopez") == []
    memories = wb.index.records(instance, ids=[f"{tune.PREFIX}{m[0]}" for m in tune._MEMORIES])
    assert [m.content for m in memories] == ["My own observation under a demo id."]
    assert not wb.redis().exists(demo_items_key(instance))


def test_a_reloaded_demo_replaces_itself(demo_wb):
    """Loading twice gives the same chains, not their turns twice (the reset frees the demo's ids)."""
    wb, instance = demo_wb, demo_wb.settings.instance
    for _ in range(2):
        conversations.load(wb, say_to([]))
    assert len(chain_texts(wb, "rex-vet")) == 2
    assert wb.thoughts.chain_count(instance) == len(conversations.CHAINS)
