"""The MCP server's streamable HTTP transport at /mcp, behind the same keys as the JSON endpoints.

A small ASGI wrapper resolves the caller before the MCP app sees the request (401 problem JSON
otherwise) and puts it in a context variable; the MCP server (`core.mcp.build_mcp_server`) reads it
through the callable it was built with, so each tool call checks that caller's scope. The transport is
stateless: any replica can serve any request, as for the JSON endpoints, and the context variable set
here is the one the tool call's task sees.
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
from collections.abc import AsyncIterator
from contextvars import ContextVar
from typing import TYPE_CHECKING

from starlette.concurrency import run_in_threadpool
from starlette.types import ASGIApp, Receive, Scope, Send

from core import usecases as uc
from core.api.deps import rate_identity, resolve
from core.api.problems import from_exception

if TYPE_CHECKING:
    from fastapi import FastAPI

    from core.runtime import Workbench

log = logging.getLogger(__name__)

PATH = "/mcp"
caller: ContextVar[uc.Principal] = ContextVar("mcp_caller")


def available() -> bool:
    """Whether this installation has the MCP server (core/mcp) to mount."""
    return importlib.util.find_spec("core.mcp") is not None and \
        importlib.util.find_spec("core.mcp.server") is not None


class McpEndpoint:
    """The ASGI endpoint of /mcp: the caller first, then the MCP app built in the lifespan."""

    def __init__(self, app: FastAPI):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        state = self.app.state
        mcp_app: ASGIApp | None = getattr(state, "mcp_app", None)
        if scope["type"] != "http" or mcp_app is None:
            return
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        try:
            who = await run_in_threadpool(resolve, state.wb, headers.get("authorization"),
                                          exposed=state.exposed)
            client = scope.get("client") or (None, 0)
            await run_in_threadpool(state.limiter.hit, *rate_identity(who, client[0]))
        except Exception as e:  # noqa: BLE001 - every refusal becomes its problem document
            await from_exception(e)(scope, receive, send)
            return
        token = caller.set(who)
        try:
            await mcp_app(scope, receive, send)
        finally:
            caller.reset(token)


@contextlib.asynccontextmanager
async def serving(app: FastAPI, wb: Workbench, host: str) -> AsyncIterator[None]:
    """Build the MCP server on the process's Workbench and run its session manager while the API runs."""
    from core.mcp.server import build_mcp_server

    server = build_mcp_server(wb, caller.get)
    # Mounted by our own route at PATH, so the MCP app serves PATH itself (no redirect to "/mcp/").
    app.state.mcp_app = server.streamable_http_app(streamable_http_path=PATH, stateless_http=True, host=host)
    async with server.session_manager.run():
        yield
    app.state.mcp_app = None
