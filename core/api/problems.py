"""Every error the API returns is one problem-details document (RFC 9457, `application/problem+json`):

    {"type": "urn:memory-workbench:problem:forbidden", "title": "Forbidden", "status": 403,
     "code": "forbidden", "detail": "key 'ci' may not use instance 'x'; ...", "retryable": false}

`code` and `detail` come from `core.errors.describe`, the one mapping every front end shares, so the
message names what to change; the status is chosen here. A traceback never leaves the server: an
unexpected error is logged there and answered with a generic 500.
"""

from __future__ import annotations

import logging
from http import HTTPStatus

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from core.errors import ServiceUnavailable, WorkbenchError, describe, explain_validation

log = logging.getLogger(__name__)

MEDIA_TYPE = "application/problem+json"
RETRY_AFTER_UNAVAILABLE_S = 5  # a restarted Redis or Postgres is usually back within seconds

STATUS_OF_CODE = {
    "invalid_input": 422,
    "unauthenticated": 401,
    "forbidden": 403,
    "not_found": 404,
    "conflict": 409,
    "payload_too_large": 413,
    "rate_limited": 429,
    "llm_not_configured": 501,
    "provider": 502,
    "service_unavailable": 503,
    "timeout": 503,  # Redis or Postgres did not answer in time: down for this request, retryable
}


class ProblemResponse(JSONResponse):
    media_type = MEDIA_TYPE


class Problem(BaseModel):
    """The body of every error (RFC 9457), as the OpenAPI document publishes it; further members allowed
    (`services` in /readyz's 503)."""

    model_config = ConfigDict(extra="allow")

    type: str = Field(description="urn:memory-workbench:problem:<code>")
    title: str = Field(description="the HTTP status's phrase")
    status: int = Field(description="the HTTP status")
    code: str = Field(description="what kind of refusal or failure, e.g. invalid_input, not_found, rate_limited")
    detail: str = Field(description="one line: what happened and what to change or do")
    retryable: bool = Field(description="whether the same request may succeed later (after Retry-After)")


def documented(description: str) -> dict[str, object]:
    """An error response for the OpenAPI document: its description and the problem document's schema (one
    `Problem` in the components, added by `publish_schema`)."""
    return {"description": description, "content": {MEDIA_TYPE: {"schema": {"$ref": "#/components/schemas/Problem"}}}}


def publish_schema(app: FastAPI) -> None:
    """Add `Problem` to the OpenAPI document's components, where every error response refers to it (FastAPI
    adds a response's model only under the route's own media type, application/json)."""
    build = app.openapi

    def openapi() -> dict[str, object]:
        document = build()  # built once and kept by FastAPI: this adds to the kept one
        document.setdefault("components", {}).setdefault("schemas", {}).setdefault(
            "Problem", Problem.model_json_schema(ref_template="#/components/schemas/{model}"))
        return document

    app.openapi = openapi  # type: ignore[method-assign]


# The errors any endpoint that takes a key may answer; an endpoint adds the ones of its own (404, …).
COMMON_ERRORS = {code: documented(text) for code, text in (
    (401, "no key, or an unknown or revoked one"),
    (403, "the key does not allow this instance or a write"),
    (413, "body over API_MAX_BODY_BYTES"),
    (422, "invalid input, one line per field"),
    (429, "the key's rate is spent (Retry-After)"),
    (503, "Redis or Postgres down (Retry-After)"))}


def problem(status: int, code: str, detail: str, *, retryable: bool = False,
            headers: dict[str, str] | None = None, **extensions: object) -> ProblemResponse:
    """One problem document; `extensions` are further members (RFC 9457 allows them)."""
    body = {"type": f"urn:memory-workbench:problem:{code}", "title": HTTPStatus(status).phrase,
            "status": status, "code": code, "detail": detail, "retryable": retryable, **extensions}
    return ProblemResponse(body, status_code=status, headers=headers)


class ApiProblem(Exception):
    """A refusal made by the API itself rather than by the core: too many requests, a body too large."""

    def __init__(self, status: int, code: str, detail: str, headers: dict[str, str] | None = None):
        super().__init__(detail)
        self.status, self.code, self.detail, self.headers = status, code, detail, headers


