"""A data directory made by an older version of the workbench, opened by today's code: the older layout is
written here by the test itself (no old checkout at test time), then today's code runs on it.

Found by opening data directories made by the versions of 2026-11-28 and 2026-12-05 (the demo, turns with a
correction, ChatGPT, Claude and memory imports, past tasks, feedback, ratings, a relevance mark, API keys)
with today's CLI, HTTP API, MCP server and dashboard: everything was there and found, except that what the
user had deleted there came back. Those versions kept no record of deletions (`deleted:chains:<instance>`,
`deleted:memories:<instance>` came later), so the next import of the same export brought the deleted
conversation, message and memory back, unasked and unsaid. Their trace is the file's import checkpoint,
finished, without `deletions_kept`: what that import stored and is gone was deleted
(`core.importing.runner.gone_unrecorded`)."""

from __future__ import annotations

import pytest

from core import usecases as uc
from core.admin import deleted
from core.conversation.keys import deleted_chains_key, deleted_memories_key, import_checkpoint_key
from core.importing.runner import KEPT
from tests.support.chatgpt_export import conversation, write_export

T = 1_714_550_400.0  # 2024-05-01
HOTEL = [("user", "We booked Hotel Granvia Kyoto for the trip.", T), ("assistant", "Lovely, by the station.", T + 5),
         ("user", "Breakfast is included.", T + 60), ("assistant", "Good to know.", T + 65)]
DOG = [("user", "Our dog Biscuit turns three.", T + 900), ("assistant", "Happy birthday, Biscuit!", T + 905)]
BRIEFED = [("system", "You are a travel assistant.", None), ("user", "Find me a ryokan in Kyoto.", T + 1800),
           ("assistant", "Try Tawaraya, near Oike.", T + 1805)]
FACTS = ('{"id": "fact-dog", "content": "The dog is called Biscuit.", "created_at": "2024-02-01"}\n'
         '{"id": "fact-car", "content": "Drives a Subaru Outback.", "created_at": "2024-02-02"}\n')
# What a checkpoint held before deletions were recorded (2026-11-28 to 2026-12-05).
OLDER_CHECKPOINT_FIELDS = ("format", "file", "total", "done", "started_at", "finished_at")


def run(wb, instance, path, **kw) -> uc.ImportResult:
    return uc.import_file(wb, uc.ImportFile(path=path, instance=instance, **kw))


def chain_of(result: uc.ImportResult, title: str) -> str:
    return next(c.chain_id for c in result.outcome.chains if c.title == title)


def said(wb, instance, chain_id) -> list[str]:
    return [t.thought for t in wb.thoughts.chain_thoughts(instance, chain_id)]


def as_an_older_version_left_it(wb, instance, *paths) -> None:
    """What an older version's data directory holds after the same imports and deletions: no record of
    what was deleted, and each file's checkpoint with the fields that version wrote (sha-256 as the key)."""
    r = wb.redis()
    r.delete(deleted_chains_key(instance), deleted_memories_key(instance))
    for path in paths:
        key = import_checkpoint_key(instance, uc.import_preview(wb, uc.ImportFile(path=path,
                                                                                  instance=instance)).sha256)
        saved = r.hgetall(key)
        assert saved.get("finished_at")
        r.delete(key)
        r.hset(key, mapping={f: saved[f] for f in OLDER_CHECKPOINT_FIELDS})


