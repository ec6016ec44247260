"""The import formats without services: detection from the first bytes, each reader's quirks (ChatGPT
branches and hidden nodes, attachments, empty messages, missing and future times), bad files with one
clear message, and readers that stream the file instead of reading it whole."""

from __future__ import annotations

import codecs
import inspect
import io
import json
import os
import tracemalloc
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from pathlib import Path

import pytest

from core.errors import InvalidInput
from core.importing import (chatgpt, chats, claude, detect, locomo, memories, openai_chat, past_tasks, source,
                            workbench_chain)
from core.importing.records import ImportedConversation, InvalidRecord, content_id, parse_time
from core.importing.runner import validate
from tests.support.chatgpt_export import conversation, write_export

DATA = Path(__file__).resolve().parents[1] / "data" / "import"


def items(path: Path, **kw) -> list:
    return list(detect.reader(path, detect.detect(path), **kw)())


@pytest.mark.parametrize("name, fmt, shape", [
    ("openai_chat.jsonl", "openai-jsonl", "jsonl"), ("openai_chat_list.json", "openai-jsonl", "json"),
    ("chatgpt_conversations.json", "chatgpt", "json"), ("claude_conversations.json", "claude", "json"),
    ("locomo_mini.json", "locomo", "json"), ("memories.jsonl", "memories-jsonl", "jsonl"),
    ("mem0_export.json", "memories-jsonl", "mem0-results"), ("memories.csv", "memories-csv", "csv"),
    ("past_tasks", "past-tasks", "folder"), ("past_tasks.jsonl", "past-tasks", "jsonl"),
    ("workbench_chain.json", "workbench-chain", "chain")])
def test_each_file_is_detected(name, fmt, shape):
    assert detect.detect(DATA / name) == detect.Detected(fmt, shape)


def test_a_jsonl_whose_first_line_is_longer_than_the_peek_is_still_told(tmp_path):
    path = tmp_path / "long.jsonl"
    line = {"created_at": 1700000000, "messages": [{"role": "user", "content": "x" * 200_000}]}
    path.write_text(json.dumps(line) + "\n" + json.dumps(line) + "\n")
    assert detect.detect(path) == detect.Detected("openai-jsonl", "jsonl")
    assert len(items(path)) == 2


def test_chatgpt_follows_the_kept_branch_and_leaves_out_system_tool_and_hidden_nodes():
    dinner, script = items(DATA / "chatgpt_conversations.json")
    assert [(m.role, m.content[:12]) for m in dinner.messages] == [
        ("user", "Can you sugg"), ("assistant", "A mushroom r"), ("user", "Make it vega"),
        ("assistant", "Swap butter ")]
    assert dinner.messages[2].content != "Make it vegan."  # the question of the abandoned branch
    assert dinner.messages[2].attachments == ["fridge.jpg"] and dinner.model == "gpt-4o"
    assert dinner.messages[0].at == datetime.fromtimestamp(1714550401.5, UTC)
    # An empty user message is left out; an answer without create_time follows its predecessor.
    assert [m.role for m in script.messages] == ["user", "assistant", "assistant"]
    assert script.messages[2].at > script.messages[1].at
    with_system = items(DATA / "chatgpt_conversations.json", include_system=True)[0]
    assert [m.content[:6] for m in with_system.messages if m.content.startswith("[")] == ["[tool]", "[tool]"]


def test_openai_messages_quirks():
    lisbon, allergy, running, repeat = items(DATA / "openai_chat.jsonl")
    # The system message and the empty answer are left out.
    assert [m.role for m in lisbon.messages] == ["user", "assistant", "user", "assistant"]
    assert lisbon.chain_id == repeat.chain_id  # the repeated id: the same chain, written once by the runner
    assert allergy.messages[0].attachments == ["image_url"]
    assert allergy.messages[0].at == datetime.fromtimestamp(1710000000, UTC)  # the conversation's time
    assert [m.role for m in allergy.messages] == ["user", "assistant"]  # the tool message left out
    assert running.title == "Running plan" and running.messages[0].at.tzinfo is UTC
    assert running.messages[0].at == datetime(2024, 4, 10, 16, tzinfo=UTC)


