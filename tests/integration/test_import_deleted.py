"""Deleting holds across imports, on the real Redis and Postgres: a conversation, a message or a memory
the user deleted is left out of the next import of the same file or of a newer export (counted, with one
note saying how to bring it back), unless the import is asked to include it; an archive carries what was
deleted, and a restore of an archive taken before the deletion brings it back, saying so. Also: imported
answers are final only where the conversation ended, and photos sent without text are counted."""

from __future__ import annotations

import json

import pytest

from core import usecases as uc
from core.admin import deleted
from core.admin.deletion import TEXT_CATEGORIES
from core.conversation.keys import feedback_key, import_checkpoint_key
from tests.support.chatgpt_export import conversation, photo_only, write_export
from tests.support.cli import in_process_cli, installed

T = 1_714_550_400.0  # 2024-05-01
HOTEL = [("user", "We booked Hotel Granvia Kyoto for the trip.", T), ("assistant", "Lovely, by the station.", T + 5),
         ("user", "Breakfast is included.", T + 60), ("assistant", "Good to know.", T + 65)]
DOG = [("user", "Our dog Biscuit turns three.", T + 900), ("assistant", "Happy birthday, Biscuit!", T + 905)]
NEW = [("user", "Maya starts school in September.", T + 3600), ("assistant", "A big step.", T + 3605)]


def export(tmp_path, name: str, *conversations) -> object:
    return write_export(tmp_path / name, list(conversations))


def run(wb, instance, path, **kw) -> uc.ImportResult:
    return uc.import_file(wb, uc.ImportFile(path=path, instance=instance, **kw))


def chain_of(result: uc.ImportResult, title: str) -> str:
    return next(c.chain_id for c in result.outcome.chains if c.title == title)


def texts(wb, instance, chain_id) -> list[str]:
    return [t.thought for t in wb.thoughts.chain_thoughts(instance, chain_id)]


def said_in(wb, instance, chain_id) -> list[str]:
    """The chain's user and assistant messages (not its metrics thoughts)."""
    return [t.thought for t in wb.thoughts.chain_thoughts(instance, chain_id) if t.category in TEXT_CATEGORIES]


def indexed(wb, instance) -> dict[str, tuple[str, dict]]:
    with wb.pool().connection() as conn:
        return {r[0]: (r[1], r[2]) for r in conn.execute(
            "SELECT id, content, context FROM memory WHERE instance = %s", (instance,))}


@pytest.fixture
def cli(settings, workbench, monkeypatch):
    return in_process_cli(settings, workbench, monkeypatch)


def test_a_deleted_conversation_is_left_out_of_the_same_and_of_a_newer_export(keyword_workbench, instance,
                                                                              tmp_path):
    wb = keyword_workbench
    first = export(tmp_path, "may.json", conversation("Hotel", "c-hotel", HOTEL), conversation("Dog", "c-dog", DOG))
    hotel = chain_of(run(wb, instance, first), "Hotel")
    report = uc.chain_delete(wb, uc.ChainRef(instance=instance, chain_id=hotel))
    assert any("leaves it out" in n for n in report.notes)
    # The record holds the chain id alone (a hash of ChatGPT's conversation id), never its text.
    assert deleted.members(wb.redis(), instance, "chain") == [hotel]

    again = run(wb, instance, first)  # within the ten minutes the chain is tombstoned, too
    assert again.outcome.created == uc.ImportCounts() and again.outcome.chains == []
    assert again.outcome.left_out == uc.ImportCounts(conversations=1, messages=len(HOTEL))
    assert again.outcome.already_present == len(DOG)
    assert again.notes == [("What you deleted here was left out: 1 conversation, 4 messages in all; "
                            "import the file with --include-deleted (CLI) or “Import what I deleted” (Import "
                            "page) to bring it back.")]
    assert wb.thoughts.chain_meta(instance, hotel) == {}
    assert not any("Granvia" in content for content, _ in indexed(wb, instance).values())

    # Next month's export: the same history, the deleted conversation continued, and a new one.
    later = export(tmp_path, "june.json",
                   conversation("Hotel", "c-hotel", [*HOTEL, ("user", "And the spa?", T + 7200)]),
                   conversation("Dog", "c-dog", DOG), conversation("School", "c-school", NEW))
    june = run(wb, instance, later)
    assert [c.title for c in june.outcome.chains] == ["School"]
    assert june.outcome.left_out == uc.ImportCounts(conversations=1, messages=len(HOTEL) + 1)
    assert wb.thoughts.chain_meta(instance, hotel) == {}

    # Asked for, it comes back whole, and is deleted no more (a later import finds it present).
    back = run(wb, instance, later, include_deleted=True)
    assert back.outcome.chains[0].chain_id == hotel
    assert back.outcome.brought_back == june.outcome.left_out  # what was left out, counted alike
    assert texts(wb, instance, hotel)[0] == HOTEL[0][1] and len(texts(wb, instance, hotel)) == len(HOTEL) + 1
    assert deleted.members(wb.redis(), instance, "chain") == []
    assert run(wb, instance, later).outcome.left_out == uc.ImportCounts()


