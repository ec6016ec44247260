"""Keeps the memory index in step with the thought store, through the Redis outbox.

A turn's thoughts are queued in the outbox in the same transaction that stores them, so none can be
missed: if Postgres is down they stay queued and are indexed by the next sync once it is back.
Indexing is an idempotent upsert, so two processes syncing at once do no harm.
"""

from __future__ import annotations

import json
import logging
from collections import defaultdict

import psycopg
from pydantic import BaseModel

from core.errors import ServiceUnavailable
from core.models import MemoryContext, MemoryRecord
from core.index.memory_index import MemoryIndex
from core.index.records import event_time_of
from core.conversation.thoughts import CATEGORY_ASSISTANT, CATEGORY_USER, Thought, ThoughtStore

log = logging.getLogger(__name__)
KIND_OF = {CATEGORY_USER: "user", CATEGORY_ASSISTANT: "assistant"}
CONTEXT_SPAN = 3      # messages before a thought searched with it (see core.index.text)
CONTEXT_WINDOW = 40   # how far back in the chain those are looked for


def _searchable(t: Thought) -> bool:
    """User thoughts and LLM answers; an extractive answer only quotes other memories."""
    return t.category in KIND_OF and t.extra.get("synthesis") != "extractive"


class IndexSync(BaseModel):
    indexed: int
    pending: int
    error: str | None = None


def sync_index(store: ThoughtStore, index: MemoryIndex, *, batch: int = 500) -> IndexSync:
    indexed = 0
    try:
        while entries := store.outbox_peek(batch):
            grouped: dict[tuple[str, str], list[str]] = defaultdict(list)
            for e in entries:
                item = json.loads(e)
                grouped[(item["instance"], item["chain_id"])].append(item["id"])
            records = []
            for (instance, chain), ids in grouped.items():
                wanted = set(ids)
                # The chain's recent thoughts give each new one its conversation context.
                thread = [t for t in store.chain_thoughts(instance, chain, last=CONTEXT_WINDOW)
                          if _searchable(t)]
                for i, t in enumerate(thread):
                    if t.id in wanted:
                        before = [p.thought for p in reversed(thread[max(0, i - CONTEXT_SPAN):i])]
                        records.append(MemoryRecord(
                            instance=t.instance, id=t.id, kind=KIND_OF[t.category], content=t.thought,
                            created_at=t.timestamp, chain_id=t.chain_id, event_time=event_time_of(t.timestamp),
                            tags=t.tags, metadata={"thought_number": t.thought_number},
                            context=MemoryContext(before=before)))
                        wanted.discard(t.id)
                # Thoughts older than the window (a long backlog) are indexed without context.
                for t in store.get_many(instance, chain, wanted):
                    if _searchable(t):
                        records.append(MemoryRecord(
                            instance=t.instance, id=t.id, kind=KIND_OF[t.category], content=t.thought,
                            created_at=t.timestamp, chain_id=t.chain_id, event_time=event_time_of(t.timestamp),
                            tags=t.tags, metadata={"thought_number": t.thought_number}))
            index.add(records)
            store.outbox_ack(entries)
            indexed += len(records)
            if len(entries) < batch:
                break
    except (psycopg.Error, ServiceUnavailable) as e:
        log.warning("memory index sync deferred: %s", type(e).__name__)
        return IndexSync(indexed=indexed, pending=store.outbox_len(),
                         error="Postgres unavailable: new thoughts will be indexed when it is back")
    return IndexSync(indexed=indexed, pending=store.outbox_len())