@pytest.fixture
def older(keyword_workbench, instance, tmp_path):
    """An instance as an older version left it: two conversations and two memories imported, then the
    hotel conversation, the dog's answer and the dog fact deleted there."""
    wb = keyword_workbench
    chats = write_export(tmp_path / "conversations.json",
                         [conversation("Hotel", "c-hotel", HOTEL), conversation("Dog", "c-dog", DOG)])
    facts = tmp_path / "facts.jsonl"
    facts.write_text(FACTS, encoding="utf-8")
    imported = run(wb, instance, chats)
    assert run(wb, instance, facts).outcome.created.memories == 2
    hotel, dog = chain_of(imported, "Hotel"), chain_of(imported, "Dog")
    answer = next(t.id for t in wb.thoughts.chain_thoughts(instance, dog) if t.thought == DOG[1][1])
    uc.chain_delete(wb, uc.ChainRef(instance=instance, chain_id=hotel))
    uc.memory_delete(wb, uc.MemoryRef(instance=instance, memory_id=answer, chain_id=dog))
    uc.memory_delete(wb, uc.MemoryRef(instance=instance, memory_id="fact-dog"))
    as_an_older_version_left_it(wb, instance, chats, facts)
    return wb, chats, facts, hotel, dog


def test_what_was_deleted_before_the_upgrade_stays_deleted_at_the_next_import(older, instance):
    wb, chats, facts, hotel, dog = older

    preview = run(wb, instance, chats, dry_run=True).preview
    assert preview.deleted == uc.ImportCounts(conversations=1, messages=len(HOTEL) + 1)
    assert preview.adds.new == uc.ImportCounts() and preview.adds.continued == uc.ImportCounts()
    assert run(wb, instance, facts, dry_run=True).preview.deleted == uc.ImportCounts(memories=1)

    again = run(wb, instance, chats)
    assert again.outcome.created == uc.ImportCounts()
    assert again.outcome.left_out == uc.ImportCounts(conversations=1, messages=len(HOTEL) + 1)
    assert again.notes == [("What you deleted here was left out: 1 conversation, 5 messages in all; import "
                            "the file with --include-deleted (CLI) or “Import what I deleted” (Import page) to "
                            "bring it back.")]
    assert said(wb, instance, hotel) == [] and said(wb, instance, dog) == [DOG[0][1]]
    facts_again = run(wb, instance, facts)
    assert facts_again.outcome.left_out == uc.ImportCounts(memories=1)
    assert facts_again.outcome.created.memories == 0
    # Recorded now, as a deletion made today is, and the checkpoints say so: inferred once.
    assert deleted.members(wb.redis(), instance, "chain") == [hotel]
    assert "fact-dog" in deleted.members(wb.redis(), instance, "memory")
    assert run(wb, instance, chats).outcome.left_out == uc.ImportCounts(conversations=1,
                                                                         messages=len(HOTEL) + 1)


def test_what_was_deleted_before_the_upgrade_comes_back_when_asked(older, instance):
    wb, chats, facts, hotel, dog = older
    back = run(wb, instance, chats, include_deleted=True)
    assert back.outcome.brought_back.conversations == 1
    assert back.outcome.created.messages == len(HOTEL) + 1
    assert said(wb, instance, hotel) == [m[1] for m in HOTEL]
    assert said(wb, instance, dog) == [m[1] for m in DOG]
    assert run(wb, instance, facts, include_deleted=True).outcome.brought_back.memories == 1
    assert deleted.members(wb.redis(), instance, "chain") == []
    # Brought back on purpose, and since then recorded as today's code records: nothing more is inferred.
    assert run(wb, instance, chats).outcome.left_out == uc.ImportCounts()


def test_what_an_older_import_never_stored_is_not_taken_as_deleted(keyword_workbench, instance, tmp_path):
    """A system message an older import left out (without --include-system) was never stored: importing the
    file again with it kept adds it, and nothing is said to be deleted."""
    wb = keyword_workbench
    chats = write_export(tmp_path / "briefed.json", [conversation("Ryokan", "c-ryokan", BRIEFED)])
    ryokan = chain_of(run(wb, instance, chats), "Ryokan")
    as_an_older_version_left_it(wb, instance, chats)

    assert run(wb, instance, chats, include_system=True, dry_run=True).preview.deleted == uc.ImportCounts()
    again = run(wb, instance, chats, include_system=True)
    assert again.outcome.left_out == uc.ImportCounts() and again.outcome.created.messages == 1
    assert said(wb, instance, ryokan)[0] == "[system] You are a travel assistant."
