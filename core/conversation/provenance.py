"""Which chains retrieved a memory, and which keys a chain has: read by key, never by a SCAN.

A deletion must find the chains whose turns retrieved a deleted memory (`core.admin.redaction`), every
key of the deleted chain, and the feedback naming it (`core.admin.deletion`). Scanning the instance for
them costs the whole instance on each deletion; instead each writer notes, in the same pipeline or
script as the record itself:
- the ids a turn's metrics thought or served result names (`names`): in the chain's `retrieved` set, and
  the chain in each id's `retrievedby` set;
- a served result's key in the chain's `chainkeys` set (its chain zset lists only thoughts);
- an answer with a feedback hash in the chain's `chainfeedback` set.
A chain's deletion removes them with its keys (`forget`, before the keys go).

The sets may name more than is there (a served result expires after a day; deleting one thought leaves
its chain's sets as they were): readers check the records themselves, so the outcome is that of a scan.

Data written before the sets existed has none of them: the first deletion on an instance builds them
once (`ensure`), with the scan deletions used to run every time, then sets the instance's `provenance`
marker. Building, rather than falling back to a scan while the marker is missing, keeps a single way of
reading, so both give the same result by construction; its cost (one scan of the instance) is paid once.
The builder also lists thought keys that a crashed or older writer left out of their chain's zset.
"""

from __future__ import annotations

import json
import re
import time
from collections import defaultdict
from collections.abc import Iterable
from typing import TYPE_CHECKING

from core.conversation.keys import (
    chain_feedback_key,
    chain_key,
    chain_keys_key,
    chain_meta_key,
    chain_retrieved_key,
    chain_tombstone,
    feedback_index_key,
    instance_requests_pattern,
    provenance_key,
    retrieved_by_key,
    thought_key,
    thoughts_pattern,
)
from core.ids import ID_PATTERN

if TYPE_CHECKING:
    import redis

    from core.conversation.thoughts import ThoughtStore

# A memory a turn retrieved is a JSON object with its "id", in the metrics thought's CONTEXT_FIELD or
# anywhere in the served result; the Lua scripts below read it with the same pattern.
ID_IN_JSON = re.compile(r'"id": ?"([^"]*)"')
CONTEXT_FIELD = "context"  # TurnMetrics.context: the memories the turn retrieved
_BATCH = 500

# For each of KEYS, the ids its value names (a hash's ARGV[1] field, a string's whole value), joined by
# spaces (ids hold none).
_NAMES = """
local out = {}
for i, key in ipairs(KEYS) do
  local kind = redis.call('TYPE', key)['ok']
  local value
  if kind == 'hash' then value = redis.call('HGET', key, ARGV[1])
  elseif kind == 'string' then value = redis.call('GET', key) end
  local ids = {}
  if value then for id in string.gmatch(value, '"id": ?"([^"]*)"') do ids[#ids + 1] = id end end
  out[i] = table.concat(ids, ' ')
end
return out
"""
# The builder's sets of one chain (KEYS[2..4]: chainkeys, retrieved, chainfeedback; ARGV[1]: their
# members as JSON lists), unless the chain was deleted after the builder started (KEYS[1], its
# tombstone, holds the time; ARGV[2]: the start): a chain deleted meanwhile must not get sets back,
# while one deleted earlier keeps what its deletion left (a stray key is found by them).
_BUILD_CHAIN = """
local deleted = redis.call('GET', KEYS[1])
if deleted and tonumber(deleted) > tonumber(ARGV[2]) then return 0 end
local sets = cjson.decode(ARGV[1])
for i, members in ipairs(sets) do
  for j = 1, #members, 1000 do
    redis.call('SADD', KEYS[i + 1], unpack(members, j, math.min(j + 999, #members)))
  end
end
return 1
"""


def names(value: str | None) -> list[str]:
    """The memory ids a stored value names (a served result, or a metrics thought's context)."""
    return _ids(ID_IN_JSON.findall(value)) if value else []


