"""Deleting a chain, a single memory and a bank leaves nothing behind in Redis or Postgres, and what
was deleted is never found by search or retrieved by ui_remember again."""

from __future__ import annotations

import json

import pytest

from core.admin.deletion import delete_bank, delete_chain, delete_memory
from core.admin.explorer import ExplorerSearch, export_chain, list_chains, search_memory
from core.bank import MemoryBank, MemoryEntry
from core.conversation.indexing import sync_index
from core.conversation.keys import OUTBOX
from core.conversation.thoughts import CATEGORY_USER
from core.conversation.turn import Remember, UiRememberParams
from core.errors import InvalidInput, NotFound
from core.runtime import Workbench
from core.usecases.memories import AddMemory, add_memory


@pytest.fixture
def llm_wb(llm_settings):
    """Answers come from the fake LLM server, so they are indexed too (extractive ones are not)."""
    wb = Workbench(llm_settings)
    yield wb
    wb.close()


def turn(wb, instance, chain, text, **kw):
    return Remember(wb).run(UiRememberParams(thought=text, chain_id=chain, **kw), instance=instance)


def residue(wb, instance: str, chain: str, ids: list[str]) -> dict:
    """Everything either store still holds about a chain and its thoughts."""
    r = wb.redis()
    with wb.pool().connection() as conn:
        rows = conn.execute("SELECT count(*) FROM memory WHERE instance = %s "
                            "AND (chain_id = %s OR id = ANY(%s))", (instance, chain, ids)).fetchone()[0]
    return {
        # The tombstone, holding only the time of the deletion, refuses late turns for a while.
        "keys": sorted(k for k in r.scan_iter(match=f"*{{{chain}}}*", count=1000)
                       if not k.startswith("tombstone:")),
        "feedback": [i for i in ids if r.exists(f"voice:feedback:{i}")],
        "feedback_index": [i for i in ids if r.zscore(f"feedback:index:{instance}", i) is not None],
        "feedback_pending": [i for i in ids if r.zscore(f"feedback:pending:{instance}", i) is not None],
        "chains": r.zscore(f"chains:{instance}", chain),
        "outbox": [e for e in r.lrange(OUTBOX, 0, -1) if json.loads(e).get("chain_id") == chain],
        "index_rows": rows,
    }


NOTHING = {"keys": [], "feedback": [], "feedback_index": [], "feedback_pending": [], "chains": None,
           "outbox": [], "index_rows": 0}


def test_deleting_a_chain_leaves_nothing_and_is_never_retrieved_again(llm_wb, instance):
    wb = llm_wb
    a = turn(wb, instance, "jam-chain",
             "My grandmother's marmalade recipe uses Seville oranges and demerara.",
             request_id="req-1")
    b = turn(wb, instance, "jam-chain", "The marmalade must boil for exactly 15 minutes.")
    other = turn(wb, instance, "other-chain", "The bike needs new brake pads before the marmalade fair.")
    ids = [x for t in (a, b) for x in (t.thought1_id, t.thought2_id, t.thought3_id)]
    # A write still queued for the index (as when Postgres was down at the time of the turn).
    wb.redis().rpush(OUTBOX, json.dumps({"instance": instance, "chain_id": "jam-chain", "id": a.thought1_id}))
    before = residue(wb, instance, "jam-chain", ids)  # 6 rows: 2 messages, their observations, 2 answers
    assert before["feedback"] and before["keys"] and before["index_rows"] == 6 and before["outbox"]
    assert any(k.startswith("request:") for k in before["keys"])
    hits = search_memory(wb, ExplorerSearch(query="marmalade", instance=instance, mode="text")).hits
    assert {h.chain_id for h in hits} == {"jam-chain", "other-chain"}
    assert next(h for h in hits if h.chain_id == "jam-chain").chain_title.startswith("My grandmother")

    report = delete_chain(wb, instance, "jam-chain")

    counts = (report.thoughts, report.feedback, report.index_rows, report.outbox, report.requests)
    assert counts == (6, 2, 6, 1, sum(k.startswith("request:") for k in before["keys"]))
    assert residue(wb, instance, "jam-chain", ids) == NOTHING
    sync_index(wb.thoughts, wb.index)  # a later sync has nothing of it to bring back
    assert residue(wb, instance, "jam-chain", ids) == NOTHING
    for mode in ("text", "vector", "hybrid"):
        hits = search_memory(wb, ExplorerSearch(query="marmalade Seville oranges", instance=instance,
                                                mode=mode)).hits
        assert all(h.chain_id != "jam-chain" and h.id not in ids for h in hits)
    later = turn(wb, instance, "new-chain", "What was the marmalade recipe with Seville oranges?", top_k=20)
    assert all(c.chain_id != "jam-chain" and c.id not in ids for c in later.context)
    assert [c.chain_id for c in later.context] == ["other-chain"] * len(later.context)
    assert residue(wb, instance, "other-chain", [other.thought1_id])["index_rows"] >= 1  # untouched
    with pytest.raises(NotFound):
        delete_chain(wb, instance, "jam-chain")


