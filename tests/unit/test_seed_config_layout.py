"""The seed's layout of the settings file: `[groq] api_key / model_fast / model_deep` and
`[openai] embedding_model / embedding_dimensions` are read as the flat settings; the environment wins."""

import numpy as np
import pytest

from core.config import SECRETS_FILE_ENV, load_settings
from core.embeddings import make_embedder
from core.errors import ConfigError

SEED_LAYOUT = """
INSTANCE = "from-file"

[groq]
api_key = "gsk_from_file"
model_fast = "llama-3.1-8b-instant"
model_deep = "llama-3.3-70b-versatile"

[openai]
embedding_model = "text-embedding-3-large"
embedding_dimensions = 256
"""


@pytest.fixture
def secrets(tmp_path, monkeypatch):
    def write(text: str):
        path = tmp_path / "secrets.toml"
        path.write_text(text)
        monkeypatch.setenv(SECRETS_FILE_ENV, str(path))
        return path
    for name in ("GROQ_API_KEY", "MODEL_FAST", "MODEL_DEEP", "EMBEDDING_MODEL", "EMBEDDING_DIMENSIONS"):
        monkeypatch.delenv(name, raising=False)
    return write


def test_the_seeds_tables_are_read(secrets):
    secrets(SEED_LAYOUT)
    s = load_settings()
    assert s.groq_api_key.get_secret_value() == "gsk_from_file" and s.llm_provider == "groq"
    assert (s.model_fast, s.model_deep) == ("llama-3.1-8b-instant", "llama-3.3-70b-versatile")
    assert (s.embedding_model, s.embedding_dimensions, s.instance) == ("text-embedding-3-large", 256, "from-file")


def test_the_environment_still_wins(secrets, monkeypatch):
    secrets(SEED_LAYOUT)
    monkeypatch.setenv("MODEL_FAST", "from-env")
    monkeypatch.setenv("EMBEDDING_DIMENSIONS", "512")
    s = load_settings()
    assert (s.model_fast, s.embedding_dimensions, s.model_deep) == ("from-env", 512, "llama-3.3-70b-versatile")


def test_a_key_the_table_does_not_know_is_refused_naming_the_ones_to_use(secrets):
    path = secrets('[groq]\nmodel = "llama3"\n')
    with pytest.raises(ConfigError) as e:
        load_settings()
    assert f"[groq] model in {path} is not a setting; use [groq] api_key" in str(e.value)
    assert "[groq] model_fast" in str(e.value)


def test_the_same_setting_twice_is_refused(secrets):
    secrets('MODEL_FAST = "a"\n[groq]\nmodel_fast = "b"\n')
    with pytest.raises(ConfigError, match=r"MODEL_FAST and \[groq\] model_fast are both set"):
        load_settings()


def test_other_tables_stay_streamlits(secrets):
    secrets('[auth]\nredirect_uri = "http://localhost:8501/oauth2callback"\n')
    assert load_settings().model_fast == "llama3-8b-8192"


def test_embedding_dimensions_shorten_openai_vectors_under_their_own_name(secrets, fake_llm):
    secrets(SEED_LAYOUT)
    e = make_embedder(load_settings(openai_api_key="sk-test", openai_base_url=fake_llm.url + "/v1"))
    assert (e.name, e.dim) == ("openai:text-embedding-3-large@256", 256)
    assert e.embed_batch(["hello world"]).shape == (1, 256)
    assert np.isclose(np.linalg.norm(e.embed("hello world")), 1.0)
    [sent] = [r for r in fake_llm.requests if r["path"].endswith("/embeddings")]
    assert (sent["body"]["model"], sent["body"]["dimensions"]) == ("text-embedding-3-large", 256)


def test_dimensions_an_openai_model_cannot_give_are_refused(secrets):
    secrets('[openai]\nembedding_model = "text-embedding-ada-002"\nembedding_dimensions = 256\n')
    with pytest.raises(ConfigError, match="EMBEDDING_DIMENSIONS 256 does not fit text-embedding-ada-002"):
        make_embedder(load_settings(openai_api_key="sk-test"))
