"""The caller of a use case through a served front end (HTTP or MCP) and what it may touch.

A `Principal` is resolved once per request from its API key (or is the local user, for the stdio MCP
server and a loopback API without keys); every request for an instance is checked with `authorize`
before any use case runs. A refusal names the key, never whether the instance exists, so a key learns
nothing about instances outside its scope.
"""

from __future__ import annotations

from pydantic import BaseModel

from core.errors import Forbidden
from core.ids import ID_PATTERN


class Principal(BaseModel):
    """A caller: a named API key scoped to instances (optionally read-only), or the local user (`instances`
    None: every instance)."""

    name: str
    instances: list[str] | None = None
    read_only: bool = False

    @property
    def is_local(self) -> bool:
        return self.instances is None

    def may_read(self, instance: str) -> bool:
        return self.instances is None or instance in self.instances

    def may_write(self, instance: str) -> bool:
        return self.may_read(instance) and not self.read_only

    def default_instance(self, server_default: str) -> str:
        """The instance a call that names none works on: the key's own when it is allowed exactly one
        (nothing else could be meant), else the server's configured one (INSTANCE)."""
        if self.instances is not None and len(self.instances) == 1:
            return self.instances[0]
        return server_default


LOCAL_USER = Principal(name="local")


def authorize(principal: Principal, instance: str, *, write: bool, defaulted: bool = False) -> None:
    """Raise Forbidden unless `principal` may read (and, with `write`, write) `instance`. `defaulted`: the
    call named no instance, and `instance` is the server's default, which the message then says."""
    if not principal.may_read(instance):
        scope = ", ".join(repr(i) for i in principal.instances or [])
        named = f"instance {instance!r}" + (" (this server's default: the call named no instance)" if defaulted else "")
        other = (f", or use a key created with --instance {instance}" if ID_PATTERN.fullmatch(instance) else "")
        raise Forbidden(f"key {principal.name!r} may not use {named}; it may use {scope}: name "
                        f"{'that' if len(principal.instances or []) == 1 else 'one of those'} as the instance{other}")
    if write and not principal.may_write(instance):
        raise Forbidden(f"key {principal.name!r} is read-only; use a key created without --read-only")