def test_deleting_one_answer_takes_its_feedback_and_metrics(llm_wb, instance):
    wb = llm_wb
    a = turn(wb, instance, "c1", "Remember that the boiler service is on 3 March.")
    b = turn(wb, instance, "c1", "And the plumber is called Nuno.")
    report = delete_memory(wb, instance, a.thought2_id)
    assert report.thoughts == 2 and report.feedback == 1 and report.index_rows == 1  # answer + its metrics
    r = wb.redis()
    assert not r.exists(f"voice:feedback:{a.thought2_id}")
    assert r.zscore(f"feedback:index:{instance}", a.thought2_id) is None
    remaining = [t.id for t in wb.thoughts.chain_thoughts(instance, "c1")]
    assert a.thought2_id not in remaining and a.thought3_id not in remaining
    assert set(remaining) == {a.thought1_id, b.thought1_id, b.thought2_id, b.thought3_id}
    assert wb.index.get(instance, [a.thought2_id]) == []
    # Deleting the first user thought re-makes the chain's title from what is left, and the chain counts
    # one turn less; the next turn is still numbered after every turn it ever had.
    delete_memory(wb, instance, a.thought1_id)
    assert wb.thoughts.chain_meta(instance, "c1")["title"] == "And the plumber is called Nuno."
    assert [c.turns for c in wb.thoughts.chains(instance) if c.chain_id == "c1"] == [1]
    turn(wb, instance, "c1", "The boiler is a Vaillant.")
    assert [c.turns for c in wb.thoughts.chains(instance) if c.chain_id == "c1"] == [2]
    numbers = [t.thought_number for t in wb.thoughts.chain_thoughts(instance, "c1") if t.category == CATEGORY_USER]
    assert numbers == [2, 3]


def test_deleting_the_last_thoughts_removes_the_chain(workbench, instance):
    t = turn(workbench, instance, "solo",
             "A single offline turn about tulips.")  # extractive: answer not indexed
    delete_memory(workbench, instance, t.thought2_id, chain_id="solo")
    report = delete_memory(workbench, instance, t.thought1_id)
    assert "nothing else left" in report.notes[0]
    assert residue(workbench, instance, "solo", [t.thought1_id, t.thought2_id, t.thought3_id]) == NOTHING
    with pytest.raises(NotFound):
        delete_memory(workbench, instance, t.thought1_id)


def test_deleting_bank_items_and_banks(workbench, instance):
    bank = MemoryBank(workbench, instance, "ops")
    added = [bank.add_entry(MemoryEntry(command=f"systemctl restart svc{i}",
                                        result="active")) for i in range(6)]
    [summary] = bank.get_summaries()
    live = added[-1].entry
    assert delete_memory(workbench, instance, f"be-{live.id}").bank_rows == 1
    assert live.id not in [e.id for e in bank.get_all_memories()]
    report = delete_memory(workbench, instance, f"bs-{summary.id}")
    assert report.bank_rows == 4 and report.index_rows == 4  # the summary and the 3 entries it stood for
    assert bank.get_summaries() == [] and len(bank.get_all_memories()) == 2
    assert bank.get_compression_events()[0].summary_id is None  # the event stays, pointing at nothing
    report = delete_bank(workbench, instance, "ops")
    assert (report.bank_rows, report.index_rows) == (2, 2)
    with workbench.pool().connection() as conn:
        for table in ("bank", "bank_entry", "bank_summary", "bank_event"):
            assert conn.execute(f"SELECT count(*) FROM {table} WHERE instance = %s",
                                (instance,)).fetchone()[0] == 0
    assert workbench.index.count(instance) == 0
    with pytest.raises(NotFound):
        delete_bank(workbench, instance, "ops")


