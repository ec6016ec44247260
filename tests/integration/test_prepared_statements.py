"""No flow sends a statement psycopg would prepare through a partitioned table's parent.

`memory` is partitioned by instance, as are the postings (`memory_term`) and the words' counters
(`memory_lexeme`). psycopg prepares a statement at its sixth run on a pooled connection, and Postgres then
plans it generically once, with the instance unknown: over a parent, that plan opens and locks every
instance's partitions (0.3-1.1 s and 8,041 locks among 800 instances, once per connection and statement).
So such a statement is sent with `prepare=False` (planned at each run with the instance known), or a read
names the instance's partition (`MemoryIndex.table`).

Each test drives, as the CLI, API and pages reach them through `core.usecases`, every flow of an area that
touches those tables, in a runtime that records what psycopg would prepare (`tests.support.prepared`), and
names the statements that go through a parent with the flows that sent them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from psycopg import sql

from core import usecases as uc
from core.formation.important import derived_id
from core.ids import SHARED_INSTANCE
from core.models import MemoryRecord
from core.runtime import Workbench
from tests.support.chatgpt_export import conversation, write_export
from tests.support.clock import Clock
from tests.support.prepared import over_parents, preparing

DATA = Path(__file__).resolve().parents[1] / "data" / "import"


class Flows:
    """A test's flows, each run by name in the `preparing` runtime, so a statement through a parent is
    reported with the flows it was sent while they ran (a background thread's statement may be named with
    the flow after the one that started it)."""

    def __init__(self, wb: Workbench, preparable: list[str]):
        self.wb, self.preparable = wb, preparable
        self.ran: list[tuple[str, int, int]] = []  # (flow, first statement, statement after its last)

    def __call__(self, name: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        start = len(self.preparable)
        try:
            return fn(*args, **kwargs)
        finally:
            self.ran.append((name, start, len(self.preparable)))

    def assert_none_over_parents(self) -> None:
        found = over_parents(self.wb, self.preparable)
        assert found == [], self._report(found)

    def _report(self, found: list[str]) -> str:
        lines = [(f"{len(found)} statement(s) psycopg would prepare go through a partitioned parent; name the "
                  "instance's partition (`MemoryIndex.table`) or send them with prepare=False:")]
        for statement in found:
            flows = sorted({name for name, start, end in self.ran
                            if any(" ".join(s.split()) == statement for s in self.preparable[start:end])})
            lines.append(f"- [{', '.join(flows) or 'outside the named flows'}] {statement}")
        return "\n".join(lines)


@pytest.fixture
def flows(settings) -> Iterator[Flows]:
    with preparing(settings) as (wb, preparable):
        yield Flows(wb, preparable)


def turn(flows: Flows, instance: str, chain: str, text: str, clock: Clock, **options) -> uc.UiRememberResult:
    clock.advance(30)
    return flows(f"remember ({text[:24]})", uc.remember, flows.wb,
                 uc.UiRememberParams(thought=text, chain_id=chain, instance=instance, **options), clock=clock)


def observations_of(wb: Workbench, instance: str, thought_id: str) -> list[str]:
    """The observations formed from a user message (its row's `metadata.observations`)."""
    (row,) = wb.index.get(instance, [thought_id])
    return row.metadata.get("observations", [])


# -- 1. a conversation and what it leaves as memory ----------------------------------------------------

def test_turns_corrections_summaries_and_formation_send_nothing_prepared_through_a_parent(flows, instance):
    wb = flows.wb
    clock = Clock(datetime.now(UTC) - timedelta(hours=2))
    told = turn(flows, instance, "cars", "My car is a Golf.", clock)
    turn(flows, instance, "cars", "Thanks, got it.", clock)
    fixed = turn(flows, instance, "cars", "No, my car is a Polo.", clock)
    turn(flows, instance, "cars-again", "No, my car is a Polo.", clock)  # a repetition, not a correction
    turn(flows, instance, "ask", "What car do I drive?", clock)
    turn(flows, instance, "home", "I live in Chicago.", clock)
    turn(flows, instance, "move", "We just moved to Denver last week.", clock)  # an update: supersedes Chicago
    turn(flows, instance, "garden", "I planted tomatoes and basil in the back garden.", clock)
    turn(flows, instance, "garden", "The basil needs watering every morning.", clock)  # goes quiet
    turn(flows, instance, "trip", "I'm flying to Lisbon next Friday for the conference.", clock, tags=["important"])
    turn(flows, instance, "trip", "My hotel in Lisbon is near the Alfama district.", clock,
         next_thought_needed=False)  # ended: summarised at once
    (golf,) = observations_of(wb, instance, told.thought1_id)
    (polo,) = observations_of(wb, instance, fixed.thought1_id)
    assert wb.index.get(instance, [golf])[0].metadata["superseded_by"] == polo  # the correction took

    superseded = flows("superseded_memories", uc.superseded_memories, wb,
                       uc.SupersededRequest(instance=instance, ids=[golf, polo]))
    assert [f.id for f in superseded] == [golf]
    history = flows("fact_history", uc.fact_history, wb, uc.FactHistoryRequest(instance=instance, memory_id=golf))
    assert [f.id for f in history.facts] == [golf, polo]
    flows("conversation", uc.conversation, wb, uc.ConversationRef(instance=instance, chain_id="cars"))
    flows("read_message", uc.read_message, wb, uc.ReadMessageRequest(instance=instance, chain_id="cars"))
    flows("retrieve_memory", uc.retrieve_memory, wb, uc.RetrieveRequest(instance=instance, query="my car"))
    swept = flows("sweep_instance", uc.sweep_instance, wb, uc.InstanceRequest(instance=instance))
    assert swept.summarised >= 1  # the quiet chains
    assert wb.index.get(instance, [derived_id("summary", "trip")])  # the ended one, at its last turn
    flows("mark_abandoned", uc.mark_abandoned, wb, uc.InstanceRequest(instance=instance))
    flows("summarise_quiet_chains", uc.summarise_quiet_chains, wb, uc.InstanceRequest(instance=instance))
    flows("formation_run", uc.formation_run, wb, uc.FormationRun(instance=instance))
    every = flows("formation_run --all", uc.formation_run, wb, uc.FormationRun(instance=instance, every_chain=True))
    assert every.chains >= 3 and every.superseded >= 1
    flows("add_memory", uc.add_memory, wb, uc.AddMemory(instance=instance, content="The Polo is silver."))
    flows.assert_none_over_parents()


# -- 2. the Explorer and the overview -------------------------------------------------------------------

def test_the_explorer_and_overview_send_nothing_prepared_through_a_parent(flows, keyword_workbench, instance):
    wb = flows.wb
    flows("add_memory (another embedder)", uc.add_memory, keyword_workbench,
          uc.AddMemory(instance=instance, content="The loft ladder folds away."))  # re-embedded below
    clock = Clock(datetime.now(UTC) - timedelta(days=2))
    for i in range(4):
        turn(flows, instance, f"c{i % 2}", f"Note {i}: the greenhouse {('tomatoes', 'basil')[i % 2]} need water.",
             clock)
    for i in range(3):
        flows("add_memory", uc.add_memory, wb, uc.AddMemory(instance=instance, content=f"Shelf {i} holds jars.",
                                                            tags=["pantry"]))
    req = uc.InstanceRequest(instance=instance)
    flows("stored_counts", uc.stored_counts, wb, req)
    assert instance in {r.instance for r in flows("instances", uc.instances, wb)}
    flows("instance_names", uc.instance_names, wb)

    first = flows("memory_browse", uc.memory_browse, wb, uc.MemoryBrowse(instance=instance, page_size=3))
    assert first.pages >= 3
    second = flows("memory_browse next", uc.memory_browse, wb,
                   uc.MemoryBrowse(instance=instance, page_size=3, page=2, shown=first.mark))
    flows("memory_browse previous", uc.memory_browse, wb,
          uc.MemoryBrowse(instance=instance, page_size=3, page=1, shown=second.mark))
    flows("memory_browse again", uc.memory_browse, wb,
          uc.MemoryBrowse(instance=instance, page_size=3, page=2, shown=second.mark))
    flows("memory_browse last", uc.memory_browse, wb,
          uc.MemoryBrowse(instance=instance, page_size=3, page=first.pages))
    oldest = flows("memory_browse oldest", uc.memory_browse, wb,
                   uc.MemoryBrowse(instance=instance, page_size=3, order="oldest"))
    flows("memory_browse oldest next", uc.memory_browse, wb,
          uc.MemoryBrowse(instance=instance, page_size=3, order="oldest", page=2, shown=oldest.mark))
    today = datetime.now(UTC).date()
    narrowed = flows("memory_browse filtered", uc.memory_browse, wb, uc.MemoryBrowse(
        instance=instance, kinds=["observation"], tags=["pantry"], date_from=today - timedelta(days=1),
        date_to=today))
    assert narrowed.total == 3
    flows("memory_browse chain", uc.memory_browse, wb, uc.MemoryBrowse(instance=instance, chain_id="c0"))
    flows("memory_export", uc.memory_export, wb, uc.MemoryBrowse(instance=instance, kinds=["user"]))

    flows("recent", uc.recent, wb, uc.RecentRequest(instance=instance, limit=5))
    flows("chains", uc.chains, wb, uc.ChainList(instance=instance))
    flows("chains titled", uc.chains, wb, uc.ChainList(instance=instance, title="note", order="oldest"))
    assert flows("chain", uc.chain, wb, uc.ChainRef(instance=instance, chain_id="c0")).indexed
    flows("chain_export", uc.chain_export, wb, uc.ChainRef(instance=instance, chain_id="c0"))
    for mode in ("hybrid", "vector", "text"):
        flows(f"memory_search {mode}", uc.memory_search, wb, uc.ExplorerSearch(
            query="greenhouse tomatoes", instance=instance, mode=mode, kinds=["observation", "user"],
            chain_id="c0", date_from=date(2000, 1, 1)))
    hit = first.hits[0]
    flows("memory_search by id", uc.memory_search, wb, uc.ExplorerSearch(query=hit.id, instance=instance))
    assert flows("reembed", uc.reembed, wb, req).reembedded == 1
    flows.assert_none_over_parents()


# -- 3. data in and out ---------------------------------------------------------------------------------

def chatgpt_export(path: Path, instance: str) -> Path:
    start = datetime(2024, 5, 1, 9, tzinfo=UTC).timestamp()
    return write_export(path, [
        conversation("Bikes", f"{instance}-bikes", [
            ("user", "My road bike has a carbon frame.", start), ("assistant", "Noted.", start + 5),
            ("user", "How often should I oil the chain?", start + 60),
            ("assistant", "Every few hundred kilometres.", start + 65)]),
        conversation("Garden", f"{instance}-garden", [
            ("user", "I planted basil in the back garden.", start + 3600),
            ("assistant", "Basil likes sun.", start + 3605)])])


def locomo_of_its_own(path: Path, instance: str) -> Path:
    """The mini LoCoMo file with a word of the test's own, so its evaluation instance is new."""
    data = json.loads((DATA / "locomo_mini.json").read_text())
    session = next(v for k, v in data[0]["conversation"].items() if k.startswith("session_") and isinstance(v, list))
    session[0]["text"] += f" ({instance})"
    path.write_text(json.dumps(data))
    return path


def interrupted_import(flows: Flows, instance: str, path: Path, monkeypatch) -> None:
    """An import of 25 conversations in batches of 10, stopped (as by Ctrl+C) once the first is stored: its
    messages are noted for the next search or sweep to index."""
    with path.open("w") as f:
        for i in range(25):
            f.write(json.dumps({"id": f"c{i}", "created_at": 1700000000 + i * 60, "messages": [
                {"role": "user", "content": f"question {i}"}, {"role": "assistant", "content": f"answer {i}"}]}) + "\n")
    monkeypatch.setattr("core.importing.runner.BATCH_RECORDS", 10)

    def crash(done: int, total: int, what: str) -> None:
        if what == "importing" and done >= 10:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        flows("import_file interrupted", uc.import_file, flows.wb, uc.ImportFile(path=path, instance=instance),
              progress=crash)


def test_imports_loads_archives_banks_and_evaluations_send_nothing_prepared_through_a_parent(
        flows, instance, tmp_path, monkeypatch):
    wb = flows.wb
    flows("add_memory", uc.add_memory, wb, uc.AddMemory(instance=instance, content="The shed key is blue."))
    export = chatgpt_export(tmp_path / "conversations.json", instance)
    flows("import_file dry run", uc.import_file, wb, uc.ImportFile(path=export, instance=instance, dry_run=True))
    flows("import_file chatgpt", uc.import_file, wb, uc.ImportFile(path=export, instance=instance))
    flows("import_file chatgpt again", uc.import_file, wb, uc.ImportFile(path=export, instance=instance))
    for _ in range(2):
        flows("import_file memories", uc.import_file, wb,
              uc.ImportFile(path=DATA / "memories.jsonl", instance=instance))
    flows("import_file memories dry run", uc.import_file, wb,
          uc.ImportFile(path=DATA / "memories.jsonl", instance=instance, dry_run=True))
    flows("formation_run (imported)", uc.formation_run, wb, uc.FormationRun(instance=instance))
    cut = f"{instance}-cut"
    interrupted_import(flows, cut, tmp_path / "many.jsonl", monkeypatch)
    flows("retrieve_memory (indexes an interrupted import)", uc.retrieve_memory, wb,
          uc.RetrieveRequest(instance=cut, query="question 3"))
    assert wb.index.count(cut) == 20  # the ten conversations stored before the stop

    loaded = f"{instance}-load"
    records = [MemoryRecord(instance=loaded, id=f"r{i}", kind="observation", content=f"Crate {i} holds apples.",
                            created_at=datetime.now(UTC)) for i in range(6)]
    flows("bulk_load new instance", wb.index.bulk_load, records[:4])
    flows("bulk_load over rows there", wb.index.bulk_load, records[2:])
    assert wb.index.count(loaded) == 6

    marked = flows("memory_browse", uc.memory_browse, wb,
                   uc.MemoryBrowse(instance=instance, kinds=["observation"])).hits[0].id
    flows("mark_relevance", uc.mark_relevance, wb,
          uc.MarkRelevance(instance=instance, query="shed key", memory_id=marked, relevant=True))
    labelled = flows("labelled_set", uc.labelled_set, wb, uc.InstanceRequest(instance=instance))
    dataset = flows("read_dataset jsonl", uc.read_dataset, wb,
                    uc.ReadDataset(instance=instance, source=labelled.jsonl().encode(), name="marks"))
    flows("evaluate jsonl", uc.evaluate, wb, uc.EvaluateRequest(instance=instance, dataset=dataset, ks=[5]))
    locomo = flows("read_dataset locomo", uc.read_dataset, wb,
                   uc.ReadDataset(source=locomo_of_its_own(tmp_path / "locomo.json", instance)))
    flows("evaluate locomo", uc.evaluate, wb, uc.EvaluateRequest(dataset=locomo, ks=[5]))
    corpus = locomo.corpora[0].instance
    flows("add_memory (evaluation instance)", uc.add_memory, wb, uc.AddMemory(instance=corpus, content="Extra."))
    flows("evaluate locomo again (reloaded)", uc.evaluate, wb, uc.EvaluateRequest(dataset=locomo, ks=[5]))
    flows("evaluate locomo again (reused)", uc.evaluate, wb, uc.EvaluateRequest(dataset=locomo, ks=[5]))

    for i in range(7):  # past the bank's thresholds: its oldest half compressed into a summary
        flows("bank_add", uc.bank_add, wb, uc.BankAdd(instance=instance, bank="ops", entry=uc.MemoryEntry(
            command=f"systemctl restart svc{i}", result="active")))
    flows("bank_query", uc.bank_query, wb, uc.BankQuery(instance=instance, bank="ops", keywords=["restart"]))
    flows("bank_snapshot", uc.bank_snapshot, wb, uc.BankRef(instance=instance, bank="ops"))

    out = tmp_path / "whole.zip"
    flows("export_archive", uc.export_archive, wb, uc.ExportArchive(instance=instance, out=out, with_vectors=True))
    copy = f"{instance}-copy"
    flows("restore_archive new instance", uc.restore_archive, wb, uc.RestoreArchive(instance=copy, path=out))
    flows("forget (a restored memory)", uc.forget, wb, uc.Forget(instance=copy, target="memory", id=marked))
    again = flows("restore_archive again", uc.restore_archive, wb, uc.RestoreArchive(instance=copy, path=out))
    assert again.again and any("deleted in this instance" in note for note in again.notes), again.notes

    flows("bank_clear", uc.bank_clear, wb, uc.BankRef(instance=instance, bank="ops"))
    flows("bank_delete", uc.bank_delete, wb, uc.BankRef(instance=instance, bank="ops"))
    flows.assert_none_over_parents()


# -- 4. deletion ----------------------------------------------------------------------------------------

def test_deletions_send_nothing_prepared_through_a_parent(flows, instance):
    wb = flows.wb
    clock = Clock(datetime.now(UTC) - timedelta(hours=2))
    told = turn(flows, instance, "cars", "My car is a Golf.", clock)
    turn(flows, instance, "cars", "No, my car is a Polo.", clock)
    said = turn(flows, instance, "cars", "I park it on Elm Street. The garage opens at 7.", clock)
    turn(flows, instance, "trip", "I'm flying to Lisbon next Friday.", clock, tags=["important"])
    turn(flows, instance, "trip", "My hotel is near the Alfama district.", clock, next_thought_needed=False)
    turn(flows, instance, "keep", "The boiler was serviced in March.", clock)
    for i in range(6):
        flows("bank_add", uc.bank_add, wb, uc.BankAdd(instance=instance, bank="ops", entry=uc.MemoryEntry(
            command=f"make target{i}", result="ok")))
    added = flows("add_memory", uc.add_memory, wb, uc.AddMemory(instance=instance, content="The gate code is 4."))

    (golf,) = observations_of(wb, instance, told.thought1_id)
    flows("memory_delete (an observation)", uc.memory_delete, wb, uc.MemoryRef(instance=instance, memory_id=golf))
    parts = observations_of(wb, instance, said.thought1_id)
    flows("forget (one statement of a message)", uc.forget, wb,
          uc.Forget(instance=instance, target="memory", id=parts[0]))
    flows("formation_run --all (a statement forgotten)", uc.formation_run, wb,
          uc.FormationRun(instance=instance, every_chain=True))
    flows("forget (a message)", uc.forget, wb, uc.Forget(instance=instance, target="memory", id=said.thought1_id))
    flows("memory_delete (a memory)", uc.memory_delete, wb, uc.MemoryRef(instance=instance, memory_id=added.id))
    entry = uc.bank_snapshot(wb, uc.BankRef(instance=instance, bank="ops")).entries[-1].entry
    flows("memory_delete (a bank entry)", uc.memory_delete, wb, uc.MemoryRef(instance=instance, memory_id=entry.id))
    flows("chain_delete", uc.chain_delete, wb, uc.ChainRef(instance=instance, chain_id="trip"))
    flows("forget (a chain)", uc.forget, wb, uc.Forget(instance=instance, target="chain", id="cars"))
    flows("forget (a bank)", uc.forget, wb, uc.Forget(instance=instance, target="bank", id="ops"))

    shared = flows("add_memory (shared)", uc.add_memory, wb,
                   uc.AddMemory(instance=SHARED_INSTANCE, content=f"The office of {instance} opens at 8."))
    flows("memory_delete (a shared memory)", uc.memory_delete, wb,
          uc.MemoryRef(instance=SHARED_INSTANCE, memory_id=shared.id))
    flows("delete_instance", wb.index.delete_instance, instance)
    flows.assert_none_over_parents()


# -- the support module catches what it should ----------------------------------------------------------

THROUGH_PARENTS = ["SELECT count(*) FROM memory WHERE instance = %s",
                   "SELECT count(*) FROM memory_term WHERE instance = %s",
                   "UPDATE memory SET tags = tags WHERE instance = %s AND id = 'none'",
                   "DELETE FROM memory WHERE instance = %s AND id = 'none'"]


def test_the_recording_names_a_prepared_read_or_write_through_a_parent_only(flows, instance):
    wb = flows.wb
    uc.add_memory(wb, uc.AddMemory(instance=instance, content="The kettle is in the attic."))
    with wb.pool().connection() as conn:
        flows.preparable.clear()
        for statement in THROUGH_PARENTS:
            conn.execute(statement, (instance,), prepare=False)
        assert over_parents(wb, flows.preparable) == []  # planned at each run, with the instance known

        conn.execute(sql.SQL("SELECT count(*) FROM {} WHERE instance = %s").format(wb.index.table(instance)),
                     (instance,))  # its partition, named
        conn.execute("INSERT INTO memory (instance, id, kind, content, created_at) VALUES (%s, 'p1', "
                     "'observation', 'A row.', now())", (instance,))
        assert over_parents(wb, flows.preparable) == []

        for statement in THROUGH_PARENTS:
            conn.execute(statement, (instance,))
        with conn.cursor() as cur:  # prepared at its first run, whatever its count: it takes no prepare=False
            cur.executemany("UPDATE memory SET metadata = metadata WHERE instance = %s AND id = %s",
                            [(instance, "none"), (instance, "p1")])
    assert over_parents(wb, flows.preparable) == sorted([
        "DELETE FROM memory WHERE instance = $1 AND id = 'none'", "SELECT count(*) FROM memory WHERE instance = $1",
        "SELECT count(*) FROM memory_term WHERE instance = $1",
        "UPDATE memory SET metadata = metadata WHERE instance = $1 AND id = $2",
        "UPDATE memory SET tags = tags WHERE instance = $1 AND id = 'none'"])
