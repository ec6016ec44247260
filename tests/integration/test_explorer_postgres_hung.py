"""The Memory explorer's Chains path with Postgres hung (every postgres process SIGSTOPped, as a suspended
server or a full disk's stall leaves it): the chain list and an open chain are Redis's, so they are shown, and
the one Postgres part (the chain's rows in the memory index) says it was not counted and what to do. Before,
the open chain failed whole once the time limit ran out (5 s to connect, 32 s a statement), its export too,
and the sidebar's instance list waited 5 s every run.
"""

from __future__ import annotations

import time

import pytest

from core import usecases as uc
from tests.support.faults import postgres_pids, suspended


def test_the_chains_path_shows_what_redis_holds_while_postgres_hangs(workbench, instance):
    if not workbench.settings.postgres_embedded:
        pytest.skip("needs the embedded Postgres, to suspend it")
    said = uc.remember(workbench, uc.UiRememberParams(thought="My bike is a green Brompton.", instance=instance))
    chain = said.chain_id
    with suspended(postgres_pids(workbench.settings.data_dir)):
        t0 = time.monotonic()
        page = uc.chains(workbench, uc.ChainList(instance=instance))
        names = uc.instance_names(workbench)
        listed_s = time.monotonic() - t0
        exported = uc.chain_export(workbench, uc.ChainRef(instance=instance, chain_id=chain))
        export_s = time.monotonic() - t0 - listed_s
        detail = uc.chain(workbench, uc.ChainRef(instance=instance, chain_id=chain))
        opened_s = time.monotonic() - t0 - listed_s - export_s

    assert [c.chain_id for c in page.chains] == [chain] and instance in names
    assert listed_s < 3, listed_s  # the list and the sidebar's instances: not the 5 s of a Postgres wait
    assert "green Brompton" in exported.document and export_s < 1, export_s
    assert any("green Brompton" in t.thought for t in detail.thoughts)
    assert detail.indexed is None and opened_s < 3, opened_s  # shown without its count, not failed after 32 s
    assert detail.index_note.startswith("Its rows in the memory index were not counted: Postgres did not answer")
    assert "Check that Postgres runs" in detail.index_note
    deadline = time.monotonic() + 10  # Postgres continued: opened again, the chain's rows are counted
    while (again := uc.chain(workbench, uc.ChainRef(instance=instance, chain_id=chain))).indexed is None:
        assert time.monotonic() < deadline, again.index_note
        time.sleep(0.5)
    assert again.indexed >= 1 and again.index_note is None
