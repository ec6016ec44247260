"""Validation of the ids that become part of Redis keys and SQL values."""

from __future__ import annotations

import re

from core.errors import InvalidInput

ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
ID_RULE = "1–128 characters: letters, digits, '.', '_' or '-', starting with a letter or digit"


def validate_id(value: object, field: str) -> str:
    """Return `value` if it may be used as an id, else raise InvalidInput naming the field."""
    if not isinstance(value, str) or not ID_PATTERN.fullmatch(value):
        raise InvalidInput(f"{field} must be {ID_RULE}; got {value!r:.60}")
    return value
