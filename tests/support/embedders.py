"""A deterministic tiny embedder for tests that assert exact scores.

Each dimension is one keyword of a fixed vocabulary; a text's vector counts those keywords and is
scaled to unit length, so the cosine of two texts can be written down by hand.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from core.embeddings.base import Embedder, normalise

VOCAB = ("paris", "france", "museum", "dog", "cat", "budget", "meeting", "sushi", "food", "travel",
         "python", "redis", "postgres", "memory", "weather", "music")


class KeywordEmbedder(Embedder):
    name = "test-keywords-16"
    dim = len(VOCAB)

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in re.findall(r"[a-z]+", text.lower()):
                if word in VOCAB:
                    out[i, VOCAB.index(word)] += 1.0
        return normalise(out)


def keyword_vector(*words: str) -> np.ndarray:
    return KeywordEmbedder().embed(" ".join(words))
