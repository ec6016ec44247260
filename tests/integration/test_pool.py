"""The Postgres pools: each hands out the connection returned last, so one server process stays warm; a
process opens its search pool once."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

from core.runtime import Workbench
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


def test_threads_that_search_at_once_share_one_search_pool(settings):
    """The search pool opens at the first search; searches that start together (an evaluation's threads)
    open it once, and closing the Workbench closes it."""
    wb = Workbench(settings)
    try:
        barrier = threading.Barrier(6)

        def first_search_pool():
            barrier.wait()
            return wb.search_pool()

        with ThreadPoolExecutor(6) as ex:
            pools = list(ex.map(lambda _: first_search_pool(), range(6)))
        assert len({id(p) for p in pools}) == 1 and pools[0] is not wb.pool()
    finally:
        wb.close()
    assert pools[0].closed
