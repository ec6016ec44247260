"""An instance's conversations in and out of an archive: every Redis key it has, field for field.

One archive line per chain: the chain's listing score, its meta hash, each thought hash with its score
in the chain, and each answer's feedback hash with its scores in the feedback index and the pending
set (the abandonment sweep). Hashes are kept as Redis holds them (strings), so a restored thought,
metrics thought or feedback record reads back exactly as the original, original times included.

Left out on purpose: served-request results (`request:` keys, an idempotency cache that expires after
a day) and queued outbox entries (the export indexes them first, so their rows are in the archive).

Restoring writes only what is missing: a thought, chain or feedback record already there (from an
earlier restore of the same archive, perhaps continued since) is left as it is.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from core.archive.ids import THOUGHT_KINDS, IdMap
from core.conversation import provenance
from core.conversation.keys import (
    INSTANCES,
    chain_feedback_key,
    chain_key,
    chain_meta_key,
    chains_key,
    feedback_index_key,
    feedback_key,
    feedback_pending_key,
    thought_key,
)

if TYPE_CHECKING:
    from core.runtime import Workbench

_PAGE = 500


def chain_count(wb: Workbench, instance: str) -> int:
    return int(wb.redis().zcard(chains_key(instance)))


def export_chains(wb: Workbench, instance: str) -> Iterator[dict[str, Any]]:
    r = wb.redis()
    start = 0
    while page := r.zrange(chains_key(instance), start, start + _PAGE - 1, withscores=True):
        start += _PAGE
        for chain_id, last_at in page:
            if line := _chain_line(r, instance, chain_id, last_at):
                yield line


def _chain_line(r, instance: str, chain_id: str, last_at: float) -> dict[str, Any] | None:
    scored = r.zrange(chain_key(instance, chain_id), 0, -1, withscores=True)
    p = r.pipeline(transaction=False)
    p.hgetall(chain_meta_key(instance, chain_id))
    for thought_id, _ in scored:
        p.hgetall(thought_key(instance, chain_id, thought_id))
        p.hgetall(feedback_key(thought_id))
        p.zscore(feedback_index_key(instance), thought_id)
        p.zscore(feedback_pending_key(instance), thought_id)
    meta, *rest = p.execute()
    if not meta and not scored:
        return None
    thoughts, feedback = [], []
    for (thought_id, score), i in zip(scored, range(0, len(rest), 4), strict=True):
        thought, fb, in_index, pending = rest[i:i + 4]
        if thought:
            thoughts.append({"score": score, "hash": thought})
        if fb and fb.get("instance") == instance:
            feedback.append({"answer_id": thought_id, "hash": fb, "index": in_index, "pending": pending})
    return {"chain_id": chain_id, "last_at": last_at, "meta": meta, "thoughts": thoughts,
            "feedback": feedback}


def thought_hash(h: dict[str, str], ids: IdMap) -> dict[str, str]:
    """A thought hash as the target instance holds it (see `core.archive.ids`)."""
    out = {**h, "id": ids.new_id(h["id"]), "instance": ids.target}
    if "answer_id" in out:  # a metrics thought names its answer
        out["answer_id"] = ids.new_id(out["answer_id"])
    if not ids.same and out.get("context", "").startswith("["):  # ...and the memories it retrieved
        items = json.loads(out["context"])
        for item in items:
            if isinstance(item, dict) and item.get("kind") in THOUGHT_KINDS and isinstance(item.get("id"), str):
                item["id"] = ids.new_id(item["id"])
        out["context"] = json.dumps(items)
    return out


def feedback_hash(h: dict[str, str], ids: IdMap) -> dict[str, str]:
    out = {**h, "instance": ids.target}
    for field in ("user_id", "metrics_id"):
        if out.get(field):
            out[field] = ids.new_id(out[field])
    return out


def restore_chain(wb: Workbench, line: dict[str, Any], ids: IdMap) -> dict[str, int]:
    """Write what of one archived chain the target lacks; returns what was created, by kind."""
    r, target, chain_id = wb.redis(), ids.target, line["chain_id"]
    thoughts = [(t["score"], thought_hash(t["hash"], ids)) for t in line["thoughts"]]
    feedback = [(ids.new_id(f["answer_id"]), f) for f in line["feedback"]]
    p = r.pipeline(transaction=False)
    p.exists(chain_meta_key(target, chain_id))
    for _, h in thoughts:
        p.exists(thought_key(target, chain_id, h["id"]))
    for answer_id, _ in feedback:
        p.exists(feedback_key(answer_id))
    chain_there, *found = p.execute()
    thoughts_there, feedback_there = found[:len(thoughts)], found[len(thoughts):]

    p = r.pipeline(transaction=False)
    for (score, h), there in zip(thoughts, thoughts_there, strict=True):
        if not there:
            p.hset(thought_key(target, chain_id, h["id"]), mapping=h)
            p.zadd(chain_key(target, chain_id), {h["id"]: score})
            provenance.note(p, target, chain_id, h)
    if not chain_there and line["meta"]:
        meta = dict(line["meta"])
        if meta.get("last_answer_id"):
            meta["last_answer_id"] = ids.new_id(meta["last_answer_id"])
        p.hset(chain_meta_key(target, chain_id), mapping=meta)
    p.zadd(chains_key(target), {chain_id: line["last_at"]}, gt=True)  # GT: a chain continued since keeps its time
    p.sadd(INSTANCES, target)
    for (answer_id, f), there in zip(feedback, feedback_there, strict=True):
        if there:
            continue
        p.hset(feedback_key(answer_id), mapping=feedback_hash(f["hash"], ids))
        p.sadd(chain_feedback_key(target, chain_id), answer_id)
        wb.thoughts.feedback_changed(target, [answer_id], client=p)
        if f["index"] is not None:
            p.zadd(feedback_index_key(target), {answer_id: f["index"]})
        if f["pending"] is not None:
            p.zadd(feedback_pending_key(target), {answer_id: f["pending"]})
    p.execute()
    return {"chains": int(not chain_there), "thoughts": thoughts_there.count(0),
            "feedback": feedback_there.count(0)}
