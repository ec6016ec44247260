"""A dry run (and the Import page's preview) says what an import would add, on the real Redis and Postgres:
new conversations, messages added to conversations already here, new memories and past tasks, beside what
the instance holds already, what the file repeats and what it would leave out as deleted. Per kind these add
up to what the file holds, and the import then creates what the dry run said, for every format family."""

from __future__ import annotations

from pathlib import Path

import pytest

from core import usecases as uc
from core.importing.runner import ImportAdds
from tests.support.chatgpt_export import conversation, write_export

DATA = Path(__file__).resolve().parents[1] / "data" / "import"
KINDS = ("conversations", "messages", "memories", "past_tasks")
T = 1_714_550_400.0  # 2024-05-01
HOTEL = [("user", "We booked Hotel Granvia Kyoto for the trip.", T), ("assistant", "Lovely, by the station.", T + 5)]
DOG = [("user", "Our dog Biscuit turns three.", T + 900), ("assistant", "Happy birthday, Biscuit!", T + 905)]
SCHOOL = [("user", "Maya starts school in September.", T + 3600), ("assistant", "A big step.", T + 3605),
          ("user", "She is excited.", T + 3700)]
GARDEN = [("user", "The tomatoes are ripe.", T + 5000)]


def dry(wb, instance, path, **kw) -> uc.ImportResult:
    return uc.import_file(wb, uc.ImportFile(path=path, instance=instance, dry_run=True, **kw))


def assert_adds_up(preview: uc.ImportPreview) -> None:
    """new + continued + already + repeated + deleted = what the file holds, per kind."""
    a, gone = preview.adds, preview.deleted
    for kind in KINDS:
        parts = [getattr(c, kind) for c in (a.new, a.continued, a.already, a.repeated, gone)]
        assert sum(parts) == getattr(preview.counts, kind), (kind, parts, preview.counts)


def assert_created_as_said(adds: ImportAdds, created: uc.ImportCounts) -> None:
    assert created.conversations == adds.new.conversations
    assert created.messages == adds.new.messages + adds.continued.messages
    assert (created.memories, created.past_tasks) == (adds.new.memories, adds.new.past_tasks)


@pytest.mark.parametrize("name, options", [
    ("chatgpt_conversations.json", {}), ("claude_conversations.json", {}), ("openai_chat.jsonl", {}),
    ("openai_chat_list.json", {}), ("locomo_mini.json", {}), ("memories.jsonl", {}), ("memories.csv", {}),
    ("mem0_export.json", {}), ("past_tasks", {"user_id": "ana", "task": "meeting minutes"}),
    ("past_tasks.jsonl", {}), ("workbench_chain.json", {}),
])
def test_each_format_says_what_is_new_then_that_nothing_is(keyword_workbench, instance, name, options):
    wb, path = keyword_workbench, DATA / name
    before = dry(wb, instance, path, **options)
    adds = before.preview.adds
    assert_adds_up(before.preview)
    assert adds.already == adds.continued == uc.ImportCounts() and not adds.nothing()
    assert before.adds.startswith("Adds ") and "already here" not in before.adds

    made = uc.import_file(wb, uc.ImportFile(path=path, instance=instance, **options))
    assert_created_as_said(adds, made.outcome.created)

    again = dry(wb, instance, path, **options)
    assert_adds_up(again.preview)
    assert again.preview.adds.nothing() and again.preview.adds.repeated == adds.repeated
    assert again.adds == "Everything in this file is already here: importing it adds nothing."
    assert uc.import_preview(wb, uc.ImportFile(path=path, instance=instance, **options)).adds == again.preview.adds


def test_next_months_export_is_told_from_the_same_file_imported_again(keyword_workbench, instance, tmp_path):
    wb = keyword_workbench
    may = write_export(tmp_path / "may.json", [conversation("Hotel", "c-hotel", HOTEL),
                                               conversation("Dog", "c-dog", DOG),
                                               conversation("Garden", "c-garden", GARDEN)])
    first = uc.import_file(wb, uc.ImportFile(path=may, instance=instance))
    garden = next(c.chain_id for c in first.outcome.chains if c.title == "Garden")
    uc.chain_delete(wb, uc.ChainRef(instance=instance, chain_id=garden))
    # June: the hotel conversation continued, the dog one as it was, the deleted one again, one new, and a
    # conversation the export repeats.
    june = write_export(tmp_path / "june.json", [
        conversation("Hotel", "c-hotel", [*HOTEL, ("user", "And the spa?", T + 7200),
                                          ("assistant", "Open until nine.", T + 7205)]),
        conversation("Dog", "c-dog", DOG), conversation("Garden", "c-garden", GARDEN),
        conversation("School", "c-school", SCHOOL), conversation("School", "c-school", SCHOOL)])

    result = dry(wb, instance, june)
    preview = result.preview
    assert preview.adds == ImportAdds(
        new=uc.ImportCounts(conversations=1, messages=3), continued=uc.ImportCounts(conversations=1, messages=2),
        already=uc.ImportCounts(conversations=1, messages=4), repeated=uc.ImportCounts(conversations=1, messages=3))
    assert preview.deleted == uc.ImportCounts(conversations=1, messages=1)
    assert_adds_up(preview)
    assert result.adds == ("Adds 1 new conversation (3 messages) and 2 messages to 1 conversation you already have; "
                           "1 conversation is already here.")
    assert result.notes[-1].startswith("What you deleted here would be left out: 1 conversation, 1 message in all")
    assert wb.thoughts.chain_count(instance) == 2  # the dry run wrote nothing

    made = uc.import_file(wb, uc.ImportFile(path=june, instance=instance))
    assert_created_as_said(preview.adds, made.outcome.created)
    assert made.outcome.left_out == preview.deleted and made.outcome.duplicates == 1

    again = dry(wb, instance, june)
    assert again.adds == "Everything in this file is already here, or was deleted by you: importing it adds nothing."
    assert dry(wb, instance, june, include_deleted=True).adds == (
        "Everything in this file is already here but what you deleted: importing it brings that back, as asked, "
        "and adds nothing else.")


