"""Fusion profiles: the shipped presets plus custom ones saved by name, one active per instance, and each
instance's activations (so the last one can be undone)."""

from __future__ import annotations

from datetime import datetime

from psycopg_pool import ConnectionPool
from pydantic import BaseModel

from core.errors import InvalidInput, NotFound
from core.ids import validate_id
from core.models import DEFAULT_PROFILE, PRESET_PROFILES, FusionProfile

DDL = """
CREATE TABLE IF NOT EXISTS fusion_profile (
    name        text PRIMARY KEY,
    definition  jsonb       NOT NULL,
    updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS active_profile (
    instance    text PRIMARY KEY,
    name        text        NOT NULL,
    updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS profile_activation (
    id          bigserial   PRIMARY KEY,
    instance    text        NOT NULL,
    name        text        NOT NULL,
    previous    text        NOT NULL,
    at          timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS profile_activation_latest ON profile_activation (instance, id DESC);
"""


class Activation(BaseModel):
    """One change of an instance's active profile: `previous` was active until `at`."""

    instance: str
    name: str
    previous: str
    at: datetime


class ProfileStore:
    def __init__(self, pool: ConnectionPool):
        self.pool = pool

    def list(self) -> list[FusionProfile]:
        with self.pool.connection() as conn:
            rows = conn.execute("SELECT definition FROM fusion_profile ORDER BY name").fetchall()
        custom = [FusionProfile.model_validate(r[0]) for r in rows]
        return list(PRESET_PROFILES.values()) + custom

    def get(self, name: str) -> FusionProfile:
        if name in PRESET_PROFILES:
            return PRESET_PROFILES[name]
        with self.pool.connection() as conn:
            row = conn.execute("SELECT definition FROM fusion_profile WHERE name = %s", (name,)).fetchone()
        if row is None:
            known = ", ".join(p.name for p in self.list())
            raise NotFound(f"no fusion profile named {name!r}; known profiles: {known}")
        return FusionProfile.model_validate(row[0])

    def name_refusal(self, name: str) -> str | None:
        """Why a profile cannot be saved under `name`, None when it can: a shipped preset's name, or one that
        differs from a preset's or a saved profile's only in letter case ("Balanced-Default"), which a
        reader of a list or a chat turn's record would take for the other."""
        if name in PRESET_PROFILES:
            return f"{name!r} is a shipped preset; save your profile under another name"
        folded = name.casefold()
        if preset := next((p for p in PRESET_PROFILES if p.casefold() == folded), None):
            return (f"{name!r} differs from the shipped preset {preset!r} only in letter case; save your profile "
                    "under another name")
        with self.pool.connection() as conn:
            row = conn.execute("SELECT name FROM fusion_profile WHERE lower(name) = lower(%s) AND name <> %s "
                               "LIMIT 1", (name, name)).fetchone()
        if row:
            return (f"{name!r} differs from the saved profile {row[0]!r} only in letter case; save under "
                    f"{row[0]!r} to replace it, or choose another name")
        return None

    def save(self, profile: FusionProfile) -> FusionProfile:
        """Save a custom profile; the last write wins. Presets cannot be overwritten (`name_refusal`)."""
        if refusal := self.name_refusal(profile.name):
            raise InvalidInput(refusal)
        with self.pool.connection() as conn:
            conn.execute(
                "INSERT INTO fusion_profile (name, definition) VALUES (%s, %s) ON CONFLICT (name) DO UPDATE "
                "SET definition = EXCLUDED.definition, updated_at = now()",
                (profile.name, profile.model_dump_json()))
        return profile

    def delete(self, name: str) -> FusionProfile:
        """Delete a saved profile. One still active somewhere is refused: deleting it would change what
        that instance's turns retrieve without anyone choosing it."""
        if name in PRESET_PROFILES:
            raise InvalidInput(f"{name!r} is a shipped preset and cannot be deleted; only saved profiles can")
        profile = self.get(name)
        with self.pool.connection() as conn, conn.transaction():
            users = [r[0] for r in conn.execute(
                "SELECT instance FROM active_profile WHERE name = %s ORDER BY instance FOR UPDATE", (name,))]
            if users:
                raise InvalidInput(f"{name!r} is the active profile of {', '.join(users[:5])}"
                                   + (f" and {len(users) - 5} more" if len(users) > 5 else "")
                                   + ": activate another profile there first, then delete it")
            conn.execute("DELETE FROM fusion_profile WHERE name = %s", (name,))
        return profile

    def active(self, instance: str) -> FusionProfile:
        with self.pool.connection() as conn:
            row = conn.execute("SELECT name FROM active_profile WHERE instance = %s", (instance,)).fetchone()
        if row is None:
            return PRESET_PROFILES[DEFAULT_PROFILE]
        try:
            return self.get(row[0])
        except NotFound:
            return PRESET_PROFILES[DEFAULT_PROFILE]

    def activate(self, instance: str, name: str) -> FusionProfile:
        """Make `name` the instance's active profile and record the change (none when it already was)."""
        validate_id(instance, "instance")
        profile = self.get(name)
        with self.pool.connection() as conn, conn.transaction():
            previous = self._lock_active(conn, instance)
            if previous != name:
                self._set_active(conn, instance, name)
                conn.execute("INSERT INTO profile_activation (instance, name, previous) VALUES (%s, %s, %s)",
                             (instance, name, previous))
        return profile

    def active_in(self, name: str) -> list[str]:
        """The instances whose active profile is `name`, sorted."""
        with self.pool.connection() as conn:
            return [r[0] for r in conn.execute(
                "SELECT instance FROM active_profile WHERE name = %s ORDER BY instance", (name,))]

    def last_activation(self, instance: str) -> Activation | None:
        with self.pool.connection() as conn:
            row = conn.execute("SELECT instance, name, previous, at FROM profile_activation WHERE instance = %s "
                               "ORDER BY id DESC LIMIT 1", (instance,)).fetchone()
        return None if row is None else Activation(instance=row[0], name=row[1], previous=row[2], at=row[3])

    def undo_activation(self, instance: str) -> Activation:
        """Make the profile active before the last activation active again, and forget that activation, so
        undoing again steps further back. Returns the activation undone."""
        validate_id(instance, "instance")
        with self.pool.connection() as conn, conn.transaction():
            current = self._lock_active(conn, instance)
            row = conn.execute("SELECT id, name, previous, at FROM profile_activation WHERE instance = %s "
                               "ORDER BY id DESC LIMIT 1 FOR UPDATE", (instance,)).fetchone()
            if row is None:
                raise NotFound(f"no activation of a profile is recorded for {instance!r}: nothing to undo")
            ident, name, previous, at = row
            if name != current:  # changed outside `activate` (an archive restored): the record is stale
                raise InvalidInput(f"{instance!r} uses {current!r}, not {name!r} as its last recorded "
                                   "activation says: activate the profile you want instead")
            self.get(previous)  # a profile deleted since cannot come back
            self._set_active(conn, instance, previous)
            conn.execute("DELETE FROM profile_activation WHERE id = %s", (ident,))
        return Activation(instance=instance, name=name, previous=previous, at=at)

    @staticmethod
    def _lock_active(conn, instance: str) -> str:
        """The instance's active profile name; the instance's activations wait for this transaction."""
        conn.execute("SELECT pg_advisory_xact_lock(hashtext('active_profile:' || %s))", (instance,))
        row = conn.execute("SELECT name FROM active_profile WHERE instance = %s", (instance,)).fetchone()
        return DEFAULT_PROFILE if row is None else row[0]

    @staticmethod
    def _set_active(conn, instance: str, name: str) -> None:
        conn.execute("INSERT INTO active_profile (instance, name) VALUES (%s, %s) ON CONFLICT (instance) DO UPDATE "
                     "SET name = EXCLUDED.name, updated_at = now()", (instance, name))
