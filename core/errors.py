"""One short exception hierarchy, and one function the UI and CLI use to explain any error.

Every error raised by `core` is a `WorkbenchError`; wrappers chain the cause with `raise ... from e`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

# Who reads a message: what to check and where the details are differ between the dashboard (its
# sidebar shows the services, its server log the tracebacks) and the command line.
Front = Literal["dashboard", "cli", "api"]

# Said wherever an instance is named, so an unset shell variable (`--instance "$INST"`, `INSTANCE=`) is
# refused the same way on every front end instead of meaning the default instance.
EMPTY_INSTANCE = "the instance is empty: give a name or leave the option out"


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


class Conflict(InvalidInput):
    """The id a caller gave is already another item's: sending that item again is a retry and succeeds,
    this is not (HTTP 409; the CLI exits 2 as for any invalid input)."""

    code = "conflict"


class NotFound(WorkbenchError, LookupError):
    code = "not_found"


class Cancelled(WorkbenchError):
    """A long run (an evaluation, the optimiser) was stopped by its caller before it finished."""

    code = "cancelled"


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


class OutcomeUnknown(ServiceUnavailable):
    """A write was sent but its reply never came (connection lost, timeout): it may or may not have been
    applied. Every such write is idempotent by its request id, so the message tells how to retry safely.
    A kind of ServiceUnavailable: front ends answer it the same way (HTTP 503, CLI exit 1)."""

    def __init__(self, service: str, what: str, request_id: str):
        super().__init__(service, f"no answer came while {what} was being stored (connection lost or timed "
                                  f"out), so it may have been stored; retrying with the same request id is safe "
                                  f"(request id {request_id}).")
        self.request_id = request_id


class ServiceTimeout(ServiceUnavailable):
    """Redis or Postgres did not answer within its time limit: stopped, suspended or overloaded. What
    the request did there is unknown."""

    code = "timeout"

    def __init__(self, service: str, seconds: float, why: str):
        self.service, self.seconds, self.why = service, seconds, why
        WorkbenchError.__init__(self, self.explain("dashboard"))

    def explain(self, front: Front) -> str:
        return (f"{self.service} did not answer within {self.seconds:g} s ({self.why}). "
                + _check(self.service, front))


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


def outage(exc: BaseException, service: str) -> str:
    """How a degraded result names its cause: "Postgres did not answer within 3 s" for a timeout, else
    "Postgres is unavailable"."""
    if isinstance(exc, ServiceTimeout):
        return f"{exc.service} did not answer within {exc.seconds:g} s"
    if (reason := refused_data(exc)) is not None:
        return f"Postgres refused the data ({reason})"
    return f"{service} is unavailable"


def refused_data(exc: BaseException) -> str | None:
    """Postgres's reason when it refused a value (too long for a text vector or an index row, out of
    range): bad input that fails again as is, though psycopg files a limit under OperationalError. The
    reason names no setting or secret."""
    import psycopg

    if isinstance(exc, psycopg.DataError | psycopg.errors.ProgramLimitExceeded):
        return _clip(exc.diag.message_primary or type(exc).__name__, 200)
    return None


@dataclass(frozen=True)
class ErrorInfo:
    code: str
    retryable: bool
    message: str


def describe(exc: BaseException, front: Front = "dashboard") -> ErrorInfo:
    """Map any exception to what a person should read: a code, whether to retry, and a message, worded
    for the `front` end it is shown on.

    Known errors keep their own message; anything else becomes a generic message that names the
    exception type but never its arguments, which may hold secrets or user data.
    """
    if isinstance(exc, ServiceTimeout):
        return ErrorInfo(exc.code, exc.retryable, exc.explain(front))
    if isinstance(exc, WorkbenchError):
        return ErrorInfo(exc.code, exc.retryable, str(exc))
    import psycopg
    import redis
    from pydantic import ValidationError

    if isinstance(exc, ValidationError):
        return ErrorInfo("invalid_input", False, explain_validation(exc))

    if isinstance(exc, redis.exceptions.TimeoutError):
        return ErrorInfo("timeout", True,
                         f"Redis did not answer in time (REDIS_TIMEOUT_S). {_check('Redis', front)}")
    if isinstance(exc, psycopg.errors.QueryCanceled):
        return ErrorInfo("timeout", True, "Postgres stopped a statement that ran longer than "
                         "POSTGRES_STATEMENT_TIMEOUT_S. Retry, or raise that setting.")
    if isinstance(exc, redis.exceptions.ConnectionError):
        return ErrorInfo("service_unavailable", True, f"Redis is unavailable. {_check('Redis', front)}")
    if (reason := refused_data(exc)) is not None:
        return ErrorInfo("invalid_input", False, f"Postgres refused the data: {reason}. Shorten or correct "
                         "the input; the same input fails again.")
    if isinstance(exc, psycopg.OperationalError):
        return ErrorInfo("service_unavailable", True, f"Postgres is unavailable. {_check('Postgres', front)}")
    details = "Rerun with WORKBENCH_DEBUG=1 to see the traceback" if front == "cli" else "The details are in the server log"
    return ErrorInfo("internal", False, f"Unexpected {type(exc).__name__}. {details}; please report it.")


def _check(service: str, front: Front) -> str:
    """What to check when Redis or Postgres cannot be reached: on the command line, the setting that
    names the server, since there is no sidebar to look at."""
    if front == "cli":
        setting = {"Redis": "REDIS_URL", "Postgres": "DATABASE_URL"}.get(service, "its URL setting")
        return f"Check that it runs (`workbench services`) and that {setting}, if set, names it; then retry."
    if front == "api":  # an HTTP or MCP client: the server is not theirs to check
        return "Retry in a few seconds; if it lasts, the server's operator can check `workbench services`."
    return "Check that it is running (see the sidebar), then retry."


def explain_validation(exc) -> str:
    """One line naming each rejected field and what is allowed (pydantic's messages; the input left out,
    but for an item of a list of plain values, `_field_error`)."""
    errors = _without_union_branches(exc.errors(include_url=False))
    return "invalid input — " + "; ".join(dict.fromkeys(_field_error(err) for err in errors))


# How pydantic names the branch of a union a value was tried against, in an error's location
# ("profile.str", "profile.function-after[_weights_sum_to_one(), FusionProfile]", "x.list[str]"): a name
# the caller never wrote. A model's branch is its class's name.
_UNION_TAG = re.compile(r"(str|int|float|bool|bytes|none|decimal|date|datetime|time|timedelta|uuid|url|"
                        r"literal\[.*|list\[.*|dict\[.*|set\[.*|tuple\[.*|function-(after|before|wrap|plain)\[.*|"
                        r"lax-or-strict\[.*|json-or-python\[.*|nullable\[.*|chain\[.*|is-instance\[.*|"
                        r"constrained-.*|[A-Z][A-Za-z0-9_]*)", re.DOTALL)


def _without_union_branches(errors: list[dict]) -> list[dict]:
    """Errors with the union branches out of their locations. A value refused by every branch of a union
    gets an error per branch: the branches whose type it had (an object for a profile, not a string) say
    what is wrong with it, so only theirs are kept; when it had none of their types, the branches' types
    are named in one error ("profile: Input should be a valid string or a valid dictionary …")."""
    by_place: dict[tuple, dict[str, list[dict]]] = {}
    for err in errors:
        loc = tuple(err["loc"])
        for i, part in enumerate(loc):
            if isinstance(part, str) and _UNION_TAG.fullmatch(part):
                by_place.setdefault(loc[:i], {}).setdefault(part, []).append(err)
    unions = {place: branches for place, branches in by_place.items() if len(branches) > 1}
    if not unions:
        return errors
    out: list[dict] = []
    done: set[tuple] = set()
    for err in errors:
        loc = tuple(err["loc"])
        place = next((loc[:i] for i in range(len(loc)) if loc[:i] in unions and loc[i] in unions[loc[:i]]), None)
        if place is None:
            out.append(err)
            continue
        if place in done:
            continue
        done.add(place)
        branches = unions[place]
        typed = [e for branch in branches.values() for e in branch if not _wrong_type(e, len(place))]
        if typed:  # the value had these branches' type: their errors, at their field, say what to change
            out += [{**e, "loc": place + tuple(e["loc"][len(place) + 1:])} for e in typed]
        else:
            wanted = [e["msg"] for branch in branches.values() for e in branch]
            msg = wanted[0] + "".join(" or " + m.removeprefix("Input should be ") for m in wanted[1:])
            out.append({**branches[next(iter(branches))][0], "loc": place, "msg": msg})
    return out


def _wrong_type(err: dict, depth: int) -> bool:
    """The error says the value at the union itself was not of its branch's type (not a string, not an
    object), rather than what is wrong inside a value of that type."""
    return len(err["loc"]) == depth + 1 and (err["type"].endswith("_type") or err["type"] in (
        "is_instance_of", "model_attributes_type", "literal_error"))


def _field_error(err: dict) -> str:
    """`field: what is allowed`. An item of a list of plain values is named by the field and its value, not
    by its place: a user who sent one rating ("ratings": "7", `--rating 7`, `?rating=7`) wrote no list,
    and "ratings.0" named a list and a place they never wrote ("ratings: Input should be 'up', 'down' or
    'none', not '7'"). An item of a list of objects keeps its place ("messages.3.content"): there the
    place is what finds it."""
    loc, msg = list(err["loc"]), err["msg"].removeprefix("Value error, ")
    if loc and isinstance(loc[-1], int) and "input" in err and _is_plain(err["input"]):
        loc.pop()
        if (shown := _shown(err["input"])) not in msg:
            msg = f"{msg}, not {shown}"
    if not loc and _FIELDS_FIRST.match(msg):  # a check of several fields that names them: "query: give …"
        return msg
    if not loc and (named := _LEADING_FIELD.match(msg)):  # "date_from must not be after date_to"
        return f"{named[1]}: {msg[named.end(1) + 1:]}"
    # A location part can be a key of the input itself (an unknown field): never echo a long one.
    field = ".".join(_clip(str(p), 40) for p in loc) or "input"
    return f"{field}: {msg}"


# A model-wide check's message that opens with the field it refuses ("date_from must not be after date_to",
# "since must not be after until"): pydantic locates it nowhere, which read as "input: date_from must …".
_LEADING_FIELD = re.compile(r"([a-z][a-z0-9_]*) (?:must|should|cannot|is not|needs) ")
_FIELDS_FIRST = re.compile(r"[a-z][a-z0-9_.]*(?:, [a-z][a-z0-9_.]*)*: ")


def _is_plain(value: object) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def _shown(value: object) -> str:
    """A value as the caller wrote it, in a few characters: text quoted (so a blank one shows), a number,
    true, false or null as JSON writes them."""
    if isinstance(value, str):
        return "'" + _clip(value, 40) + "'"
    import json

    return _clip(json.dumps(value), 40)


def _clip(text: str, limit: int) -> str:
    # An unknown field's name is the caller's text: a newline or escape code in it must not break the one line.
    text = "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text)
    return text if len(text) <= limit else text[: limit - 1] + "…"