def test_a_message_deleted_alone_and_a_deleted_memory_are_counted_apart(keyword_workbench, instance, tmp_path):
    wb = keyword_workbench
    path = write_export(tmp_path / "one.json", [conversation("Hotel", "c-hotel", HOTEL)])
    hotel = uc.import_file(wb, uc.ImportFile(path=path, instance=instance)).outcome.chains[0].chain_id
    first = wb.thoughts.chain_thoughts(instance, hotel)[0]
    uc.memory_delete(wb, uc.MemoryRef(instance=instance, memory_id=first.id, chain_id=hotel))
    later = write_export(tmp_path / "two.json", [
        conversation("Hotel", "c-hotel", [*HOTEL, ("user", "Breakfast is included.", T + 60)])])
    preview = dry(wb, instance, later).preview
    assert preview.deleted == uc.ImportCounts(messages=1)
    assert preview.adds.continued == uc.ImportCounts(conversations=1, messages=1)
    assert preview.adds.already == uc.ImportCounts(messages=1)
    assert_adds_up(preview)
    made = uc.import_file(wb, uc.ImportFile(path=later, instance=instance))
    assert_created_as_said(preview.adds, made.outcome.created)

    facts = tmp_path / "facts.jsonl"
    facts.write_text('{"id": "fact-dog", "content": "The dog is called Biscuit.", "created_at": "2024-02-01"}\n'
                     '{"id": "fact-car", "content": "Drives a Subaru Outback.", "created_at": "2024-02-02"}\n')
    uc.import_file(wb, uc.ImportFile(path=facts, instance=instance))
    uc.memory_delete(wb, uc.MemoryRef(instance=instance, memory_id="fact-dog"))
    facts.write_text(facts.read_text() + '{"id": "fact-bike", "content": "Rides a blue bike.", '
                                          '"created_at": "2024-02-03"}\n')
    result = dry(wb, instance, facts)
    assert result.preview.adds.new == uc.ImportCounts(memories=1)
    assert result.preview.adds.already == uc.ImportCounts(memories=1)
    assert result.preview.deleted == uc.ImportCounts(memories=1)
    assert_adds_up(result.preview)
    assert result.adds == "Adds 1 new memory; 1 memory is already here."


def test_a_file_the_import_would_refuse_says_nothing_of_what_it_adds(keyword_workbench, instance, tmp_path):
    bad = tmp_path / "notes.jsonl"
    bad.write_text('{"content": "fine", "created_at": "2024-01-01"}\n{"content": ""}\n')
    refused = dry(keyword_workbench, instance, bad)
    assert refused.adds is None and refused.preview.adds.new == uc.ImportCounts(memories=1)
    assert dry(keyword_workbench, instance, bad, on_error="skip").adds == "Adds 1 new memory."


def test_a_chain_exported_and_brought_back_where_it_came_from_adds_nothing(keyword_workbench, instance, tmp_path):
    """The workbench's own chain export keeps its ids in the instance it came from (`keep_ids`)."""
    wb = keyword_workbench
    for text in ("I parked on level 3 near the lift.", "Where did I park?"):
        uc.remember(wb, uc.UiRememberParams(thought=text, chain_id="parking", instance=instance))
    exported = tmp_path / "parking.json"
    exported.write_text(uc.chain_export(wb, uc.ChainRef(instance=instance, chain_id="parking")).document)
    home = dry(wb, instance, exported)
    assert home.adds == "Everything in this file is already here: importing it adds nothing."
    assert_adds_up(home.preview)
    elsewhere = dry(wb, f"{instance}-copy", exported)
    assert elsewhere.preview.adds.new.conversations == 1 and elsewhere.preview.adds.already == uc.ImportCounts()
    assert_adds_up(elsewhere.preview)
