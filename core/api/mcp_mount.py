"""The MCP server's streamable HTTP transport at /mcp, behind the same keys as the JSON endpoints.

A small ASGI wrapper resolves the caller before the MCP app sees the request and puts it in a context
variable; the MCP server (`core.mcp.build_mcp_server`) reads it through the callable it was built with,
so each tool call checks that caller's scope. The transport is stateless: any replica can serve any
request, as for the JSON endpoints, and the context variable set here is the one the tool call's task
sees.

A request refused before the MCP app runs (no key, a key not allowed, the rate spent, Redis or Postgres
down so that the key cannot be checked; a body over API_MAX_BODY_BYTES or a Host that is not the server's,
refused by the API's middleware, `refusal_for`) gets the JSON endpoints' status and headers, with a
JSON-RPC error as its body (`refusal`), as the MCP transport allows: an MCP client reads that body only,
and shows a problem document as "Server returned an error response". The request reaches no tool and
the body holds no data, only what was refused and what to do.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import logging
from collections.abc import AsyncIterator
from contextvars import ContextVar
from typing import TYPE_CHECKING

from starlette.concurrency import run_in_threadpool
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from core import usecases as uc
from core.api.deps import rate_identity, resolve
from core.api.problems import ProblemResponse, from_exception

if TYPE_CHECKING:
    from fastapi import FastAPI

    from core.runtime import Workbench

log = logging.getLogger(__name__)

PATH = "/mcp"
caller: ContextVar[uc.Principal] = ContextVar("mcp_caller")

# JSON-RPC error codes, as the MCP SDK's own transport answers a request it refuses: the server could not
# serve it (a service down, an unexpected error), or the request was refused (key, scope, rate).
INTERNAL_ERROR = -32603
INVALID_REQUEST = -32600


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
        except Exception as e:  # noqa: BLE001 - every refusal becomes a JSON-RPC error with its message
            await refusal(from_exception(e))(scope, receive, send)
            return
        token = caller.set(who)
        try:
            await mcp_app(scope, receive, send)
        finally:
            caller.reset(token)


def refusal(problem: ProblemResponse) -> JSONResponse:
    """The problem document of a refused request as an MCP client reads it: a JSON-RPC error with no id
    (the request's own is not read) whose message is the problem's detail — the one-line message the
    tools give over stdio ("Postgres is unavailable. Retry in a few seconds; …") — and whose data is the
    whole document (`code`, `retryable`), with the same status and headers (Retry-After,
    WWW-Authenticate). The MCP SDK's client surfaces such a body as the error of the call; a problem
    document it reads as "Server returned an error response", leaving the assistant nothing to say."""
    document = json.loads(problem.body)
    status = problem.status_code
    headers = {k: v for k, v in problem.headers.items() if k.lower() not in ("content-length", "content-type")}
    error = {"code": INTERNAL_ERROR if status >= 500 else INVALID_REQUEST, "message": document["detail"],
             "data": document}
    return JSONResponse({"jsonrpc": "2.0", "id": None, "error": error}, status_code=status, headers=headers)


def refusal_for(scope: Scope, problem: ProblemResponse) -> ProblemResponse | JSONResponse:
    """How a request refused before any endpoint reads it (a body over API_MAX_BODY_BYTES, a Host that is
    not the server's) is answered: at /mcp a JSON-RPC error (`refusal`), which an MCP client shows with its
    message; elsewhere the problem document itself."""
    return refusal(problem) if scope.get("path") == PATH else problem


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
