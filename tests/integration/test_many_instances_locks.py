"""Many instances: each is a partition of `memory` with its own relations (indexes, its postings' table).
A chain's deletion (`DELETE FROM memory WHERE instance = … AND chain_id = …`) held 1,626 locks among 800
instances: the statement trigger removed the postings through the `memory_term` parent, joined on a column,
and Postgres locked every instance's postings partition and its index. With ~1,000 instances concurrent
statements ran the server out of its lock table, 64 a connection by default ("out of shared memory": a
deletion beside writers, an evaluation, in the test suite). The postings now go from the instance's own
partition, named in the statement (`memory_text_apply`), and the embedded server's lock table holds four
times as many (`MAX_LOCKS_PER_TRANSACTION`). The words' counters are partitioned by instance too, so a
deletion rewrites its own instance's files only (`core.admin.compaction`): in one table for every instance
they grew past the size a deletion rewrites (36 MB beside the test suite's instances), and a deleted word
stayed in their files. And no write waits for a lock taken on a parent: a new instance's partitions are
attached rather than created as PARTITION OF (ACCESS EXCLUSIVE on the parent), and a runtime's first write
asks the catalog for the HNSW index rather than CREATE INDEX IF NOT EXISTS (SHARE), either of which queued
every instance's writes behind any long transaction on `memory`."""

from __future__ import annotations

import threading
import time

import psycopg

from core import usecases as uc
from core.ids import SHARED_INSTANCE
from core.index.names import lexemes_name, partition_name, postings_name
from core.index.partitions import searched_partitions
from core.retrieval.hybrid import SearchRequest, hybrid_search
from core.retrieval.hybrid_sql import candidate_statement
from core.runtime import Workbench
from core.services.embedded_postgres import MAX_LOCKS_PER_TRANSACTION

# The postings and counters partitions this connection holds a lock on (their indexes aside).
LOCKED = """SELECT array_agg(DISTINCT c.relname::text ORDER BY c.relname::text) FROM pg_locks l
            JOIN pg_class c ON c.oid = l.relation
            WHERE l.pid = pg_backend_pid() AND c.relname ~ '^memory_[tl]_' AND c.relkind = 'r'"""


def test_deleting_a_memory_locks_only_its_instances_postings_and_counters(workbench, instance):
    names = [f"{instance}-{i}" for i in range(12)]
    for name in names:
        uc.add_memory(workbench, uc.AddMemory(instance=name, content=f"The boiler of {name} was serviced."))
    with workbench.pool().connection() as conn, conn.transaction():
        gone = conn.execute("DELETE FROM memory WHERE instance = %s", (names[0],)).rowcount
        locked = conn.execute(LOCKED).fetchone()[0]
        left = conn.execute("SELECT count(*) FROM memory_term WHERE instance = %s", (names[0],)).fetchone()[0]
        others = conn.execute("SELECT count(DISTINCT instance) FROM memory_term WHERE instance = ANY(%s)",
                              (names[1:],)).fetchone()[0]
        words = conn.execute("SELECT count(*) FROM memory_lexeme WHERE instance = %s AND lexeme <> ''",
                             (names[0],)).fetchone()[0]
    assert gone == 1 and left == 0 and others == len(names) - 1  # its postings went, the others' stayed
    assert words == 0
    assert locked == sorted([postings_name(names[0]), lexemes_name(names[0])])  # every instance's, before


def test_a_deletion_rewrites_its_own_instances_files_only(workbench, instance):
    names = [instance, f"{instance}-other"]
    added = [uc.add_memory(workbench, uc.AddMemory(instance=name, content=f"The {name} kiln fires on Fridays."))
             for name in names]
    tables = [f(name) for name in names for f in (partition_name, postings_name, lexemes_name)]

    def files() -> list[int]:
        with workbench.pool().connection() as conn:
            return [conn.execute("SELECT pg_relation_filenode(%s::regclass)", (t,)).fetchone()[0] for t in tables]

    before = files()
    report = uc.forget(workbench, uc.Forget(instance=instance, target="memory", id=added[0].id))
    after = files()
    assert report.index_rows == 1 and not any("vacuumed in place" in note for note in report.notes), report.notes
    assert [a != b for a, b in zip(after, before, strict=True)] == [True] * 3 + [False] * 3


