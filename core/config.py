"""One typed settings object, read from the environment and `.streamlit/secrets.toml`.

Precedence, highest first: values passed in code, environment variables, the secrets file,
the defaults below. Keys are the upper-case names in the table of the README (`REDIS_URL`, ...);
they are matched case-insensitively in both the environment and the secrets file.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal
from urllib.parse import unquote, urlsplit

from platformdirs import user_data_dir
from pydantic import Field, SecretStr, ValidationError, field_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from core.errors import ConfigError
from core.ids import Id

SECRETS_FILE_ENV = "WORKBENCH_SECRETS_FILE"
# The project's own secrets file, wherever the command runs: one read from the current directory would let
# a command run inside an untrusted folder point the LLM at any server. WORKBENCH_SECRETS_FILE names another.
DEFAULT_SECRETS_FILE = Path(__file__).resolve().parents[1] / ".streamlit" / "secrets.toml"


def secrets_file() -> Path:
    """The secrets file the settings are read from (it may not exist)."""
    return Path(os.environ.get(SECRETS_FILE_ENV) or DEFAULT_SECRETS_FILE)


APP_NAME = "memory-workbench"


def default_data_dir() -> Path:
    """Where the data live unless DATA_DIR says otherwise: one per-user directory, so a command run from
    any folder (and the dashboard, the API, an assistant's MCP server) sees the same store.

    That is `$XDG_DATA_HOME/memory-workbench`, else `~/.local/share/memory-workbench` (platformdirs, and
    its equivalents on macOS and Windows). As root without XDG_DATA_HOME it is
    `/var/lib/memory-workbench`: Postgres then runs as another account (core/services/private.py),
    which cannot enter root's home (0700 on most systems), and nothing outside DATA_DIR is ever chmodded.
    """
    if os.name == "posix" and os.geteuid() == 0 and not os.environ.get("XDG_DATA_HOME"):
        return Path("/var/lib") / APP_NAME
    return Path(user_data_dir(APP_NAME, appauthor=False))


EmbedderChoice = Literal["auto", "wordllama", "openai", "minilm"]


class Settings(BaseSettings):
    """Everything the product can be configured with. Passed down; never re-read deep inside."""

    model_config = SettingsConfigDict(case_sensitive=False, extra="ignore", validate_default=True)

    redis_url: str | None = Field(None, repr=False, description="External Redis; unset = embedded redis-server")
    redis_cluster: bool = Field(False, description="REDIS_URL points at a Redis Cluster node")
    database_url: str | None = Field(None, repr=False,
                                     description="External Postgres with pgvector; unset = embedded")
    openai_api_key: SecretStr | None = None
    openai_base_url: str | None = Field(None, description="Override the OpenAI API address")
    groq_api_key: SecretStr | None = None
    groq_base_url: str | None = Field(None, description="Override the Groq API address")
    llm_base_url: str | None = Field(None, description="Any OpenAI-compatible chat server")
    llm_api_key: SecretStr | None = None
    model_fast: str = "llama3-8b-8192"
    model_deep: str = "llama3-70b-8192"
    embedding_model: str = "text-embedding-3-small"
    embedding_dimensions: int | None = Field(None, ge=1, le=3072,
                                             description="shorter OpenAI text-embedding-3 vectors; unset: full")
    embedder: EmbedderChoice = "auto"
    instance: Id = "default"
    data_dir: Path = Field(default_factory=default_data_dir, description="where the embedded servers keep "
                           "their data; unset: a per-user data directory")
    llm_timeout_s: float = Field(30.0, gt=0, le=600)
    llm_max_retries: int = Field(3, ge=0, le=10)
    llm_temperature: float = Field(0.2, ge=0, le=2)
    llm_max_tokens: int = Field(512, ge=16, le=32768)
    chat_history_token_budget: int = Field(4000, ge=0, le=1_000_000)
    # Memory formation (docs/ARCHITECTURE.md, "What is remembered"). The floor is calibrated on LoCoMo and
    # a small chat (benchmarks/abstention.py, benchmarks/README.md).
    relevance_floor: float = Field(0.33, ge=0, le=1, allow_inf_nan=False,
                                   description="when no retrieved memory's relevance (its meaning and its "
                                               "share of the query's words, without recency) reaches this, none "
                                               "is handed to synthesis; when one does, the others need half of "
                                               "it and 0.35 of the best's relevance, or the floor itself when the "
                                               "best states the attribute the question asks, of whom it asks it")
    important_at: float = Field(0.8, ge=0, le=1, allow_inf_nan=False,
                                description="a thought whose importance reaches this is marked important")
    formation_llm: bool = Field(False, description="each turn's message is also read by the LLM (when one is "
                                                    "configured): one more LLM call per turn, after the answer; "
                                                    "`workbench formation run` always uses it")
    # The HTTP API (`workbench api`): the largest request body taken, and each key's request rate.
    api_max_body_bytes: int = Field(1_048_576, ge=1024, le=1 << 30)
    # Every call to Redis and Postgres is bounded: a hung server fails the call, reported as a timeout.
    redis_timeout_s: float = Field(5.0, gt=0, le=600, description="Longest wait for any Redis answer")
    postgres_connect_timeout_s: int = Field(5, ge=2, le=600, description="Longest wait for a Postgres connection")
    postgres_statement_timeout_s: float = Field(30.0, gt=0, le=86_400,
                                                description="Postgres stops a statement running longer")
    api_rate_limit: str = Field("600/minute", description="per API key (or client address without keys), "
                                                         "e.g. 600/minute, 20/second")

    @field_validator("data_dir")
    @classmethod
    def _absolute(cls, v: Path) -> Path:
        """Taken against the folder the command starts in once, here, so every message names the real path
        (and `~` works in the secrets file too)."""
        return v.expanduser().absolute()

    @field_validator("redis_url")
    @classmethod
    def _redis_url(cls, v: str | None) -> str | None:
        if v and not v.startswith(("redis://", "rediss://", "unix://")):
            raise ValueError("must start with redis://, rediss:// or unix://")
        if v:
            from redis.connection import parse_url

            _readable(v, "Redis", parse_url)
        return v or None

    @field_validator("database_url")
    @classmethod
    def _database_url(cls, v: str | None) -> str | None:
        if v and not v.startswith(("postgresql://", "postgres://")):
            raise ValueError("must start with postgresql:// or postgres://")
        if v:
            from psycopg.conninfo import conninfo_to_dict

            ports = str(_readable(v, "Postgres", conninfo_to_dict).get("port") or "")
            if bad := [p for p in ports.split(",") if p and not (p.isdigit() and 0 < int(p) < 65536)]:
                raise ValueError(_masked(f"the port {bad[0]!r} is not a number from 1 to 65535", v))
        return v or None

    @field_validator("api_rate_limit")
    @classmethod
    def _rate(cls, v: str) -> str:
        from limits import parse

        try:
            limit = parse(v)
        except ValueError:
            raise ValueError("must be a count per period, e.g. 600/minute or 20/second") from None
        if limit.amount < 1:  # 0/minute would refuse every request
            raise ValueError("must allow at least one request per period, e.g. 600/minute or 20/second")
        return v

    @field_validator("llm_base_url", "openai_base_url", "groq_base_url")
    @classmethod
    def _http_scheme(cls, v: str | None) -> str | None:
        if v and not v.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return v or None

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings, env_settings, _LowerKeysToml(settings_cls, secrets_file()))

    # -- what the rest of the code asks of the settings -------------------------------------

    @property
    def redis_embedded(self) -> bool:
        return self.redis_url is None

    @property
    def postgres_embedded(self) -> bool:
        return self.database_url is None

    @property
    def llm_provider(self) -> Literal["groq", "openai-compatible", "none"]:
        if self.llm_base_url:
            return "openai-compatible"
        if self.groq_api_key:
            return "groq"
        return "none"

    def public_view(self) -> dict[str, Any]:
        """The settings as they may be shown: secrets reduced to 'set' or 'unset', and every setting
        without a value shown as 'unset' too (one word for it on every page and command)."""
        out: dict[str, Any] = {}
        for name in type(self).model_fields:
            value = getattr(self, name)
            if value is None or value == "":
                value = "unset"
            elif isinstance(value, SecretStr):
                value = "set"
            elif name.endswith("api_key"):
                value = "unset"
            elif name.endswith("_url") and value:  # a password can ride in any service address
                value = mask_url(value)
            out[name.upper()] = str(value) if isinstance(value, Path) else value
        out["SETTINGS_FILE"] = settings_file_in_use()
        return out


# The seed's layout of the secrets file, `[groq] api_key = "..."`, read as the flat setting it names.
SECTIONS = {
    "groq": {"api_key": "groq_api_key", "base_url": "groq_base_url", "model_fast": "model_fast",
             "model_deep": "model_deep"},
    "openai": {"api_key": "openai_api_key", "base_url": "openai_base_url", "embedding_model": "embedding_model",
               "embedding_dimensions": "embedding_dimensions"},
}


class _LowerKeysToml(TomlConfigSettingsSource):
    """The secrets file, with its keys lower-cased so `GROQ_API_KEY = "..."` matches `groq_api_key`, and
    the `[groq]` and `[openai]` tables read as their flat settings. Other tables (Streamlit's own, such as
    `[auth]`) are left to Streamlit."""

    def __init__(self, settings_cls: type[BaseSettings], path: Path):
        super().__init__(settings_cls, toml_file=path)
        data = {k.lower(): v for k, v in self.toml_data.items()}
        flat = {k: v for k, v in data.items() if not isinstance(v, dict)}
        for section, names in SECTIONS.items():
            table = data.get(section)
            for key, value in (table.items() if isinstance(table, dict) else ()):
                name = names.get(key.lower())
                if name is None:
                    raise ConfigError(f"[{section}] {key} in {path} is not a setting; use "
                                      + ", ".join(f"[{section}] {k}" for k in names)
                                      + " or a setting of the README's configuration table.")
                if name in flat:
                    raise ConfigError(f"{name.upper()} and [{section}] {key} are both set in {path}; keep one.")
                flat[name] = value
        self.toml_data = self.init_kwargs = flat


# Query parameters (and libpq keywords) that carry a credential: ?password=, &token=, sslpassword=, ...
_SECRET_PARAM = re.compile(r"(ssl)?pass(word|wd)?|pwd|secret|token|access[-_]?token|api[-_]?key|key|auth|"
                           r"credentials?|sig(nature)?", re.IGNORECASE)
_LIBPQ_PASSWORD = re.compile(r"(\b(?:ssl)?password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)", re.IGNORECASE)


def mask_url(url: str) -> str:
    """A service URL as it may be shown: every credential it can carry replaced by `***`.

    - userinfo: `redis://:secret@host` -> `redis://:***@host`; a user name alone is taken for a token
      (`https://sk-abc@host` -> `https://***@host`), a user with a password keeps its name;
    - query parameters named like a credential: `postgresql://h/db?password=x` -> `...?password=***`;
    - a libpq keyword/value string (`host=h password=x`): `password=***`.
    """
    if "://" not in url:
        return _LIBPQ_PASSWORD.sub(r"\1***", url)
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        user, has_password, _ = userinfo.partition(":")
        netloc = f"{user}:***@{host}" if has_password else f"***@{host}"
    query = "&".join(
        f"{name}=***" if sep and _SECRET_PARAM.fullmatch(unquote(name)) else f"{name}{sep}{value}"
        for name, sep, value in (piece.partition("=") for piece in parts.query.split("&"))
    ) if parts.query else ""
    # Put together by hand: urlunsplit drops the empty authority of `unix:///path`.
    return (f"{parts.scheme}://{netloc}{parts.path}" + (f"?{query}" if parts.query else "")
            + (f"#{parts.fragment}" if parts.fragment else ""))


def _readable(url: str, service: str, parse: Callable[[str], dict[str, Any]]) -> dict[str, Any]:
    """`url` as its client library reads it (psycopg's `conninfo_to_dict`, redis-py's `parse_url`), or a
    ValueError with the library's reason, credentials masked: the URL may not parse, so `mask_url` cannot
    be trusted with it, and libpq's reason quotes the whole URL. Not chained: the cause's traceback
    (WORKBENCH_DEBUG=1) would print the password."""
    try:
        return parse(url)
    except Exception as e:  # noqa: BLE001 - whatever the parser raises, the URL is at fault
        reason = re.sub(r'\s+in URI: ".*"$', "", (str(e).strip() or type(e).__name__).splitlines()[0])
        raise ValueError(_masked(f"cannot be read as a {service} URL: {reason.rstrip('.')}", url)) from None


def _masked(text: str, url: str) -> str:
    """`text` with whatever in `url` may be a credential replaced by `***`, found without parsing `url`:
    the userinfo up to each `@` (its password, or a user name alone taken for a token, as `mask_url` does),
    what follows `://:` when no `@` comes (a password without its host), and query values named like a
    credential."""
    rest = url.partition("://")[2]
    secrets = [info.partition(":")[2] or info for info in (rest[:i] for i, c in enumerate(rest) if c == "@")]
    if "@" not in rest and rest.startswith(":"):
        secrets.append(re.split(r"[/?#]", rest[1:], maxsplit=1)[0])
    secrets += [value for name, value in re.findall(r"[?&]([^=&#]+)=([^&#]*)", url)
                if _SECRET_PARAM.fullmatch(unquote(name))]
    for secret in sorted({s for found in secrets for s in (found, unquote(found)) if s}, key=len,
                         reverse=True):  # longest first: a password holding another is masked whole
        text = text.replace(secret, "***")
    return text


def settings_file_in_use() -> str:
    """Which secrets file the settings came from, as it may be shown."""
    path = secrets_file()
    return str(path) if path.is_file() else f"none ({path} does not exist)"


def load_settings(**overrides: Any) -> Settings:
    """Read the settings, turning a validation failure into one message naming each setting. `overrides`
    take each setting by its name in lower case (`data_dir=`) and win over the environment; a name that is
    no setting is refused (ignored, a misspelled `data_dri=` left a program on the per-user data directory)."""
    if unknown := sorted(set(overrides) - set(Settings.model_fields)):
        raise ConfigError(f"no setting is named {', '.join(unknown)} (load_settings takes each setting by its "
                          "name in lower case, as data_dir=, llm_base_url=, instance=)")
    try:
        return Settings(**overrides)
    except ValidationError as e:
        problems = []
        for err in e.errors():
            name = ".".join(str(p) for p in err["loc"]).upper() or "settings"
            msg = err["msg"].removeprefix("Value error, ")
            shown = "" if "KEY" in name or err["type"] == "value_error" else f" (got {_short(err.get('input'))})"
            problems.append(f"{name}: {msg}{shown}")
        raise ConfigError("invalid setting — " + "; ".join(problems) + f". Fix it in {_where_settings_are()}.") \
            from None


def _where_settings_are() -> str:
    """Where a setting's value was read: the environment, and the secrets file actually read (the one
    WORKBENCH_SECRETS_FILE names, else the project's own), when there is one."""
    path = secrets_file()
    return f"the environment or in {path}" if path.is_file() else \
        f"the environment (no secrets file was read: {path} does not exist)"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "…"
