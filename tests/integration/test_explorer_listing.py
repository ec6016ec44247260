"""The explorer's listing and search over an imported ChatGPT export, as a curator uses them: every memory
the filters keep, paged by time with a true count (the last page, past it, both orders), days whole and
included; a search that shows every stored copy of a repeated message and says when it stopped at its
size; the selection as JSON lines; and deleting one message of an imported conversation keeps the
conversation's own title."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime

import pytest

from core import usecases as uc
from tests.support.chatgpt_export import conversation, write_export

DAY0 = datetime(2025, 3, 1, 9, tzinfo=UTC).timestamp()
DAYS = 23  # one conversation a day: 46 messages, 3 pages of 20 (the last holding 6)
REPEATS = 5
REPEATED = "I work at Acme Corp as a data engineer."


@pytest.fixture
def imported(workbench, instance, tmp_path):
    talks = [conversation(f"Day {d} notes", f"day-{d}", [
        ("user", f"On day {d} I planted {d} quince trees.", DAY0 + d * 86400),
        ("assistant", f"Noted: {d} quince trees.", DAY0 + d * 86400 + 30)]) for d in range(DAYS)]
    talks += [conversation(f"Work chat {i}", f"work-{i}", [
        ("user", REPEATED, DAY0 + DAYS * 86400 + i * 600),
        ("assistant", "Thanks for telling me.", DAY0 + DAYS * 86400 + i * 600 + 30)]) for i in range(REPEATS)]
    uc.import_file(workbench, uc.ImportFile(path=write_export(tmp_path / "conversations.json", talks),
                                            instance=instance))
    return workbench


def browse(wb, instance, **kw) -> uc.MemoryPage:
    return uc.memory_browse(wb, uc.MemoryBrowse(instance=instance, **kw))


def test_pages_through_every_memory_with_a_true_count_at_both_edges(imported, instance):
    messages = 2 * (DAYS + REPEATS)
    first = browse(imported, instance, kinds=["user", "assistant"])
    assert (first.total, first.pages, len(first.hits)) == (messages, 3, 20)
    last = browse(imported, instance, kinds=["user", "assistant"], page=3)
    assert len(last.hits) == messages - 40
    past = browse(imported, instance, kinds=["user", "assistant"], page=4)
    assert past.hits == [] and past.total == messages and past.page == 4
    newest = [h.id for p in (1, 2, 3) for h in browse(imported, instance, kinds=["user", "assistant"], page=p).hits]
    oldest = [h.id for p in (1, 2, 3)
              for h in browse(imported, instance, kinds=["user", "assistant"], page=p, order="oldest").hits]
    assert len(set(newest)) == messages and oldest == newest[::-1]  # each once, one order the other's reverse
    times = [h.created_at for h in first.hits]
    assert times == sorted(times, reverse=True)


def test_days_are_whole_and_included_and_a_chain_lists_alone(imported, instance):
    two_days = browse(imported, instance, date_from=date(2025, 3, 2), date_to=date(2025, 3, 3))
    assert two_days.total == 4 and {h.content for h in two_days.hits if h.kind == "user"} == {
        "On day 1 I planted 1 quince trees.", "On day 2 I planted 2 quince trees."}
    chain = two_days.hits[0].chain_id
    mine = browse(imported, instance, chain_id=chain)
    assert mine.total == 2 and {h.chain_id for h in mine.hits} == {chain}
    assert browse(imported, instance, chain_id=" ").total == browse(imported, instance).total  # blank: any chain


def test_a_search_shows_every_stored_copy_and_says_when_it_stopped(imported, instance):
    out = uc.memory_search(imported, uc.ExplorerSearch(instance=instance, query="Acme Corp data engineer",
                                                        mode="text"))
    copies = [h for h in out.hits if h.content == REPEATED]
    assert len(copies) == REPEATS and len({h.chain_id for h in copies}) == REPEATS  # not one for five
    assert not out.capped
    few = uc.memory_search(imported, uc.ExplorerSearch(instance=instance, query="quince", mode="text", top_k=3))
    assert len(few.hits) == 3 and few.capped


def test_the_selection_downloads_as_json_lines(imported, instance):
    out = uc.memory_export(imported, uc.MemoryBrowse(instance=instance, kinds=["user"]))
    rows = [json.loads(line) for line in out.document.splitlines()]
    assert out.matched == out.exported == len(rows) == DAYS + REPEATS
    assert {r["kind"] for r in rows} == {"user"} and all(r["id"] and r["content"] for r in rows)
    hits = browse(imported, instance, kinds=["user"]).hits
    assert [json.loads(line)["id"] for line in uc.hits_export(hits).document.splitlines()] == [h.id for h in hits]


def test_deleting_a_message_keeps_the_imported_conversation_s_title(imported, instance):
    chain = uc.chains(imported, uc.ChainList(instance=instance, title="Day 5 notes")).chains[0]
    first = browse(imported, instance, chain_id=chain.chain_id, kinds=["user"]).hits[0]
    uc.memory_delete(imported, uc.MemoryRef(instance=instance, memory_id=first.id))
    assert imported.thoughts.chain_meta(instance, chain.chain_id)["title"] == "Day 5 notes"
    assert browse(imported, instance, chain_id=chain.chain_id).total == 1
