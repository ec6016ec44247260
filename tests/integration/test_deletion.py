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
        # This instance's: another test may have a chain of the same id (test_fault_llm's "slow").
        "keys": sorted(k for k in r.scan_iter(match=f"*:{instance}:{{{chain}}}*", count=1000)
                       if not k.startswith("tombstone:")),
        "feedback": [i for i in ids if r.exists(f"voice:feedback:{i}")],
        "feedback_index": [i for i in ids if r.zscore(f"feedback:index:{instance}", i) is not None],
        "feedback_pending": [i for i in ids if r.zscore(f"feedback:pending:{instance}", i) is not None],
        "chains": r.zscore(f"chains:{instance}", chain),
        "outbox": [e for e in r.lrange(OUTBOX, 0, -1)
                   if (json.loads(e).get("instance"), json.loads(e).get("chain_id")) == (instance, chain)],
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


def two_full_banks(wb, instance: str) -> tuple[MemoryBank, MemoryBank]:
    """Two banks holding the same steps, each compressed once: one live entry more than its summary's 3."""
    banks = (MemoryBank(wb, instance, "by-own-id"), MemoryBank(wb, instance, "by-row-id"))
    for bank in banks:
        for i in range(6):
            bank.add_entry(MemoryEntry(command=f"systemctl restart svc{i}", result="active"))
    return banks


def counts(report) -> dict:
    return report.model_dump(exclude={"id"})


def test_a_bank_entry_or_summary_is_deleted_by_its_own_id(workbench, instance):
    """The id memory_bank_add and the bank's snapshot return: "no memory '…'" before; only the index row's
    "be-…" worked. It deletes what "be-…"/"bs-…" deletes, with the same report."""
    from core import usecases as uc

    own, by_row = two_full_banks(workbench, instance)
    entry, row_entry = own.get_all_memories()[-1], by_row.get_all_memories()[-1]
    report = uc.memory_delete(workbench, uc.MemoryRef(instance=instance, memory_id=entry.id))
    assert report.id == entry.id and (report.bank_rows, report.index_rows) == (1, 1)
    assert counts(report) == counts(delete_memory(workbench, instance, f"be-{row_entry.id}"))
    assert entry.id not in [e.id for e in own.get_all_memories()]
    assert workbench.index.get(instance, [f"be-{entry.id}"]) == []

    [summary], [row_summary] = own.get_summaries(), by_row.get_summaries()
    report = delete_memory(workbench, instance, summary.id)
    assert (report.bank_rows, report.index_rows) == (4, 4)  # the summary and the 3 entries it stood for
    assert counts(report) == counts(delete_memory(workbench, instance, f"bs-{row_summary.id}"))
    assert own.get_summaries() == [] and len(own.get_all_memories()) == 2
    hits = search_memory(workbench, ExplorerSearch(query="systemctl restart svc0", instance=instance,
                                                   mode="text")).hits
    assert all(h.id != f"bs-{summary.id}" and h.id != f"be-{entry.id}" for h in hits)

    # Gone: the delete use cases say so, as they did; `forget` says nothing was there (next test).
    with pytest.raises(NotFound, match=f"no memory '{entry.id}'"):
        uc.memory_delete(workbench, uc.MemoryRef(instance=instance, memory_id=entry.id))


def test_forget_of_what_is_not_there_is_a_report_of_zero_counts(workbench, instance):
    """`forget` is annotated idempotent, and a retry after an unknown outcome must not report a failure for
    a deletion that went through: an unknown id was an error (an MCP tool error)."""
    from core import usecases as uc

    turn(workbench, instance, "gone-soon", "Forget this conversation about the lighthouse.")
    entry = uc.bank_add(workbench, uc.BankAdd(instance=instance, bank="steps", entry=MemoryEntry(
        command="ls", result="3 files"))).entry
    for target, ident in (("chain", "gone-soon"), ("memory", entry.id), ("bank", "steps")):
        first = uc.forget(workbench, uc.Forget(instance=instance, target=target, id=ident))
        assert first.removed_anything or target == "bank", first
        again = uc.forget(workbench, uc.Forget(instance=instance, target=target, id=ident))
        what = {"chain": "chain", "memory": "memory", "bank": "memory bank named"}[target]
        assert again.model_dump() == {
            "target": target, "instance": instance, "id": ident, "thoughts": 0, "feedback": 0, "outbox": 0,
            "requests": 0, "index_rows": 0, "bank_rows": 0, "copies": 0, "marks": 0,
            "notes": [(f"no {what} {ident!r} in instance {instance!r}: nothing was there to forget (already "
                       "forgotten, or a mistyped id)")]}
    # The delete use cases (the CLI's, HTTP DELETE's) still say NotFound.
    with pytest.raises(NotFound):
        uc.chain_delete(workbench, uc.ChainRef(instance=instance, chain_id="gone-soon"))
    with pytest.raises(NotFound):
        uc.bank_delete(workbench, uc.BankRef(instance=instance, bank="steps"))


def test_an_id_that_could_name_two_things(workbench, instance):
    """A memory's id names it first; an entry and a summary sharing an id are refused as ambiguous; and no
    write makes an id name two things any more (a retried forget would then delete the other)."""
    from core import usecases as uc

    bank = MemoryBank(workbench, instance, "ops")
    for i in range(6):
        bank.add_entry(MemoryEntry(command=f"deploy v{i}", result="ok"))
    [summary] = bank.get_summaries()
    uc.add_memory(workbench, AddMemory(instance=instance, content="Ada deploys on Fridays", id="shared"))
    # Made before the writes refused it (the bank itself does not look at other memories' ids).
    bank.add_entry(MemoryEntry(id="shared", command="deploy v6", result="ok"))
    bank.add_entry(MemoryEntry(id=summary.id, command="deploy v7", result="ok"))

    report = delete_memory(workbench, instance, "shared")
    assert (report.index_rows, report.bank_rows) == (1, 0)  # the memory, not the entry
    assert report.notes == [("an entry of the bank 'ops' also has the id 'shared' and stayed (a memory's own "
                             "id names it first): forget 'be-shared' to delete it")]
    assert "shared" in [e.id for e in bank.get_all_memories()]
    with pytest.raises(InvalidInput) as ambiguous:
        delete_memory(workbench, instance, summary.id)
    assert str(ambiguous.value) == (f"{summary.id!r} is the id of a bank entry and of a bank summary: forget "
                                    f"'be-{summary.id}' for the entry or 'bs-{summary.id}' for the summary "
                                    "(and the entries it compressed)")
    assert len(bank.get_summaries()) == 1  # nothing deleted

    # The writes that take a caller's id refuse one that already names something else.
    with pytest.raises(InvalidInput, match="id 'shared' is the id of an entry of the bank 'ops': leave id out"):
        uc.add_memory(workbench, AddMemory(instance=instance, content="x", id="shared"))
    uc.add_memory(workbench, AddMemory(instance=instance, content="Ada's laptop is a ThinkPad", id="laptop"))
    for taken, says in (("laptop", "a memory of kind observation"), (summary.id, "a summary of the bank 'ops'")):
        with pytest.raises(InvalidInput, match=f"entry.id: '{taken}' is already the id of {says}"):
            uc.bank_add(workbench, uc.BankAdd(instance=instance, bank="ops", entry=MemoryEntry(
                id=taken, command="x")))