def test_a_dry_run_says_what_the_import_would_leave_out_as_deleted_and_writes_nothing(keyword_workbench,
                                                                                     instance, tmp_path):
    wb = keyword_workbench
    first = export(tmp_path, "may.json", conversation("Hotel", "c-hotel", HOTEL),
                   conversation("Dog", "c-dog", DOG))
    hotel = chain_of(run(wb, instance, first), "Hotel")
    uc.chain_delete(wb, uc.ChainRef(instance=instance, chain_id=hotel))
    later = export(tmp_path, "june.json",
                   conversation("Hotel", "c-hotel", [*HOTEL, ("user", "And the spa?", T + 7200)]),
                   conversation("Dog", "c-dog", DOG), conversation("School", "c-school", NEW))

    dry = run(wb, instance, later, dry_run=True)
    assert dry.preview.deleted == uc.ImportCounts(conversations=1, messages=len(HOTEL) + 1)
    assert dry.notes == [("What you deleted here would be left out: 1 conversation, 5 messages in all; "
                          "import the file with --include-deleted (CLI) or “Import what I deleted” (Import "
                          "page) to bring it back.")]
    assert uc.import_preview(wb, uc.ImportFile(path=later, instance=instance)).deleted == dry.preview.deleted
    asked = run(wb, instance, later, dry_run=True, include_deleted=True)
    assert asked.notes == [
        "What you deleted here would be brought back, as asked: 1 conversation, 5 messages in all."]
    # Nothing written: no checkpoint of the file, no new conversation, the deletion still recorded.
    assert not wb.redis().exists(import_checkpoint_key(instance, dry.preview.sha256))
    assert wb.thoughts.chain_count(instance) == 1 and wb.thoughts.chain_meta(instance, hotel) == {}
    assert deleted.members(wb.redis(), instance, "chain") == [hotel]

    made = run(wb, instance, later)  # the import then leaves out what the dry run said
    assert made.outcome.left_out == dry.preview.deleted and made.outcome.created.conversations == 1
    again = run(wb, instance, first, dry_run=True).preview.deleted
    assert again == uc.ImportCounts(conversations=1, messages=len(HOTEL))


