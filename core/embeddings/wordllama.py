"""Offline embeddings: WordLlama's 256-d model, whose weights and tokenizer ship in its wheel.

A text's vector is the mean of its tokens' rows of the model's embedding matrix. Its tokenizer is
Llama 2's: spaces become "▁", one is put in front, and BPE runs over the whole text, since it has no
pre-tokenizer to split it into words first; the `tokenizers` library then caches nothing (its cache is
per word) and spent ~105 µs of CPU on a 40-word conversation turn, two thirds of embedding it. No token
or merge of its vocabulary holds a "▁" after another character, so no merge crosses the start of a word:
BPE over each word ("▁" runs and what follows them) gives the same tokens as over the whole text. A
word's tokens are therefore cached (`_word_ids`), and a text's ids are its words' (`token_ids`): the
same ids, so the same vectors, bit for bit (tests/unit/test_wordllama_tokens.py).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

import numpy as np

from core.embeddings.base import Embedder, normalise

SPACE = "\u2581"  # "▁", what the tokenizer's normaliser makes of a space
_WORD = re.compile(f"{SPACE}*[^{SPACE}]+|{SPACE}+")


@lru_cache(maxsize=1)
def load_wordllama():
    """Load WordLlama from the files inside the installed package, never from the network.

    wordllama 0.4 ships its tokenizer under `wordllama/tokenizers/`, but its loader's first probe looks
    in `wordllama/tokenizer/` and would then download. Its cache lookup is `<cache_dir>/tokenizers/` and
    `<cache_dir>/weights/`, so pointing `cache_dir` at the package itself finds both shipped files.
    """
    with _root_logger_kept():
        import wordllama
        from wordllama import WordLlama

    return WordLlama.load(cache_dir=Path(wordllama.__file__).parent, disable_download=True)


@contextmanager
def _root_logger_kept() -> Iterator[None]:
    """Undo what importing wordllama does to the root logger: its `__init__` and `inference` modules
    call `logging.basicConfig(level=logging.INFO)`, which, in a program that set up no logging, adds a
    stderr handler and turns on INFO for everything (each LLM call printed `INFO:httpx:HTTP Request: …`).
    A library leaves logging to the program that uses it."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        yield
    finally:
        for handler in [h for h in root.handlers if h not in handlers]:
            root.removeHandler(handler)
        root.setLevel(level)


class WordLlamaEmbedder(Embedder):
    name = "wordllama-l2-supercat-256"
    dim = 256

    def __init__(self) -> None:
        self._model = load_wordllama()

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        """WordLlama's `embed` (`norm=False`), normalised: each text's tokens' rows summed in float32, one
        after the other, and divided by their count, as its `avg_pool` sums a padded batch (bit for bit).
        Text by text: a padded batch of 64 long documents made temporaries of ~26 MB (1,600 characters
        a document: 490 -> 220 us of CPU each; conversation turns 33 -> 24 us)."""
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        table = self._model.embedding
        for row, text in enumerate(texts):
            ids = token_ids(text)
            out[row] = table[ids].sum(axis=0, dtype=np.float32) / np.float32(max(len(ids), 1))
        return normalise(out)

    def word_vectors(self, words: Sequence[str]) -> np.ndarray:
        """A word's vector is the mean of its tokens' rows, as a text's is of all its tokens'."""
        if not words:
            return np.empty((0, self.dim), dtype=np.float32)
        return np.stack([_word_vector(w) for w in words])


def token_ids(text: str) -> list[int]:
    """The token ids WordLlama's tokenizer gives `text` (`encode(text, add_special_tokens=False).ids`),
    word by word through a cache. A text holding one of its added tokens' text ("<s>", "</s>", "<unk>"),
    which the tokenizer matches before its normaliser, goes to the tokenizer whole."""
    if any(special in text for special in _added_tokens()):
        return load_wordllama().tokenizer.encode(text, add_special_tokens=False).ids
    ids: list[int] = []
    if text:  # the normaliser puts "▁" in front of a text that has something
        for word in _WORD.findall(SPACE + text.replace(" ", SPACE)):
            ids += _word_ids(word)
    return ids


@lru_cache(maxsize=1)
def _added_tokens() -> tuple[str, ...]:
    return tuple(t.content for t in load_wordllama().tokenizer.get_added_tokens_decoder().values())


# ~250 bytes a word: 16 MB at most. A conversation's words repeat, and so do most of a language's.
@lru_cache(maxsize=65_536)
def _word_ids(word: str) -> tuple[int, ...]:
    """The BPE model's tokens of one normalised word ("▁" runs and what follows them)."""
    return tuple(t.id for t in load_wordllama().tokenizer.model.tokenize(word))


@lru_cache(maxsize=20_000)  # 1 kB a word: at most 20 MB
def _word_vector(word: str) -> np.ndarray:
    model = load_wordllama()
    rows = model.embedding[token_ids(word)]
    return normalise(rows.mean(axis=0, keepdims=True))[0] if len(rows) else np.zeros(model.embedding.shape[1],
                                                                                   dtype=np.float32)
