"""A bounded load run on loopback: 16 clients x 20 ui_remember turns over HTTP (no LLM) against one
`workbench api` process, then every acknowledged turn is counted in Redis (its three thoughts) and in
Postgres (its user thought in the memory index): none may be lost. Timing is the benchmark's business
(`benchmarks/api_load.py`, 16 x 50); this test only bounds the run. Sixteen clients at once is what makes
a turn's writes interleave; more turns each would only make the run longer."""

from __future__ import annotations

import time
import uuid

from benchmarks.api_load import lost_turns, run_clients
from core import usecases as uc
from tests.support.api import process_server

CLIENTS, TURNS = 16, 20


def test_no_acknowledged_turn_is_lost_under_load(workbench, data_dir, instance):
    key = uc.CreateKey(name=f"k-{uuid.uuid4().hex[:10]}", instances=[instance])
    secret = uc.create_key(workbench, key).secret
    with process_server(data_dir, API_RATE_LIMIT="1000000/minute") as url:
        started = time.monotonic()
        run = run_clients(url, instance, secret, clients=CLIENTS, turns=TURNS)
        assert time.monotonic() - started < 120, "the load run is meant to stay bounded"
    assert run.errors == []
    assert len(run.turns) == CLIENTS * TURNS
    assert lost_turns(workbench, instance, run) == {"acknowledged": CLIENTS * TURNS, "missing_in_redis": 0,
                                                     "missing_in_postgres": 0}
    # Within each chain, the turns kept their order and numbers.
    for c in range(CLIENTS):
        users = [t for t in workbench.thoughts.chain_thoughts(instance, f"load-{c:02d}")
                 if t.category == uc.CATEGORY_USER]
        assert [t.thought_number for t in users] == list(range(1, TURNS + 1))
