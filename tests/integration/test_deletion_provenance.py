"""A deletion finds what to remove and redact by key, through the sets kept beside the thoughts
(`core.conversation.provenance`), never by scanning the instance; data written without those sets is
deleted the same way once they are built; and a deleted chain leaves none of its entries behind."""

from __future__ import annotations

import pytest
import redis

from core.admin.deletion import delete_chain, delete_memory
from core.archive.chains import export_chains, restore_chain
from core.archive.ids import IdMap
from core.conversation import provenance
from core.conversation.keys import (
    chain_feedback_key,
    chain_key,
    chain_keys_pattern,
    chain_tombstone,
    feedback_index_key,
    feedback_key,
    provenance_key,
    thought_key,
)
from core.conversation.turn import Remember, UiRememberParams

MARKER = "qzvprov4471"  # one lexeme found nowhere else
SAID = f"My locker code at the climbing gym is {MARKER}, next to the sauna."


def turn(wb, instance, chain, text):
    return Remember(wb).run(UiRememberParams(thought=text, chain_id=chain), instance=instance)


def retrieved_from(result, chain: str) -> str:
    """The id of a memory of `chain` the turn retrieved (the message, or an observation formed from it)."""
    ids = [c.id for c in result.context if c.chain_id == chain]
    assert ids, f"the turn retrieved nothing of {chain}"
    return ids[0]


def holding(r, pattern: str, needle: str) -> list[str]:
    """The keys matching `pattern` whose value holds the needle."""
    read = {"string": r.get, "hash": r.hgetall, "set": r.smembers, "zset": lambda k: r.zrange(k, 0, -1)}
    return sorted(k for k in r.scan_iter(match=pattern, count=1000)
                  if needle in str(read.get(r.type(k), lambda _: "")(k)))


def index_keys(r, instance: str) -> list[str]:
    """Every provenance key of the instance: what a database of an earlier version lacks."""
    return [k for pattern in (f"chainkeys:{instance}:*", f"retrieved:{instance}:*",
                              f"chainfeedback:{instance}:*", f"retrievedby:{instance}:*")
            for k in r.scan_iter(match=pattern, count=1000)] + [provenance_key(instance)]


def refuse(*args, **kwargs):
    raise AssertionError("a deletion scanned the keyspace")


@pytest.fixture
def no_scan(monkeypatch):
    """Makes any SCAN of Redis fail the test (the deletion must read by key)."""
    monkeypatch.setattr(redis.Redis, "scan_iter", refuse)
    monkeypatch.setattr(redis.Redis, "scan", refuse)


@pytest.mark.parametrize("written_before_the_index", [False, True])
def test_a_chain_that_retrieved_the_deleted_text_is_redacted(workbench, instance, written_before_the_index,
                                                            way, monkeypatch):
    wb, r = workbench, workbench.redis()
    turn(wb, instance, "locker", SAID)
    asked = turn(wb, instance, "asked", "What is my locker code at the climbing gym?")
    memory = retrieved_from(asked, "locker")
    assert holding(r, "*{asked}*", MARKER)  # its prompt, context, answer and served result quote it
    if written_before_the_index:
        r.delete(*index_keys(r, instance))
    else:
        provenance.ensure(wb.thoughts, instance)  # built already: the deletion reads only by key
        assert r.smembers(f"retrievedby:{instance}:{memory}") == {"asked"}
        assert memory in r.smembers(f"retrieved:{instance}:{{asked}}")
        monkeypatch.setattr(redis.Redis, "scan", refuse)

    report = delete_chain(wb, instance, "locker")

    monkeypatch.undo()
    assert report.thoughts == 3 and report.requests == 1 and report.feedback == 1 and report.copies >= 3
    assert holding(r, f"*{instance}*", MARKER) == []
    assert r.hget(thought_key(instance, "asked", asked.thought3_id), "context").count("[deleted]") >= 1
    assert r.exists(provenance_key(instance))  # built on first use when it was missing


