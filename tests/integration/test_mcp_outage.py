"""What an assistant is told while Redis or Postgres is down, through the MCP SDK's own client.

Over HTTP (`/mcp` in the API on a real uvicorn) the caller is resolved before the MCP server runs, and
resolving it reads Postgres (the keys): with Postgres down the request is refused there. The refusal used
to be a problem document, which the SDK's client reads as "Server returned an error response", so the
assistant had nothing to tell its user; it is now a JSON-RPC error whose message is the one the same
server gives in-process (as over stdio), with the 503 and its Retry-After. A request whose key cannot be
checked still reaches no tool. The rate is counted in Redis, and in the process while Redis is down
(`core.api.ratelimit`), so with Redis down the request reaches the tool, which says what it says over
stdio; reads that need only Postgres answer. The servers are the fault tests' own, reached by URL, so a
stopped one stays down until the test starts it again.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager

import anyio
import anyio.to_thread
import httpx
import httpx2
import pytest
from mcp import Client, ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from core.config import load_settings
from core.mcp.server import build_mcp_server
from core.runtime import Workbench
from core.services import EmbeddedPostgres, EmbeddedRedis
from tests.support.api import assert_problem, thread_server
from tests.support.embedders import KeywordEmbedder
from tests.support.mcp_client import ok, text

SERVERS = {"Postgres": EmbeddedPostgres, "Redis": EmbeddedRedis}
RETRY_ADVICE = "Retry in a few seconds; if it lasts, the server's operator can check `workbench services`."


@contextmanager
def down(fault_dir, service: str) -> Iterator[None]:
    """`service` stopped, then started again."""
    server = SERVERS[service](fault_dir)
    server.stop()
    try:
        yield
    finally:
        server.ensure_running()


@asynccontextmanager
async def http_session(url: str, headers: dict[str, str] | None = None, *, initialize: bool = True
                       ) -> AsyncIterator[ClientSession]:
    async with (httpx2.AsyncClient(headers=headers or {}, timeout=httpx2.Timeout(60.0)) as client,
                streamable_http_client(url + "/mcp", http_client=client) as (read, write),
                ClientSession(read, write) as session):
        if initialize:
            await session.initialize()
        yield session


async def refusal(call: Callable[[], Awaitable[object]]) -> MCPError:
    """The error the SDK's client raises for this call (inside the session, so it is not wrapped)."""
    with pytest.raises(MCPError) as refused:
        await call()
    return refused.value


async def refused_at_once(url: str, call: Callable[[ClientSession], Awaitable[object]],
                          headers: dict[str, str] | None = None) -> MCPError:
    """A client that connects now: its first request (`call`) is refused."""
    async with http_session(url, headers, initialize=False) as session:
        return await refusal(lambda: call(session))


def raw_requests(url: str, instance: str) -> tuple[httpx.Response, httpx.Response]:
    """A JSON-RPC request posted by hand to /mcp, and a read of the JSON endpoints."""
    raw = httpx.post(f"{url}/mcp", json={"jsonrpc": "2.0", "id": 7, "method": "tools/list"},
                     headers={"Accept": "application/json, text/event-stream"}, timeout=30)
    rest = httpx.post(f"{url}/v1/instances/{instance}/retrieve", json={"query": "park"}, timeout=30)
    return raw, rest


async def in_process_tool_error(wb: Workbench, tool: str, arguments: dict) -> str:
    """What the same MCP server says for this call over stdio: `workbench mcp` serves `build_mcp_server`
    to the local user, as the SDK's in-process client reaches it here."""
    async with Client(build_mcp_server(wb)) as direct:
        result = await direct.call_tool(tool, arguments)
    assert result.is_error, text(result)
    return text(result)


# A tool that needs the service (over stdio it fails for that reason; over HTTP the request is refused
# before it, while the caller's key and rate are checked).
NEEDS = {"Postgres": ("retrieve_memory", {"query": "where did I park"}),
         "Redis": ("ui_remember", {"thought": "where did I park"})}


def test_an_assistant_over_http_is_told_postgres_is_down_as_over_stdio(fault_wb, fault_dir, instance):
    wb, service = fault_wb, "Postgres"
    tool, arguments = NEEDS[service][0], {**NEEDS[service][1], "instance": instance}
    with thread_server(wb) as url:
        async def scenario() -> None:
            async with http_session(url) as s:
                await ok(s, tool, arguments)  # connected, and answering, before the outage
                with down(fault_dir, service):
                    stdio = await in_process_tool_error(wb, tool, arguments)
                    refused = await refusal(lambda: s.call_tool(tool, arguments))
                    raw, rest = await anyio.to_thread.run_sync(raw_requests, url, instance)
                    fresh = await refused_at_once(url, lambda session: session.initialize())
                await ok(s, tool, arguments)  # the same session works once the service is back
            assert stdio.startswith(f"{service} is unavailable") and stdio.endswith(RETRY_ADVICE), stdio
            assert refused.error.message == fresh.error.message == stdio
            assert refused.error.data["code"] == "service_unavailable" and refused.error.data["retryable"]
            assert (raw.status_code, raw.headers["content-type"], raw.headers["retry-after"]) == \
                (503, "application/json", "5")
            assert raw.json()["error"]["message"] == stdio and raw.json()["id"] is None
            # The JSON endpoints answer the same outage with a problem document saying the same.
            assert assert_problem(rest, 503, "service_unavailable")["detail"] == stdio
            assert rest.headers["retry-after"] == "5"

        anyio.run(scenario)