def from_exception(exc: BaseException) -> ProblemResponse:
    """The problem document for any exception raised while serving a request."""
    if isinstance(exc, ApiProblem):
        return problem(exc.status, exc.code, exc.detail, retryable=exc.status == 429, headers=exc.headers)
    info = describe(exc, "api")
    if isinstance(exc, ValidationError):
        return problem(422, "invalid_input", info.message)
    status = STATUS_OF_CODE.get(info.code, 500)
    headers = None
    if status == 401:
        headers = {"WWW-Authenticate": 'Bearer realm="memory-workbench"'}
    elif status == 503:
        headers = {"Retry-After": str(RETRY_AFTER_UNAVAILABLE_S)}
    if status == 500:
        log.error("request failed", exc_info=exc)
    return problem(status, info.code, info.message, retryable=info.retryable, headers=headers)


class _RequestErrors:
    """FastAPI's request validation errors in the shape `explain_validation` reads (pydantic's)."""

    def __init__(self, exc: RequestValidationError):
        self._errors = exc.errors()

    def errors(self, **_: object) -> list[dict]:
        # A body field is named by itself ("thought"), a query or path parameter as "query.page"; a body
        # that is not a JSON object at all is named "body", with what to send instead.
        return [_whole_body(e) or {**e, "loc": tuple(e["loc"][1:]) if e["loc"][:1] == ("body",) else tuple(e["loc"])}
                for e in self._errors]


def _whole_body(error: dict) -> dict | None:
    """FastAPI's error for a body that is not JSON (located at its character offset, "JSON decode error")
    or not an object (a text body, a list), said so."""
    loc = tuple(error["loc"])
    if error["type"] == "json_invalid":
        where = f" at character {loc[1]}" if len(loc) > 1 else ""
        reason = (error.get("ctx") or {}).get("error", "")
        return {**error, "loc": ("body",), "msg": f"not valid JSON ({reason}{where})" if reason else "not valid JSON"}
    if loc == ("body",) and error["type"] in ("model_attributes_type", "dict_type"):
        return {**error, "msg": "must be a JSON object, sent with Content-Type: application/json"}
    if loc == ("body",) and error["type"] == "missing":  # no body at all (its fields' own errors name them)
        return {**error, "msg": "missing: send a JSON object, with Content-Type: application/json"}
    return None


async def _request_invalid(_: Request, exc: Exception) -> ProblemResponse:
    assert isinstance(exc, RequestValidationError)
    return problem(422, "invalid_input", explain_validation(_RequestErrors(exc)))


def _unreadable_body(exc: StarletteHTTPException) -> str | None:
    """What was wrong with a JSON body that FastAPI could not read for another reason than its syntax (it
    answers those 400 "There was an error parsing the body", the reader's error as the cause): None
    for any other error."""
    cause = exc.__cause__
    if exc.status_code != 400 or not isinstance(cause, ValueError | RecursionError):
        return None
    if isinstance(cause, UnicodeDecodeError):
        return (f"body: not UTF-8 (byte 0x{cause.object[cause.start]:02x} at position {cause.start} is not "
                "UTF-8 text); send the JSON encoded as UTF-8")
    if isinstance(cause, RecursionError):
        return "body: JSON nested too deeply to read; send fewer levels of lists and objects inside each other"
    # A number of over 4300 digits, say; what follows ";" is advice for the server's Python, not the client.
    return f"body: not valid JSON ({' '.join(str(cause).split(';')[0].split())[:160]})"


async def _http_error(request: Request, exc: Exception) -> ProblemResponse:
    assert isinstance(exc, StarletteHTTPException)
    if exc.status_code == 404 and "/instances//" in request.url.path:  # `/instances/$INST/…`, INST unset
        return problem(422, "invalid_input", "instance: the path names none (/v1/instances//…): put the "
                                             "instance's name between the two slashes")
    if (unreadable := _unreadable_body(exc)) is not None:
        return problem(422, "invalid_input", unreadable)
    code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
    detail = {404: "no such endpoint; the OpenAPI document at /openapi.json lists them",
              405: "this endpoint does not take that method; the OpenAPI document at /openapi.json lists "
                   "them"}.get(
        exc.status_code, str(exc.detail))
    return problem(exc.status_code, code, detail, headers=getattr(exc, "headers", None))


async def _any_error(_: Request, exc: Exception) -> ProblemResponse:
    return from_exception(exc)


def install(app: FastAPI) -> None:
    """Map every error, once, to its problem document, and publish its schema."""
    import psycopg
    import redis

    publish_schema(app)
    app.add_exception_handler(RequestValidationError, _request_invalid)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    for kind in (ApiProblem, WorkbenchError, ServiceUnavailable, ValidationError, redis.exceptions.RedisError,
                 psycopg.Error, Exception):
        app.add_exception_handler(kind, _any_error)