def test_a_second_deletion_after_the_build_reads_by_key_only(workbench, instance, no_scan):
    wb = workbench
    wb.redis().set(provenance_key(instance), "0")  # a fresh instance: nothing written before the index
    turn(wb, instance, "first", SAID)
    retrieved_from(turn(wb, instance, "second", "What is my locker code at the climbing gym?"), "first")

    report = delete_chain(wb, instance, "first")

    assert report.copies >= 3 and report.thoughts == 3


@pytest.fixture(params=["standalone", "cluster"])
def way(request, workbench, monkeypatch):
    """The store writes as on a standalone server, or as on a cluster (a script per slot, the rest
    after it), which a standalone server runs just as well."""
    monkeypatch.setattr(workbench.thoughts, "cluster", request.param == "cluster")
    return request.param


def test_a_deleted_chain_leaves_no_index_entry(workbench, instance, way):
    wb, r = workbench, workbench.redis()
    turn(wb, instance, "told", SAID)
    turn(wb, instance, "told", "And the bike lock code is 4471.")
    memory = retrieved_from(turn(wb, instance, "recalled", "What is my locker code at the climbing gym?"),
                            "told")
    assert "recalled" in r.smembers(f"retrievedby:{instance}:{memory}")

    delete_chain(wb, instance, "recalled")
    delete_chain(wb, instance, "told")

    for chain in ("told", "recalled"):
        assert [k for k in r.scan_iter(match=chain_keys_pattern(instance, chain), count=1000)
                if k != chain_tombstone(instance, chain)] == []
    named = {k: r.smembers(k) for k in r.scan_iter(match=f"retrievedby:{instance}:*", count=1000)}
    assert {k: v for k, v in named.items() if v & {"told", "recalled"}} == {}


def test_a_deleted_memory_leaves_no_index_entry(workbench, instance):
    """The chains that retrieved a deleted memory keep their (redacted) records, not its entries."""
    wb, r = workbench, workbench.redis()
    turn(wb, instance, "told", SAID)
    memory = retrieved_from(turn(wb, instance, "asked", "What is my locker code at the climbing gym?"), "told")
    assert r.sismember(f"retrieved:{instance}:{{asked}}", memory)

    delete_memory(wb, instance, memory, chain_id="told")

    assert not r.exists(f"retrievedby:{instance}:{memory}")
    assert not r.sismember(f"retrieved:{instance}:{{asked}}", memory)


def test_stray_feedback_of_a_racing_turn_is_found(workbench, instance, way):
    """On a cluster a turn writes its feedback after its thoughts: a deletion in between leaves a
    feedback hash whose thought is gone, found by the chain's feedback set."""
    wb, r = workbench, workbench.redis()
    provenance.ensure(wb.thoughts, instance)
    kept = turn(wb, instance, "raced", "A note the deletion raced.")
    ids = r.zrange(chain_key(instance, "raced"), 0, -1)
    r.delete(*(thought_key(instance, "raced", i) for i in ids), chain_key(instance, "raced"))
    assert r.sismember(chain_feedback_key(instance, "raced"), kept.thought2_id)
    assert r.exists(feedback_key(kept.thought2_id))

    report = delete_chain(wb, instance, "raced")

    assert report.feedback == 1 and not r.exists(feedback_key(kept.thought2_id))
    assert r.zscore(feedback_index_key(instance), kept.thought2_id) is None
    assert [k for k in r.scan_iter(match=chain_keys_pattern(instance, "raced"), count=1000)
            if k != chain_tombstone(instance, "raced")] == []


def test_a_restored_chain_has_its_sets(workbench, instance):
    wb, r = workbench, workbench.redis()
    turn(wb, instance, "told", SAID)
    retrieved_from(turn(wb, instance, "asked", "What is my locker code at the climbing gym?"), "told")
    target = f"{instance}-copy"
    for line in export_chains(wb, instance):
        restore_chain(wb, line, IdMap(instance, target))

    restored = r.smembers(f"retrieved:{target}:{{asked}}")
    assert restored and all(r.sismember(f"retrievedby:{target}:{m}", "asked") for m in restored)
    assert len(r.smembers(chain_feedback_key(target, "asked"))) == 1
    delete_chain(wb, target, "asked")
    assert not any(r.sismember(f"retrievedby:{target}:{m}", "asked") for m in restored)
