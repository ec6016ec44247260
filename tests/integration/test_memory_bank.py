"""The memory bank on the real embedded Postgres: compression, queries, persistence, LLM compression
against the local OpenAI-compatible server, concurrency, clearing."""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime, timedelta

import pytest

from core.bank import SUMMARY_SKILL, MemoryBank, MemoryEntry, MemoryQuery, list_banks
from core.errors import InvalidInput, NotFound
from core.retrieval.hybrid import SearchRequest, hybrid_search
from core.runtime import Workbench

T0 = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)


def step(i: int, **kw) -> MemoryEntry:
    kw.setdefault("thinking", f"Thinking about step {i}")
    kw.setdefault("command", f"echo step{i}")
    kw.setdefault("result", f"printed step{i}")
    return MemoryEntry(skill_name="CommandSkill", timestamp=T0 + timedelta(minutes=i), **kw)


def fill(bank: MemoryBank, n: int, **kw) -> list:
    return [bank.add_entry(step(i, **kw)) for i in range(1, n + 1)]


def test_compresses_the_oldest_half_when_the_threshold_is_reached(workbench, instance):
    bank = MemoryBank(workbench, instance, "deploy")
    results = fill(bank, 5)
    assert all(r.compression is None for r in results)
    assert [r.entry.step_number for r in results] == [1, 2, 3, 4, 5]
    sixth = bank.add_entry(step(6))
    event = sixth.compression
    assert event is not None and (event.entries_compressed, event.live_before, event.live_after) == (3, 6, 3)
    assert event.method == "rule" and "no LLM configured" in event.note
    [summary] = bank.get_summaries()
    oldest = [r.entry.id for r in results[:3]]
    assert summary.source_entries == oldest and summary.id == event.summary_id
    assert summary.title == "Summary of 3 steps (steps 1–3)"
    assert summary.period_start == T0 + timedelta(minutes=1)
    assert summary.period_end == T0 + timedelta(minutes=3)
    assert [e.step_number for e in bank.get_recent_entries()] == [4, 5, 6]
    assert [e.step_number for e in bank.get_recent_entries(2)] == [5, 6]
    everything = bank.get_all_memories()
    assert [e.step_number for e in everything] == [1, 2, 3, 4, 5, 6]  # compressed and live
    stats = bank.get_stats()
    expected = {"live_entries": 3, "compressed_entries": 3, "total_entries": 6, "summaries": 1,
                "compressions": 1, "max_entries": 6, "compression_threshold": 6, "pending_index": 0}
    assert {k: stats[k] for k in expected} == expected
    assert stats["skills"] == {"CommandSkill": 6}
    # Three more entries reach the threshold again: the oldest three live ones (4, 5, 6) go next.
    fill_more = [bank.add_entry(step(i)) for i in (7, 8, 9)]
    assert fill_more[-1].compression is not None
    second = bank.get_summaries()[1]
    assert second.source_entries == [r.entry.id for r in results[3:]] + [sixth.entry.id]
    assert len(bank.get_compression_events()) == 2


def test_seed_example_thresholds(workbench, instance):
    bank = MemoryBank(workbench, instance, "custom", max_entries=10, compression_threshold=5)
    results = fill(bank, 5)
    assert results[-1].compression.entries_compressed == 2
    small = MemoryBank(workbench, instance, "small-max", max_entries=4, compression_threshold=6)
    assert fill(small, 4)[-1].compression.entries_compressed == 2


def test_query_filters_and_order(workbench, instance):
    bank = MemoryBank(workbench, instance, "q", max_entries=100, compression_threshold=100)
    bank.add_entry(step(1, thinking="Check the Directory structure", importance=0.3, tags=["filesystem"]))
    bank.add_entry(step(2, thinking="Find the current location", importance=0.8, tags=["Location"]))
    bank.add_entry(step(3, thinking="Install packages", importance=0.9, tags=["python"]))
    bank.add_entry(step(4, thinking="Another directory listing", importance=0.8))

    def steps(**kw) -> list[int]:
        return [e.step_number for e in bank.get_relevant_memories(MemoryQuery(**kw))]

    assert steps(keywords=["DIRECTORY", "location"]) == [4, 2, 1]  # any keyword, importance then newest
    assert steps(keywords=["directory", "location"], min_importance=0.5) == [4, 2]
    assert steps(tags=["location"]) == [2]  # tags compare case-insensitively
    assert steps(max_results=2) == [3, 4]
    assert steps(date_from=T0 + timedelta(minutes=2), date_to=T0 + timedelta(minutes=3)) == [3, 2]
    assert steps(keywords=["nothing-like-this"]) == []
    with pytest.raises(InvalidInput):
        bank.get_relevant_memories({"keywords": ["x"]})


def test_summaries_are_queried_and_searchable(workbench, instance):
    bank = MemoryBank(workbench, instance, "sum")
    fill(bank, 2, result="nginx returned 502 bad gateway", importance=0.9, tags=["nginx"])
    for i in range(3, 7):
        bank.add_entry(step(i, importance=0.2))
    [summary] = bank.get_summaries()
    found = bank.get_relevant_memories(MemoryQuery(keywords=["gateway"]))
    # The summary stands for the compressed entries: they are not returned themselves.
    assert [(e.id, e.skill_name) for e in found] == [(summary.id, SUMMARY_SKILL)]
    assert found[0].importance == 0.9 and found[0].tags == ["nginx"]
    overlapping = MemoryQuery(tags=["nginx"], date_from=T0 + timedelta(minutes=2))  # within its period
    assert bank.get_relevant_memories(overlapping)[0].id == summary.id
    hits = hybrid_search(workbench.pool(), workbench.embedder, SearchRequest(
        query="bad gateway", instance=instance, kinds=["bank_summary"], search_type="text")).results
    assert [h.memory.id for h in hits] == [f"bs-{summary.id}"]
    meta = hits[0].memory.metadata
    assert meta["bank"] == "sum" and meta["source_entries"] == summary.source_entries
    entries = hybrid_search(workbench.pool(), workbench.embedder, SearchRequest(
        query="gateway", instance=instance, kinds=["bank_entry"], search_type="text")).results
    assert len(entries) == 2