def test_the_embedded_servers_lock_table_holds_thousands_of_instances(workbench):
    with workbench.pool().connection() as conn:
        assert int(conn.execute("SHOW max_locks_per_transaction").fetchone()[0]) == MAX_LOCKS_PER_TRANSACTION == 256


def test_a_search_beside_the_shared_instance_reads_and_locks_those_two_instances_only(workbench, instance):
    """Once the shared instance holds a memory every search reads two instances. Over the parent tables, its
    prepared statement held every instance's partitions: among 800 instances a search took 83 ms p50 (0.97
    alone). It reads the two instances' partitions, by name (`searched_table`)."""
    names = [instance] + [f"{instance}-{i}" for i in range(10)]
    for name in names:
        uc.add_memory(workbench, uc.AddMemory(instance=name, content=f"The boiler of {name} was serviced."))
    shared = uc.add_memory(workbench, uc.AddMemory(instance=SHARED_INSTANCE,
                                                   content="The office boiler is serviced on Fridays."))
    try:
        request = SearchRequest(query="When is the boiler serviced?", instance=instance, top_k=5)
        found = hybrid_search(workbench.search_pool(), workbench.embedder, request)
        assert {m.memory.instance for m in found.results} == {instance, SHARED_INSTANCE}
        partitions = searched_partitions(workbench.pool(), [instance, SHARED_INSTANCE])
        stmt, params = candidate_statement(workbench.embedder, request, workbench.embedder.embed(request.query),
                                           partitions, None)
        with workbench.search_pool().connection() as conn, conn.transaction():  # its generic plan, as a search
            assert psycopg.RawCursor(conn).execute(stmt, params, binary=True, prepare=True).fetchall()
            locked = conn.execute(LOCKED.replace("memory_[tl]_", "memory_[ptl]_")).fetchone()[0]
        assert locked == sorted(f(i) for i in (instance, SHARED_INSTANCE)
                                for f in (partition_name, postings_name, lexemes_name))
    finally:  # by its rows alone: the deletion of a shared memory rewrites every instance's tables
        with workbench.pool().connection() as conn:
            conn.execute("DELETE FROM memory WHERE instance = %s AND id = %s", (SHARED_INSTANCE, shared.id))


def test_deleting_a_shared_memory_rewrites_the_files_of_the_instances_quoting_it_only(llm_settings, fake_llm,
                                                                                    instance):
    """Every instance's chains are redacted, but only the tables whose rows changed are rewritten: each
    instance's were (a shared memory took 20 s to delete among 800 instances)."""
    other = f"{instance}-other"
    with Workbench(llm_settings) as wb:
        uc.add_memory(wb, uc.AddMemory(instance=other, content="The other team's boiler is new."))
        shared = uc.add_memory(wb, uc.AddMemory(instance=SHARED_INSTANCE,
                                                content="The office boiler is serviced by Kessel und Sohn."))
        fake_llm.reply("The office note says: The office boiler is serviced by Kessel und Sohn.")  # word for word
        for said in ("Who services the office boiler?", "Thanks!", "And who has the keys?"):  # each indexes the last
            uc.remember(wb, uc.UiRememberParams(thought=said, chain_id="boiler", instance=instance))
        tables = [f(i) for i in (instance, other) for f in (partition_name, postings_name, lexemes_name)]

        def quoting() -> list[str]:
            with wb.pool().connection() as conn:
                return [r[0] for r in conn.execute("SELECT id FROM memory WHERE instance = %s AND "
                                                   "(content || context::text) LIKE '%%Kessel%%'", (instance,))]

        def files() -> list[int]:
            with wb.pool().connection() as conn:
                return [conn.execute("SELECT pg_relation_filenode(%s::regclass)", (t,)).fetchone()[0] for t in tables]

        assert quoting()  # the answer, indexed in the instance
        before = files()
        report = uc.forget(wb, uc.Forget(instance=SHARED_INSTANCE, target="memory", id=shared.id))
        assert report.index_rows == 1 and report.copies >= 2 and quoting() == []
        assert [a != b for a, b in zip(files(), before, strict=True)] == [True] * 3 + [False] * 3


