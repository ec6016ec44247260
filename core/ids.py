"""Validation of the ids that become part of Redis keys and SQL values: `Id` for a model's fields,
`validate_id` for a function's arguments; one rule and one message for both. A past task's user id has a
wider rule of its own (`UserId`): it is only ever an SQL value, and an agent's natural user key is often
an e-mail address."""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import AfterValidator, ValidationInfo, WithJsonSchema

from core.errors import EMPTY_INSTANCE, InvalidInput

ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
ID_RULE = "1–128 characters: letters, digits, '.', '_' or '-', starting with a letter or digit"
# A past task's user: also '@' and '+', so "maria+work@acme.com" is one. Still no space, ':', '/', '%',
# '?', '#', quote or control character, and a letter or digit first: nothing that breaks a path, a log
# line or a URL once percent-encoded (a '+' sent unencoded in a query string would be read as a space).
USER_ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+@-]{0,127}$")
USER_ID_RULE = ("1–128 characters: letters, digits, '.', '_', '-', '@' or '+' (an e-mail address will do), "
                "starting with a letter or digit")
# The instance every search reads beside its own: memories shared on purpose with every instance.
SHARED_INSTANCE = "Federation"


def pg_text(value: str) -> str:
    """Text as Postgres can store it. A text or jsonb value cannot hold NUL (U+0000): a single one in a
    thought made its index write fail, and the write stayed first in the outbox, blocking every later
    one. It becomes U+FFFD (the replacement character), so the rest of the text is kept and searchable."""
    return value.replace("\x00", "\ufffd") if "\x00" in value else value


def pg_json(value: object) -> object:
    """`pg_text` applied to every string (keys too) inside a JSON-like value."""
    if isinstance(value, str):
        return pg_text(value)
    if isinstance(value, dict):
        return {pg_text(str(k)): pg_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [pg_json(v) for v in value]
    return value


def validate_id(value: object, field: str) -> str:
    """Return `value` if it may be used as an id, else raise InvalidInput naming the field."""
    if value == "" and field == "instance":  # an unset shell variable ($INST): never the default instance
        raise InvalidInput(EMPTY_INSTANCE)
    if not isinstance(value, str) or not ID_PATTERN.fullmatch(value):
        raise InvalidInput(f"{field} must be {ID_RULE}; got {value!r:.60}")
    return value


def validate_user_id(value: object, field: str = "user_id") -> str:
    """Return `value` if it may be a past task's user id, else raise InvalidInput naming the field."""
    if not isinstance(value, str) or not USER_ID_PATTERN.fullmatch(value):
        raise InvalidInput(f"{field} must be {USER_ID_RULE}; got {value!r:.60}")
    return value


# What the published schemas (OpenAPI, MCP tool inputs) say of an id: the rule itself, so a client that
# follows the schema never sends one the validator refuses (the validator keeps its own message).
# No description here: the field's own describes what the id is.
ID_SCHEMA = WithJsonSchema({"type": "string", "pattern": ID_PATTERN.pattern, "minLength": 1, "maxLength": 128})
USER_ID_SCHEMA = WithJsonSchema({"type": "string", "pattern": USER_ID_PATTERN.pattern, "minLength": 1,
                                 "maxLength": 128})


def _id_field(value: str, info: ValidationInfo) -> str:
    return validate_id(value, info.field_name or "id")


# A model field holding an id; a rejection names the field ("chain_id must be 1–128 characters: …").
# `Id | None` leaves None alone.
Id = Annotated[str, AfterValidator(_id_field), ID_SCHEMA]


def _user_id_field(value: str, info: ValidationInfo) -> str:
    return validate_user_id(value, info.field_name or "user_id")


# A past task's user id: only ever an SQL parameter (never part of a Redis key, a file name or an SQL
# identifier), so it may be an e-mail address where `Id` may not.
UserId = Annotated[str, AfterValidator(_user_id_field), USER_ID_SCHEMA]


def labelled_id(label: str) -> Any:
    """`Id` for a field whose rejection should call it `label` rather than by its field name (a profile's
    `name` is "profile name"; an item of a list has no field name of its own)."""
    return Annotated[str, AfterValidator(lambda value: validate_id(value, label)), ID_SCHEMA]