def test_claude_locomo_memories_and_past_tasks():
    garden, dentist = items(DATA / "claude_conversations.json")
    assert len(garden.messages) == 4 and garden.messages[2].attachments == ["log.csv"]
    assert dentist.title == "My dentist appointment moved to 12 July at 9:00."
    one, _ = items(DATA / "locomo_mini.json")  # session 3 has a date but no turns
    assert one.messages[1].content == ("Ben: Congrats! What breed is Miso? "
                                       "[shares a photo: a small brown dog on a sofa]")
    assert [m.role for m in one.messages] == ["user", "assistant", "user"]
    assert one.messages[0].at == datetime(2023, 5, 8, 13, 56, tzinfo=UTC) < one.messages[1].at
    mem = items(DATA / "memories.jsonl")
    assert mem[1].tags == ["sport", "goals"] and mem[1].event_time == datetime(2024, 11, 3, 9, tzinfo=UTC)
    assert mem[2].tags == ["user:alice"] and mem[2].metadata == {"user_id": "alice"}
    csv_rows = items(DATA / "memories.csv")
    assert csv_rows[0].content == "Works at a bakery in Porto, mornings only."
    assert csv_rows[0].metadata["source"] == "crm"
    folder = items(DATA / "past_tasks", user_id="ana")
    assert [t.title for t in folder] == ["Board meeting minutes, May 2024", "Email to the flour supplier"]
    assert isinstance(items(DATA / "past_tasks")[0], InvalidRecord)  # a folder needs its user
    [chain] = items(DATA / "workbench_chain.json")  # the metrics thought is left out
    assert (chain.chain_id, [m.role for m in chain.messages], chain.tags) == (
        "chain-3f2a9c1d7e00", ["user", "assistant"], ["car"])


def test_a_past_task_without_a_title_is_titled_by_its_first_line_or_words(tmp_path):
    """A line with no title was titled "text" (the name of a file it never came from): now its first
    line when short and more follows, else its first words, cut with an ellipsis. Its id is the one it
    had, so a file imported before is still recognised."""
    long = "Remind the team that the budget review moves to Thursday because the CFO is travelling that week"
    lines = [{"user_id": "ana", "text": long}, {"user_id": "ana", "text": "  Short note on the printer "},
             {"user_id": "ana", "production": "# Oven plan\n\n1. Quotes by May"},
             {"user_id": "ana", "title": "Given", "text": long}]
    path = tmp_path / "tasks.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    got = list(past_tasks.read_jsonl(path))
    assert [(t.title, t.production) for t in got] == [
        ("Remind the team that the budget review moves to Thursday because the CFO is…", long),
        ("Short note on the printer", "Short note on the printer"), ("Oven plan", "1. Quotes by May"),
        ("Given", long)]
    assert len(got[0].title) <= 80
    assert got[0].source_key == f"import-{content_id(['text', long])}"  # as before the title changed


@pytest.mark.parametrize("content, message", [
    (b"", "the file is empty"),
    (b"  \n\n", "the file is empty"),
    (codecs.BOM_UTF16_LE + '{"content": "x"}'.encode("utf-16-le"), "UTF-16, not UTF-8"),
    ('{"content": "café"}\n'.encode("latin-1"), "is not UTF-8"),
    (b"hello world\n", "unknown format"),
    (b'[{"name": "x"}]', "unknown format (a JSON list whose first item has the keys ['name']"),
    (b'{"foo": 1}\n', "unknown format"),
])
def test_bad_files_get_one_clear_message(tmp_path, content, message):
    path = tmp_path / "export.json"
    path.write_bytes(content)
    with pytest.raises(InvalidInput, match=message.replace("(", r"\(").replace("[", r"\[")):
        detect.detect(path)


