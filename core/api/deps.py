"""What every endpoint depends on: the Workbench, the caller (`Principal`), its rate, and the instance scope.

Who the caller is: the key in `Authorization: Bearer <key>`, through `uc.authenticate`. Without a
header, a server on loopback with no key created yet serves the local user (every instance), as the CLI
does; once any key exists, or when the server listens beyond loopback, every request needs a key (401).

An endpoint that names an instance takes it as `ReadInstance` or `WriteInstance`: `uc.authorize` runs
before anything else touches the instance, and its refusal (403) reads the same whether or not the
instance exists, so a key learns nothing about instances outside its scope.
"""

from __future__ import annotations

from typing import Annotated, Any, TypeVar

from fastapi import Depends, Path, Query, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel

from core import usecases as uc
from core.errors import InvalidInput, Unauthenticated
from core.runtime import Workbench

M = TypeVar("M", bound=BaseModel)

# Declared for the OpenAPI document (a viewer's "Authorize" button); the header itself is read in `resolve`, so a
# malformed one is refused rather than taken for no header.
bearer = HTTPBearer(auto_error=False, description="an API key from `workbench keys create`")


def workbench(request: Request) -> Workbench:
    return request.app.state.wb


def resolve(wb: Workbench, authorization: str | None, *, exposed: bool) -> uc.Principal:
    """The caller of one request (also used for the /mcp mount)."""
    if authorization:
        scheme, _, secret = authorization.partition(" ")
        if scheme.lower() != "bearer" or not secret.strip():
            raise Unauthenticated("the Authorization header must be 'Bearer <key>'")
        return uc.authenticate(wb, secret.strip())
    if exposed or uc.keys_exist(wb):
        return uc.authenticate(wb, None)  # raises, saying how to send a key
    return uc.LOCAL_USER


def principal(request: Request, _: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]
              ) -> uc.Principal:
    return resolve(request.app.state.wb, request.headers.get("authorization"),
                   exposed=request.app.state.exposed)


Caller = Annotated[uc.Principal, Depends(principal)]


def rate_identity(who: uc.Principal, client_host: str | None) -> tuple[str, str]:
    """Whose budget a request draws on (a key's, or the client address's for the local user), and how a
    refusal names it."""
    if who.is_local:
        host = client_host or "unknown"
        return f"addr:{host}", f"client {host}"
    return f"key:{who.name}", f"key {who.name!r}"


def rate_limit(request: Request, who: Caller) -> None:
    """One request of the caller's budget; 429 when it is spent."""
    request.app.state.limiter.hit(*rate_identity(who, request.client.host if request.client else None))


# The rule an id in a path or query follows, published in the OpenAPI document but checked by the core's
# request model, so that a refusal reads as everywhere else ("chain_id must be 1–128 characters: …").
ID_JSON_SCHEMA = {"pattern": uc.ID_PATTERN.pattern, "minLength": 1, "maxLength": 128}
USER_ID_JSON_SCHEMA = {"pattern": uc.USER_ID_PATTERN.pattern, "minLength": 1, "maxLength": 128}


def id_path(description: str) -> Any:
    return Path(description=description, json_schema_extra=ID_JSON_SCHEMA)


CONSTRAINTS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength", "pattern",
               "minItems", "maxItems")


def query_of(model: type[BaseModel], field: str, description: str | None = None, **extra: Any) -> Any:
    """A query parameter documented by the core request model that checks it: its description and its
    bounds (a page from 1, at most 200 a page), so the OpenAPI document says what the model refuses."""
    schema = model.model_json_schema()["properties"][field]
    value = next((s for s in schema.get("anyOf", []) if s.get("type") != "null"), schema)
    rule = {k: v for k, v in value.items() if k in CONSTRAINTS}
    return Query(description=description or model.model_fields[field].description,
                 json_schema_extra=rule or None, **extra)


InstancePath = Annotated[str, id_path("the memory instance (the key must allow it)")]
ChainIdPath = Annotated[str, id_path("the chain's id (a ui_remember result's `chain_id`)")]
BankPath = Annotated[str, id_path("the memory bank's name")]
MemoryIdPath = Annotated[str, id_path("the memory's id: a thought, an added memory, a bank entry or summary")]


async def _readable(instance: InstancePath, who: Caller) -> str:
    uc.authorize(who, instance, write=False)
    return uc.InstanceRequest(instance=instance).instance  # the local user may name a malformed one


async def _writable(instance: InstancePath, who: Caller) -> str:
    uc.authorize(who, instance, write=True)
    return uc.InstanceRequest(instance=instance).instance


ReadInstance = Annotated[str, Depends(_readable)]
WriteInstance = Annotated[str, Depends(_writable)]
WB = Annotated[Workbench, Depends(workbench)]


def on_path(body: M, **path: str) -> M:
    """A core request model from the body, with the values the path names (the instance, a bank): a body
    may leave them out, and may not name others."""
    for field, value in path.items():
        named = getattr(body, field)
        if field in body.model_fields_set and named is not None and named != value:
            raise InvalidInput(f"{field}: the body names {named!r} but the path {value!r}; leave it out of "
                               "the body")
    return body.model_copy(update=path)