def retrieved_by(instance: str, chain_id: str, ids: Iterable[str]) -> list[list[str]]:
    """The commands noting that the chain's turns retrieved `ids` (each names its key second); the
    chain's own `retrieved` set is written with its records, in its slot."""
    return [["SADD", retrieved_by_key(instance, i), chain_id] for i in ids]


def note(p: redis.client.Pipeline, instance: str, chain_id: str, thought: dict[str, str]) -> None:
    """Queue the notes of a thought hash written by `p` (imports and restores write thoughts as hashes)."""
    ids = names(thought.get(CONTEXT_FIELD))
    if ids:
        p.sadd(chain_retrieved_key(instance, chain_id), *ids)
        for command in retrieved_by(instance, chain_id, ids):
            p.execute_command(*command)


def ensure(store: ThoughtStore, instance: str) -> None:
    """Build the instance's sets from its records unless they were (see the module docstring)."""
    if not store.r.exists(provenance_key(instance)):
        _build(store, instance)
        store.r.set(provenance_key(instance), f"{time.time():.3f}")


def chains_naming(store: ThoughtStore, instance: str, ids: Iterable[str], skip: set[str]) -> set[str]:
    """The chains of the instance (but `skip`) with a thought or served result naming one of `ids`."""
    ids = set(ids)
    if not ids:
        return set()
    p = store.r.pipeline(transaction=False)
    for i in ids:
        p.smembers(retrieved_by_key(instance, i))
    candidates = sorted(set().union(*p.execute()) - skip)
    keys = record_keys(store, instance, candidates)
    named = _names(store, {c: keys[c] for c in candidates})
    return {c for c in candidates if any(ids.intersection(n) for n in named[c])}


def record_keys(store: ThoughtStore, instance: str, chains: Iterable[str]) -> dict[str, list[str]]:
    """The keys of each chain's records (thoughts and served results), in one round trip."""
    chains = list(chains)
    p = store.r.pipeline(transaction=False)
    for c in chains:
        p.zrange(chain_key(instance, c), 0, -1)
        p.smembers(chain_keys_key(instance, c))
    replies = p.execute()
    return {c: [thought_key(instance, c, t) for t in replies[2 * n]] + sorted(replies[2 * n + 1])
            for n, c in enumerate(chains)}


def chain_keys(store: ThoughtStore, instance: str, chain_id: str) -> list[str]:
    """Every key of the chain that exists, but its tombstone: its records, its zset and meta, its sets."""
    own = [chain_key(instance, chain_id), chain_meta_key(instance, chain_id),
           chain_keys_key(instance, chain_id), chain_retrieved_key(instance, chain_id),
           chain_feedback_key(instance, chain_id)]
    keys = record_keys(store, instance, [chain_id])[chain_id] + own
    p = store.r.pipeline(transaction=False)
    for k in keys:
        p.exists(k)
    return [k for k, there in zip(keys, p.execute(), strict=True) if there]


def chain_feedback(store: ThoughtStore, instance: str, chain_id: str) -> list[str]:
    """The answers whose feedback hash names the chain (its thought may be gone: a turn that raced a
    deletion on a cluster writes its feedback after its thoughts)."""
    answers = sorted(store.r.smembers(chain_feedback_key(instance, chain_id)))
    return [a for a, (chain,) in zip(answers, store.feedback_fields(answers, ["chain_id"]), strict=True)
            if chain == chain_id]


def forget(p: redis.client.Pipeline, r: redis.Redis, instance: str, chain_id: str) -> None:
    """Queue on `p` the removal of the chain from the `retrievedby` sets of the ids it retrieved (its own
    sets go with its keys, after this)."""
    for i in r.smembers(chain_retrieved_key(instance, chain_id)):
        p.srem(retrieved_by_key(instance, i), chain_id)


