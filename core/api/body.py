"""Request bodies larger than API_MAX_BODY_BYTES are refused with 413 before any endpoint sees them: a
problem document, or at /mcp a JSON-RPC error whose message is the same (`refusal_for`), so an MCP client
shows what to do rather than "Server returned an error response".

A declared Content-Length over the limit is refused at once; a body sent without one (chunked) is read
up to the limit and refused as soon as it goes past it, so a client cannot make the server hold more.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from core.api.mcp_mount import refusal_for
from core.api.problems import ProblemResponse, problem


class BodyLimit:
    def __init__(self, app: ASGIApp, max_bytes: int):
        self.app = app
        self.max_bytes = max_bytes

    def _too_large(self) -> ProblemResponse:
        return problem(413, "payload_too_large",
                       f"the request body is larger than {self.max_bytes} bytes; send less (the server's "
                       "API_MAX_BODY_BYTES setting)")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = next((v for k, v in scope["headers"] if k == b"content-length"), None)
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await refusal_for(scope, self._too_large())(scope, receive, send)
            return
        # The body is read here, bounded, and handed on as one message: endpoints then parse it as usual.
        chunks, size, more = [], 0, True
        while more:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                await refusal_for(scope, self._too_large())(scope, receive, send)
                return
            chunks.append(chunk)
            more = message.get("more_body", False)
        body, delivered = b"".join(chunks), False

        async def replay() -> Message:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()  # after the body: the client's disconnect, when it comes

        await self.app(scope, replay, send)
