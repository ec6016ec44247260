"""Token counting that works offline, with the Llama-2 tokenizer shipped inside the wordllama wheel.

Groq's Llama 3 models use another vocabulary, so counts are close estimates of what the provider
bills; the provider's own usage figures are what the product reports for cost.
"""

from __future__ import annotations

from functools import lru_cache

from core.embeddings.wordllama import load_wordllama, token_ids


@lru_cache(maxsize=1)
def _tokenizer():
    return load_wordllama().tokenizer


def count_tokens(text: str) -> int:
    """The tokenizer's count, word by word through the embedder's cache (`token_ids`: the same ids)."""
    return len(token_ids(text))


def truncate_to_tokens(text: str, budget: int) -> str:
    """The longest prefix of `text` that fits in `budget` tokens."""
    if budget <= 0:
        return ""
    enc = _tokenizer().encode(text, add_special_tokens=False)
    if len(enc.ids) <= budget:
        return text
    end = enc.offsets[budget - 1][1]
    return text[:end]
