"""Keys and scope over HTTP: two keys on two instances, a read-only key, missing, unknown and revoked keys,
the rate per key, and the same refusals at /mcp."""

from __future__ import annotations

import uuid

import httpx
import pytest

from core import usecases as uc
from tests.support.api import assert_problem, thread_server

# (method, path under /v1/instances/{instance}, body, writes)
ENDPOINTS = [
    ("POST", "/remember", {"thought": "hello"}, True),
    ("POST", "/retrieve", {"query": "hello"}, False),
    ("POST", "/memories", {"content": "a fact"}, True),
    ("POST", "/memories/search", {"query": "fact"}, False),
    ("DELETE", "/memories/m-1", None, True),
    ("POST", "/past-tasks/search", {"user_id": "maya", "query": "budget"}, False),
    ("GET", "/chains", None, False),
    ("GET", "/chains/c-1", None, False),
    ("GET", "/chains/c-1/export", None, False),
    ("DELETE", "/chains/c-1", None, True),
    ("GET", "/banks", None, False),
    ("GET", "/banks/b", None, False),
    ("GET", "/banks/b/snapshot", None, False),
    ("POST", "/banks/b/entries", {"entry": {"thinking": "x"}}, True),
    ("POST", "/banks/b/query", {}, False),
    ("DELETE", "/banks/b/entries", None, True),
    ("DELETE", "/banks/b", None, True),
    ("GET", "/feedback/summary", None, False),
    ("POST", "/feedback", {"answer_id": "a-1", "rating": "up"}, True),
]


def _key(wb, instances, read_only=False) -> str:
    return uc.create_key(wb, uc.CreateKey(name=f"k-{uuid.uuid4().hex[:10]}", instances=instances,
                                          read_only=read_only)).secret


@pytest.fixture(scope="module")
def two(workbench):
    """Instances A and B (B with a chain in it), a key for each, and a read-only key for A."""
    a, b = (f"t-{uuid.uuid4().hex[:12]}" for _ in range(2))
    uc.remember(workbench, uc.UiRememberParams(thought="B's secret plans", chain_id="c-1", instance=b))
    return {"a": a, "b": b, "key_a": _key(workbench, [a]), "key_b": _key(workbench, [b]),
            "read_only_a": _key(workbench, [a], read_only=True)}


def _call(api, key, instance, method, path, body):
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return httpx.request(method, f"{api}/v1/instances/{instance}{path}", json=body, headers=headers,
                         timeout=60)


@pytest.mark.parametrize(("method", "path", "body", "writes"), ENDPOINTS)
def test_a_key_gets_403_outside_its_scope_and_learns_nothing(api, two, method, path, body, writes):
    other = _call(api, two["key_a"], two["b"], method, path, body)
    missing = _call(api, two["key_a"], "t-no-such-instance", method, path, body)
    refused = assert_problem(other, 403, "forbidden")
    # B exists and holds a chain; the other instance does not exist: the two refusals differ only in the
    # name the caller gave.
    assert refused == {**assert_problem(missing, 403, "forbidden"),
                       "detail": missing.json()["detail"].replace("t-no-such-instance", two["b"])}
    assert "secret plans" not in other.text


@pytest.mark.parametrize(("method", "path", "body", "writes"), ENDPOINTS)
def test_a_read_only_key_reads_but_never_writes(api, two, method, path, body, writes):
    response = _call(api, two["read_only_a"], two["a"], method, path, body)
    if writes:
        assert "read-only" in assert_problem(response, 403, "forbidden")["detail"]
    else:
        assert response.status_code in (200, 404), response.text  # a read of nothing may be "not found"


def test_each_key_works_on_its_own_instance(api, two):
    on_b = _call(api, two["key_b"], two["b"], "GET", "/chains/c-1", None)
    assert on_b.status_code == 200 and on_b.json()["messages"][0]["thought"]["thought"] == "B's secret plans"
    turn = _call(api, two["key_a"], two["a"], "POST", "/remember", {"thought": "mine"})
    assert turn.status_code == 200 and turn.json()["instance"] == two["a"]
    assert httpx.get(f"{api}/v1/instances", headers={"Authorization": f"Bearer {two['key_b']}"}).json() == {
        "instances": [two["b"]]}


@pytest.mark.parametrize("header", [None, "Bearer", "Basic dXNlcjpwdw==", "Bearer wb_not-a-real-key"])
def test_without_a_valid_key_every_endpoint_is_401(api, two, header):
    headers = {"Authorization": header} if header else {}
    for method, path, body, _ in ENDPOINTS[:4]:
        response = httpx.request(method, f"{api}/v1/instances/{two['a']}{path}", json=body, headers=headers)
        problem = assert_problem(response, 401, "unauthenticated")
        assert response.headers["www-authenticate"].startswith("Bearer")
        assert "Bearer" in problem["detail"]
    assert httpx.get(f"{api}/healthz", headers=headers).status_code == 200  # probes need no key


def test_a_revoked_key_is_refused_at_once(api, workbench, two):
    name = f"k-{uuid.uuid4().hex[:10]}"
    secret = uc.create_key(workbench, uc.CreateKey(name=name, instances=[two["a"]])).secret
    assert _call(api, secret, two["a"], "GET", "/chains", None).status_code == 200
    uc.revoke_key(workbench, uc.KeyRef(name=name))
    assert_problem(_call(api, secret, two["a"], "GET", "/chains", None), 401, "unauthenticated")


def test_a_key_over_its_rate_gets_429_with_retry_after(workbench, two):
    with thread_server(workbench, mcp=False,
                       settings=workbench.settings.model_copy(update={"api_rate_limit": "3/minute"})) as url:
        key, other = _key(workbench, [two["a"]]), _key(workbench, [two["a"]])
        codes = [_call(url, key, two["a"], "GET", "/chains", None).status_code for _ in range(3)]
        assert codes == [200, 200, 200]
        over = _call(url, key, two["a"], "GET", "/chains", None)
        problem = assert_problem(over, 429, "rate_limited")
        assert 1 <= int(over.headers["retry-after"]) <= 60 and "3 requests per minute" in problem["detail"]
        assert problem["retryable"] is True
        assert _call(url, other, two["a"], "GET", "/chains", None).status_code == 200  # a budget per key


def test_mcp_needs_the_same_key(api, two):
    pytest.importorskip("core.mcp.server")
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    accept = {"Accept": "application/json, text/event-stream"}
    refused = httpx.post(f"{api}/mcp", json=initialize, headers=accept)
    # The status and headers of the JSON endpoints; the body a JSON-RPC error an MCP client reads.
    assert refused.status_code == 401 and refused.headers["www-authenticate"].startswith("Bearer"), refused.text
    error = refused.json()["error"]
    assert error["data"]["code"] == "unauthenticated" and error["message"] == error["data"]["detail"]
    keyed = {**accept, "Authorization": f"Bearer {two['key_a']}"}
    ok = httpx.post(f"{api}/mcp", json=initialize, headers=keyed)
    assert ok.status_code == 200, ok.text
