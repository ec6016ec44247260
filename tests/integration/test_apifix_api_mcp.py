"""What an assistant developer found in the HTTP API and the MCP server at /mcp, through a real uvicorn and the
MCP SDK's own client: refusals made before any endpoint (a body over the limit, a foreign Host) that an MCP
client could not read, a bank entry that could not be retried, union branch names in messages, a readiness
probe that waited 30 s, the key name "local", the instance a scoped key's call defaults to, a port in use,
the CDN-only docs page, schemas less precise than their validators, and messages that named no field."""

from __future__ import annotations

import json
import socket
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import httpx
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from core import usecases as uc
from core.config import load_settings
from core.conversation.turn import MAX_STEP_CHARS, MAX_STEP_TITLE, MAX_STEPS, STYLES
from core.errors import InvalidInput
from core.runtime import Workbench
from core.usecases.admin import READY_WITHIN_S
from tests.integration.conftest import fault_urls
from tests.support.api import assert_problem, thread_server
from tests.support.cli import in_process_cli
from tests.support.embedders import KeywordEmbedder
from tests.support.faults import postgres_pids, suspended
from tests.support.mcp_client import ok, refused

LIMIT = 64 * 1024


@pytest.fixture(scope="module")
def api(workbench):
    with thread_server(workbench, settings=workbench.settings.model_copy(
            update={"api_max_body_bytes": LIMIT, "api_rate_limit": "100000/minute"})) as url:
        yield url


def _key(wb: Workbench, *instances: str) -> str:
    return uc.create_key(wb, uc.CreateKey(name=f"k-{uuid.uuid4().hex[:10]}", instances=list(instances))).secret


@asynccontextmanager
async def mcp(api: str, key: str) -> AsyncIterator[ClientSession]:
    async with (httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=httpx2.Timeout(60.0)) as c,
                streamable_http_client(f"{api}/mcp", http_client=c) as (read, write),
                ClientSession(read, write) as session):
        await session.initialize()
        yield session


def _post(api: str, key: str, path: str, body: object) -> httpx.Response:
    return httpx.post(f"{api}/v1/instances/{path}", json=body, headers={"Authorization": f"Bearer {key}"}, timeout=60)


# -- 1. refusals before any endpoint, as an MCP client reads them -----------------------------------------

def test_an_mcp_request_over_the_body_limit_is_an_error_the_client_shows(api, workbench, instance):
    key = _key(workbench, instance)
    # Within the tool's schema (each text at most 100,000 characters), over the server's body limit.
    entry = {"thinking": "😀" * 20_000, "command": "x", "result": "y"}

    async def scenario() -> MCPError:
        async with mcp(api, key) as s:
            with pytest.raises(MCPError) as refusal:
                await s.call_tool("memory_bank_add", {"bank": "big", "entry": entry, "instance": instance})
            return refusal.value

    error = anyio.run(scenario)
    assert error.error.message == (f"the request body is larger than {LIMIT} bytes; send less (the server's "
                                   "API_MAX_BODY_BYTES setting)")
    assert error.error.data["code"] == "payload_too_large"