def test_a_message_deleted_alone_is_left_out_and_its_text_stays_out_of_the_neighbours(keyword_workbench,
                                                                                       instance, tmp_path):
    wb = keyword_workbench
    path = export(tmp_path, "one.json", conversation("Hotel", "c-hotel", HOTEL))
    hotel = chain_of(run(wb, instance, path), "Hotel")
    said = wb.thoughts.chain_thoughts(instance, hotel)
    uc.memory_delete(wb, uc.MemoryRef(instance=instance, memory_id=said[0].id, chain_id=hotel))

    assert run(wb, instance, path, dry_run=True).preview.deleted == uc.ImportCounts(messages=1)
    again = run(wb, instance, path)
    assert again.outcome.left_out == uc.ImportCounts(messages=1) and again.outcome.created.messages == 0
    assert texts(wb, instance, hotel) == [m[1] for m in HOTEL[1:]]
    assert again.notes[-1].startswith("What you deleted here was left out: 1 message; import the file with")
    rows = indexed(wb, instance)
    assert said[0].id not in rows
    assert not any("Granvia" in content or "Granvia" in json.dumps(context) for content, context in rows.values())
    back = run(wb, instance, path, include_deleted=True)
    assert back.outcome.brought_back == uc.ImportCounts(messages=1) and texts(wb, instance, hotel)[0] == HOTEL[0][1]


def test_a_deleted_memory_is_left_out_of_its_file_imported_again(keyword_workbench, instance, tmp_path):
    wb = keyword_workbench
    path = tmp_path / "facts.jsonl"
    path.write_text('{"id": "fact-dog", "content": "The dog is called Biscuit.", "created_at": "2024-02-01"}\n'
                    '{"id": "fact-car", "content": "Drives a Subaru Outback.", "created_at": "2024-02-02"}\n')
    assert run(wb, instance, path).outcome.created.memories == 2
    uc.memory_delete(wb, uc.MemoryRef(instance=instance, memory_id="fact-dog"))
    assert run(wb, instance, path, dry_run=True).preview.deleted == uc.ImportCounts(memories=1)
    again = run(wb, instance, path)
    assert again.outcome.left_out == uc.ImportCounts(memories=1) and again.outcome.created.memories == 0
    assert set(indexed(wb, instance)) == {"fact-car"}
    back = run(wb, instance, path, include_deleted=True)
    assert back.outcome.created.memories == 1 and back.outcome.brought_back.memories == 1
    assert set(indexed(wb, instance)) == {"fact-car", "fact-dog"}


def test_the_cli_leaves_out_what_chains_delete_removed_and_says_so(cli, workbench, instance, tmp_path):
    path = export(tmp_path, "may.json", conversation("Hotel", "c-hotel", HOTEL), conversation("Dog", "c-dog", DOG))
    code, out, err = cli("import", str(path), "--instance", instance)
    assert code == 0, err
    hotel = next(c["chain_id"] for c in json.loads(out)["outcome"]["chains"] if c["title"] == "Hotel")
    code, _, err = cli("chains", "delete", hotel, "--instance", instance, "--yes")
    assert code == 0, err
    code, out, err = cli("import", str(path), "--instance", instance, "--dry-run")
    assert code == 0, err
    assert json.loads(out)["preview"]["deleted"] == {**uc.ImportCounts().model_dump(), "conversations": 1,
                                                     "messages": len(HOTEL)}
    assert "may.json: What you deleted here would be left out: 1 conversation, 4 messages in all;" in err
    code, out, err = cli("import", str(path), "--instance", instance)
    assert code == 0, err
    outcome = json.loads(out)["outcome"]
    assert outcome["left_out"]["conversations"] == 1 and outcome["created"]["messages"] == 0
    assert "may.json: What you deleted here was left out: 1 conversation, 4 messages in all; import" in err
    code, out, err = cli("import", str(path), "--instance", instance, "--include-deleted")
    assert code == 0, err
    assert json.loads(out)["outcome"]["brought_back"]["conversations"] == 1
    assert workbench.thoughts.chain_meta(instance, hotel)


def test_a_dry_run_without_redis_checks_the_file_and_says_what_it_did_not_look_up(settings, tmp_path):
    """Looking up what was deleted (and what is new) needs Redis; a dry run without it checked the file,
    then failed with "Redis is unavailable" (exit 1), where before that look-up it had answered."""
    path = export(tmp_path, "may.json", conversation("Hotel", "c-hotel", HOTEL))
    done = installed("import", str(path), "--dry-run", data_dir=settings.data_dir, REDIS_URL="redis://127.0.0.1:1")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["preview"]["counts"]["messages"] == len(HOTEL) and result["preview"]["deleted"] is None
    assert result["preview"]["adds"] is None and result["adds"] is None
    assert result["notes"] == [("What is new here and what you deleted were not looked up (Redis is unavailable); "
                                "an import, which needs Redis too, leaves out what you deleted.")]


