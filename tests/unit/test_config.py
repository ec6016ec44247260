import pytest

from core.config import (DEFAULT_SECRETS_FILE, SECRETS_FILE_ENV, Settings, load_settings, mask_url,
                         secrets_file)
from core.errors import ConfigError


def test_defaults_need_no_settings():
    s = load_settings()
    assert s.redis_embedded and s.postgres_embedded
    assert (s.model_fast, s.model_deep) == ("llama3-8b-8192", "llama3-70b-8192")
    assert s.llm_provider == "none"


def test_environment_beats_secrets_file_and_code_beats_both(tmp_path, monkeypatch):
    secrets = tmp_path / "secrets.toml"
    secrets.write_text('MODEL_FAST = "from-file"\nMODEL_DEEP = "deep-from-file"\nINSTANCE = "filei"\n')
    monkeypatch.setenv("WORKBENCH_SECRETS_FILE", str(secrets))
    monkeypatch.setenv("MODEL_FAST", "from-env")
    s = load_settings()
    assert s.model_fast == "from-env"
    assert s.model_deep == "deep-from-file"
    assert s.instance == "filei"
    assert load_settings(model_fast="from-code").model_fast == "from-code"


def test_bad_value_names_the_setting_and_what_is_allowed(monkeypatch):
    monkeypatch.setenv("REDIS_URL", "http://localhost:6379")
    with pytest.raises(ConfigError) as e:
        load_settings()
    assert "REDIS_URL" in str(e.value) and "redis://" in str(e.value)


# URLs their own client libraries cannot read: the start failed later with "Unexpected ValueError", and
# WORKBENCH_DEBUG=1's traceback printed the password.
BAD_URLS = [
    ("DATABASE_URL", "postgresql://bob:SuperSecretPW123@[::1",
     ('cannot be read as a Postgres URL: end of string reached when looking for matching "]" in IPv6 '
      "host address")),
    ("DATABASE_URL", "postgresql://bob:SuperSecretPW123@db:notaport/x",
     "the port 'notaport' is not a number from 1 to 65535"),
    ("DATABASE_URL", "postgres://bob:SuperSecretPW123@db:99999/x",
     "the port '99999' is not a number from 1 to 65535"),
    ("DATABASE_URL", "postgresql://bob:Super%zzSecretPW123@db/x",
     'cannot be read as a Postgres URL: invalid percent-encoded token: "***"'),
    ("DATABASE_URL", "postgresql://:SuperSecretPW123/x", "the port '***' is not a number from 1 to 65535"),
    ("REDIS_URL", "redis://:SuperSecretPW123@h:notaport/0",
     "cannot be read as a Redis URL: Port could not be cast to integer value as 'notaport'"),
    ("REDIS_URL", "redis://:SuperSecretPW123@[::1", "cannot be read as a Redis URL: Invalid IPv6 URL"),
    ("REDIS_URL", "redis://:SuperSecretPW123/0",
     "cannot be read as a Redis URL: Port could not be cast to integer value as '***'"),
    ("REDIS_URL", "unix:///tmp/r.sock?db=zero&password=SuperSecretPW123",
     "cannot be read as a Redis URL: Invalid value for 'db' in connection URL"),
]


@pytest.mark.parametrize(("name", "url", "said"), BAD_URLS)
def test_a_service_url_its_library_cannot_read_is_refused_naming_the_setting(monkeypatch, name, url, said):
    monkeypatch.setenv(name, url)
    with pytest.raises(ConfigError) as e:
        load_settings()
    assert str(e.value) == (f"invalid setting — {name}: {said}. Fix it in the environment or in "
                            f"{secrets_file()}.")
    assert "SuperSecretPW123" not in str(e.value)


@pytest.mark.parametrize("url", ["postgresql://bob:pw@h1:5432,h2:5433/db?sslmode=require",
                                 "postgresql://bob@/db?host=/var/run/postgresql", "postgres://h/db"])
def test_a_readable_database_url_is_taken_as_it_is(monkeypatch, url):
    monkeypatch.setenv("DATABASE_URL", url)
    assert load_settings().database_url == url


@pytest.mark.parametrize(("rate", "said"), [("often", "a count per period"), ("0/minute", "at least one request")])
def test_a_rate_limit_that_would_refuse_everything_is_refused(monkeypatch, rate, said):
    monkeypatch.setenv("API_RATE_LIMIT", rate)
    with pytest.raises(ConfigError, match=f"API_RATE_LIMIT: .*{said}"):
        load_settings()


def test_a_setting_given_in_code_under_a_wrong_name_is_refused(tmp_path):
    """Ignored, a misspelled override left a program on the per-user data directory."""
    with pytest.raises(ConfigError, match="no setting is named data_dri"):
        load_settings(data_dri=tmp_path)
    assert load_settings(data_dir=tmp_path).data_dir == tmp_path


def test_bad_instance_is_refused_with_the_rule(monkeypatch):
    monkeypatch.setenv("INSTANCE", "a b}")
    with pytest.raises(ConfigError, match="INSTANCE: instance must be"):
        load_settings()


