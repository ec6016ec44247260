"""A search whose query is a memory's id finds that memory first, whatever it says: the Chat page shows the ids
of the memories a turn used "to find one in the Memory explorer". One use case for the explorer, the CLI and
the HTTP API."""

from __future__ import annotations

import json

import httpx

from core import usecases as uc
from tests.support.api import thread_server
from tests.support.cli import in_process_cli


def search(wb, instance: str, query: str, **options) -> uc.SearchOutcome:
    return uc.memory_search(wb, uc.ExplorerSearch(query=query, instance=instance, **options))


def step(n: int) -> uc.MemoryEntry:
    return uc.MemoryEntry(skill_name="search", thinking=f"look up flight {n}", command=f"flights {n}",
                          result=f"flight {n} found")


def test_each_kind_of_id_finds_its_memory_first(workbench, instance):
    turn = uc.remember(workbench, uc.UiRememberParams(thought="I moved to Lisbon in March.", instance=instance,
                                                      chain_id="move"))
    with workbench.pool().connection() as conn:
        observation = conn.execute("SELECT id FROM memory WHERE instance = %s AND kind = 'observation'",
                                   (instance,)).fetchone()[0]
    added = uc.add_memory(workbench, uc.AddMemory(instance=instance, content="Ada's favourite colour is teal"))
    entries = [uc.bank_add(workbench, uc.BankAdd(instance=instance, bank="ops", entry=step(n), max_entries=2,
                                                 compression_threshold=2)) for n in range(3)]
    summary = next(e.compression.summary_id for e in entries if e.compression)
    live = entries[-1].entry.id

    for memory_id, kind, index_id in [(turn.thought1_id, "user", turn.thought1_id),
                                      (observation, "observation", observation),
                                      (added.id, "observation", added.id),
                                      (live, "bank_entry", f"be-{live}"), (summary, "bank_summary", f"bs-{summary}")]:
        for mode in ("hybrid", "vector", "text"):
            out = search(workbench, instance, memory_id, mode=mode, kinds=["insight"])  # filters aside
            assert out.named == index_id and out.hits[0].id == index_id, (memory_id, mode)
            assert out.hits[0].kind == kind
    first = search(workbench, instance, turn.thought1_id).hits[0]
    assert (first.chain_id, first.content) == ("move", "I moved to Lisbon in March.")
    assert search(workbench, instance, f"be-{live}").named == f"be-{live}"  # the index's own id too
    assert len(search(workbench, instance, added.id, top_k=1).hits) == 1

    words = search(workbench, instance, "Lisbon")
    assert words.named is None and words.hits
    assert search(workbench, instance, "no-such-memory-id").named is None


def test_a_shared_memory_by_its_id(workbench, instance):
    shared = uc.add_memory(workbench, uc.AddMemory(instance=uc.SHARED_INSTANCE, content="The office closes at 6"))
    try:
        out = search(workbench, instance, shared.id)
        assert out.named == shared.id and out.hits[0].shared and out.hits[0].instance == uc.SHARED_INSTANCE
    finally:
        uc.forget(workbench, uc.Forget(instance=uc.SHARED_INSTANCE, target="memory", id=shared.id))


def test_over_http_and_the_cli(workbench, settings, instance, monkeypatch):
    added = uc.add_memory(workbench, uc.AddMemory(instance=instance, content="The spare key is under the mat"))
    created = uc.create_key(workbench, uc.CreateKey(name=f"k-{instance}", instances=[instance]))
    with thread_server(workbench) as url:
        found = httpx.post(f"{url}/v1/instances/{instance}/memories/search", json={"query": added.id},
                           headers={"Authorization": f"Bearer {created.secret}"}, timeout=60)
    assert found.status_code == 200, found.text
    assert found.json()["named"] == added.id and found.json()["hits"][0]["id"] == added.id

    run = in_process_cli(settings, workbench, monkeypatch)
    code, out, err = run("memory", "search", added.id, "--instance", instance)
    assert code == 0, err
    result = json.loads(out)
    assert result["named"] == added.id and result["hits"][0]["content"] == "The spare key is under the mat"
