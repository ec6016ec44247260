"""MiniLM (all-MiniLM-L6-v2) through sentence-transformers: the optional `minilm` extra.

The model must already be on disk (a package that carries it, or a local path in MINILM_PATH);
nothing is downloaded at run time.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

from core.embeddings.base import Embedder, normalise
from core.errors import ConfigError


class MiniLMEmbedder(Embedder):
    name = "minilm-l6-v2"
    dim = 384

    def __init__(self) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as e:
            raise ConfigError("EMBEDDER=minilm needs the extra: pip install 'memory-workbench[minilm]'") from e
        path = os.environ.get("MINILM_PATH", "sentence-transformers/all-MiniLM-L6-v2")
        try:
            self._model = SentenceTransformer(path, device="cpu")
        except Exception as e:
            raise ConfigError(f"MiniLM model not found offline at {path!r}; set MINILM_PATH to a local copy "
                              "or use EMBEDDER=wordllama.") from e

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        return normalise(self._model.encode(list(texts), batch_size=64, convert_to_numpy=True))