def test_the_cli_says_how_many_chains_the_list_leaves_out(cli, instance, tmp_path, monkeypatch):
    monkeypatch.setattr("core.importing.runner.LISTED_CHAINS", 2)
    path = export(tmp_path, "many.json", *[conversation(f"Talk {i}", f"c-{i}", [("user", f"Topic {i}.", T + i)])
                                          for i in range(5)])
    code, out, err = cli("import", str(path), "--instance", instance)
    assert code == 0, err
    outcome = json.loads(out)["outcome"]
    assert len(outcome["chains"]) == 2 and outcome["chains_total"] == 5
    assert 'many.json: 5 conversations written: "chains" lists the first 2, and 3 more' in err


def test_an_archive_carries_what_was_deleted_and_a_restore_brings_back_what_it_holds(keyword_workbench, instance,
                                                                                     tmp_path):
    wb = keyword_workbench
    copy, other = f"{instance}-copy", f"{instance}-other"
    path = export(tmp_path, "may.json", conversation("Hotel", "c-hotel", HOTEL), conversation("Dog", "c-dog", DOG))
    first = run(wb, instance, path)
    hotel, dog = chain_of(first, "Hotel"), chain_of(first, "Dog")
    before = tmp_path / "before.zip"
    uc.export_archive(wb, uc.ExportArchive(instance=instance, out=before))
    uc.restore_archive(wb, uc.RestoreArchive(instance=copy, path=before))
    uc.chain_delete(wb, uc.ChainRef(instance=copy, chain_id=hotel))

    # Exported after the deletion, the archive holds its id (and nothing of its text): a copy restored from
    # it leaves the conversation out of the next import, as the instance it came from does.
    after = tmp_path / "after.zip"
    assert uc.export_archive(wb, uc.ExportArchive(instance=copy, out=after)).counts["deleted"] == 1
    restored = uc.restore_archive(wb, uc.RestoreArchive(instance=other, path=after))
    assert restored.created["deleted"] == 1 and not wb.thoughts.chain_meta(other, hotel)
    assert run(wb, other, path).outcome.left_out.conversations == 1

    # The archive taken before the deletion, restored again where it was restored: the user asked for what
    # it holds, so the conversation comes back, and the restore says so.
    again = uc.restore_archive(wb, uc.RestoreArchive(instance=copy, path=before))
    assert again.again and texts(wb, copy, hotel) == [m[1] for m in HOTEL] and texts(wb, copy, dog)
    assert any("1 conversation deleted in this instance after the archive was made was restored" in n
               for n in again.notes)
    assert deleted.members(wb.redis(), copy, "chain") == []


def test_a_copy_restored_under_another_name_finds_its_file_stored_and_what_was_deleted(keyword_workbench, instance,
                                                                                       tmp_path):
    """A restore into an instance of another name gives each message a new id (`core.archive.ids.moved_id`),
    which an import of the same file did not make: it stored every message a second time, and a message
    deleted before the export came back (`core.importing.restored`)."""
    wb = keyword_workbench
    copy = f"{instance}-copy"
    path = export(tmp_path, "one.json", conversation("Hotel", "c-hotel", HOTEL))
    hotel = chain_of(run(wb, instance, path), "Hotel")
    said = wb.thoughts.chain_thoughts(instance, hotel)
    uc.memory_delete(wb, uc.MemoryRef(instance=instance, memory_id=said[0].id, chain_id=hotel))
    archive = tmp_path / "a.zip"
    uc.export_archive(wb, uc.ExportArchive(instance=instance, out=archive))
    uc.restore_archive(wb, uc.RestoreArchive(instance=copy, path=archive))
    assert texts(wb, copy, hotel) == [m[1] for m in HOTEL[1:]]

    assert run(wb, copy, path, dry_run=True).preview.deleted == uc.ImportCounts(messages=1)
    again = run(wb, copy, path)
    assert again.outcome.left_out == uc.ImportCounts(messages=1) and again.outcome.created.messages == 0
    assert texts(wb, copy, hotel) == [m[1] for m in HOTEL[1:]]  # nothing stored twice, nothing back
    assert not any("Granvia" in content for content, _ in indexed(wb, copy).values())
    back = run(wb, copy, path, include_deleted=True)
    assert back.outcome.brought_back == uc.ImportCounts(messages=1)
    assert texts(wb, copy, hotel) == [m[1] for m in HOTEL]