def test_a_foreign_host_is_refused_as_a_problem_or_a_json_rpc_error(api):
    rest = httpx.get(f"{api}/v1/instances", headers={"Host": "evil.test"})
    problem = assert_problem(rest, 400, "invalid_host")
    assert "'evil.test'" in problem["detail"] and "localhost" in problem["detail"]
    rpc = httpx.post(f"{api}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                     headers={"Host": "evil.test", "Accept": "application/json, text/event-stream"})
    assert rpc.status_code == 400 and rpc.headers["content-type"].startswith("application/json")
    assert rpc.json()["error"]["message"] == problem["detail"]
    port = api.rsplit(":", 1)[1]
    for host in (f"localhost:{port}", f"127.0.0.1:{port}", "localhost"):
        assert httpx.get(f"{api}/healthz", headers={"Host": host}).status_code == 200, host


# -- 2. a bank entry sent again -----------------------------------------------------------------------------

def test_a_bank_entry_sent_again_is_a_safe_retry_and_another_under_its_id_a_conflict(api, workbench, instance):
    key = _key(workbench, instance)
    entry = {"id": "step-1", "skill_name": "search", "thinking": "look it up", "result": "found"}
    first = _post(api, key, f"{instance}/banks/task/entries", {"entry": entry})
    again = _post(api, key, f"{instance}/banks/task/entries", {"entry": entry})
    assert (first.status_code, again.status_code) == (201, 200), again.text
    assert again.json()["repeated"] is True and first.json()["repeated"] is False
    assert again.json()["entry"] == first.json()["entry"]
    other = assert_problem(_post(api, key, f"{instance}/banks/task/entries",
                                 {"entry": {**entry, "thinking": "something else"}}), 409, "conflict")
    assert other["detail"].startswith("entry.id: an entry with id 'step-1' already exists") and \
        "another thinking;" in other["detail"]
    elsewhere = assert_problem(_post(api, key, f"{instance}/banks/other/entries", {"entry": entry}), 409, "conflict")
    assert "bank (it is in 'task')" in elsewhere["detail"]

    async def scenario() -> list[dict]:
        async with mcp(api, key) as s:
            results: list[dict] = []
            sent = {"bank": "task2", "entry": {"id": "step-c", "thinking": "t"}, "instance": instance}

            async def one() -> None:
                results.append(await ok(s, "memory_bank_add", sent))

            async with anyio.create_task_group() as group:
                for _ in range(5):
                    group.start_soon(one)
            message = await refused(s, "memory_bank_add", {**sent, "entry": {"id": "step-c", "thinking": "u"}})
            assert message.startswith("entry.id: an entry with id 'step-c' already exists"), message
            return results

    results = anyio.run(scenario)
    assert sorted(r["repeated"] for r in results) == [False, True, True, True, True]
    assert len({json.dumps(r["entry"], sort_keys=True) for r in results}) == 1
    snapshot = uc.bank_snapshot(workbench, uc.BankRef(instance=instance, bank="task2"))
    assert [e.entry.id for e in snapshot.entries] == ["step-c"]
    # The retries took no step number: the next entry is step 2.
    after = uc.bank_add(workbench, uc.BankAdd(instance=instance, bank="task2", entry={"thinking": "next"}))
    assert after.entry.step_number == 2


# -- 3. an inline profile's errors ----------------------------------------------------------------------------

@pytest.mark.parametrize(("profile", "detail"), [
    ({"name": "z", "w_sem": 0.5, "w_text": 0.5, "w_rec": 0.5},
     "invalid input — profile: weights w_sem + w_text + w_rec must sum to 1; they sum to 1.5"),
    ({"name": "z", "method": "bogus"}, "invalid input — profile.method: Input should be 'linear' or 'rrf'"),
    ("bad name!", ("invalid input — profile: profile name must be 1–128 characters: letters, digits, '.', '_' "
                   "or '-', starting with a letter or digit; got 'bad name!'")),
    (5, "invalid input — profile: Input should be a valid string or a valid dictionary or "),  # then pydantic's
])
def test_a_bad_profile_is_named_by_its_field_alone(api, workbench, instance, profile, detail):
    key = _key(workbench, instance)
    refusal = assert_problem(_post(api, key, f"{instance}/retrieve", {"query": "park", "profile": profile}),
                             422, "invalid_input")
    assert refusal["detail"].startswith(detail) and ".str" not in refusal["detail"]
    assert "function-after" not in refusal["detail"]

    async def scenario() -> str:
        async with mcp(api, key) as s:
            return await refused(s, "retrieve_memory", {"query": "park", "profile": profile})

    assert anyio.run(scenario).startswith(detail)


# -- 4. readiness while Postgres hangs --------------------------------------------------------------------------

def test_readyz_answers_within_its_bound_while_postgres_hangs(fault_dir):
    urls = fault_urls(fault_dir)
    wb = Workbench(load_settings(data_dir=fault_dir, redis_url=urls["REDIS_URL"], database_url=urls["DATABASE_URL"],
                                 postgres_statement_timeout_s=8), embedder=KeywordEmbedder())
    try:
        with thread_server(wb, mcp=False) as url:
            assert httpx.get(f"{url}/readyz", timeout=30).status_code == 200
            time.sleep(2.5)  # past the pool's window in which a connection is handed out unchecked
            with suspended(postgres_pids(fault_dir)):
                t0 = time.monotonic()
                hung = httpx.get(f"{url}/readyz", timeout=30)
                waited = time.monotonic() - t0
                problem = assert_problem(hung, 503, "service_unavailable")
                assert waited < READY_WITHIN_S + 1.5, waited
                assert f"within {READY_WITHIN_S:g} s" in problem["detail"] and hung.headers["retry-after"]
                assert {s["name"] for s in problem["services"]} == {"Redis", "Postgres"}
                t0 = time.monotonic()
                assert httpx.get(f"{url}/readyz", timeout=30).status_code == 503  # the next probe: no longer
                assert time.monotonic() - t0 < READY_WITHIN_S + 1.5
            deadline = time.monotonic() + 60
            while (ready := httpx.get(f"{url}/readyz", timeout=30)).status_code != 200:
                assert time.monotonic() < deadline, ready.text
                time.sleep(0.5)
    finally:
        wb.close()


# -- 5. the key name "local" ---------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["local", "LOCAL"])
def test_the_key_name_local_is_reserved(settings, workbench, monkeypatch, name):
    with pytest.raises(InvalidInput, match="reserved"):
        uc.create_key(workbench, uc.CreateKey(name=name, instances=["x"]))
    code, out, err = in_process_cli(settings, workbench, monkeypatch)("keys", "create", name, "--instance", "x")
    assert code == 2 and out == ""
    assert err.strip().splitlines() == [(
        f"error: key name {name!r} is reserved: it names the calls made without a key (stdio MCP, a loopback API "
        "before any key exists) in `feedback summary --by key`; pick another name")]


# -- 6. the instance a call that names none works on -------------------------------------------------------------

def test_a_key_of_one_instance_defaults_to_it_and_a_refusal_names_the_instance(api, workbench, instance):
    other = f"{instance}-b"
    one, two = _key(workbench, instance), _key(workbench, instance, other)
    default = workbench.settings.instance

    async def scenario() -> None:
        async with mcp(api, one) as s:
            added = await ok(s, "add_memory", {"content": "the spare key is under the mat"})
            assert added["instance"] == instance
            assert (await ok(s, "retrieve_memory", {"query": "spare key"}))["instance"] == instance
        async with mcp(api, two) as s:
            message = await refused(s, "retrieve_memory", {"query": "spare key"})
            assert message.startswith("key 'k-") and \
                f"may not use instance {default!r} (this server's default: the call named no instance); " \
                f"it may use {instance!r}, {other!r}: name one of those as the instance" in message, message
            assert (await ok(s, "retrieve_memory", {"query": "spare key", "instance": other}))["instance"] == other

    anyio.run(scenario)
    # Over HTTP the path always names the instance; its refusal names it the same way.
    refusal = assert_problem(_post(api, one, "elsewhere-x/retrieve", {"query": "spare key"}), 403, "forbidden")
    assert f"may not use instance 'elsewhere-x'; it may use {instance!r}: name that as the instance" in \
        refusal["detail"]


# -- 7. a port in use --------------------------------------------------------------------------------------------

def test_api_on_a_port_in_use_exits_2_with_one_line_before_serving(settings, workbench, monkeypatch):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, out, err = in_process_cli(settings, workbench, monkeypatch)("api", "--port", str(port))
    assert code == 2 and out == "", (code, out, err)
    assert err.strip().splitlines() == [
        f"error: port {port} is in use (address already in use on 127.0.0.1): pick another --port"]


# -- 8. documentation offline ------------------------------------------------------------------------------------

def test_no_page_needs_a_cdn_and_the_openapi_document_is_served(api):
    for page in ("/docs", "/redoc"):
        assert "/openapi.json" in assert_problem(httpx.get(f"{api}{page}"), 404, "not_found")["detail"]
    assert httpx.get(f"{api}/openapi.json").json()["info"]["title"] == "Memory Workbench API"


# -- 9. schemas that say what the validators enforce ---------------------------------------------------------------

def test_tool_schemas_say_what_the_validators_enforce(api, workbench, instance):
    async def scenario() -> dict[str, dict]:
        async with mcp(api, _key(workbench, instance)) as s:
            return {t.name: t.input_schema for t in (await s.list_tools()).tools}

    tools = anyio.run(scenario)
    steps = tools["ui_remember"]["properties"]["intermediate_steps"]
    assert steps["maxProperties"] == MAX_STEPS and steps["additionalProperties"]["maxLength"] == MAX_STEP_CHARS
    assert steps["propertyNames"]["maxLength"] == MAX_STEP_TITLE and "60,000 in all" in steps["description"]
    assert tools["ui_remember"]["properties"]["style"]["anyOf"][0]["enum"] == list(STYLES)
    for tool in ("memory_bank_add", "memory_bank_query"):
        bank = tools[tool]["properties"]["bank"]
        assert (bank["pattern"], bank["maxLength"]) == (uc.ID_PATTERN.pattern, 128), tool
    entry = tools["memory_bank_add"]["$defs"]["MemoryEntry"]["properties"]["id"]
    assert entry["maxLength"] == 100 and entry["pattern"].endswith("{0,99}$")
    # A value the schema allows is taken; one it refuses is refused by the validator too.
    assert uc.UiRememberParams(thought="x", style="DEEP", intermediate_steps={"search web": "y"}).style == "deep"
    with pytest.raises(ValueError, match="bank must be"):
        uc.BankAdd(bank="bad bank/..", entry={"thinking": "x"})


# -- 10. messages that name the field --------------------------------------------------------------------------------

def test_messages_name_the_field(api, workbench, instance):
    key = _key(workbench, instance)
    headers = {"Authorization": f"Bearer {key}"}
    none = httpx.post(f"{api}/v1/instances/{instance}/remember", headers=headers)
    assert assert_problem(none, 422, "invalid_input")["detail"] == \
        "invalid input — body: missing: send a JSON object, with Content-Type: application/json"
    dates = _post(api, key, f"{instance}/banks/b/query", {"date_from": "2026-01-02", "date_to": "2026-01-01"})
    assert assert_problem(dates, 422, "invalid_input")["detail"] == \
        "invalid input — date_from: must not be after date_to"
    empty = httpx.get(f"{api}/v1/instances//chains", headers=headers)
    assert assert_problem(empty, 422, "invalid_input")["detail"] == \
        "instance: the path names none (/v1/instances//…): put the instance's name between the two slashes"
