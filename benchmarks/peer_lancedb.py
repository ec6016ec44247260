"""The LoCoMo benchmark's embedded peer: LanceDB's hybrid search (`pip install 'memory-workbench[bench]'`).

One table per instance (a LoCoMo conversation) in a directory the caller owns, holding each memory's id,
its text and our embedding of that text, with LanceDB's own full-text index on the text (its native
index, default analysis: lower case, English stemming, stop words removed). A question runs
`table.search(query_type="hybrid")` with our query vector (cosine) and the question's text, fused by its
`RRFReranker` (reciprocal rank fusion, k 60); each leg fetches the top k, as LanceDB does. Nothing is
downloaded: both indexes and the reranker are local.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from itertools import groupby
from pathlib import Path

from core.embeddings import Embedder
from core.models import MemoryRecord

NAME = "LanceDB (embedded, hybrid: native full-text index + vectors, RRFReranker)"


class LanceDBPeer:
    def __init__(self, embedder: Embedder, workdir: Path):
        os.environ.setdefault("LANCEDB_LOG", "error")  # it warns at INFO level that each new table is new
        try:
            import lancedb
            from lancedb.index import FTS
            from lancedb.rerankers import RRFReranker
        except ImportError as e:
            raise RuntimeError("the peer needs lancedb: pip install 'memory-workbench[bench]'") from e
        self.embedder = embedder
        self.db = lancedb.connect(workdir)
        self.fts = FTS
        self.reranker = RRFReranker()
        self.tables: dict[str, object] = {}

    def add(self, records: Iterable[MemoryRecord]) -> int:
        """One table per instance (records arrive grouped by instance), with its full-text index."""
        n = 0
        for instance, group in groupby(records, key=lambda r: r.instance):
            rows = list(group)
            vectors = self.embedder.embed_batch([r.content for r in rows])
            table = self.db.create_table(instance, [{"id": r.id, "text": r.content, "vector": v}
                                                    for r, v in zip(rows, vectors, strict=True)])
            table.create_index("text", config=self.fts())  # create_fts_index's current spelling
            self.tables[instance] = table
            n += len(rows)
        return n

    def search(self, instance: str, query: str, top_k: int = 5) -> list[str]:
        """The ids of the top k memories of the instance, best first; the query's embedding included."""
        found = (self.tables[instance].search(query_type="hybrid")
                 .vector(self.embedder.embed(query)).text(query).distance_type("cosine")
                 .rerank(self.reranker).limit(top_k).to_arrow())
        return found["id"].to_pylist()
