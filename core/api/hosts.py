"""DNS rebinding: a page of another site whose name is made to resolve to 127.0.0.1 would reach a loopback
server (the local user, without a key) from the visitor's browser. It sends its own name as Host, so a
loopback server answers only loopback names; any other gets 400, as a problem document (a JSON-RPC error
on /mcp, `refusal_for`), never Starlette's "Invalid host header" text, which a client shows as nothing
more than "Server returned an error response"."""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

from core.api.mcp_mount import refusal_for
from core.api.problems import problem


class LoopbackHosts:
    def __init__(self, app: ASGIApp, allowed: list[str]):
        self.app = app
        self.allowed = {h.lower() for h in allowed}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        host = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"host"), "")
        if host_name(host) in self.allowed:
            await self.app(scope, receive, send)
            return
        shown = "".join(ch for ch in host[:80] if ch.isprintable()) or "(none)"
        names = ", ".join(sorted(self.allowed))
        refused = problem(400, "invalid_host", f"Host {shown!r} is not a name of this server, which listens on "
                                               f"loopback and answers only {names} (DNS-rebinding protection): "
                                               "connect by one of those names")
        await refusal_for(scope, refused)(scope, receive, send)


def host_name(host: str) -> str:
    """A Host header's name without its port: "localhost:8700" → "localhost", "[::1]:8700" → "[::1]"."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[: host.find("]") + 1] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host
