"""Embedders: WordLlama offline by default, OpenAI when a key is set (or asked for)."""

from __future__ import annotations

from core.config import Settings
from core.embeddings.base import CachedEmbedder, ComposedEmbedder, Embedder
from core.embeddings.minilm import MiniLMEmbedder
from core.embeddings.wordllama import WordLlamaEmbedder
from core.errors import ConfigError


def make_embedder(settings: Settings) -> Embedder:
    choice = settings.embedder
    if choice == "auto":
        choice = "openai" if settings.openai_api_key else "wordllama"
    if choice == "openai":
        if not settings.openai_api_key:
            raise ConfigError("EMBEDDER=openai needs OPENAI_API_KEY; set it, or set EMBEDDER=wordllama.")
        # Imported only when chosen: the openai SDK takes about 0.5 s to import.
        from core.embeddings.openai import OpenAIEmbedder

        inner: Embedder = OpenAIEmbedder(settings.openai_api_key.get_secret_value(), settings.embedding_model,
                                         dimensions=settings.embedding_dimensions, base_url=settings.openai_base_url, timeout_s=settings.llm_timeout_s,
                                         max_retries=settings.llm_max_retries)
    elif choice == "minilm":
        inner = MiniLMEmbedder()
    else:
        inner = WordLlamaEmbedder()
    return CachedEmbedder(ComposedEmbedder(inner))


__all__ = ["Embedder", "make_embedder"]