def test_secrets_are_never_shown(monkeypatch):
    monkeypatch.setenv("GROQ_API_KEY", "gsk_supersecret")
    monkeypatch.setenv("DATABASE_URL", "postgresql://u:pw123@db/x")
    s = load_settings()
    shown = str(s.public_view()) + repr(s) + str(s)
    assert "gsk_supersecret" not in shown and "pw123" not in shown
    assert s.public_view()["GROQ_API_KEY"] == "set"
    assert s.groq_api_key.get_secret_value() == "gsk_supersecret"
    assert s.llm_provider == "groq"


def test_llm_base_url_wins_over_groq():
    s = Settings(groq_api_key="k", llm_base_url="http://127.0.0.1:9/v1")
    assert s.llm_provider == "openai-compatible"


def test_mask_url():
    assert mask_url("redis://:secret@host:6379/0") == "redis://:***@host:6379/0"
    assert mask_url("unix:///tmp/x.sock") == "unix:///tmp/x.sock"


@pytest.mark.parametrize(("url", "shown"), [
    ("redis://default:s3cret@host:6379/0", "redis://default:***@host:6379/0"),
    ("redis://host:6379/0?password=s3cret", "redis://host:6379/0?password=***"),
    ("unix:///tmp/r.sock?db=0&password=s3cret", "unix:///tmp/r.sock?db=0&password=***"),
    ("postgresql://u@h/db?sslmode=require&password=s3cret", "postgresql://***@h/db?sslmode=require&password=***"),
    ("postgresql://u:s3cret@h:5432/db?sslpassword=s3cret", "postgresql://u:***@h:5432/db?sslpassword=***"),
    ("host=h dbname=db password=s3cret user=u", "host=h dbname=db password=*** user=u"),
    ("host=h password='s3 cret' user=u", "host=h password=*** user=u"),
    ("http://user:s3cret@llm.local:8000/v1", "http://user:***@llm.local:8000/v1"),
    ("https://s3cret@api.example/v1", "https://***@api.example/v1"),
    ("https://api.example/v1?api_key=s3cret&model=x", "https://api.example/v1?api_key=***&model=x"),
    ("https://api.example/v1?Token=s3cret", "https://api.example/v1?Token=***"),
])
def test_mask_url_hides_every_form_of_credential(url, shown):
    assert mask_url(url) == shown
    assert "s3cret" not in mask_url(url) and "s3 cret" not in mask_url(url)


def test_settings_view_masks_a_password_in_any_service_address():
    s = Settings(llm_base_url="http://user:s3cret@llm.local/v1", groq_base_url="https://s3cret@g.local",
                 openai_base_url="https://o.local/v1?api_key=s3cret")
    assert "s3cret" not in str(s.public_view())


def test_a_secrets_file_in_the_current_folder_is_not_read(tmp_path, monkeypatch):
    """Running a command inside an untrusted folder must not let that folder's secrets file choose the LLM."""
    (tmp_path / ".streamlit").mkdir()
    (tmp_path / ".streamlit" / "secrets.toml").write_text(
        'LLM_BASE_URL = "http://evil.example/v1"\nGROQ_API_KEY = "from-cwd"\n')
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(SECRETS_FILE_ENV, raising=False)
    assert secrets_file() == DEFAULT_SECRETS_FILE and DEFAULT_SECRETS_FILE.is_absolute()
    s = load_settings()
    assert s.llm_base_url != "http://evil.example/v1"
    assert s.groq_api_key is None or s.groq_api_key.get_secret_value() != "from-cwd"
    assert s.public_view()["SETTINGS_FILE"].startswith((str(DEFAULT_SECRETS_FILE), "none ("))


def test_the_settings_view_names_the_secrets_file_in_use(tmp_path, monkeypatch):
    path = tmp_path / "mine.toml"
    monkeypatch.setenv(SECRETS_FILE_ENV, str(path))
    assert load_settings().public_view()["SETTINGS_FILE"] == f"none ({path} does not exist)"
    path.write_text('INSTANCE = "from-file"\n')
    s = load_settings()
    assert s.instance == "from-file" and s.public_view()["SETTINGS_FILE"] == str(path)


def test_a_bad_setting_names_the_secrets_file_actually_read(tmp_path, monkeypatch):
    """It said "Fix it in the environment or in .streamlit/secrets.toml." whichever file
    WORKBENCH_SECRETS_FILE named, and when none existed."""
    bad = tmp_path / "x" / "bad-secrets.toml"
    bad.parent.mkdir()
    bad.write_text("GROQ_API_KEY = 123\n")
    monkeypatch.setenv(SECRETS_FILE_ENV, str(bad))
    with pytest.raises(ConfigError) as e:
        load_settings()
    assert str(e.value) == ("invalid setting — GROQ_API_KEY: Input should be a valid string. Fix it in the "
                            f"environment or in {bad}.")
    missing = tmp_path / "none.toml"
    monkeypatch.setenv(SECRETS_FILE_ENV, str(missing))
    monkeypatch.setenv("REDIS_URL", "http://localhost:6379")
    with pytest.raises(ConfigError) as e:
        load_settings()
    assert str(e.value).endswith(f"Fix it in the environment (no secrets file was read: {missing} does not "
                                 "exist).")
    assert ".streamlit" not in str(e.value)
