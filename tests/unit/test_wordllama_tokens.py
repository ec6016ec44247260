"""WordLlama's tokens word by word (`core.embeddings.wordllama.token_ids`) are the tokenizer's own, and the
vectors made from them are WordLlama's `embed`, bit for bit: stored vectors and new ones never differ."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from core.embeddings.base import normalise
from core.embeddings.wordllama import SPACE, WordLlamaEmbedder, load_wordllama, token_ids

# Texts that reach each branch: spaces at either end and in runs, the normaliser's own "▁", byte tokens
# (emoji, a zero-width joiner), characters in and out of the vocabulary, the added tokens' texts.
EDGES = ["", " ", "   ", "a", " a", "a ", "a  b", "\n", "x\ny", "tab\there", "\r\nwindows", "emoji 😀 here",
         "🏳️‍🌈", "日本語のテキスト", "naïve café", "İstanbul ß", "\u00a0no-break", "zero\u200bwidth",
         "<s> hi", "a</s>b", "<unk>", "<s", "s>", f"{SPACE}already", f"a{SPACE}b{SPACE}{SPACE}c",
         "Caroline: I went to the LGBTQ+ parade yesterday.", "well...   ok!!", "x" * 500]


def tokenizer_ids(text: str) -> list[int]:
    return load_wordllama().tokenizer.encode(text, add_special_tokens=False).ids


def wordllama_vectors(texts: list[str]) -> np.ndarray:
    """WordLlama's own `embed`, in the order `embed_batch` feeds it (by length), then normalised."""
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    out = np.empty((len(texts), 256), dtype=np.float32)
    out[order] = load_wordllama().embed([texts[i] for i in order], norm=False, batch_size=64)
    return normalise(out)


def test_the_vocabulary_has_no_token_that_a_word_boundary_runs_through():
    """What makes word-by-word BPE exact: no token (so no merge) holds "▁" after another character."""
    tokenizer = load_wordllama().tokenizer
    assert not [t for t in tokenizer.get_vocab() if SPACE in t.lstrip(SPACE)]
    assert json.loads(tokenizer.to_str())["pre_tokenizer"] is None  # BPE over the whole text, as assumed


def test_edge_texts_get_the_tokenizers_ids():
    assert [token_ids(t) for t in EDGES] == [tokenizer_ids(t) for t in EDGES]


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab Z é日😀\n\t<>s/unk.") + [SPACE, "\u200d"]), max_size=40)
       | st.text(max_size=60))
def test_any_text_gets_the_tokenizers_ids(text):
    assert token_ids(text) == tokenizer_ids(text)


def test_vectors_are_wordllamas_own_bit_for_bit():
    texts = EDGES + [f"turn {i}: {' '.join(['word'] * (i % 37))} and something else {i}" for i in range(150)]
    texts += [" ".join(f"Sentence {i} of a long note, about item {i * 7 % 13}." for i in range(n)) for n in (60, 200)]
    assert np.array_equal(WordLlamaEmbedder().embed_batch(texts), wordllama_vectors(texts))


def root_logger_after(setup: str) -> str:
    """The root logger's level and handlers after `setup`, then the library's imports and a first embed,
    in a process of its own (this one has imported wordllama already)."""
    probe = (f"import logging\n{setup}\nfrom core import usecases\nimport core.runtime\n"
             "from core.embeddings.wordllama import WordLlamaEmbedder\nWordLlamaEmbedder().embed_batch(['hi'])\n"
             "root = logging.getLogger()\n"
             "print(logging.getLevelName(root.level), [type(h).__name__ for h in root.handlers])")
    out = subprocess.run([sys.executable, "-c", probe], cwd=Path(__file__).resolve().parents[2],
                         capture_output=True, text=True, check=True)
    return out.stdout.strip()


def test_the_library_leaves_the_programs_logging_as_it_was():
    """wordllama's import calls `logging.basicConfig(level=logging.INFO)`: every LLM call of a program
    that set up no logging printed `INFO:httpx:…`."""
    assert root_logger_after("") == "WARNING []"
    assert root_logger_after("logging.basicConfig(level=logging.DEBUG, filename='/dev/null')") == \
        "DEBUG ['FileHandler']"
