"""Fusion profiles: the shipped presets plus custom ones saved by name, and one active per instance."""

from __future__ import annotations

from psycopg_pool import ConnectionPool

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
"""


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

    def save(self, profile: FusionProfile) -> FusionProfile:
        """Save a custom profile; the last write wins. Presets cannot be overwritten."""
        if profile.name in PRESET_PROFILES:
            raise InvalidInput(f"{profile.name!r} is a shipped preset; save your profile under another name")
        with self.pool.connection() as conn:
            conn.execute(
                "INSERT INTO fusion_profile (name, definition) VALUES (%s, %s) ON CONFLICT (name) DO UPDATE "
                "SET definition = EXCLUDED.definition, updated_at = now()",
                (profile.name, profile.model_dump_json()))
        return profile

    def delete(self, name: str) -> None:
        if name in PRESET_PROFILES:
            raise InvalidInput(f"{name!r} is a shipped preset and cannot be deleted")
        with self.pool.connection() as conn:
            conn.execute("DELETE FROM active_profile WHERE name = %s", (name,))
            conn.execute("DELETE FROM fusion_profile WHERE name = %s", (name,))

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
        validate_id(instance, "instance")
        profile = self.get(name)
        with self.pool.connection() as conn:
            conn.execute(
                "INSERT INTO active_profile (instance, name) VALUES (%s, %s) ON CONFLICT (instance) DO UPDATE "
                "SET name = EXCLUDED.name, updated_at = now()", (instance, name))
        return profile