def test_chain_pages_and_export(workbench, instance):
    for i in range(5):
        turn(workbench, instance, f"p{i}", f"Page test note number {i}")
    newest = list_chains(workbench, instance, page=1, page_size=2)
    assert (newest.total, newest.pages, [c.chain_id for c in newest.chains]) == (5, 3, ["p4", "p3"])
    oldest = list_chains(workbench, instance, page=3, page_size=2, order="oldest")
    assert [c.chain_id for c in oldest.chains] == ["p4"]
    first = list_chains(workbench, instance, page_size=2, order="oldest")
    assert [c.chain_id for c in first.chains] == ["p0", "p1"]
    for order in ("newest", "oldest"):  # past the last page: nothing, so a loop paging until empty ends
        past = list_chains(workbench, instance, page=4, page_size=2, order=order)
        assert (past.page, past.pages, past.total, past.chains) == (4, 3, 5, [])
    doc = json.loads(export_chain(workbench, instance, "p2"))
    assert doc["chain_id"] == "p2" and [t["category"] for t in doc["thoughts"]] == [
        "ui_remember:user", "ui_remember:assistant", "ui_remember:metrics"]
    assert doc["thoughts"][0]["thought"] == "Page test note number 2"


def test_a_deletion_that_outlasts_the_outbox_lock_still_reports_its_work(workbench, instance, monkeypatch):
    """The lock that keeps a sync from writing rows back expires after LOCK_TTL_MS; a deletion slower than
    that (a cold 500,000-row partition took longer) has done its work, and says so, not a lock error."""
    from core.admin import deletion

    monkeypatch.setattr(deletion, "LOCK_TTL_MS", 1)  # expires before the index rows are deleted
    t = turn(workbench, instance, "slow", "A turn about the slow deletion of lilies.")
    report = delete_chain(workbench, instance, "slow")
    assert report.thoughts == 3
    assert residue(workbench, instance, "slow", [t.thought1_id, t.thought2_id, t.thought3_id]) == NOTHING


def test_add_memory_cannot_take_the_id_of_a_message_which_is_then_still_forgotten_by_it(workbench, instance):
    said = turn(workbench, instance, "locker", "My locker code is Wombatique 4471")
    with pytest.raises(InvalidInput, match="is a user memory of chain 'locker', which add_memory cannot replace"):
        add_memory(workbench, AddMemory(instance=instance, content="Replaced text", id=said.thought1_id))
    mine = add_memory(workbench, AddMemory(instance=instance, content="Snorkelberry jam", id="my-note"))
    again = add_memory(workbench, AddMemory(instance=instance, content="Snorkelberry marmalade", id=mine.id))
    assert again.id == "my-note"  # a memory it added is replaced by its id, as before
    report = delete_memory(workbench, instance, said.thought1_id)
    assert report.thoughts == 1 and report.copies >= 1  # the turn's served result quoted it: redacted
    assert not workbench.thoughts.get_many(instance, "locker", [said.thought1_id])


def test_a_retry_after_a_deletion_in_its_chain_stores_nothing_again(workbench, instance):
    """Deleting one message keeps its chain's served results (redacted): a client's retry of another turn
    was stored a second time, and a retry of the deleted turn brought the deleted text back."""
    kept = turn(workbench, instance, "retry", "My cat is called Miso", request_id="r-kept")
    gone = turn(workbench, instance, "retry", "My bike lock code is Quokkadrome 8812", request_id="r-gone")
    delete_memory(workbench, instance, gone.thought1_id)

    again = turn(workbench, instance, "retry", "My cat is called Miso", request_id="r-kept")
    assert again.thought1_id == kept.thought1_id and not again.notes[len(kept.notes):]
    late = turn(workbench, instance, "retry", "My bike lock code is Quokkadrome 8812", request_id="r-gone")
    assert late.thought1_id == gone.thought1_id and "deleted since; it was not stored again" in late.notes[-1]
    said = [t.thought for t in workbench.thoughts.chain_thoughts(instance, "retry") if t.category == CATEGORY_USER]
    assert said == ["My cat is called Miso"]
    assert "Quokkadrome" not in late.model_dump_json()  # its result's copies of the text were redacted