def test_a_first_record_that_fits_no_format_is_an_invalid_record_of_the_format_the_next_ones_fit(tmp_path):
    """Detection read the first record alone: one bad row at the top made the whole file "unknown format"."""
    rows = tmp_path / "notes.jsonl"
    rows.write_text("\n".join([json.dumps({"id": "n1", "text_body": "Bought oat milk."}), "not json",
                               *(json.dumps({"id": f"n{i}", "content": f"Note {i}."}) for i in range(2, 401))]))
    assert detect.detect(rows) == detect.Detected("memories-jsonl", "jsonl")
    first, second, *rest = items(rows)
    assert (first.where, second.where) == ("line 1 ('n1')", "line 2") and "content" in first.problem
    assert len(rest) == 399 and rest[0].content == "Note 2."
    chats = tmp_path / "chats.json"
    chat = {"messages": [{"role": "user", "content": "Hi", "created_at": 1700000000}]}
    chats.write_text(json.dumps(["a note", {"text_body": "x"}, chat, chat, chat]))
    assert detect.detect(chats) == detect.Detected("openai-jsonl", "json")
    # The first records choose: a memory row after them is read as an invalid conversation.
    later = tmp_path / "later.jsonl"
    later.write_text("\n".join([json.dumps({"messages": []})] * detect.DETECT_RECORDS + ['{"content": "x"}'] * 30))
    assert detect.detect(later) == detect.Detected("openai-jsonl", "jsonl")


def test_an_unknown_format_lists_every_format_import_takes(tmp_path):
    """The list left out workbench-archive: it came from the record formats alone, not the one list of
    formats `workbench import` and the Import page take."""
    from core.usecases import IMPORT_FORMATS

    path = tmp_path / "car-export.json"
    path.write_text('{"instance": "default", "chain_id": "car", "document": "{}"}')
    with pytest.raises(InvalidInput) as e:
        detect.detect(path)
    assert str(e.value).endswith(f"give --format, one of {', '.join(f for f in IMPORT_FORMATS if f != 'auto')}")
    assert "workbench-archive" in str(e.value)
    with pytest.raises(InvalidInput) as e:
        detect.shaped(path, "yaml")
    assert str(e.value) == f"unknown format 'yaml': use one of {', '.join(IMPORT_FORMATS)}"


