"""The memory bank's pure rules: its defaults (max_entries=6, compression_threshold=6), auto-summaries,
validation, rule-based compression."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime

import pytest
from pydantic import ValidationError

from core.bank import BankConfig, MemoryEntry, MemoryQuery, MemorySummary
from core.bank.compress import _parse, _prompt, compress, rule_summary
from core.bank.match import case_blind_pattern
from core.errors import InvalidInput, explain_validation
from core.llm import NoLLM
from core.usecases import default_bank


def entry(step: int, **kw) -> MemoryEntry:
    return MemoryEntry(skill_name="CommandSkill", thinking=f"think {step}", command=f"cmd{step}",
                       result=f"result {step}", step_number=step, **kw)


def test_defaults():
    bank = default_bank()  # a bank without a Workbench at hand: nothing connects until first used
    assert (bank.max_entries, bank.compression_threshold) == (6, 6)
    assert BankConfig().model_dump() == {"max_entries": 6, "compression_threshold": 6}
    custom = default_bank(max_entries=10, compression_threshold=5)
    assert (custom.max_entries, custom.compression_threshold) == (10, 5)
    q = MemoryQuery()
    got = (q.keywords, q.min_importance, q.max_results, q.tags, q.date_from, q.date_to)
    assert got == ([], 0.0, 10, [], None, None)
    e = MemoryEntry(skill_name="CommandSkill", thinking="Analyzing directory structure...", command="ls -la",
                    result="Directory listing with 15 files", importance=0.7)
    assert (e.importance, e.tags, e.step_number) == (0.7, [], 0)
    assert e.id and e.timestamp.tzinfo is not None
    s = MemorySummary(title="t", content="c")
    assert s.source_entries == [] and s.tags == []


def test_entry_without_summary_gets_one_from_its_parts():
    e = MemoryEntry(thinking="Need to check current directory. Then list it.", command="pwd",
                    result="/home/user/project")
    assert e.summary == "Need to check current directory: ran `pwd` → /home/user/project"
    assert MemoryEntry(result="only a result").summary == "→ only a result"
    assert MemoryEntry(thinking="only thinking").summary == "only thinking"
    assert MemoryEntry(command="ls", summary="given").summary == "given"
    long = MemoryEntry(result="word " * 200)
    assert len(long.summary) <= 240 and long.summary.endswith("…")


@pytest.mark.parametrize("kwargs, field", [
    ({"importance": 1.5, "command": "x"}, "importance"),
    ({"importance": -0.1, "command": "x"}, "importance"),
    ({"id": "bad id!", "command": "x"}, "id"),
    ({"tags": [""] * 0 + ["x" * 65], "command": "x"}, "tags"),
    ({"unknown": 1, "command": "x"}, "unknown"),
])
def test_entry_validation_names_the_field(kwargs, field):
    with pytest.raises(ValidationError) as err:
        MemoryEntry(**kwargs)
    assert explain_validation(err.value).startswith(f"invalid input — {field}")


def test_empty_entry_and_bad_query_are_refused():
    with pytest.raises(ValidationError, match="at least one of thinking"):
        MemoryEntry(skill_name="CommandSkill")
    with pytest.raises(ValidationError, match="max_results"):
        MemoryQuery(max_results=0)
    with pytest.raises(ValidationError, match="date_from must not be after date_to"):
        MemoryQuery(date_from=datetime(2024, 2, 1, tzinfo=UTC), date_to=datetime(2024, 1, 1, tzinfo=UTC))
    with pytest.raises(ValidationError, match="extra"):
        MemoryQuery(keyword=["x"])
    with pytest.raises(ValidationError, match="max_entries"):
        default_bank(max_entries=1)
    with pytest.raises(InvalidInput, match="bank name"):
        default_bank("no spaces allowed")


def test_due_is_the_oldest_half_when_either_threshold_is_reached():
    bank = default_bank(max_entries=6, compression_threshold=6)
    live = [entry(i) for i in range(1, 7)]
    assert bank._due(live[:5]) == []
    assert [e.step_number for e in bank._due(live)] == [1, 2, 3]
    small_max = default_bank(max_entries=4, compression_threshold=6)
    assert [e.step_number for e in small_max._due(live[:4])] == [1, 2]
    lower_threshold = default_bank(max_entries=10, compression_threshold=5)
    assert [e.step_number for e in lower_threshold._due(live[:5])] == [1, 2]


def test_rule_summary_names_the_steps_and_keeps_each_summary():
    title, content = rule_summary([entry(3), entry(4), entry(5)])
    assert title == "Summary of 3 steps (steps 3–5)"
    assert content.split(" | ")[0] == "Step 3 (CommandSkill): think 3: ran `cmd3` → result 3"
    assert content.count(" | ") == 2


def test_a_step_that_names_no_skill_reads_as_a_step():
    """skill_name is optional (the seed lists it among the entry's attributes, none of them required):
    a step without one, or with a blank one, is "Step 2: …" in the index, summaries and prompts, never
    "step 2: …" after a missing name nor "Step 2 (step)"."""
    blank = MemoryEntry(skill_name="   ", command="ls -la", result="15 files", step_number=2)
    assert blank.skill_name == "" and MemoryEntry(command="pwd").skill_name == ""
    assert blank.search_text().splitlines()[0] == "Step 2: ran `ls -la` → 15 files"
    assert entry(3).search_text().splitlines()[0] == "CommandSkill step 3: think 3: ran `cmd3` → result 3"
    _, content = rule_summary([entry(1), blank])
    assert content == "Step 1 (CommandSkill): think 1: ran `cmd1` → result 1 | Step 2: ran `ls -la` → 15 files"
    assert "Step 2 (importance 0.5)" in _prompt([blank])[-1].content


def test_offline_compression_is_rule_based_and_says_so():
    done = compress([entry(1), entry(2)], NoLLM(), "m")
    assert done.method == "rule" and "no LLM configured" in done.note
    assert done.title == "Summary of 2 steps (steps 1–2)"


def test_llm_reply_parsing():
    assert _parse('{"title": "T", "content": "C"}') == ("T", "C")
    assert _parse('Sure! {"title": "T", "content": "C"} done') == ("T", "C")
    for bad in ('not json', '{"title": "T"}', '{"title": "", "content": "C"}', '[1, 2]'):
        with pytest.raises((ValueError, AttributeError)):
            _parse(bad)


def test_case_blind_patterns_hold_each_letters_case_forms_and_escape_symbols():
    assert case_blind_pattern("Café") == "[Cc][Aa][Ff][Éé]"
    assert case_blind_pattern("ς") == "[Σςσ]"  # a final sigma matches the capital and the other sigma
    assert case_blind_pattern("a+b (1.0)*") == "[Aa]\\+[Bb]\\ \\(1\\.0\\)\\*"
    assert case_blind_pattern("→ 世界") == "→\\ 世界"  # no case: the character itself
    assert case_blind_pattern("ok", whole=True) == "^[Oo][Kk]$"
    assert re.fullmatch(case_blind_pattern("ÉTÉ", whole=True), "été")  # the same reading as Postgres's ARE here


def test_a_letter_that_folds_to_two_matches_them_and_they_it():
    assert case_blind_pattern("ß") == "(?:[ßẞ]|[Ss][Ss])"
    for keyword, text in [("Größe", "GRÖSSE"), ("strasse", "Straße"), ("STRASSE", "straße"), ("file", "ﬁle"),
                          ("GRÖẞE", "größe")]:
        assert re.fullmatch(case_blind_pattern(keyword, whole=True), text), (keyword, text)
    assert not re.search(case_blind_pattern("strasse"), "Strase")


def test_a_date_alone_is_the_whole_day():
    q = MemoryQuery(date_from="2024-05-03", date_to=date(2024, 5, 3))
    assert (q.date_from, q.date_to) == (datetime(2024, 5, 3, tzinfo=UTC),
                                        datetime(2024, 5, 3, 23, 59, 59, 999999, tzinfo=UTC))
    assert MemoryQuery(date_to="2024-05-03T10:00:00+02:00").date_to == datetime(2024, 5, 3, 8, tzinfo=UTC)
    assert MemoryQuery(date_to="2024-05-03T10:00:00").date_to == datetime(2024, 5, 3, 10, tzinfo=UTC)
    with pytest.raises(ValidationError, match="date_from must not be after date_to"):
        MemoryQuery(date_from="2024-05-04", date_to="2024-05-03")