def test_with_redis_down_an_assistant_over_http_gets_the_tools_answer_and_reads_go_on(fault_wb, fault_dir,
                                                                                      instance):
    """Before, every request over HTTP was refused while Redis was down (its rate could not be counted): a
    JSON-RPC error for the tool, and 503 for reads that need only Postgres."""
    wb, service = fault_wb, "Redis"
    tool, arguments = NEEDS[service][0], {**NEEDS[service][1], "instance": instance}
    with thread_server(wb) as url:
        async def scenario() -> None:
            async with http_session(url) as s:
                await ok(s, tool, arguments)
                with down(fault_dir, service):
                    stdio = await in_process_tool_error(wb, tool, arguments)
                    over_http = await s.call_tool(tool, arguments)
                    rest = await anyio.to_thread.run_sync(lambda: httpx.post(
                        f"{url}/v1/instances/{instance}/retrieve", json={"query": "park"}, timeout=30))
                    async with http_session(url) as fresh:  # a client that connects now
                        listed = await fresh.list_tools()
                await ok(s, tool, arguments)
            assert stdio.startswith(f"{service} is unavailable") and stdio.endswith(RETRY_ADVICE), stdio
            assert over_http.is_error and text(over_http) == stdio, text(over_http)
            assert rest.status_code == 200, rest.text  # a MemoryScope retrieval needs only Postgres
            assert tool in {t.name for t in listed.tools}

        anyio.run(scenario)


def test_a_caller_whose_key_cannot_be_checked_reaches_no_tool(fault_wb, fault_dir, instance):
    """With Postgres down a turn could go on (degraded), but whether the caller may make it is unknown:
    no key, or one that cannot be looked up, gets the 503 and nothing is stored."""
    turn = {"thought": "my locker code is 4417", "instance": instance}
    with thread_server(fault_wb) as url:
        async def scenario() -> list[MCPError]:
            with down(fault_dir, "Postgres"):
                return [await refused_at_once(url, lambda session: session.call_tool("ui_remember", turn), headers)
                        for headers in ({}, {"Authorization": "Bearer not-a-key-anyone-made"})]

        refusals = anyio.run(scenario)
    for refused in refusals:
        # "Postgres is unavailable…", or, in a process that never reached it, "Postgres: cannot connect…".
        assert refused.error.message.startswith("Postgres") and refused.error.data["status"] == 503, refused
        assert refused.error.data["code"] == "service_unavailable"
    assert instance not in fault_wb.thoughts.instances()  # no turn was stored: no tool ran


def test_a_turn_with_redis_hung_waits_for_it_once(fault_dir, instance):
    """Redis suspended (SIGSTOP): the turn's first read (whether its instance is new) found it silent, and
    its next (the chain's state) waited REDIS_TIMEOUT_S again before failing. Now it fails at once after
    the first, saying Redis did not answer within the bound."""
    bound = 2.0
    wb = Workbench(load_settings(data_dir=fault_dir, redis_url=EmbeddedRedis(fault_dir).ensure_running(),
                                 database_url=EmbeddedPostgres(fault_dir).ensure_running(), redis_timeout_s=bound),
                   embedder=KeywordEmbedder())
    turn = {"thought": "the spare key is under the mat", "instance": instance}  # not the configured one
    pid = EmbeddedRedis(fault_dir).pid()
    try:
        wb.thoughts.instances()  # connected, as a server that has been answering
        os.kill(pid, signal.SIGSTOP)
        try:
            t0 = time.monotonic()
            said = anyio.run(in_process_tool_error, wb, "ui_remember", turn)
            took = time.monotonic() - t0
        finally:
            os.kill(pid, signal.SIGCONT)
    finally:
        wb.close()
    assert said.startswith(f"Redis did not answer within {bound:g} s (REDIS_TIMEOUT_S)"), said
    # One wait for the main client, and the outbox glance's 0.5 s; before, 2 × bound + 0.5 s.
    assert took < bound + 1.5, took
    print(f"\na turn with Redis hung ({bound:g} s bound): {took:.2f} s, {said}")
