"""The FastAPI application: routers per feature, the caller and its scope as dependencies, errors as
problem documents, a bound on request bodies, and the MCP transport at /mcp.

One `Workbench` per process, built in the lifespan (nothing connects until the first request). The
process keeps no state of its own between requests: chains, feedback, rate counts and keys live in
Redis and Postgres, so any number of API processes on the same services serve the same chains.

    uvicorn --factory core.api.app:app_from_env     # what `workbench api` runs
"""

from __future__ import annotations

import contextlib
import ipaddress
import logging
import os
from collections.abc import AsyncIterator

from fastapi import Depends, FastAPI
from fastapi.concurrency import run_in_threadpool
from starlette.routing import Route

from core import usecases as uc
from core.api import mcp_mount, problems
from core.api.body import BodyLimit
from core.api.deps import rate_limit
from core.api.hosts import LoopbackHosts
from core.api.ratelimit import RateLimiter
from core.api.routers import banks, chains, conversation, feedback, health, memories, past_tasks, retrieval
from core.config import Settings, load_settings
from core.errors import ConfigError
from core.runtime import Workbench

log = logging.getLogger(__name__)

HOST_ENV = "WORKBENCH_API_HOST"  # the address `workbench api` binds, for the app its workers build
DEFAULT_HOST = "127.0.0.1"
NO_KEY_BEYOND_LOOPBACK = ("no API key exists, and a server listening beyond loopback must require one: "
                          "create a key with `workbench keys create NAME --instance INSTANCE`, or listen "
                          "on 127.0.0.1")


def is_loopback(host: str) -> bool:
    """127.0.0.0/8, ::1 or localhost: only this machine can connect."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name: it may resolve beyond this machine


def create_app(wb: Workbench | None = None, *, settings: Settings | None = None, host: str = DEFAULT_HOST,
               mcp: bool = True, command: bool = False) -> FastAPI:
    """The API for one process. `wb`: a Workbench to serve (its owner closes it); by default one is built
    from `settings` (or the environment) in the lifespan. `host`: the address the server listens on —
    beyond loopback every request needs a key, and the server refuses to start while none exists.
    `command`: served by `workbench api`, so an embedded server it starts again (stopped meanwhile by
    `workbench services stop`) stops when the command exits, as the ones the command started do."""
    settings = settings or (wb.settings if wb is not None else load_settings())
    exposed = not is_loopback(host)
    with_mcp = mcp and mcp_mount.available()

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        own = wb is None
        app.state.wb = Workbench(settings) if own else wb
        uc.warm_up_in_background()  # the first turn that names a date waited for dateparser
        if own and command:
            app.state.wb.services.for_command()
        try:
            if exposed and not await run_in_threadpool(uc.keys_exist, app.state.wb):
                raise ConfigError(NO_KEY_BEYOND_LOOPBACK)
            async with contextlib.AsyncExitStack() as stack:
                if with_mcp:
                    await stack.enter_async_context(mcp_mount.serving(app, app.state.wb, host))
                yield
        finally:
            if own:
                app.state.wb.close()

    app = FastAPI(
        title="Memory Workbench API",
        version="1",
        summary="Conversational memory over HTTP: ui_remember turns, retrieval, memories, past tasks, "
                "chains, memory banks and feedback. Send `Authorization: Bearer <key>` (`workbench keys "
                "create`).",
        lifespan=lifespan,
        # Swagger UI and ReDoc load their scripts from a CDN: offline, their pages were blank. The OpenAPI
        # document itself is served at /openapi.json, for any viewer or client generator.
        docs_url=None, redoc_url=None,
    )
    app.state.exposed = exposed
    app.state.limiter = RateLimiter(settings.api_rate_limit, lambda: app.state.wb.services.redis_url(),
                                    lambda: app.state.wb.redis(), cluster=settings.redis_cluster)
    app.state.mcp_app = None
    problems.install(app)
    app.include_router(health.router)
    for feature in (conversation, retrieval, memories, past_tasks, chains, banks, feedback):
        app.include_router(feature.router, dependencies=[Depends(rate_limit)],
                           responses=problems.COMMON_ERRORS)
    if with_mcp:
        app.router.routes.append(Route(mcp_mount.PATH, mcp_mount.McpEndpoint(app), include_in_schema=False))
    else:
        log.info("MCP server not installed (core/mcp): /mcp is not served")
    app.add_middleware(BodyLimit, max_bytes=settings.api_max_body_bytes)
    if not exposed:
        # DNS rebinding: only loopback names are served (core/api/hosts.py).
        app.add_middleware(LoopbackHosts, allowed=loopback_hosts(host))
    return app


def loopback_hosts(host: str) -> list[str]:
    """The Host names a loopback server answers: localhost and the loopback addresses, the bound one too."""
    bound = f"[{host.strip('[]')}]" if ":" in host else host
    return sorted({"localhost", "127.0.0.1", "[::1]", bound.lower()})


def app_from_env() -> FastAPI:
    """The app `workbench api` runs in each worker: settings from the environment, the bind address
    from WORKBENCH_API_HOST."""
    return create_app(host=os.environ.get(HOST_ENV, DEFAULT_HOST), command=True)