def test_persisted_across_a_restart(settings, instance):
    first = Workbench(settings)
    try:
        fill(MemoryBank(first, instance, "keep", max_entries=8, compression_threshold=4), 5)
    finally:
        first.close()
    again = Workbench(settings)  # a new process would build exactly this
    try:
        bank = MemoryBank.open(again, instance, "keep")
        assert (bank.max_entries, bank.compression_threshold) == (8, 4)
        stats = bank.get_stats()
        assert (stats["total_entries"], stats["live_entries"], stats["summaries"]) == (5, 3, 1)
        assert bank.add_entry(step(9)).entry.step_number == 6  # numbering goes on
        assert [b.name for b in list_banks(again, instance)] == ["keep"]
    finally:
        again.close()
    with pytest.raises(NotFound):
        MemoryBank.open(Workbench(settings), instance, "never-made")


def test_llm_compression_through_the_http_server(llm_settings, fake_llm, instance):
    wb = Workbench(llm_settings)
    try:
        bank = MemoryBank(wb, instance, "llm")
        fake_llm.reply(json.dumps({"title": "Set up the project",
                                   "content": "Checked the folder and ran echo."}),
                       total_tokens=77, model="fast-model")
        results = fill(bank, 6)
        event = results[-1].compression
        assert (event.method, event.model, event.tokens, event.note) == ("llm", "fast-model", 77, "")
        [summary] = bank.get_summaries()
        assert (summary.title, summary.content, summary.method) == (
            "Set up the project", "Checked the folder and ran echo.", "llm")
        [request] = fake_llm.chat_requests
        assert request["body"]["response_format"] == {"type": "json_object"}
        assert request["body"]["model"] == llm_settings.model_fast
        assert "Step 1 (CommandSkill" in request["body"]["messages"][-1]["content"]
    finally:
        wb.close()


def test_llm_failures_fall_back_to_rules(llm_settings, fake_llm, instance):
    wb = Workbench(llm_settings)
    try:
        bank = MemoryBank(wb, instance, "fallback")
        fake_llm.reply("I cannot produce JSON today")
        event = fill(bank, 6)[-1].compression
        assert event.method == "rule" and "not the asked JSON" in event.note
        fake_llm.fail(500, times=3)
        event = [bank.add_entry(step(i)) for i in (7, 8, 9)][-1].compression
        assert event.method == "rule" and event.note.startswith("LLM compression failed")
    finally:
        wb.close()


def test_concurrent_writers_never_compress_an_entry_twice(workbench, instance):
    bank_args = (workbench, instance, "busy")
    errors = []

    def writer(k: int) -> None:
        try:
            bank = MemoryBank(*bank_args)
            for i in range(4):
                bank.add_entry(step(k * 10 + i))
        except Exception as e:  # surfaced below
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    bank = MemoryBank(*bank_args)
    stats = bank.get_stats()
    assert stats["total_entries"] == 16 and stats["live_entries"] < 6
    sources = [i for s in bank.get_summaries() for i in s.source_entries]
    assert len(sources) == len(set(sources)) == stats["compressed_entries"]
    steps = [e.step_number for e in bank.get_all_memories()]
    assert len(set(steps)) == 16


def test_duplicate_ids_clear_and_delete(workbench, instance):
    bank = MemoryBank(workbench, instance, "tmp")
    first = fill(bank, 6)[0].entry
    with pytest.raises(InvalidInput, match="already exists"):
        bank.add_entry(MemoryEntry(id=first.id, command="again"))
    assert bank.clear() == 6
    assert bank.get_all_memories() == bank.get_summaries() == bank.get_compression_events() == []
    assert workbench.index.count(instance) == 0
    assert bank.add_entry(step(1)).entry.step_number == 1  # numbering restarts after a clear
    assert bank.delete() is True and list_banks(workbench, instance) == []
    assert workbench.index.count(instance) == 0


def test_an_add_without_settings_keeps_the_banks_own(workbench, instance):
    """Every add through the use case (CLI, HTTP, MCP) passed 6 and 6 unless told otherwise, which reset a
    bank made with 10 and 10: it compressed at its 6th entry, without a note."""
    from core import usecases as uc

    def add(n: int, **settings):
        return uc.bank_add(workbench, uc.BankAdd(instance=instance, bank="cfg", **settings,
                                                 entry=uc.MemoryEntry(result=f"step {n}")))

    add(1, max_entries=10, compression_threshold=10)
    assert not any(add(n).compression for n in range(2, 10))
    stats = uc.bank_stats(workbench, uc.BankRef(instance=instance, bank="cfg"))
    assert (stats.max_entries, stats.compression_threshold, stats.live_entries) == (10, 10, 9)
    assert add(10).compression is not None  # the 10th, as configured
    assert add(11, max_entries=20, compression_threshold=20).compression is None
    stats = uc.bank_stats(workbench, uc.BankRef(instance=instance, bank="cfg"))
    assert (stats.max_entries, stats.compression_threshold) == (20, 20)  # given: the bank's now