def test_imported_answers_are_final_only_where_the_conversation_ended(keyword_workbench, instance, tmp_path):
    wb = keyword_workbench
    path = export(tmp_path, "may.json", conversation("Hotel", "c-hotel", HOTEL))
    hotel = chain_of(run(wb, instance, path), "Hotel")
    answers = [t.id for t in wb.thoughts.chain_thoughts(instance, hotel) if t.category == uc.CATEGORY_ASSISTANT]
    assert [wb.thoughts.feedback(answers)[a].final for a in answers] == [False, True]

    # A newer export continues the conversation: its former last answer is followed up now.
    later = export(tmp_path, "june.json", conversation("Hotel", "c-hotel", [
        *HOTEL, ("user", "And the spa?", T + 7200), ("assistant", "Open until nine.", T + 7205)]))
    run(wb, instance, later)
    answers = [t.id for t in wb.thoughts.chain_thoughts(instance, hotel) if t.category == uc.CATEGORY_ASSISTANT]
    assert [wb.thoughts.feedback(answers)[a].final for a in answers] == [False, False, True]

    # An earlier import marked every imported answer final: the next import of the file mends them.
    for a in answers:
        wb.redis().hset(feedback_key(a), "final", "1")
    run(wb, instance, later)
    assert [wb.thoughts.feedback(answers)[a].final for a in answers] == [False, False, True]
    shown = uc.feedback_summary(wb, uc.SummaryRequest(instance=instance, include_imported=True)).summary
    assert (shown.answers, shown.imported, shown.final, shown.pending) == (3, 3, 0, 0)


def test_a_photo_sent_without_text_is_kept_as_a_line_naming_it_and_counted(keyword_workbench, instance, tmp_path):
    wb = keyword_workbench
    turns = [("user", "What can I cook tonight?", T), ("assistant", "Show me your fridge.", T + 5),
             ("user", "", T + 30), ("assistant", "With those eggs and spinach: an omelette.", T + 40),
             ("user", "", T + 60), ("assistant", "That looks like a receipt.", T + 70)]
    found = photo_only(photo_only(conversation("Dinner", "c-dinner", turns), 2, "fridge.jpg"), 4, None)
    path = export(tmp_path, "photos.json", found)
    preview = uc.import_preview(wb, uc.ImportFile(path=path, instance=instance))
    assert (preview.attachment_only, preview.attachment_only_left_out) == (1, 1)
    result = run(wb, instance, path)
    assert result.notes == [("2 messages hold only an attachment (photo, file) and no text: 1 kept as a line "
                             "naming it, “[photo: name]” or “[file: name]”, as the answer after it refers to "
                             "it; 1 left out, as its attachment has no name.")]
    chain = wb.thoughts.chain_thoughts(instance, chain_of(result, "Dinner"))
    assert [t.thought for t in chain][2:4] == ["[photo: fridge.jpg]", "With those eggs and spinach: an omelette."]
    assert chain[2].category == uc.CATEGORY_USER and chain[2].extra["attachments"] == ["fridge.jpg"]
    assert chain[2].timestamp.timestamp() == T + 30
    assert run(wb, instance, path).outcome.created == uc.ImportCounts()


