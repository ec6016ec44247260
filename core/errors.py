"""One short exception hierarchy, and one function the UI and CLI use to explain any error.

Every error raised by `core` is a `WorkbenchError`; wrappers chain the cause with `raise ... from e`.
"""

from __future__ import annotations

from dataclasses import dataclass


class WorkbenchError(Exception):
    """Base of every error the core raises on purpose."""

    code = "error"
    retryable = False


class ConfigError(WorkbenchError):
    """A setting is missing or has a value that is not allowed."""

    code = "config"


class InvalidInput(WorkbenchError, ValueError):
    """A caller passed something the product cannot accept; the message says what to change."""

    code = "invalid_input"


class NotFound(WorkbenchError, LookupError):
    code = "not_found"


class Unauthenticated(WorkbenchError, PermissionError):
    """No API key, or one that is unknown or revoked."""

    code = "unauthenticated"


class Forbidden(WorkbenchError, PermissionError):
    """The caller's key does not allow this (another instance, or a write with a read-only key)."""

    code = "forbidden"


class ServiceUnavailable(WorkbenchError):
    """Redis or Postgres cannot be reached or is not usable."""

    code = "service_unavailable"
    retryable = True

    def __init__(self, service: str, message: str):
        super().__init__(f"{service}: {message}")
        self.service = service


class ProviderError(WorkbenchError):
    """An LLM or embedding API failed after its retries."""

    code = "provider"
    retryable = True


class LLMNotConfigured(WorkbenchError):
    """A step needs an LLM and none is configured; callers show it as 'skipped'."""

    code = "llm_not_configured"

    def __init__(self, step: str = "this step"):
        super().__init__(f"{step} skipped: no LLM configured (set GROQ_API_KEY, or LLM_BASE_URL for an "
                         "OpenAI-compatible server)")


@dataclass(frozen=True)
class ErrorInfo:
    code: str
    retryable: bool
    message: str


def describe(exc: BaseException) -> ErrorInfo:
    """Map any exception to what a person should read: a code, whether to retry, and a message.

    Known errors keep their own message; anything else becomes a generic message that names the
    exception type but never its arguments, which may hold secrets or user data.
    """
    if isinstance(exc, WorkbenchError):
        return ErrorInfo(exc.code, exc.retryable, str(exc))
    import psycopg
    import redis
    from pydantic import ValidationError

    if isinstance(exc, ValidationError):
        return ErrorInfo("invalid_input", False, explain_validation(exc))

    if isinstance(exc, redis.exceptions.ConnectionError | redis.exceptions.TimeoutError):
        return ErrorInfo("service_unavailable", True,
                         "Redis is unavailable. Check that it is running (see the sidebar), then retry.")
    if isinstance(exc, psycopg.OperationalError):
        return ErrorInfo("service_unavailable", True,
                         "Postgres is unavailable. Check that it is running (see the sidebar), then retry.")
    return ErrorInfo("internal", False,
                     f"Unexpected {type(exc).__name__}. The details are in the server log; please report it.")


def explain_validation(exc) -> str:
    """One line naming each rejected field and what is allowed (pydantic's messages, input left out)."""
    parts = []
    for err in exc.errors(include_input=False, include_url=False):
        # A location part can be a key of the input itself (an unknown field): never echo a long one.
        field = ".".join(_clip(str(p), 40) for p in err["loc"]) or "input"
        msg = err["msg"].removeprefix("Value error, ")
        parts.append(f"{field}: {msg}")
    return "invalid input — " + "; ".join(parts)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
