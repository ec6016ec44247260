"""The Postgres pool hands out the connection returned last, so one server process stays warm."""

from __future__ import annotations

from core.services.pool import FailFastPool


def _backend(conn) -> int:
    return conn.execute("SELECT pg_backend_pid()").fetchone()[0]


def test_the_connection_returned_last_is_handed_out_first(workbench):
    with FailFastPool(workbench.services.postgres_url(), min_size=3, max_size=3, open=True,
                      kwargs={"autocommit": True}) as pool:
        pool.wait(timeout=10)
        first, second, third = (pool.getconn() for _ in range(3))
        pids = [_backend(c) for c in (first, second, third)]
        for conn in (third, first, second):
            pool.putconn(conn)
        # Searches one after another all go to the last one returned, not to each idle one in turn.
        for _ in range(4):
            with pool.connection() as conn:
                assert _backend(conn) == pids[1]
        # When that one is busy, the next most recent comes out: the oldest idle one stays idle.
        with pool.connection() as a, pool.connection() as b:
            assert [_backend(a), _backend(b)] == [pids[1], pids[0]]
