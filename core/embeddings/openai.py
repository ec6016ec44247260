"""OpenAI embeddings (`text-embedding-3-small` by default), used when OPENAI_API_KEY is set."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import openai

from core.embeddings.base import Embedder, normalise
from core.errors import ConfigError, ProviderError

_DIMS = {"text-embedding-3-small": 1536, "text-embedding-3-large": 3072, "text-embedding-ada-002": 1536}
_BATCH = 512  # the API takes up to 2048 inputs; smaller batches keep each request well under its limits


class OpenAIEmbedder(Embedder):
    def __init__(self, api_key: str, model: str = "text-embedding-3-small", *, dimensions: int | None = None,
                 base_url: str | None = None, timeout_s: float = 30.0, max_retries: int = 3):
        if model not in _DIMS:
            raise ProviderError(f"EMBEDDING_MODEL {model!r} is not known; use one of {sorted(_DIMS)}")
        if dimensions is not None and (model == "text-embedding-ada-002" or dimensions > _DIMS[model]):
            raise ConfigError(f"EMBEDDING_DIMENSIONS {dimensions} does not fit {model}: it needs a "
                              f"text-embedding-3 model and at most its {_DIMS[model]} dimensions")
        # Shortened vectors are another model's vectors: the name says so, so they never mix with full ones.
        shortened = dimensions is not None and dimensions != _DIMS[model]
        self.name = f"openai:{model}" + (f"@{dimensions}" if shortened else "")
        self.dim = dimensions or _DIMS[model]
        self._model = model
        self._dimensions = {"dimensions": dimensions} if shortened else {}
        # The SDK retries 408/409/429/5xx and connection errors with exponential backoff.
        self._client = openai.OpenAI(api_key=api_key, base_url=base_url, timeout=timeout_s,
                                     max_retries=max_retries)

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        rows: list[list[float]] = []
        for start in range(0, len(texts), _BATCH):
            # The API rejects empty strings; a single space embeds as "nothing in particular".
            chunk = [t if t.strip() else " " for t in texts[start:start + _BATCH]]
            try:
                resp = self._client.embeddings.create(model=self._model, input=chunk, **self._dimensions)
            except openai.OpenAIError as e:
                raise ProviderError(f"OpenAI embeddings failed: {type(e).__name__}. Check OPENAI_API_KEY "
                                    "and network access, or set EMBEDDER=wordllama to work offline.") from e
            rows.extend(d.embedding for d in sorted(resp.data, key=lambda d: d.index))
        if not rows:
            return np.empty((0, self.dim), dtype=np.float32)
        return normalise(np.array(rows, dtype=np.float32))
