"""Two `workbench api` processes on the same Redis and Postgres serve one chain: its turns alternate
between them, and thought numbers, the previous answer's feedback and the index all come out as if one
process had served them."""

from __future__ import annotations

import uuid

import httpx

from core import usecases as uc
from tests.support.api import process_server

TURNS = 6


def test_one_chain_alternating_between_two_api_processes(workbench, data_dir, instance):
    key = uc.CreateKey(name=f"k-{uuid.uuid4().hex[:10]}", instances=[instance])
    secret = uc.create_key(workbench, key).secret
    headers = {"Authorization": f"Bearer {secret}"}
    with process_server(data_dir) as one, process_server(data_dir) as two:
        results = []
        for n in range(1, TURNS + 1):
            url = (one, two)[n % 2]
            response = httpx.post(f"{url}/v1/instances/{instance}/remember", headers=headers, timeout=60,
                                  json={"thought": f"step {n} of the garden plan: plant row {n}",
                                        "chain_id": "garden", "thought_number": n, "total_thoughts": TURNS,
                                        "next_thought_needed": n < TURNS})
            assert response.status_code == 200, response.text
            results.append(response.json())
        conversation = httpx.get(f"{two}/v1/instances/{instance}/chains/garden", headers=headers).json()

    assert results[0]["previous_feedback"] is None
    for previous, turn in zip(results, results[1:]):
        feedback = turn["previous_feedback"]  # scored by the other process from this follow-up
        assert feedback["answer_id"] == previous["thought2_id"] and feedback["continued"] == 1
    users = [m["thought"] for m in conversation["messages"] if m["role"] == "user"]
    assert [u["thought_number"] for u in users] == list(range(1, TURNS + 1))
    assert [u["id"] for u in users] == [r["thought1_id"] for r in results]
    seqs = [m["thought"]["seq"] for m in conversation["messages"]]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    # Each turn's user thought is in the memory index (extractive answers are not indexed).
    indexed = workbench.index.get(instance, [r["thought1_id"] for r in results])
    assert sorted(m.id for m in indexed) == sorted(r["thought1_id"] for r in results)
