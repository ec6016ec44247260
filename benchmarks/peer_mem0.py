"""The peer for the speed and LoCoMo benchmarks: mem0's open-source library (`pip install
'memory-workbench[bench]'`) on the same Postgres, with its pgvector store and our embedder, memories added
with `infer=False`, one mem0 user per instance, each memory's id kept in its metadata (`record_id`) so a
search answers with our ids.

Set up to run offline and leave no trace outside the benchmark's directory: telemetry off, its home
(`MEM0_DIR`) and history database in the benchmark's directory. Its LLM is configured with a
placeholder key only because its constructor asks for one; with `infer=False` nothing calls it.
spaCy (mem0's `nlp` extra) is not installed: mem0 would download its model at run time, which these
benchmarks never do, so mem0 falls back to the raw text for its keyword leg and skips entity boosts.
Search is mem0's own: vector search over-fetching max(4·k, 60), a keyword search, its scoring.
`hnsw=False` leaves the table without its HNSW index, so a search filtered to one user is exact whatever
Postgres plans: an HNSW scan finds the ef_search (40) nearest of all users' memories before the filter.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from itertools import islice
from pathlib import Path

from core.embeddings import Embedder
from core.models import MemoryRecord

NAME = "mem0 (open source, pgvector, infer=False)"


class EmbedderAdapter:
    """Our embedder behind mem0's embedder interface (`embed(text, memory_action)`)."""

    def __init__(self, embedder: Embedder):
        self.embedder = embedder
        self.config = None

    def embed(self, text, memory_action=None):
        return self.embedder.embed(text).tolist()

    def embed_batch(self, texts, memory_action="add"):
        return self.embedder.embed_batch(list(texts)).tolist()


class Mem0Peer:
    def __init__(self, postgres_url: str, embedder: Embedder, workdir: Path, collection: str = "bench_mem0",
                 *, hnsw: bool = True):
        os.environ["MEM0_TELEMETRY"] = "False"
        os.environ["MEM0_DIR"] = str(workdir)
        logging.getLogger("mem0").setLevel(logging.WARNING)  # it logs every insert at INFO
        workdir.mkdir(parents=True, exist_ok=True)
        try:
            from mem0 import Memory
            from mem0.memory import telemetry
        except ImportError as e:
            raise RuntimeError("the peer needs mem0: pip install 'memory-workbench[bench]'") from e
        if telemetry.MEM0_TELEMETRY:  # read once, when mem0 is first imported
            raise RuntimeError("mem0 was imported with its telemetry on: set MEM0_TELEMETRY=False before "
                               "anything imports mem0")
        self.memory = Memory.from_config({
            "vector_store": {"provider": "pgvector", "config": {
                "connection_string": postgres_url, "collection_name": collection,
                "embedding_model_dims": embedder.dim, "hnsw": hnsw, "maxconn": 8}},
            "embedder": {"provider": "openai", "config": {"api_key": "unused-offline",
                                                          "embedding_dims": embedder.dim}},
            "llm": {"provider": "openai", "config": {"api_key": "unused-offline"}},
            "history_db_path": str(workdir / "history.db"),
        })
        self.memory.embedding_model = EmbedderAdapter(embedder)

    def add(self, records: Iterable[MemoryRecord], *, threads: int = 4) -> tuple[int, float]:
        """Add every record as one memory of its instance (mem0's user), `infer=False`.

        Returns (count, seconds). mem0 adds one message at a time; threads keep Postgres busy."""
        def one(r: MemoryRecord) -> None:
            self.memory.add([{"role": "user", "content": r.content}], user_id=r.instance, infer=False,
                            metadata={"record_id": r.id})

        t0 = time.perf_counter()
        it = iter(records)
        first = next(it, None)
        if first is None:
            return 0, 0.0
        one(first)  # alone: mem0 creates its table on first use, and concurrent first uses collide
        n = 1
        with ThreadPoolExecutor(max_workers=threads) as ex:
            while chunk := list(islice(it, 1000)):  # bounded, so a million records are not all in memory
                list(ex.map(one, chunk))
                n += len(chunk)
        return n, time.perf_counter() - t0

    def search(self, instance: str, query: str, top_k: int = 5, threshold: float = 0.1) -> list[str]:
        """Our ids of the instance's top k memories by mem0's score (`threshold`: mem0's floor on the
        semantic score, 0.1 by default)."""
        found = self.memory.search(query, filters={"user_id": instance}, top_k=top_k, threshold=threshold)
        return [m["metadata"]["record_id"] for m in found.get("results", [])]

    def drop(self) -> None:
        """Remove the collection (its table in Postgres) and close mem0's connections."""
        self.memory.vector_store.delete_col()
        self.memory.vector_store.connection_pool.close()
        self.memory.db.close()
