"""Bulk load of several new instances: each partition gets its indexes built once, before ATTACH, and
attached to the parent's, so none is built twice and every instance is searchable afterwards."""

import uuid
from datetime import UTC, datetime

from core.index.names import postings_name
from core.models import MemoryRecord
from core.retrieval.hybrid import SearchRequest, hybrid_search

# Each index of the partitions named, with the parent index it is attached to (none when it stands alone,
# as an index ATTACH built beside one that did not match would) and both definitions from USING on.
INDEXES = """
SELECT c.relname, pi.relname,
       substr(pg_get_indexdef(i.indexrelid), strpos(pg_get_indexdef(i.indexrelid), ' USING ')),
       substr(pg_get_indexdef(pi.oid), strpos(pg_get_indexdef(pi.oid), ' USING '))
FROM pg_class c
JOIN pg_index i ON i.indrelid = c.oid
LEFT JOIN pg_inherits ii ON ii.inhrelid = i.indexrelid
LEFT JOIN pg_class pi ON pi.oid = ii.inhparent
WHERE c.relname = ANY(%s)
"""


def test_each_new_instance_gets_its_indexes_once(keyword_workbench):
    wb = keyword_workbench
    instances = [f"bulk-{uuid.uuid4().hex[:8]}-{k}" for k in range(3)]
    sizes = [30, 6, 6]  # a large one, then small ones that attach beside it
    now = datetime(2026, 6, 1, tzinfo=UTC)
    records = [MemoryRecord(instance=inst, id=f"m{i}", kind="turn", created_at=now,
                            content=f"memory {i} of {inst} about paris" if i == 0 else f"memory {i} about dogs")
               for inst, n in zip(instances, sizes, strict=True) for i in range(n)]
    assert wb.index.bulk_load(records, batch_size=7) == sum(sizes)

    with wb.pool().connection() as conn:
        partitions = [r[0] for r in conn.execute(
            "SELECT relname FROM memory_partition WHERE instance = ANY(%s)", (instances,)).fetchall()]
        assert len(partitions) == 3
        parents = {r[0] for r in conn.execute(
            "SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
            "WHERE i.indrelid = 'memory'::regclass").fetchall()}
        attached = conn.execute(INDEXES, (partitions,)).fetchall()
        postings = conn.execute(INDEXES, ([postings_name(i) for i in instances],)).fetchall()
    for partition in partitions:
        assert sorted(str(parent) for table, parent, *_ in attached if table == partition) == sorted(parents)
    assert sorted(str(parent) for _, parent, *_ in postings) == ["memory_term_read"] * 3
    # Postgres attaches an ascending index to a descending one: the definitions must match themselves.
    assert all(own == theirs for *_, own, theirs in attached + postings)

    for inst in instances:
        found = hybrid_search(wb.pool(), wb.embedder, SearchRequest(query="paris", instance=inst, top_k=1))
        assert [r.memory.id for r in found.results] == ["m0"]
