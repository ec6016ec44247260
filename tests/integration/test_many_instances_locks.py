"""Many instances: each is a partition of `memory` with its own relations (indexes, its postings' table),
and a statement on `memory` for one instance may lock every partition (a chain's deletion, `DELETE FROM
memory WHERE instance = … AND chain_id = …`, held 1,626 locks among 800 instances). With ~1,000 instances
concurrent statements ran Postgres out of its lock table, 64 a connection by default ("out of shared memory":
a deletion beside writers, an evaluation, in the test suite). The embedded server's holds four times as
many (`MAX_LOCKS_PER_TRANSACTION`)."""

from __future__ import annotations

from core.services.embedded_postgres import MAX_LOCKS_PER_TRANSACTION


def test_the_embedded_servers_lock_table_holds_thousands_of_instances(workbench):
    with workbench.pool().connection() as conn:
        assert int(conn.execute("SHOW max_locks_per_transaction").fetchone()[0]) == MAX_LOCKS_PER_TRANSACTION == 256
