"""`uc.import_file` on the real Redis and Postgres: each format's realistic file imports with its quirks,
conversations become chains with their original times indexed like live turns, imported answers carry
no feedback and stay out of the rates, a second import creates nothing, an interrupted one continues,
and the error policies write all, some or nothing."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from itertools import pairwise
from pathlib import Path

import pytest
from click.testing import _NamedTextIOWrapper

from core import usecases as uc
from core.errors import InvalidInput
from tests.support.chatgpt_export import conversation, write_export
from tests.support.cli import in_process_cli

DATA = Path(__file__).resolve().parents[1] / "data" / "import"


def run(wb, instance, name, **kw):
    return uc.import_file(wb, uc.ImportFile(path=DATA / name if isinstance(name, str) else name,
                                            instance=instance, **kw))


def chain_ids(result) -> list[str]:
    return [c.chain_id for c in result.outcome.chains]


def thoughts(wb, instance, chain_id):
    return [t for t in wb.thoughts.chain_thoughts(instance, chain_id)]


def rows(wb, instance):
    with wb.pool().connection() as conn:
        return {r[0]: r[1:] for r in conn.execute(
            "SELECT id, kind, content, created_at, context, metadata, chain_id FROM memory "
            "WHERE instance = %s", (instance,))}


def test_chatgpt_export_keeps_the_kept_branch_with_original_times(keyword_workbench, instance):
    wb = keyword_workbench
    result = run(wb, instance, "chatgpt_conversations.json")
    assert result.preview.format == "chatgpt"
    assert result.outcome.created.conversations == 2
    assert [c.title for c in result.outcome.chains] == ["Vegetarian dinner", "Script tags"]
    dinner, script = chain_ids(result)
    chain = thoughts(wb, instance, dinner)
    # root, hidden system and custom instructions, the abandoned branch, the tool call and output: left out
    assert [t.thought for t in chain] == [
        "Can you suggest a vegetarian dinner for four?",
        "A mushroom risotto with a green salad serves four well.",
        "Make it vegan, and here is what is in my fridge.",
        ("Swap butter for olive oil, use nutritional yeast instead of parmesan, and add the spinach from "
         "your fridge.")]
    assert [t.timestamp for t in chain][:2] == [datetime.fromtimestamp(1714550401.5, UTC),
                                                datetime.fromtimestamp(1714550409.0, UTC)]
    assert [t.category for t in chain] == [uc.CATEGORY_USER, uc.CATEGORY_ASSISTANT] * 2
    assert chain[2].extra["attachments"] == ["fridge.jpg"]
    assert chain[1].extra["source"] == "imported" and chain[1].extra["model"] == "gpt-4o"
    meta = wb.thoughts.chain_meta(instance, dinner)
    assert meta["title"] == "Vegetarian dinner" and meta["turns"] == "2" and "last_answer_id" not in meta
    # Indexed with their conversation context, exactly like a live turn's thoughts.
    indexed = rows(wb, instance)
    answer = indexed[chain[3].id]
    assert answer[0] == "assistant" and answer[2] == chain[3].timestamp and answer[5] == dinner
    assert answer[3]["before"] == [chain[2].thought, chain[1].thought, chain[0].thought]
    # The empty user message is left out; the answer without a time follows its predecessor.
    assert [t.thought[:8] for t in thoughts(wb, instance, script)] == ["<script>", "It is a ", "Anything"]


def test_imported_answers_get_no_feedback_and_stay_out_of_the_rates(keyword_workbench, instance):
    wb = keyword_workbench
    result = run(wb, instance, "claude_conversations.json")
    assert result.outcome.created.messages == 6 and result.outcome.created.attachments == 1
    answers = [t for c in chain_ids(result) for t in thoughts(wb, instance, c)
               if t.category == uc.CATEGORY_ASSISTANT]
    records = wb.thoughts.feedback([a.id for a in answers])
    assert all(r.feedback_score is None and not r.abandoned and not r.continued for r in records.values())
    # Final only where the conversation ended: each chain's last answer; the others were followed up.
    last = {c: [t.id for t in thoughts(wb, instance, c)][-1] for c in chain_ids(result)}
    assert {a: records[a].final for a in records} == {a.id: a.id in last.values() for a in answers}
    assert len(uc.feedback_answers(wb, uc.FeedbackWindow(instance=instance))) == 0
    shown = uc.feedback_answers(wb, uc.FeedbackWindow(instance=instance, include_imported=True))
    assert len(shown) == len(answers) and set(shown["source"]) == {"imported"}
    assert shown["feedback_score"].isna().all() and not shown["abandoned"].any()
    # A rating is the user's own word: an imported answer can still get one.
    uc.rate_answer(wb, uc.RateAnswer(instance=instance, answer_id=answers[0].id, rating="up"))
    # Counted when asked, they are answers and ratings, but in no rate: neither ended (they were once
    # stored final, and counted as "ended" answers that lowered every rate) nor pending.
    uc.remember(wb, uc.UiRememberParams(thought="The boiler is serviced in May.", chain_id="live",
                                        instance=instance))
    uc.remember(wb, uc.UiRememberParams(thought="Thanks, and the chimney?", chain_id="live", instance=instance))
    both = uc.feedback_summary(wb, uc.SummaryRequest(instance=instance, include_imported=True)).summary
    assert (both.answers, both.imported, both.final, both.rated_up) == (len(answers) + 2, len(answers), 0, 1)
    assert both.pending == 1  # the live chain's last answer alone
    assert (both.continued, both.continue_rate, both.continue_rate_excl_ended) == (1, 0.5, 0.5)


def test_each_format_imports_from_its_file(keyword_workbench, instance):
    wb = keyword_workbench
    expected = {"openai_chat.jsonl": ("openai-jsonl", 3, 0), "openai_chat_list.json": ("openai-jsonl", 2, 0),
                "locomo_mini.json": ("locomo", 2, 0), "memories.jsonl": ("memories-jsonl", 0, 3),
                "mem0_export.json": ("memories-jsonl", 0, 2), "memories.csv": ("memories-csv", 0, 2)}
    for name, (fmt, chains, memories) in expected.items():
        result = run(wb, instance, name)
        assert (result.preview.format, result.outcome.created.conversations,
                result.outcome.created.memories) == (fmt, chains, memories), name
        # Conversations are indexed without formation; the result says how to form their memories.
        assert ("workbench formation run" in (result.next_step or "")) == bool(chains), name
    # openai_chat.jsonl repeats a conversation's id: written once.
    indexed = rows(wb, instance)
    coffee = indexed["fact-coffee"]
    assert coffee[0] == "observation" and coffee[2] == datetime(2024, 2, 1, 10, tzinfo=UTC)
    assert coffee[4] == {"source": "notes app", "source_id": "fact-coffee", "origin": "imported"}
    mem0 = indexed["5a8e7f2c-1111-4c3d-9e0f-000000000001"]
    assert mem0[1] == "Is vegetarian and allergic to peanuts" and mem0[4]["user_id"] == "alice"
    locomo = [r for r in indexed.values() if r[1].startswith("Ben: Congrats")]
    assert locomo and "small brown dog" in locomo[0][1] and "shiba inu puppy" not in locomo[0][1]


def test_a_re_import_still_says_how_to_form_what_was_never_formed(keyword_workbench, instance):
    """A re-import that adds nothing left no next step (and the Import page no Form memories button),
    though the conversations it holds had never been formed."""
    wb = keyword_workbench
    assert run(wb, instance, "openai_chat.jsonl").next_step
    again = run(wb, instance, "openai_chat.jsonl")
    assert again.outcome.created.messages == 0 and "workbench formation run" in again.next_step
    uc.formation_run(wb, uc.FormationRun(instance=instance))
    assert run(wb, instance, "openai_chat.jsonl").next_step is None


def test_past_tasks_from_a_folder_and_a_jsonl(keyword_workbench, instance):
    wb = keyword_workbench
    first = run(wb, instance, "past_tasks", user_id="ana", task="meeting minutes")
    assert first.outcome.created.past_tasks == 2
    again = run(wb, instance, "past_tasks", user_id="ana", task="meeting minutes")
    assert again.outcome.created.past_tasks == 0 and again.outcome.already_present == 2
    run(wb, instance, "past_tasks.jsonl")
    texts = wb.past_tasks.list_texts(instance, "ben")
    assert [(t.title, t.task_name) for t in texts] == [("Oven project plan", "plan")]
    assert all(t.versions == 1 for t in wb.past_tasks.list_texts(instance, "ana"))


def test_a_second_import_creates_nothing(keyword_workbench, instance):
    wb = keyword_workbench
    first = run(wb, instance, "chatgpt_conversations.json")
    before = (rows(wb, instance), wb.thoughts.chain_count(instance), wb.thoughts.feedback_count(instance))
    again = run(wb, instance, "chatgpt_conversations.json")
    assert again.outcome.created == uc.ImportCounts() and again.outcome.chains == []
    assert again.outcome.already_present == first.outcome.created.messages
    after = (rows(wb, instance), wb.thoughts.chain_count(instance), wb.thoughts.feedback_count(instance))
    assert after == before
    assert wb.thoughts.chain_meta(instance, chain_ids(first)[0])["turns"] == "2"


def interrupted_after_20(wb, instance, path, monkeypatch) -> None:
    """Import `path` in batches of 20 records, stopped (as by Ctrl+C) once the first batch is handed over."""
    monkeypatch.setattr("core.importing.runner.BATCH_RECORDS", 20)

    def crash(done, total, what):
        if what == "importing" and done >= 20:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        uc.import_file(wb, uc.ImportFile(path=path, instance=instance), progress=crash)


def test_an_interrupted_import_continues_where_it_stopped(keyword_workbench, instance, tmp_path, monkeypatch):
    wb = keyword_workbench
    big = tmp_path / "many.jsonl"
    with big.open("w") as f:
        for i in range(50):
            messages = [{"role": "user", "content": f"question {i}"},
                        {"role": "assistant", "content": f"answer {i}"}]
            line = {"id": f"c{i}", "created_at": 1700000000 + i * 60, "messages": messages}
            f.write(json.dumps(line) + "\n")
    interrupted_after_20(wb, instance, big, monkeypatch)
    assert wb.thoughts.chain_count(instance) == 20  # the first batch was stored
    result = run(wb, instance, big)
    assert result.outcome.resumed_after == 20
    assert result.outcome.created.messages == 60  # the 30 conversations the crash left out
    assert wb.thoughts.chain_count(instance) == 50 and len(rows(wb, instance)) == 100


def test_an_interrupted_import_of_memories_claims_none_stored(keyword_workbench, instance, tmp_path, monkeypatch):
    """A new instance's bulk load keeps nothing of an interrupted run: the next one writes them all and says
    it continued after none."""
    wb = keyword_workbench
    notes = tmp_path / "notes.jsonl"
    notes.write_text("".join(json.dumps({"content": f"note {i}", "created_at": "2024-01-01"}) + "\n"
                             for i in range(50)))
    interrupted_after_20(wb, instance, notes, monkeypatch)
    assert wb.index.count(instance) == 0
    result = run(wb, instance, notes)
    assert result.outcome.resumed_after == 0 and result.outcome.created.memories == 50


def test_stop_writes_nothing_and_skip_writes_the_valid_ones(keyword_workbench, instance, tmp_path):
    wb = keyword_workbench
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text("\n".join([
        json.dumps({"content": "Likes jazz.", "created_at": "2024-01-01T00:00:00Z"}),
        json.dumps({"content": "From the future.", "created_at": "2999-01-01T00:00:00Z"}),
        "{not json",
        json.dumps({"content": "Reads on Sundays.", "created_at": "2024-01-02T00:00:00Z"})]) + "\n")
    with pytest.raises(InvalidInput, match=r"2 of 4 records are invalid \(first: line 2: created_at 2999"):
        run(wb, instance, mixed)
    assert rows(wb, instance) == {}
    report = tmp_path / "invalid.jsonl"
    dry = run(wb, instance, mixed, dry_run=True, report=report)
    assert (dry.outcome, dry.preview.counts.memories, dry.preview.invalid) == (None, 2, 2)
    assert [e.where for e in dry.preview.errors] == ["line 2", "line 3"] and rows(wb, instance) == {}
    result = run(wb, instance, mixed, on_error="skip", report=report)
    assert result.outcome.created.memories == 2 and result.outcome.skipped_invalid == 2
    assert sorted(r[1] for r in rows(wb, instance).values()) == ["Likes jazz.", "Reads on Sundays."]
    listed = [json.loads(line) for line in report.read_text().splitlines()]
    assert [e["where"] for e in listed] == ["line 2", "line 3"] and "not valid JSON" in listed[1]["problem"]


def test_a_chain_the_workbench_exported_comes_back_in_another_instance(keyword_workbench, instance, tmp_path):
    wb = keyword_workbench
    source = f"{instance}-from"
    for text in ("I parked on level 3 near the lift.", "Where did I park?"):
        uc.remember(wb, uc.UiRememberParams(thought=text, chain_id="parking", instance=source))
    exported = tmp_path / "parking.json"
    exported.write_text(uc.chain_export(wb, uc.ChainRef(instance=source, chain_id="parking")).document)
    result = run(wb, instance, exported)
    assert result.preview.format == "workbench-chain" and chain_ids(result) == ["parking"]
    original = [(t.category, t.thought, t.timestamp) for t in thoughts(wb, source, "parking")
                if t.category in (uc.CATEGORY_USER, uc.CATEGORY_ASSISTANT)]
    assert [(t.category, t.thought, t.timestamp) for t in thoughts(wb, instance, "parking")] == original
    # Brought back where it was made, it finds its messages there: nothing is stored twice.
    back = run(wb, source, exported)
    assert back.outcome.created.messages == 0 and back.outcome.already_present == len(original)
    assert len(thoughts(wb, source, "parking")) == len(original) + 2  # + the two turns' metrics


def test_one_file_in_two_instances_shares_no_record(keyword_workbench, instance):
    wb = keyword_workbench
    first = run(wb, instance, "claude_conversations.json")
    second = run(wb, f"{instance}-2", "claude_conversations.json")
    assert second.outcome.created == first.outcome.created  # nothing counted as already there
    answers = [t.id for c in chain_ids(first) for t in thoughts(wb, instance, c)
               if t.category == uc.CATEGORY_ASSISTANT]
    assert {r.instance for r in wb.thoughts.feedback(answers).values()} == {instance}


def test_every_imported_message_in_the_index_is_flagged_memorized(keyword_workbench, instance):
    """MemoryScope's read_message skips messages already in the memory index: an import flags the messages
    it hands to the index, those an earlier run stored but the index lacks included."""
    from core.conversation.indexing import MEMORIZED
    from core.conversation.keys import thought_key

    wb = keyword_workbench
    result = run(wb, instance, "openai_chat.jsonl")
    chains = chain_ids(result)
    every = [t for chain in chains for t in thoughts(wb, instance, chain)]
    indexed = rows(wb, instance)
    assert every and all(t.id in indexed and t.extra.get(MEMORIZED) for t in every)
    assert all(uc.read_message(wb, uc.ReadMessageRequest(instance=instance, chain_id=c)).messages == []
               for c in chains)
    # Stored but gone from the index, unflagged: the next import indexes them and flags them again.
    wb.index.delete_instance(instance)
    for t in every:
        wb.thoughts.r.hdel(thought_key(instance, t.chain_id, t.id), MEMORIZED)
    again = run(wb, instance, "openai_chat.jsonl")
    assert again.outcome.created.messages == 0 and set(rows(wb, instance)) == {t.id for t in every}
    assert all(t.extra.get(MEMORIZED) for chain in chains for t in thoughts(wb, instance, chain))


def test_an_upload_never_imported_does_not_stay_on_disk(keyword_workbench, tmp_path):
    first = uc.keep_upload(keyword_workbench, "chat.jsonl", b'{"messages": []}\n', "up-1")
    second = uc.keep_upload(keyword_workbench, "notes.csv", b"content\nhello\n", "up-2")
    assert first.exists() and second.exists() and first.stat().st_mode & 0o777 == 0o600
    uc.discard_upload(keyword_workbench, second)  # taken off the page
    assert not second.exists()
    hour_ago = first.stat().st_mtime - uc.importing.UPLOAD_KEPT_S - 1
    os.utime(first, (hour_ago, hour_ago))  # previewed in a tab closed since
    third = uc.keep_upload(keyword_workbench, "more.jsonl", b"{}\n", "up-3")  # the next upload prunes it
    assert not first.exists() and third.exists()
    assert uc.prune_uploads(keyword_workbench) == 0 and third.exists()  # a recent one stays
    outside = tmp_path / "mine.jsonl"
    outside.write_text("{}\n")
    uc.discard_upload(keyword_workbench, outside)  # only the workbench's own copies go
    assert outside.exists()
    uc.discard_upload(keyword_workbench, third)  # the session's uploads folder, as the browser tests find it


def test_keeping_system_messages_on_a_second_import_adds_them_and_moves_no_other(keyword_workbench, instance,
                                                                                 tmp_path):
    wb = keyword_workbench
    chat = tmp_path / "chat.jsonl"
    chat.write_text(json.dumps({"id": "c-1", "created_at": "2024-05-01T09:00:00Z", "messages": [
        {"role": "system", "content": "You are helpful."},
        {"role": "user", "content": "I parked on level 3."},
        {"role": "assistant", "content": "Noted: level 3."},
        {"role": "user", "content": "Thanks."}]}) + "\n")
    first = run(wb, instance, chat)
    chain = chain_ids(first)[0]
    assert first.outcome.created.messages == 3
    again = run(wb, instance, chat, include_system=True)
    assert again.outcome.created.messages == 1 and again.outcome.already_present == 3
    # In the source's order, at times strictly apart: the system message took the first question's time
    # (stored by the first import), and the chain's order between the two was left to their ids.
    stored = thoughts(wb, instance, chain)
    assert [(t.category, t.thought) for t in stored] == [
        (uc.CATEGORY_USER, "[system] You are helpful."), (uc.CATEGORY_USER, "I parked on level 3."),
        (uc.CATEGORY_ASSISTANT, "Noted: level 3."), (uc.CATEGORY_USER, "Thanks.")]
    times = [t.timestamp for t in stored]
    assert all(a < b for a, b in pairwise(times)), times
    assert times[1] == datetime(2024, 5, 1, 9, tzinfo=UTC)  # the question keeps the time it was stored with
    # The chain starts with the message added before the others, and still ends with the last one (its last
    # activity went back to the system message's time: the last of the messages written that time).
    [listed] = [c for c in wb.thoughts.chains(instance) if c.chain_id == chain]
    assert (listed.created_at, listed.last_at) == (times[0], times[-1])
    assert wb.thoughts.chain_meta(instance, chain)["title"] == "I parked on level 3."


def test_a_chatgpt_export_without_times_imports_saying_once_that_times_were_assumed(keyword_workbench,
                                                                                    instance, tmp_path):
    """Refused before ("no timestamp"): conversations whose messages, and the conversation itself, carry
    no time. Now dated from the conversation's own time, else the file's, strictly in order, with one note
    in the result; a copy of the file (another time of its own) imported later creates nothing new."""
    wb = keyword_workbench
    no_times = [("user", "How do I feed a sourdough starter?", None),
                ("assistant", "Equal weights of flour and water, daily.", None),
                ("user", "And in the fridge?", None), ("assistant", "Once a week is enough.", None)]
    export = write_export(tmp_path / "conversations.json", [
        conversation("Sourdough starter", "c-1", no_times, create_time=1714550400.0),
        conversation("Bike chain", None, no_times[:2])])
    changed = datetime(2024, 6, 1, 9, 30, tzinfo=UTC).timestamp()
    os.utime(export, (changed, changed))
    result = run(wb, instance, export)
    assert result.outcome.created.conversations == 2 and result.outcome.created.messages == 6
    assert [c.title for c in result.outcome.chains] == ["Sourdough starter", "Bike chain"]
    assert result.notes == [(
        "Times assumed: 2 conversations give no time for their messages, so they are dated from their "
        "conversation's own time, or (1 without one) from the file's last change, 2024-06-01 09:30:00 UTC, a "
        "millisecond apart in the file's order.")]
    sourdough, bike = (thoughts(wb, instance, c) for c in chain_ids(result))
    assert [t.thought[:6] for t in sourdough] == ["How do", "Equal ", "And in", "Once a"]
    assert sourdough[0].timestamp == datetime(2024, 5, 1, 8, tzinfo=UTC)
    assert bike[0].timestamp == datetime(2024, 6, 1, 9, 30, tzinfo=UTC)
    for chain in (sourdough, bike):
        assert all(a.timestamp < b.timestamp for a, b in pairwise(chain))
    copy = tmp_path / "copy-of-conversations.json"
    copy.write_bytes(export.read_bytes() + b"\n")
    again = run(wb, instance, copy)
    assert again.outcome.created == uc.ImportCounts() and again.outcome.already_present == 6
    assert again.notes == []  # it dated no message: those stored keep the times the first import gave
    # An upload's copy has no time of the user's file (a browser sends none): the import's time is said.
    upload = uc.keep_upload(wb, "conversations.json", write_export(tmp_path / "other.json", [
        conversation("Kettle", "c-3", no_times[:2])]).read_bytes(), "up-no-times")
    before = datetime.now(UTC)
    uploaded = run(wb, instance, upload)
    [kettle] = chain_ids(uploaded)
    assert before <= thoughts(wb, instance, kettle)[0].timestamp <= datetime.now(UTC)
    assert "from the time of the import, " in uploaded.notes[0]


def test_an_openai_file_without_times_is_dated_from_the_file(keyword_workbench, instance, tmp_path):
    """A fine-tuning file (OpenAI chat messages, no time anywhere) was refused line by line ("no
    timestamp"); it imports as a ChatGPT export without times does, said once."""
    wb = keyword_workbench
    path = tmp_path / "train.jsonl"
    path.write_text("\n".join(json.dumps({"messages": [{"role": "system", "content": "Be brief."},
                                                        {"role": "user", "content": q},
                                                        {"role": "assistant", "content": a}]})
                              for q, a in [("Capital of Peru?", "Lima."), ("Largest ocean?", "The Pacific.")]))
    changed = datetime(2024, 6, 1, 9, 30, tzinfo=UTC).timestamp()
    os.utime(path, (changed, changed))
    result = run(wb, instance, path)
    assert result.outcome.created.conversations == 2 and result.outcome.created.messages == 4
    assert result.notes == [(
        "Times assumed: 2 conversations give no time for their messages, so they are dated from the file's "
        "last change, 2024-06-01 09:30:00 UTC, a millisecond apart in the file's order.")]
    for chain in chain_ids(result):
        user, answer = thoughts(wb, instance, chain)
        assert user.timestamp == datetime(2024, 6, 1, 9, 30, tzinfo=UTC) < answer.timestamp


def test_a_nul_character_is_stored_as_u_fffd_in_the_chain_and_the_index_and_said(keyword_workbench, instance,
                                                                              tmp_path):
    """The index stored U+FFFD without a word, and the chain kept the NUL: two texts for one message."""
    wb = keyword_workbench
    export = write_export(tmp_path / "conversations.json", [conversation("Pasted log", "c-1", [
        ("user", "Here is my log: abc\x00def", 1714550400.0),
        ("assistant", "The \x00 is a NUL byte.", 1714550405.0),
        ("user", "Thanks", 1714550410.0)])])
    result = run(wb, instance, export)
    assert result.notes == [("2 messages held NUL characters (U+0000), which Postgres cannot store: each is "
                             "stored as U+FFFD (\ufffd) instead.")]
    assert result.preview.nul_replaced == 2
    chain = thoughts(wb, instance, chain_ids(result)[0])
    assert [t.thought for t in chain] == ["Here is my log: abc\ufffddef", "The \ufffd is a NUL byte.",
                                          "Thanks"]
    indexed = rows(wb, instance)
    assert [indexed[t.id][1] for t in chain] == [t.thought for t in chain]
    assert run(wb, instance, export, dry_run=True).notes == result.notes  # said before anything is written


def test_the_cli_counts_its_progress_on_a_terminal_and_on_standard_error_alone(settings, workbench, instance,
                                                                               tmp_path, monkeypatch):
    """A two-year export is read, then written, for 20 s: each step is counted as it goes, where a person
    at a terminal reads it; standard output holds the JSON result alone, and a log holds no progress."""
    monkeypatch.setattr("core.importing.runner.BATCH_RECORDS", 2)
    cli = in_process_cli(settings, workbench, monkeypatch)
    talks = [conversation(f"Talk {i}", f"c-{i}", [("user", f"Topic {i}.", 1_714_550_400.0 + i)])
             for i in range(5)]
    path = write_export(tmp_path / "five.json", talks)
    code, out, err = cli("import", str(path), "--instance", instance, "--dry-run")
    assert code == 0 and err == "five.json: Adds 5 new conversations (5 messages).\n"  # not a terminal: no progress

    monkeypatch.setattr(_NamedTextIOWrapper, "isatty", lambda self: True, raising=False)
    code, out, err = cli("import", str(path), "--instance", instance)
    assert code == 0, err
    assert json.loads(out)["outcome"]["created"]["conversations"] == 5
    # Each redrawn over the one before (the runner, as a pipe would, strips the code that erases the line).
    drawn = err.replace("\x1b[K", "").split("\r")
    assert drawn == ["", "checking five.json: 1 record…", "checking five.json: 2 records…",
                     "checking five.json: 4 records…", "checking five.json: 5/5\n",
                     "importing: 0/5", "importing: 2/5", "importing: 4/5", "importing: 5/5\n",
                     "indexing the imported messages…\n"]