def test_truncated_json_and_bad_records_are_reported_with_their_place(tmp_path):
    whole = (DATA / "claude_conversations.json").read_text()
    cut = tmp_path / "cut.json"
    cut.write_text(whole[: whole.index('"uuid": "1b6e2c10-0000-4000-8000-0000000000c2"') + 20])
    first, broken = items(cut)
    assert isinstance(first, ImportedConversation)
    assert broken.where == "conversation 2" and "truncated" in broken.problem
    lines = tmp_path / "chat.jsonl"
    lines.write_text("\n".join(json.dumps(v) for v in [
        {"messages": [{"role": "user", "content": "no time anywhere"}]},
        {"created_at": "2999-01-01T00:00:00Z", "messages": [{"role": "user", "content": "hi"}]},
        {"created_at": "yesterday", "messages": [{"role": "user", "content": "hi"}]},
        {"created_at": 1700000000, "messages": [{"role": "robot", "content": "beep"}]},
        {"created_at": 1700000000, "messages": [{"role": "assistant", "content": "  "}]}]))
    problems = [r.line() for r in items(lines)]
    assert problems == [
        "line 1: no timestamp: give the conversation a created_at or each message a timestamp",
        "line 2: created_at 2999-01-01 00:00 is in the future: check the export's clock or zone",
        "line 3: created_at 'yesterday' is not a time: ISO 8601 like 2024-05-01T12:30:00Z, or Unix seconds "
        "like 1714566600",
        "line 4: message role 'robot' is not user, assistant, system or tool",
        "line 5: no user or assistant message with text (empty, hidden, system or tool only)"]
    # A line's JSON error names its place in that line, not the parser's "line 2 column 1" of it.
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"content": "b" "x": 1}\n{"content": "c"\n')
    assert [r.line() for r in items(broken)] == [
        "line 1: not valid JSON (Expecting ',' delimiter at character 17)",
        "line 2: not valid JSON (Expecting ',' delimiter at the end of the line)"]


def test_parse_time_reads_what_exports_write():
    assert parse_time(1714550401.5, "t") == datetime.fromtimestamp(1714550401.5, UTC)
    assert parse_time(1714550401500, "t") == datetime.fromtimestamp(1714550401.5, UTC)  # milliseconds
    assert parse_time("2024-07-20T01:44:20-07:00", "t") == datetime(2024, 7, 20, 8, 44, 20, tzinfo=UTC)
    with pytest.raises(ValueError, match="t is missing"):
        parse_time(None, "t")


READERS = [openai_chat.read, chatgpt.read, claude.read, locomo.read, memories.read_jsonl, memories.read_json,
           memories.read_csv, past_tasks.read_jsonl, past_tasks.read_folder, workbench_chain.read,
           source.json_lines, source.json_items]


@pytest.mark.parametrize("fn", READERS, ids=lambda f: f"{f.__module__}.{f.__name__}")
def test_readers_are_generators(fn):
    assert inspect.isgeneratorfunction(fn)


class _NoWholeReads(io.FileIO):
    """A file that fails when asked for all of itself, and records the largest chunk asked for."""

    largest = 0

    def readall(self):
        raise AssertionError("the whole file was read")

    def readinto(self, buffer):
        type(self).largest = max(type(self).largest, len(buffer))
        return super().readinto(buffer)


@pytest.mark.parametrize("name", [
    "openai_chat.jsonl", "chatgpt_conversations.json", "claude_conversations.json", "locomo_mini.json",
    "mem0_export.json", "memories.jsonl", "memories.csv", "past_tasks.jsonl", "workbench_chain.json"])
def test_readers_never_read_the_whole_file(monkeypatch, name):
    real = source.open_binary

    def spied(path):
        f = real(path)
        raw = _NoWholeReads(f.name)
        raw.seek(f.tell())
        f.close()
        return io.BufferedReader(raw)

    monkeypatch.setattr(source, "open_binary", spied)
    for module in (memories,):
        monkeypatch.setattr(module, "open_binary", spied)
    _NoWholeReads.largest = 0
    assert items(DATA / name)
    assert 0 < _NoWholeReads.largest <= 1 << 20


def test_a_large_file_is_validated_in_bounded_memory(tmp_path):
    path = tmp_path / "big.jsonl"
    line = {"created_at": 1700000000, "messages": [{"role": "user", "content": "x" * 400},
                                                   {"role": "assistant", "content": "y" * 400}]}
    with path.open("w") as f:
        for i in range(6000):
            f.write(json.dumps({**line, "id": f"c{i}"}) + "\n")
    found = detect.detect(path)
    tracemalloc.start()
    preview = validate(detect.reader(path, found), path, found, "0" * 64)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert preview.counts.conversations == 6000 and path.stat().st_size > 5_000_000
    assert peak < 1_000_000  # a few records at a time, whatever the file's size


def test_a_memory_of_an_unknown_kind_is_named_by_the_field_the_file_uses(tmp_path):
    path = tmp_path / "memories.csv"
    path.write_text("content,kind\nI moved to Lisbon,fact\nAllergic to penicillin,\nLikes tea,insight\n")
    bad, plain, insight = items(path)
    assert bad.line() == ("line 2: \"kind\" 'fact' is not one of observation, insight, obs_customized, "
                          "conversation: change it, or leave it out for an observation")
    assert (plain.memory_kind, insight.memory_kind) == ("observation", "insight")


def test_a_broken_record_is_named_as_its_export_names_it():
    """A report that says only "conversation 7" leaves the user counting through their export."""
    from core.importing.records import named

    assert named("conversation 7", {"title": "Lisbon  trip\nplans", "mapping": {}}) == \
        "conversation 7 ('Lisbon trip plans')"
    assert named("conversation 2", {"uuid": "a1b2", "name": ""}) == "conversation 2 ('a1b2')"
    assert named("line 4", {"id": 12, "content": "x"}) == "line 4 ('12')"
    assert named("line 5", {"content": "x"}) == "line 5" and named("line 6", ["x"]) == "line 6"
    assert named("conversation 1", {"title": "x" * 80}).endswith("xxx…')")


T0 = 1714550400.0  # 2024-05-01 08:00 UTC
NO_TIMES = [("user", "How do I feed a sourdough starter?", None),
            ("assistant", "Flour and water, daily.", None),
            ("user", "And in the fridge?", None), ("assistant", "Once a week.", None)]


def test_a_chatgpt_export_without_message_times_is_dated_from_the_conversation_else_the_file(tmp_path):
    """It was refused ("no timestamp") when its conversations had no time either, and a conversation
    with only `update_time` did not use it; now dated from the conversation's time, else the file's, in
    the file's order, and the preview says so once."""
    path = write_export(tmp_path / "conversations.json", [
        conversation("Sourdough", "c-1", NO_TIMES, create_time=T0, update_time=T0 + 600),
        conversation("Updated only", "c-2", NO_TIMES[:2], update_time=T0 + 600),
        conversation("Bike chain", "c-3", NO_TIMES[:2])])
    found = detect.detect(path)
    file_at = datetime(2024, 6, 1, 9, 30, tzinfo=UTC)
    sourdough, updated, bike = list(detect.reader(path, found, undated_at=file_at)())
    step = timedelta(milliseconds=1)
    start = datetime.fromtimestamp(T0, UTC)
    assert [m.at for m in sourdough.messages] == [start + i * step for i in range(4)]
    assert updated.messages[0].at == datetime.fromtimestamp(T0 + 600, UTC)
    assert [m.at for m in bike.messages] == [file_at, file_at + step]
    assert (sourdough.dated_by, updated.dated_by, bike.dated_by) == ("conversation", "conversation", "file")
    preview = validate(detect.reader(path, found, undated_at=file_at), path, found, "0" * 64,
                       undated=(file_at, "file"))
    assert (preview.invalid, preview.times_assumed, preview.undated, preview.undated_at) == (0, 3, 1, file_at)
    assert preview.notes() == [(
        "Times assumed: 3 conversations give no time for their messages, so they are dated from their "
        "conversation's own time, or (1 without one) from the file's last change, 2024-06-01 09:30:00 UTC, a "
        "millisecond apart in the file's order.")]
    # Without a time to give (the reader alone), such a conversation is still refused, saying why.
    assert "no timestamp" in list(detect.reader(path, found)())[2].problem


def test_a_conversation_without_any_id_or_time_keeps_its_chain_whatever_the_files_time(tmp_path):
    """Its chain id is a hash of its content: with the file's time in it, a copy of the file (or the same
    upload on another day) would have made a second chain."""
    path = write_export(tmp_path / "conversations.json", [conversation("Bike chain", None, NO_TIMES[:2])])
    found = detect.detect(path)
    ids = {next(detect.reader(path, found, undated_at=datetime(2024, month, 1, tzinfo=UTC))()).chain_id
           for month in (1, 2)}
    assert len(ids) == 1


def test_the_files_time_is_its_last_change_unless_that_is_in_the_future(tmp_path):
    path = tmp_path / "conversations.json"
    path.write_text("[]")
    now = datetime(2030, 1, 1, tzinfo=UTC)
    os.utime(path, (now.timestamp() - 3600, now.timestamp() - 3600))
    assert source.file_time(path, now) == (now - timedelta(hours=1), "file")
    os.utime(path, (now.timestamp() + 3600, now.timestamp() + 3600))
    assert source.file_time(path, now) == (now, "import")


@pytest.mark.parametrize("system_at, tool_at", [(None, None), (T0, T0 + 100), (T0 - 50, T0 + 5)])
def test_kept_system_and_tool_messages_move_no_other_messages_time(tmp_path, system_at, tool_at):
    """A kept system message took the first user message's time: imported again with system messages
    kept, it tied the stored user message's time, and the chain's order by time could flip. Now the user
    and assistant messages have the same times kept or not, and each system or tool message a time of its
    own strictly between its neighbours, in the source's order."""
    path = write_export(tmp_path / "conversations.json", [conversation("Pirate", "c-1", [
        ("system", "Answer like a pirate.", system_at), ("user", "Capital of France?", T0),
        ("tool", "search: capital of France", tool_at), ("assistant", "Arr, Paris.", T0 + 5),
        ("user", "And Spain?", None), ("assistant", "Madrid, matey.", None)], create_time=T0)])
    plain, kept = (items(path, include_system=keep)[0] for keep in (False, True))
    said = [m.at for m in kept.messages if not m.place.startswith("system-")]
    assert said == [m.at for m in plain.messages]
    assert [m.content[:8] for m in kept.messages] == ["[system]", "Capital ", "[tool] s", "Arr, Par",
                                                      "And Spai", "Madrid, "]
    times = [m.at for m in kept.messages]
    assert all(a < b for a, b in pairwise(times)), times
    if system_at is not None and system_at < T0:
        assert times[0] == datetime.fromtimestamp(system_at, UTC)  # its own time, where it fits


def test_system_messages_fit_between_messages_a_millisecond_apart(tmp_path):
    """Messages with no times of their own are a millisecond apart: three tool messages between two of
    them still fall strictly between, in order."""
    tools = [("tool", f"call {i}", None) for i in range(3)]
    path = write_export(tmp_path / "conversations.json", [conversation(
        "Tools", "c-1", [NO_TIMES[0], *tools, NO_TIMES[1]], create_time=T0)])
    times = [m.at for m in items(path, include_system=True)[0].messages]
    assert times[0] == datetime.fromtimestamp(T0, UTC) and times[-1] == times[0] + timedelta(milliseconds=1)
    assert all(a < b for a, b in pairwise(times)), times


def test_nul_characters_are_replaced_and_counted(tmp_path):
    """Postgres cannot store NUL: it became U+FFFD in the index without a word (and stayed NUL in the
    chain's copy). Now replaced as the file is read, counted per message, and said once."""
    path = write_export(tmp_path / "conversations.json", [conversation("Pasted log", "c-1", [
        ("user", "my log: abc\x00def\x00", T0), ("assistant", "That \x00 is a NUL byte.", T0 + 5),
        ("user", "Thanks", T0 + 10)])])
    [chat] = items(path)
    assert [m.content for m in chat.messages] == ["my log: abc\ufffddef\ufffd", "That \ufffd is a NUL byte.",
                                                  "Thanks"]
    assert [m.nul_replaced for m in chat.messages] == [True, True, False]
    found = detect.detect(path)
    preview = validate(detect.reader(path, found), path, found, "0" * 64)
    assert preview.nul_replaced == 2 and preview.notes() == [(
        "2 messages held NUL characters (U+0000), which Postgres cannot store: each is stored as "
        "U+FFFD (\ufffd) instead.")]
    notes = tmp_path / "memories.jsonl"
    notes.write_text(json.dumps({"content": "code\x00word", "created_at": "2024-01-01"}) + "\n")
    [memory] = items(notes)
    assert memory.content == "code\ufffdword" and memory.nul_replaced
    found = detect.detect(notes)
    assert validate(detect.reader(notes, found), notes, found, "0" * 64).notes() == [(
        "1 memory held NUL characters (U+0000), which Postgres cannot store: each is stored as "
        "U+FFFD (\ufffd) instead.")]


def test_a_user_message_of_attachments_alone_is_a_line_naming_them_or_left_out(tmp_path):
    """A photo sent without text left two answers following each other, and was counted nowhere."""
    assert chats.attachment_line(["IMG_4032.jpeg"]) == "[photo: IMG_4032.jpeg]"
    assert chats.attachment_line(["receipt.PNG", "notes.pdf"]) == "[photo: receipt.PNG] [file: notes.pdf]"
    assert chats.attachment_line(["image_url"]) is None and chats.attachment_line(["image_asset_pointer"]) is None
    line = {"created_at": 1710000000, "messages": [
        {"role": "user", "content": "Is this ripe?"}, {"role": "assistant", "content": "Show me."},
        {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:image/png;base64,AA"}}]},
        {"role": "assistant", "content": "Yes, eat it today."},
        {"role": "user", "content": [{"type": "file", "file_name": "plan.pdf"}]},
        {"role": "assistant", "content": "The plan reads well."}]}
    path = tmp_path / "chat.jsonl"
    path.write_text(json.dumps(line) + "\n")
    (conv,) = items(path)
    assert [m.content for m in conv.messages] == ["Is this ripe?", "Show me.", "Yes, eat it today.",
                                                 "[file: plan.pdf]", "The plan reads well."]
    assert (conv.attachment_only, conv.attachment_only_left_out) == (1, 1)
    # The line moves no other message's place, and is no part of the hash that knows a conversation without
    # an id: the file imported before lines were kept finds the same chain and messages.
    assert [m.place for m in conv.messages] == ["0", "1", "2", "attachment-4", "3"]
    without = {**line, "messages": [m for m in line["messages"] if isinstance(m["content"], str)]}
    path.write_text(json.dumps(without) + "\n")
    (before,) = items(path)
    assert before.chain_id == conv.chain_id
    assert [(m.place, m.at) for m in before.messages] == [(m.place, m.at) for m in conv.messages
                                                         if m.place != "attachment-4"]
