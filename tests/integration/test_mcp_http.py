"""The MCP server over streamable HTTP: `streamable_http_app` in a real uvicorn on a loopback port, driven
by the SDK's own client. The caller comes from a contextvar set by an ASGI middleware, as the API
server's auth does, so these tests also show that a tool call sees the caller of its HTTP request."""

from __future__ import annotations

import contextvars
import json
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager

import anyio
import httpx2
import pytest
import uvicorn
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from starlette.types import ASGIApp, Receive, Scope, Send

from core import usecases as uc
from core.mcp.server import MCP_PATH, build_mcp_server, streamable_http_app
from core.runtime import Workbench
from tests.support.mcp_client import TOOLS, failure, ok, refused

CALLERS: dict[str, uc.Principal] = {}  # by the X-Caller header; each test adds its own
caller: contextvars.ContextVar[uc.Principal] = contextvars.ContextVar("caller", default=uc.LOCAL_USER)


class Caller:
    """Sets the caller named by the X-Caller header (a stand-in for the API's key check)."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # the lifespan: the app's own, which runs the session manager
            await self.app(scope, receive, send)
            return
        name = dict(scope["headers"]).get(b"x-caller", b"").decode()
        token = caller.set(CALLERS.get(name, uc.LOCAL_USER))
        try:
            await self.app(scope, receive, send)
        finally:
            caller.reset(token)


@pytest.fixture
def url(workbench, settings, instance) -> Iterator[str]:
    """The MCP endpoint of a server whose configured instance is the test's fresh one."""
    wb = Workbench(settings.model_copy(update={"instance": instance}), embedder=workbench.embedder)
    app = Caller(streamable_http_app(build_mcp_server(wb, caller.get)))
    with serving(app) as base:
        yield base + MCP_PATH
    wb.close()


@contextmanager
def serving(app: ASGIApp) -> Iterator[str]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))  # bound here and handed over: no other process can take the port
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(15)
        sock.close()


@asynccontextmanager
async def http_session(url: str, who: str = "") -> AsyncIterator[ClientSession]:
    headers = {"X-Caller": who} if who else {}
    async with (httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(60.0)) as client,
                streamable_http_client(url, http_client=client) as (read, write),
                ClientSession(read, write) as session):
        await session.initialize()
        yield session


def test_tools_a_turn_and_a_recall_over_http(url, instance):
    async def scenario() -> None:
        async with http_session(url) as s:
            assert {t.name for t in (await s.list_tools()).tools} == TOOLS
            turn = await ok(s, "ui_remember",
                            {"thought": "I parked the car on level 3 of the airport garage"})
            assert turn["instance"] == instance  # the server's configured instance
            # The turn records the caller of its request: the local user, when no key is sent.
            uri = f"workbench://chains/{turn['chain_id']}"
            chain = json.loads((await s.read_resource(uri)).contents[0].text)
            assert (chain["messages"][1]["metrics"]["source"], chain["messages"][1]["metrics"]["key"]) == \
                ("mcp", "local")
            follow = await ok(s, "ui_remember", {"thought": "Where did I leave the car?",
                                                 "chain_id": turn["chain_id"]})
            assert follow["previous_feedback"]["answer_id"] == turn["thought2_id"]
            recalled = await ok(s, "retrieve_memory", {"query": "where did I park the car?"})
            assert recalled["instance"] == instance
            assert any("level 3" in m["content"] for m in recalled["memories"])
            assert "level 3" in recalled["answer"]

    anyio.run(scenario)


def test_a_caller_scoped_to_another_instance_is_refused_as_a_tool_error(url, instance):
    elsewhere = f"{instance}-other"
    CALLERS["other"] = other = uc.Principal(name="other", instances=[elsewhere])
    # Allowed two instances, a call that names none works on the server's, which it may not use.
    CALLERS["others"] = others = uc.Principal(name="others", instances=[elsewhere, f"{instance}-third"])
    forbidden = failure(lambda: uc.authorize(others, instance, write=True, defaulted=True))
    assert f"may not use instance {instance!r} (this server's default: the call named no instance)" in forbidden
    assert f"it may use '{elsewhere}', '{instance}-third': name one of those as the instance, or use a key " \
           f"created with --instance {instance}" in forbidden
    assert "--instance" not in failure(lambda: uc.authorize(other, "Bad X", write=True))  # no name keys refuse

    async def scenario() -> None:
        async with http_session(url, "others") as s:
            assert await refused(s, "ui_remember", {"thought": "hello"}) == forbidden
            with pytest.raises(MCPError) as refusal:
                await s.read_resource("workbench://chains/any")
            assert refusal.value.error.message == failure(
                lambda: uc.authorize(others, instance, write=False, defaulted=True))
        async with http_session(url, "other") as s:
            assert {t.name for t in (await s.list_tools()).tools} == TOOLS
            assert await refused(s, "retrieve_memory", {"query": "hello", "instance": instance}) == \
                failure(lambda: uc.authorize(other, instance, write=False))
            # A key allowed one instance: a call that names none works on it.
            assert (await ok(s, "retrieve_memory", {"query": "hello"}))["instance"] == elsewhere
            # Its own instance is open to it.
            mine = await ok(s, "add_memory", {"content": "a note", "instance": elsewhere})
            assert mine["instance"] == elsewhere
            await ok(s, "forget", {"target": "memory", "id": mine["id"], "instance": elsewhere})
            # A turn records the caller of its request.
            turn = await ok(s, "ui_remember", {"thought": "a note", "instance": elsewhere})
            uri = f"workbench://chains/{turn['chain_id']}?instance={elsewhere}"
            answer = json.loads((await s.read_resource(uri)).contents[0].text)["messages"][1]
            assert (answer["metrics"]["source"], answer["metrics"]["key"]) == ("mcp", "other")
            await ok(s, "forget", {"target": "chain", "id": turn["chain_id"], "instance": elsewhere})
        async with http_session(url) as s:  # the next request's caller is its own, not the last one's
            await ok(s, "retrieve_memory", {"query": "hello"})

    anyio.run(scenario)


def test_a_read_only_caller_may_read_but_not_write(url, instance):
    CALLERS["reader"] = reader = uc.Principal(name="reader", instances=[instance], read_only=True)

    async def scenario() -> None:
        async with http_session(url, "reader") as s:
            await ok(s, "retrieve_memory", {"query": "anything"})
            assert await refused(s, "add_memory", {"content": "a note"}) == \
                failure(lambda: uc.authorize(reader, instance, write=True))

    anyio.run(scenario)
