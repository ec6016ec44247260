"""The embedder contract: one method, `embed_batch`; everything else is built once here."""

from __future__ import annotations

import hashlib
import unicodedata
from abc import ABC, abstractmethod
from collections.abc import Sequence

import numpy as np
from cachetools import LRUCache


class Embedder(ABC):
    """Turns texts into L2-normalised float32 vectors of a fixed dimension.

    `name` is stored beside every vector, so vectors of different models never mix.
    """

    name: str
    dim: int

    @abstractmethod
    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        """Return an array of shape (len(texts), dim), each row of unit length."""

    def embed(self, text: str) -> np.ndarray:
        return self.embed_batch([text])[0]

    def word_vectors(self, words: Sequence[str]) -> np.ndarray | None:
        """Each word's own unit vector (one row per word), from a model whose text vector is made of its
        words' (static word vectors): a search may then weigh the query's words (`core.retrieval.
        hybrid_sql`). None from a model that reads a text whole."""
        return None

    @property
    def uncached(self) -> Embedder:
        """The same model without a cache in front: for bulk loads, whose texts come once."""
        return self


class ComposedEmbedder(Embedder):
    """The model reading each text in Unicode's composed form (NFC), memories and queries alike: "Hélène"
    typed on a keyboard and the same name pasted from macOS (an e and a combining accent, NFD) are then one
    text, as they are one word to the text index (`core.index.text`); a model reads the two forms as
    different tokens. The stored text stays as given. A composed text (any ASCII text) is not copied."""

    def __init__(self, inner: Embedder):
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        return self.inner.embed_batch([unicodedata.normalize("NFC", t) for t in texts])

    def word_vectors(self, words: Sequence[str]) -> np.ndarray | None:
        return self.inner.word_vectors([unicodedata.normalize("NFC", w) for w in words])


class CachedEmbedder(Embedder):
    """Wraps an embedder with an in-process cache keyed by (model, SHA-1 of the text)."""

    def __init__(self, inner: Embedder, maxsize: int = 50_000):
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self._cache: LRUCache[tuple[str, bytes], np.ndarray] = LRUCache(maxsize=maxsize)

    @property
    def uncached(self) -> Embedder:
        return self.inner

    def word_vectors(self, words: Sequence[str]) -> np.ndarray | None:
        return self.inner.word_vectors(words)

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        keys = [(self.name, hashlib.sha1(t.encode("utf-8", "surrogatepass")).digest()) for t in texts]
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        found = [self._cache.get(k) for k in keys]
        missing = [i for i, vec in enumerate(found) if vec is None]
        if missing:
            fresh = self.inner.embed_batch([texts[i] for i in missing])
            for i, vec in zip(missing, fresh, strict=True):
                found[i] = self._cache[keys[i]] = vec
        for i, vec in enumerate(found):
            out[i] = vec
        return out


def normalise(matrix: np.ndarray) -> np.ndarray:
    """Scale each row to unit length; all-zero rows (empty text) stay zero."""
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)
