"""The HTTP API against its own published contract, as an engineer who reads only /openapi.json sees it: the
document describes every answer (each error a problem document with its schema, each success a schema), the
ids it publishes follow the rule the core checks, and every operation driven on a real uvicorn with values
its schema allows answers a status it lists, with a body that matches what it lists for that status.

Values the schema does not allow (hostile ids, wrong types, unknown fields named with control characters)
must still get a problem document with a one-line detail, never a 500 or a traceback.
"""

from __future__ import annotations

import json
import re
import urllib.parse
import uuid
from collections import Counter

import httpx
import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core import usecases as uc
from core.errors import InvalidInput
from core.ids import ID_PATTERN, validate_id
from tests.support.hostile import ATTACKS, SERVICE, ids, texts, wrong_type

OUTCOMES: Counter[str] = Counter()  # "METHOD path status" → requests; printed at the end (pytest -s)

# The smallest body each request schema accepts; the property test breaks it in one place at a time.
BODIES = {
    "UiRememberParams": {"thought": "I keep my bike in the shed"},
    "RetrieveReportRequest": {"query": "where is my bike"},
    "AddMemory": {"content": "the bike is blue"},
    "MemorySearch": {"query": "bike"},
    "PastTaskSearchBody": {"user_id": "u1", "query": "report"},
    "BankAdd": {"entry": {"skill_name": "search", "thinking": "look in the shed"}},
    "MemoryQuery": {},
    "RateAnswer": {"answer_id": "missing-answer", "rating": "up"},
}
QUERY_VALUES = ["", "1", "0", "-1", "201", "20", "newest", "oldest", "model", "source", "true", "false",
                "2026-12", "last week", "u1", "email", "x" * 300, "nan", "a\nb"]


@pytest.fixture(scope="module", autouse=True)
def _report():
    yield
    print("\nHTTP answers by operation and status:", dict(sorted(OUTCOMES.items())))


@pytest.fixture(scope="module")
def document(api) -> dict:
    return httpx.get(f"{api}/openapi.json", timeout=30).json()


@pytest.fixture(scope="module")
def scoped(api, workbench):
    """A key for a fresh instance, and things in it to name: a chain, an answer, a memory, a bank."""
    instance = f"schema-{uuid.uuid4().hex[:8]}"
    secret = uc.create_key(workbench, uc.CreateKey(name=f"k-{uuid.uuid4().hex[:10]}", instances=[instance])).secret
    with httpx.Client(base_url=api, timeout=60, headers={"Authorization": f"Bearer {secret}"}) as client:
        base = f"/v1/instances/{instance}"
        turn = client.post(f"{base}/remember", json={"thought": "I keep my bike in the shed"}).json()
        memory = client.post(f"{base}/memories", json={"content": "the bike is blue"}).json()
        client.post(f"{base}/banks/trip/entries", json=BODIES["BankAdd"]).raise_for_status()
        known = {"chain_id": [turn["chain_id"]], "memory_id": [memory["id"], turn["thought1_id"]],
                 "bank": ["trip"], "answer_id": [turn["thought2_id"]]}
        yield client, instance, known


