"""API keys: created once (the secret is shown to its creator and never again), stored as a SHA-256 hash,
each scoped to the instances it may read and write (optionally read-only), revoked by name.

The secret is `wb_` + 32 random bytes (URL-safe base64): 256 bits of entropy need no slow, salted hash,
since no guessing can walk that space, so a plain SHA-256 is stored and looked up by equality. Nothing is
cached between calls: a revoke is seen at once by every process and replica sharing the database.
A name stays taken after its key is revoked, so a log line naming a key always means one key.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from datetime import datetime

from psycopg_pool import ConnectionPool
from pydantic import BaseModel

from core.access.scope import LOCAL_USER, Principal
from core.errors import InvalidInput, NotFound
from core.ids import validate_id

DDL = """
CREATE TABLE IF NOT EXISTS api_key (
    name        text PRIMARY KEY,
    key_hash    text        UNIQUE NOT NULL,
    prefix      text        NOT NULL,
    instances   text[]      NOT NULL CHECK (cardinality(instances) > 0),
    read_only   bool        NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    revoked_at  timestamptz
);
"""

SECRET_PREFIX = "wb_"
PREFIX_CHARS = 10  # of the secret, kept in clear so a person can tell which key they hold
_MAX_SECRET_CHARS = 200  # a real secret has 46; anything far longer is not worth hashing
_COLUMNS = "name, prefix, instances, read_only, created_at, revoked_at"


class ApiKeyInfo(BaseModel):
    """What may be shown about a key: never its secret or its hash."""

    name: str
    prefix: str
    instances: list[str]
    read_only: bool
    created_at: datetime
    revoked_at: datetime | None = None


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def _info(row: tuple) -> ApiKeyInfo:
    name, prefix, instances, read_only, created_at, revoked_at = row
    return ApiKeyInfo(name=name, prefix=prefix, instances=list(instances), read_only=read_only,
                      created_at=created_at, revoked_at=revoked_at)


class KeyStore:
    def __init__(self, pool: ConnectionPool):
        self.pool = pool

    def create(self, name: str, instances: list[str], read_only: bool = False) -> tuple[ApiKeyInfo, str]:
        """A new key and its secret; the secret exists only in the return value."""
        validate_id(name, "key name")
        if name.lower() == LOCAL_USER.name:  # a key so named would be counted with the keyless callers
            raise InvalidInput(f"key name {name!r} is reserved: it names the calls made without a key (stdio MCP, "
                               "a loopback API before any key exists) in `feedback summary --by key`; pick "
                               "another name")
        scope = list(dict.fromkeys(validate_id(i, "instance") for i in instances))
        if not scope:
            raise InvalidInput("a key needs at least one instance: pass --instance NAME (repeatable)")
        secret = SECRET_PREFIX + secrets.token_urlsafe(32)
        with self.pool.connection() as conn:
            row = conn.execute(
                "INSERT INTO api_key (name, key_hash, prefix, instances, read_only) "
                f"VALUES (%s, %s, %s, %s, %s) ON CONFLICT (name) DO NOTHING RETURNING {_COLUMNS}",
                (name, hash_secret(secret), secret[:PREFIX_CHARS], scope, read_only)).fetchone()
        if row is None:
            raise InvalidInput(f"an API key named {name!r} already exists (names stay taken after a revoke); "
                               "pick another name")
        return _info(row), secret

    def list(self) -> list[ApiKeyInfo]:
        with self.pool.connection() as conn:
            rows = conn.execute(f"SELECT {_COLUMNS} FROM api_key ORDER BY created_at, name").fetchall()
        return [_info(r) for r in rows]

    def revoke(self, name: str) -> ApiKeyInfo:
        """Revoke a key at once; revoking it again keeps the first revocation time."""
        with self.pool.connection() as conn:
            row = conn.execute(
                "UPDATE api_key SET revoked_at = coalesce(revoked_at, now()) WHERE name = %s "
                f"RETURNING {_COLUMNS}", (name,)).fetchone()
        if row is None:
            raise NotFound(f"no API key named {name!r}; `workbench keys list` shows the keys")
        return _info(row)

    def principal_for(self, secret: str) -> Principal | None:
        """The caller a secret stands for, or None when it is unknown or revoked."""
        if not isinstance(secret, str) or not secret or len(secret) > _MAX_SECRET_CHARS:
            return None
        digest = hash_secret(secret)
        with self.pool.connection() as conn:
            row = conn.execute(
                "SELECT key_hash, name, instances, read_only FROM api_key "
                "WHERE key_hash = %s AND revoked_at IS NULL", (digest,)).fetchone()
        if row is None or not hmac.compare_digest(row[0], digest):
            return None
        return Principal(name=row[1], instances=list(row[2]), read_only=row[3])

    def any_created(self) -> bool:
        """Whether any key was ever created, revoked ones included."""
        with self.pool.connection() as conn:
            row = conn.execute("SELECT EXISTS (SELECT 1 FROM api_key)").fetchone()
        return row[0]