def test_deleting_the_whole_instance_drops_its_record(keyword_workbench, instance):
    r = keyword_workbench.redis()
    assert deleted.record(r, instance, chains=["chatgpt-0123456789abcdef"], memories=["fact-dog"]) == 2
    assert deleted.record(r, instance, chains=["chatgpt-0123456789abcdef"]) == 0  # once each
    deleted.clear(r, instance)
    assert deleted.members(r, instance, "chain") == deleted.members(r, instance, "memory") == []


def test_a_chain_export_of_a_deleted_chain_is_left_out_too(keyword_workbench, instance, tmp_path):
    """One rule for every import: the workbench's own chain export is an import like any other."""
    wb = keyword_workbench
    for text in ("I parked on level 3 near the lift.", "Where did I park?"):
        uc.remember(wb, uc.UiRememberParams(thought=text, chain_id="parking", instance=instance))
    exported = tmp_path / "parking.json"
    exported.write_text(uc.chain_export(wb, uc.ChainRef(instance=instance, chain_id="parking")).document)
    uc.chain_delete(wb, uc.ChainRef(instance=instance, chain_id="parking"))
    assert run(wb, instance, exported).outcome.left_out.conversations == 1
    assert not wb.thoughts.chain_meta(instance, "parking")
    back = run(wb, instance, exported, include_deleted=True)
    assert back.outcome.created.conversations == 1 and texts(wb, instance, "parking")[0].startswith("I parked")


def test_a_message_deleted_alone_is_left_out_of_its_chain_export_imported_again(keyword_workbench, instance,
                                                                                 tmp_path):
    """A chain export keeps its thoughts' ids: a message deleted by its id, or with the one fact it said,
    is known by it when the export taken before is imported again."""
    wb = keyword_workbench
    for text in ("I parked on level 3 near the lift.", "My locker code is 4512.", "Where did I park?"):
        uc.remember(wb, uc.UiRememberParams(thought=text, chain_id="parking", instance=instance))
    exported = tmp_path / "parking.json"
    exported.write_text(uc.chain_export(wb, uc.ChainRef(instance=instance, chain_id="parking")).document)
    said = {t.thought: t.id for t in wb.thoughts.chain_thoughts(instance, "parking")}
    locker = said["My locker code is 4512."]
    uc.memory_delete(wb, uc.MemoryRef(instance=instance, memory_id=locker))
    [fact] = [m.id for m in wb.index.records(instance, chains=["parking"])
              if m.kind == "observation" and "level 3" in m.content]
    uc.forget(wb, uc.Forget(target="memory", id=fact, instance=instance))
    kept = said_in(wb, instance, "parking")
    assert len(kept) == 4 and not any("locker" in t or "level 3" in t for t in kept)

    assert run(wb, instance, exported, dry_run=True).preview.deleted == uc.ImportCounts(messages=2)
    again = run(wb, instance, exported)
    assert again.outcome.created == uc.ImportCounts() and again.outcome.left_out == uc.ImportCounts(messages=2)
    assert again.outcome.already_present == 4 and said_in(wb, instance, "parking") == kept
    assert not any("4512" in content for content, _ in indexed(wb, instance).values())

    # Asked for, they come back under their own ids, and are deleted no more.
    back = run(wb, instance, exported, include_deleted=True)
    assert back.outcome.brought_back == uc.ImportCounts(messages=2) and back.outcome.created.messages == 2
    ids = {t.id for t in wb.thoughts.chain_thoughts(instance, "parking") if t.category in TEXT_CATEGORIES}
    assert {locker, said["I parked on level 3 near the lift."]} <= ids and len(ids) == 6
    assert not {locker, said["I parked on level 3 near the lift."]} & set(deleted.members(wb.redis(), instance,
                                                                                          "memory"))
    assert run(wb, instance, exported).outcome.created == uc.ImportCounts()