def resolved(schema: object, document: dict) -> object:
    """`schema` with every `#/components/schemas/…` reference replaced by its schema."""
    if isinstance(schema, dict):
        if "$ref" in schema:
            return resolved(document["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]], document)
        return {k: resolved(v, document) for k, v in schema.items()}
    if isinstance(schema, list):
        return [resolved(v, document) for v in schema]
    return schema


def allows(schema: dict, value: object, document: dict) -> bool:
    # ECMA-262's `$` ends the string; Python's also matches before a final newline.
    ecma = json.loads(json.dumps(resolved(schema, document)).replace("$\"", "\\\\Z\""))
    return jsonschema.Draft202012Validator(ecma).is_valid(value)


def operations(document: dict) -> list[tuple[str, str, dict]]:
    return [(method, path, op) for path, ops in document["paths"].items() for method, op in ops.items()]


def test_every_answer_is_documented_with_a_schema(document):
    problem = document["components"]["schemas"]["Problem"]
    assert set(problem["required"]) >= {"type", "title", "status", "code", "detail", "retryable"}
    for method, path, op in operations(document):
        where = f"{method.upper()} {path}"
        assert op.get("description"), where
        for param in op.get("parameters", []):
            assert param.get("description"), (where, param["name"])
            if param["in"] == "path":  # every path names an id: the core's rule is published
                assert param["schema"]["pattern"] == ID_PATTERN.pattern, (where, param["name"])
        for status, response in op["responses"].items():
            content = response.get("content", {})
            if status.startswith("2"):
                assert set(content["application/json"]["schema"]) - {"title"}, (where, status)
            else:
                assert content == {"application/problem+json": {"schema": {
                    "$ref": "#/components/schemas/Problem"}}}, (where, status)
    assert "404" in document["paths"]["/v1/instances/{instance}/banks/{bank}"]["get"]["responses"]
    assert "404" in document["paths"]["/v1/instances/{instance}/feedback"]["post"]["responses"]


@SERVICE
@given(st.one_of(ids(), st.sampled_from(ATTACKS), st.text(max_size=20)))
def test_the_published_id_pattern_is_the_rule_the_core_checks(value):
    try:
        validate_id(value, "chain_id")
        accepted = True
    except InvalidInput:
        accepted = False
    assert bool(re.search(ID_PATTERN.pattern.replace("$", r"\Z"), value)) == accepted, repr(value)


def path_values(name: str, instance: str, known: dict) -> st.SearchStrategy[str]:
    if name == "instance":  # mostly the key's own; another (403) or a hostile one (422) sometimes
        return st.integers(0, 9).flatmap(lambda n: st.just(instance) if n < 8 else
                                         st.sampled_from(["other-instance", *ATTACKS]))
    return st.one_of(st.sampled_from(known.get(name, ["none-such"])), st.from_regex(ID_PATTERN, fullmatch=True),
                     ids())


def body_values(name: str, document: dict) -> st.SearchStrategy[object]:
    body = BODIES[name]
    properties = sorted(document["components"]["schemas"][name]["properties"])
    broken = st.builds(lambda field, value: {**body, field: value}, st.sampled_from(properties),
                       st.one_of(wrong_type(), texts(60, big=False)))
    unknown = st.builds(lambda field: {**body, field: 1}, st.text(min_size=1, max_size=12))
    return st.one_of(st.just(body), st.just(body), broken, unknown, wrong_type())


def query_allows(schema: dict, raw: str, document: dict) -> bool:
    """Whether a query string value reads as a value the parameter's schema allows."""
    candidates: list[object] = [raw]
    if re.fullmatch(r"-?\d+", raw):
        candidates.append(int(raw))
    if raw in ("true", "false"):
        candidates.append(raw == "true")
    return any(allows(schema, c, document) for c in candidates)


@settings(SERVICE, max_examples=300)  # each operation some 13 times
@given(data=st.data())
def test_every_operation_answers_as_documented(document, scoped, data):
    client, instance, known = scoped
    method, path, op = data.draw(st.sampled_from(operations(document)), label="operation")
    url, query, valid = path, [], True
    for param in op.get("parameters", []):
        name, schema = param["name"], param["schema"]
        if param["in"] == "path":
            value = data.draw(path_values(name, instance, known), label=name)
            valid = valid and allows(schema, value, document) and (name != "instance" or value == instance)
            url = url.replace("{" + name + "}", urllib.parse.quote(value, safe=""))
        elif param["in"] == "query" and (param.get("required") or data.draw(st.booleans())):
            raw = data.draw(st.sampled_from(QUERY_VALUES), label=name)
            query.append((name, raw))
            valid = valid and query_allows(schema, raw, document)
    body = None
    if "requestBody" in op:
        ref = op["requestBody"]["content"]["application/json"]["schema"]["$ref"]
        body = data.draw(body_values(ref.rsplit("/", 1)[1], document), label="body")
        valid = valid and allows({"$ref": ref}, body, document)
    response = client.request(method.upper(), url, params=query, json=body)
    OUTCOMES[f"{method.upper()} {path} {response.status_code}"] += 1
    where = (method.upper(), url, query, body, response.status_code, response.text[:500])

    assert response.status_code != 500 and "Traceback" not in response.text, where
    if response.is_redirect:  # an empty id leaves "/banks/": redirected to "/banks", as any trailing slash
        assert not valid, where
        return
    answer = response.json()
    if response.status_code >= 400:
        assert response.headers["content-type"].startswith("application/problem+json"), where
        assert answer["status"] == response.status_code and "\n" not in answer["detail"], where
        assert allows({"$ref": "#/components/schemas/Problem"}, answer, document), where
    if valid:  # what the schema allows gets an answer the document lists, shaped as it says
        assert str(response.status_code) in op["responses"], where
        media = "application/json" if response.status_code < 400 else "application/problem+json"
        assert allows(op["responses"][str(response.status_code)]["content"][media]["schema"], answer,
                      document), where


def test_an_unknown_field_named_with_control_characters_is_refused_in_one_line(scoped):
    client, instance, _ = scoped
    response = client.post(f"/v1/instances/{instance}/memories", json={"content": "x", "a\nb\x1b[2J": 1})
    assert response.status_code == 422, response.text
    assert response.json()["detail"] == ("invalid input — a\\nb\\x1b[2J: Extra inputs are not permitted"), response.text


@pytest.mark.parametrize(("method", "path", "body"), [
    ("GET", "/banks/none-such", None), ("GET", "/banks/none-such/snapshot", None),
    ("DELETE", "/banks/none-such/entries", None), ("POST", "/banks/none-such/query", {}),
    ("POST", "/feedback", {"answer_id": "none-such", "rating": "up"}),
    ("POST", "/retrieve", {"query": "bike", "profile": "none-such"}),
    ("POST", "/remember", {"thought": "hello", "profile": "none-such"}),
])
def test_what_is_not_there_is_a_documented_404(document, scoped, method, path, body):
    """These answered 404, which their operations did not list."""
    client, instance, _ = scoped
    response = client.request(method, f"/v1/instances/{instance}{path}", json=body)
    assert response.status_code == 404, response.text
    template = "/v1/instances/{instance}" + re.sub(r"/none-such", "/{bank}", path, count=1)
    assert "404" in document["paths"][template][method.lower()]["responses"]


def test_a_bank_s_stats_match_their_published_schema(document, scoped):
    """GET /banks/{bank} had no response model: its schema was empty."""
    client, instance, _ = scoped
    client.post(f"/v1/instances/{instance}/banks/stats/entries", json=BODIES["BankAdd"]).raise_for_status()
    response = client.get(f"/v1/instances/{instance}/banks/stats")
    schema = document["paths"]["/v1/instances/{instance}/banks/{bank}"]["get"]["responses"]["200"]
    assert response.status_code == 200 and schema["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/BankStats"}
    assert allows(schema["content"]["application/json"]["schema"], response.json(), document)


def test_a_bank_keyword_with_nul_finds_the_step_stored_with_it(scoped):
    """A NUL in a keyword reached Postgres, which refused it: 422 "Postgres refused the data: DataError"."""
    client, instance, _ = scoped
    base = f"/v1/instances/{instance}/banks/nul"
    client.post(f"{base}/entries", json={"entry": {"thinking": "read a\x00b twice"}}).raise_for_status()
    response = client.post(f"{base}/query", json={"keywords": ["a\x00b"]})
    assert response.status_code == 200, response.text
    assert [e["thinking"] for e in response.json()] == ["read a\ufffdb twice"]
