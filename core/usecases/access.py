"""API keys: create (the secret is returned once), list, revoke, and resolve a request's key to the
`Principal` whose scope every served request is checked against with `authorize`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from core.access.keys import ApiKeyInfo
from core.access.scope import LOCAL_USER, Principal, authorize
from core.errors import Unauthenticated
from core.ids import Id
from core.usecases.base import Request

if TYPE_CHECKING:
    from core.runtime import Workbench

# For the front ends: what a served request is checked with, and what a key looks like.
__all__ = ["LOCAL_USER", "ApiKeyInfo", "Principal", "authorize"]

HOW_TO_SEND = "send an API key as 'Authorization: Bearer <key>' (create one with `workbench keys create`)"


class CreateKey(Request):
    name: Id
    instances: list[Id] = Field(min_length=1, description="the instances the key may read and write")
    read_only: bool = False


class CreatedKey(BaseModel):
    """A new key and its secret: the only time the secret is ever shown."""

    key: ApiKeyInfo
    secret: str


def create_key(wb: Workbench, req: CreateKey) -> CreatedKey:
    key, secret = wb.keys.create(req.name, req.instances, req.read_only)
    return CreatedKey(key=key, secret=secret)


def list_keys(wb: Workbench) -> list[ApiKeyInfo]:
    """Every key, revoked ones too, oldest first; never a secret or its hash."""
    return wb.keys.list()


class KeyRef(Request):
    name: Id


def revoke_key(wb: Workbench, req: KeyRef) -> ApiKeyInfo:
    """Refuse the key from now on, in every process (idempotent)."""
    return wb.keys.revoke(req.name)


def authenticate(wb: Workbench, secret: str | None) -> Principal:
    """The caller a request's key stands for; Unauthenticated when there is none, or it is unknown or
    revoked (one message for both: a caller learns nothing about which keys exist)."""
    if not secret:
        raise Unauthenticated(f"no API key: {HOW_TO_SEND}")
    principal = wb.keys.principal_for(secret)
    if principal is None:
        raise Unauthenticated(f"unknown or revoked API key: {HOW_TO_SEND}")
    return principal


def keys_exist(wb: Workbench) -> bool:
    """Whether this deployment uses keys: any key was ever created, revoked ones included. Once it does, a
    served front end always asks for one, so revoking the last key locks the API instead of opening it."""
    return wb.keys.any_created()
