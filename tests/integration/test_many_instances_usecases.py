"""Many instances, the use cases around the search: each instance is a partition of `memory`, and a statement
Postgres cannot prune while planning it opens and locks every instance's partitions. Among 800 instances (one
memory shared): the Explorer's list of instances counted each instance apart, 2,400 round trips and 436 ms (now
120 ms); an instance's archive read its relevance marks' memories joined on the instance column, 105 ms of a
2-memory instance's export (now by the instance named)."""

from __future__ import annotations

from datetime import UTC, datetime

from core import usecases as uc
from core.admin import explorer
from core.archive.tables import export_relevance_marks
from core.conversation.keys import INSTANCES, chains_key
from core.index.names import partition_name

# The partitions of `memory` the connection `pid` holds a lock on.
LOCKED_BY = """SELECT array_agg(DISTINCT c.relname::text ORDER BY c.relname::text) FROM pg_locks l
               JOIN pg_class c ON c.oid = l.relation WHERE l.pid = %s AND c.relname = ANY(%s)"""


def _instances(workbench, instance: str, n: int = 12) -> list[str]:
    names = [f"{instance}-{i}" for i in range(n)]
    for name in names:
        uc.add_memory(workbench, uc.AddMemory(instance=name, content=f"The boiler of {name} was serviced."))
    return names


def test_the_list_of_instances_counts_each_ones_chains_memories_and_banks(workbench, instance, monkeypatch):
    names = _instances(workbench, instance)
    uc.add_memory(workbench, uc.AddMemory(instance=names[1], content="A second memory."))
    uc.bank_add(workbench, uc.BankAdd(instance=names[2], bank="steps", entry=uc.MemoryEntry(command="make")))
    chats = f"{instance}-chats"  # chains, nothing indexed yet
    workbench.redis().zadd(chains_key(chats), {"c1": 1.0, "c2": 2.0})
    workbench.redis().sadd(INSTANCES, chats)
    monkeypatch.setattr(explorer, "COUNTED_AT_ONCE", 5)  # three statements for these twelve
    try:
        rows = {r.instance: r for r in uc.instances(workbench)}
    finally:
        workbench.redis().delete(chains_key(chats))
        workbench.redis().srem(INSTANCES, chats)
    # a bank's entry is indexed too
    assert [(rows[n].indexed, rows[n].banks, rows[n].chains) for n in names[:3]] == [(1, 0, 0), (2, 0, 0),
                                                                                      (2, 1, 0)]
    assert all(rows[n].indexed == 1 for n in names[3:])
    assert (rows[chats].indexed, rows[chats].chains, rows[chats].banks) == (0, 2, 0)


def test_an_archives_relevance_marks_lock_their_instances_partition_only(workbench, instance):
    names = _instances(workbench, instance)
    memory = uc.memory_browse(workbench, uc.MemoryBrowse(instance=names[0])).hits[0]
    uc.mark_relevance(workbench, uc.MarkRelevance(instance=names[0], query="boiler", memory_id=memory.id,
                                                  relevant=True))
    marks = export_relevance_marks(workbench, names[0])
    first = next(marks)  # its transaction is open: the cursor's locks are held
    with workbench.pool().connection() as conn:
        locked = conn.execute("""SELECT array_agg(DISTINCT c.relname::text) FROM pg_locks l
                                 JOIN pg_class c ON c.oid = l.relation
                                 WHERE l.pid <> pg_backend_pid() AND c.relname = ANY(%s)""",
                              ([partition_name(n) for n in names],)).fetchone()[0]
    assert list(marks) == []
    assert first["kind"] == memory.kind and first["memory_id"] == memory.id
    assert datetime.fromisoformat(first["marked_at"]) <= datetime.now(UTC)
    assert locked == [partition_name(names[0])]  # joined on r.instance: all twelve


def test_reads_of_one_instance_name_its_partition_and_find_nothing_without_one(workbench, instance):
    """`MemoryIndex.get` and `records` read the instance's partition by name (`MemoryIndex.table`): over the
    parent, the pool's prepared statement was planned generically once over every partition (a turn's read
    by id 318 ms among 800 instances)."""
    names = _instances(workbench, instance, n=3)
    rows = {n: workbench.index.records(n, chains=[]) or workbench.index.records(
        n, ids=[h.id for h in uc.memory_browse(workbench, uc.MemoryBrowse(instance=n)).hits]) for n in names}
    assert all(len(found) == 1 and found[0].instance == n for n, found in rows.items())
    assert [r.id for r in workbench.index.get(names[1], [rows[names[1]][0].id, rows[names[0]][0].id])] == [
        rows[names[1]][0].id]  # another instance's id is not its row
    assert workbench.index.table(names[0]).as_string() == f'"{partition_name(names[0])}"'
    absent = f"{instance}-never"
    assert workbench.index.table(absent) is None
    assert workbench.index.get(absent, ["x"]) == [] and workbench.index.records(absent, ids=["x"]) == []
