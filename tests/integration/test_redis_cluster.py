"""The thought store on a real Redis Cluster of three local nodes (started here; skipped only where the
machine lacks Debian's redis-server): every key of a chain lives in the chain's slot, and the store's
operations — turns, feedback, the abandon sweep, paging, idempotent requests, the outbox, deletion,
analytics — work across the nodes."""

from __future__ import annotations

import time

import pytest
from redis.crc import key_slot

from core.analytics.load import load_feedback
from core.conversation.indexing import sync_index
from core.conversation.turn import Remember, UiRememberParams
from core.runtime import Workbench
from core.conversation.thoughts import CATEGORY_ASSISTANT, CATEGORY_USER
from tests.support.embedders import KeywordEmbedder
from tests.support.redis_cluster import missing_tools, redis_cluster

CHAINS = [f"chain-{i}" for i in range(8)]


@pytest.fixture(scope="module")
def cluster_wb(tmp_path_factory, settings, workbench):
    if reason := missing_tools():
        pytest.skip(reason)
    with redis_cluster(tmp_path_factory.mktemp("cluster")) as url:
        s = settings.model_copy(update={"redis_url": url, "redis_cluster": True,
                                        "database_url": workbench.services.postgres_url()})
        wb = Workbench(s, embedder=KeywordEmbedder())
        yield wb
        wb.close()


@pytest.fixture(scope="module")
def conversations(cluster_wb):
    instance = f"cl-{int(time.time())}"
    rm = Remember(cluster_wb)
    results = {c: [rm.run(UiRememberParams(thought=f"{text} ({c})", chain_id=c, request_id=f"{c}-{n}"),
                          instance=instance)
                   for n, text in enumerate(["my dog likes music", "thanks, what about redis", "no, python"])]
               for c in CHAINS}
    return instance, results


def test_the_cluster_is_real_and_a_chain_lives_in_one_slot(cluster_wb, conversations):
    instance, _ = conversations
    r = cluster_wb.redis()
    assert len(r.get_primaries()) == 3
    nodes = set()
    for chain in CHAINS:
        keys = list(r.scan_iter(match=f"*{{{chain}}}*", count=1000))
        prefixes = {k.split(":", 1)[0] for k in keys}
        assert {"thought", "chain", "chainmeta", "request"} <= prefixes
        assert {key_slot(k.encode()) for k in keys} == {key_slot(chain.encode())}
        nodes.add(r.get_node_from_key(keys[0]).name)
    assert len(nodes) > 1, "all chains landed on one node: the test proves nothing about the cluster"


def test_turns_feedback_and_paging(cluster_wb, conversations):
    instance, results = conversations
    store = cluster_wb.thoughts
    assert store.cluster and store.chain_count(instance) == len(CHAINS)
    assert {c.chain_id for c in store.chains(instance, limit=100)} == set(CHAINS)
    for chain, turns in results.items():
        thoughts = store.chain_thoughts(instance, chain)
        assert [t.category for t in thoughts if t.category != "ui_remember:metrics"] == \
            [CATEGORY_USER, CATEGORY_ASSISTANT] * 3
        fb = store.feedback([t.thought2_id for t in turns])
        assert [fb[t.thought2_id].continued for t in turns] == [1, 1, 0]
        assert fb[turns[1].thought2_id].corrected == f"no, python ({chain})"
        # Idempotent requests: a repeated request (same id, same message) returns the stored result, writes
        # nothing.
        again = Remember(cluster_wb).run(UiRememberParams(thought=f"my dog likes music ({chain})", chain_id=chain,
                                                          request_id=f"{chain}-0"), instance=instance)
        assert again.thought1_id == turns[0].thought1_id
        assert len(store.chain_thoughts(instance, chain)) == len(thoughts)
    frame = load_feedback(store, instance, sweep=False)
    assert len(frame) == 3 * len(CHAINS)


def test_sweep_outbox_and_deletion(cluster_wb, conversations):
    instance, results = conversations
    store = cluster_wb.thoughts
    marked = store.sweep_abandoned(instance, now=time.time() + 3600)
    assert marked == len(CHAINS)  # each chain's last answer never got its follow-up
    sync_index(store, cluster_wb.index)
    assert store.outbox_len() == 0
    # User thoughts (answers are extractive), beside the observations their statements became.
    assert cluster_wb.index.count(instance, kind="user") == 3 * len(CHAINS)
    gone = store.delete_thought(instance, CHAINS[0], results[CHAINS[0]][1].thought2_id)
    assert len(gone) == 2  # the answer and its metrics thought
    assert store.delete_chain(instance, CHAINS[1]) == 9
    assert store.chain_count(instance) == len(CHAINS) - 1
    assert not list(cluster_wb.redis().scan_iter(match=f"*{{{CHAINS[1]}}}*", count=1000))