def drop_memories(store: ThoughtStore, instance: str, ids: Iterable[str]) -> None:
    """Remove the entries of deleted memories: each one's `retrievedby` set and its place in the
    `retrieved` sets of the chains that retrieved it."""
    ids = sorted(ids)
    if not ids:
        return
    p = store.r.pipeline(transaction=False)
    for i in ids:
        p.smembers(retrieved_by_key(instance, i))
    holders = p.execute()
    p = store.r.pipeline(transaction=False)
    for i, chains in zip(ids, holders, strict=True):
        for c in chains:
            p.srem(chain_retrieved_key(instance, c), i)
        p.delete(retrieved_by_key(instance, i))
    p.execute()


def chain_of(key: str) -> str:
    """The chain of a key with a `{chain}` hash tag."""
    return key[key.index("{") + 1:key.index("}")]


def _names(store: ThoughtStore, by_chain: dict[str, list[str]]) -> dict[str, list[list[str]]]:
    """The ids each key of each chain names, by chain, key by key."""
    script = store.r.register_script(_NAMES)
    # On a cluster a script may only touch one slot: one chain (one hash tag) per call.
    groups = list(by_chain.values()) if store.cluster else [[k for ks in by_chain.values() for k in ks]]
    out: dict[str, list[list[str]]] = defaultdict(list)
    for group in groups:
        for i in range(0, len(group), _BATCH):
            batch = group[i:i + _BATCH]
            for key, ids in zip(batch, script(keys=batch, args=[CONTEXT_FIELD]), strict=True):
                out[chain_of(key)].append(_ids(ids.split()))
    return {c: out.get(c, []) for c in by_chain}


def _ids(found: Iterable[str]) -> list[str]:
    """The distinct ids among what was found, in order: a name that is no valid id was never deleted."""
    return [i for i in dict.fromkeys(found) if ID_PATTERN.fullmatch(i)]


def _build(store: ThoughtStore, instance: str) -> None:
    """The instance's sets from its records, found by a scan of its thoughts and served results and a
    read of its feedback index."""
    r, started = store.r, f"{time.time() + 0.001:.3f}"  # a tombstone's time is rounded to the millisecond
    by_chain: dict[str, list[str]] = defaultdict(list)
    for pattern in (thoughts_pattern(instance), instance_requests_pattern(instance)):
        for key in r.scan_iter(match=pattern, count=1000):
            by_chain[chain_of(key)].append(key)
    answers = r.zrange(feedback_index_key(instance), 0, -1)
    feedback: dict[str, list[str]] = defaultdict(list)
    for a, (chain,) in zip(answers, store.feedback_fields(answers, ["chain_id"]), strict=True):
        if chain:
            feedback[chain].append(a)
    listed = record_keys(store, instance, by_chain)
    named = _names(store, by_chain)
    script = r.register_script(_BUILD_CHAIN)
    chains = sorted(set(by_chain) | set(feedback))
    for start in range(0, len(chains), _BATCH):
        batch = chains[start:start + _BATCH]
        sets = {c: [sorted(set(by_chain.get(c, [])) - set(listed.get(c, []))),
                    sorted({m for ids in named.get(c, []) for m in ids}), sorted(feedback.get(c, []))]
                for c in batch}
        # One round trip a batch; redis-py refuses scripts in a cluster pipeline: one call a chain there.
        p = None if store.cluster else r.pipeline(transaction=False)
        replies = [script(keys=[chain_tombstone(instance, c), chain_keys_key(instance, c),
                                chain_retrieved_key(instance, c), chain_feedback_key(instance, c)],
                          args=[json.dumps(sets[c]), started], client=p) for c in batch]
        written = replies if p is None else p.execute()
        p = r.pipeline(transaction=False)
        for c, ok in zip(batch, written, strict=True):
            for command in retrieved_by(instance, c, sets[c][1]) if ok else []:
                p.execute_command(*command)
        p.execute()