def test_a_new_instance_neither_waits_for_a_long_read_nor_makes_other_instances_wait(workbench, instance):
    """A new instance's partitions are made beside their parents and attached (`memory_attach_partition`):
    created as PARTITION OF, each took its parent's ACCESS EXCLUSIVE lock, so the first memory of a new
    instance waited for a transaction still reading `memory` (an archive's export), and every other
    instance's writes queued behind it (an add waited 4.1 s behind a 4.5 s read)."""
    uc.add_memory(workbench, uc.AddMemory(instance=instance, content="The boiler was serviced."))
    done: dict[str, float] = {}

    def add(name: str) -> None:
        started = time.monotonic()
        uc.add_memory(workbench, uc.AddMemory(instance=name, content="The shed key is blue."))
        done[name] = time.monotonic() - started

    with psycopg.connect(workbench.services.postgres_url()) as reader:  # a transaction holding its read
        reader.execute("SELECT count(*) FROM memory WHERE instance = %s", (instance,))
        new, other = f"{instance}-new", instance
        for name in (new, other):
            thread = threading.Thread(target=add, args=(name,))
            thread.start()
            thread.join(timeout=10)
        assert set(done) == {new, other}, "waited for the read"  # before: both until the read ended
        reader.rollback()
    assert workbench.index.count(new) == 1
    with workbench.pool().connection() as conn:  # made as PARTITION OF would make them
        parents = conn.execute("SELECT inhrelid::regclass::text, inhparent::regclass::text FROM pg_inherits "
                               "WHERE inhrelid::regclass::text = ANY(%s)",
                               ([partition_name(new), postings_name(new), lexemes_name(new)],)).fetchall()
        triggers = conn.execute("SELECT count(*) FROM pg_trigger WHERE tgrelid = %s::regclass",
                                (partition_name(new),)).fetchone()[0]
        indexes = {conn.execute("SELECT count(*) FROM pg_indexes WHERE tablename = %s", (partition_name(n),)
                                ).fetchone()[0] for n in (new, other)}
    assert sorted(parents) == sorted([(partition_name(new), "memory"), (postings_name(new), "memory_term"),
                                      (lexemes_name(new), "memory_lexeme")])
    assert triggers >= 1 and len(indexes) == 1  # its row trigger, and as many indexes as an older partition


def test_a_new_process_first_write_does_not_wait_for_another_writes_transaction(settings, workbench, instance):
    """A runtime's first write makes sure the model's HNSW index exists (`ensure_model_hnsw_index`). CREATE
    INDEX IF NOT EXISTS waits for its SHARE lock on `memory` even when the index is there, so it waited for
    any open write transaction (an import into an instance) and queued every instance's writes behind it:
    the catalog is asked first."""
    uc.add_memory(workbench, uc.AddMemory(instance=instance, content="The boiler was serviced."))
    done: list[float] = []

    def first_write() -> None:
        started = time.monotonic()
        with Workbench(settings) as fresh:  # another process's runtime, as a restarted API worker's
            uc.add_memory(fresh, uc.AddMemory(instance=f"{instance}-other", content="The shed key is blue."))
        done.append(time.monotonic() - started)

    with psycopg.connect(workbench.services.postgres_url()) as writer:  # an open write transaction
        writer.execute("UPDATE memory SET tags = tags WHERE instance = %s", (instance,))
        thread = threading.Thread(target=first_write)
        thread.start()
        thread.join(timeout=15)
        assert done, "waited for the write transaction"
        writer.rollback()
