"""The HTTP API through a real uvicorn: every endpoint accepted and refused, errors as problem documents,
the body limit, health and readiness, and the OpenAPI page."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import httpx
import pytest

from core import usecases as uc
from core.runtime import Workbench
from tests.support.api import assert_problem, thread_server

DATA = Path(__file__).resolve().parents[1] / "data" / "import"


@pytest.fixture(scope="module")
def api(workbench):
    with thread_server(workbench, settings=workbench.settings.model_copy(
            update={"api_max_body_bytes": 64 * 1024, "api_rate_limit": "100000/minute"})) as url:
        yield url


@pytest.fixture
def client(api, workbench, instance):
    """A client with a key for this test's instance."""
    created = uc.create_key(workbench, uc.CreateKey(name=f"k-{uuid.uuid4().hex[:10]}", instances=[instance]))
    with httpx.Client(base_url=f"{api}/v1/instances/{instance}", timeout=60,
                      headers={"Authorization": f"Bearer {created.secret}"}) as c:
        c.key_name = created.key.name
        yield c


def test_a_conversation_over_http(client, instance, workbench):
    first = client.post("/remember", json={"thought": "I parked the car on level 3, spot 12",
                                           "chain_id": "car", "tags": ["car"]})
    assert first.status_code == 200, first.text
    turn = first.json()
    assert turn["instance"] == instance and turn["chain_id"] == "car" and turn["synthesis"] == "extractive"
    assert turn["previous_feedback"] is None and set(turn["latency"]) >= {"search_ms", "total_ms"}
    second = client.post("/remember", json={"thought": "where did I park the car?", "chain_id": "car",
                                            "thought_number": 2, "total_thoughts": 2})
    assert second.status_code == 200, second.text
    assert second.json()["previous_feedback"]["continued"] in (True, 1, "1")
    assert any("level 3" in c["content"] for c in second.json()["context"])

    rated = client.post("/feedback", json={"answer_id": second.json()["thought2_id"], "rating": "up",
                                           "comment": "right spot"})
    assert rated.status_code == 200 and rated.json()["rating"] == "up"
    summary = client.get("/feedback/summary", params={"by": "tag"})
    assert summary.status_code == 200 and summary.json()["summary"]["answers"] == 2

    chains = client.get("/chains", params={"page_size": 5}).json()
    assert [c["chain_id"] for c in chains["chains"]] == ["car"]
    conversation = client.get("/chains/car").json()
    assert [m["role"] for m in conversation["messages"]] == ["user", "assistant"] * 2
    origin = conversation["messages"][1]["metrics"]  # each turn records the front end and key it came by
    assert origin["source"] == "http" and origin["key"] == client.key_name
    exported = client.get("/chains/car/export")
    assert exported.headers["content-type"] == "application/json"
    assert exported.headers["content-disposition"] == 'attachment; filename="car.json"'
    document = uc.ChainDocument.model_validate_json(exported.content)
    assert document.chain_id == "car" and any("level 3" in t.thought for t in document.thoughts)
    # What `workbench chains export` writes, but for the time of the export.
    written = uc.chain_export(workbench, uc.ChainRef(instance=instance, chain_id="car")).document
    assert {**json.loads(exported.content), "exported_at": None} == {**json.loads(written), "exported_at": None}

    report = client.post("/retrieve", json={"query": "where is the car parked", "trace": True})
    assert report.status_code == 200 and report.json()["instance"] == instance

    deleted = client.delete("/chains/car")
    assert deleted.status_code == 200 and deleted.json()["thoughts"] >= 4
    # A chain is never empty: read, export and delete of a deleted one all say 404 (the read said 200, no
    # messages).
    for method, path in (("GET", "/chains/car"), ("GET", "/chains/car/export"), ("DELETE", "/chains/car")):
        assert assert_problem(client.request(method, path), 404, "not_found")["detail"] == (
            f"no chain 'car' in instance {instance!r}" + ("" if method == "DELETE" else " (it may have been deleted)"))


def test_the_chain_export_imports_again_as_it_was_received(client, instance, workbench, tmp_path):
    """The export was {"instance", "chain_id", "document": "<the export as a JSON string>"}, which
    `workbench import` refused: "unknown format (JSON objects with the keys ['chain_id', 'document', …])"."""
    assert client.post("/remember", json={"thought": "I parked on level 3", "chain_id": "car"}).status_code == 200
    path = tmp_path / "car-export.json"
    path.write_bytes(client.get("/chains/car/export").content)
    other = f"{instance}-copy"
    done = uc.import_file(workbench, uc.ImportFile(instance=other, path=path))
    assert done.preview.format == "workbench-chain" and done.outcome.created.messages == 2
    copied = uc.conversation(workbench, uc.ConversationRef(instance=other, chain_id="car"))
    assert copied.messages[0].thought.thought == "I parked on level 3"


def test_a_bank_entry_and_summary_are_deleted_by_the_ids_the_bank_gives(client):
    """DELETE /memories/<an entry's or a summary's id> was 404: only the index row's "be-…" id worked."""
    settings = {"max_entries": 4, "compression_threshold": 4}
    ids = [client.post("/banks/small/entries", json={"entry": {"command": f"step {i}", "result": "ok"}, **settings}
                       ).json()["entry"]["id"] for i in range(4)]
    [summary] = client.get("/banks/small/snapshot").json()["summaries"]
    live = ids[-1]
    gone = client.delete(f"/memories/{live}")
    assert gone.status_code == 200 and (gone.json()["bank_rows"], gone.json()["index_rows"]) == (1, 1), gone.text
    gone = client.delete(f"/memories/{summary['id']}")
    assert gone.status_code == 200 and gone.json()["bank_rows"] == 1 + len(summary["source_entries"]), gone.text
    assert client.get("/banks/small").json()["total_entries"] == 4 - 1 - len(summary["source_entries"])
    # Deleted: 404, as the OpenAPI page and the README say (the MCP tool `forget` reports zero counts).
    assert_problem(client.delete(f"/memories/{live}"), 404, "not_found")


def test_feedback_summary_takes_the_cli_groupings_and_imported_answers(client, instance, workbench):
    """`by=source|key` (422 before) and `include_imported`, as `workbench feedback summary` has them."""
    turn = client.post("/remember", json={"thought": "I parked on level 3", "chain_id": "car"})
    assert turn.status_code == 200, turn.text
    uc.import_file(workbench, uc.ImportFile(instance=instance, path=DATA / "openai_chat.jsonl"))
    counted = uc.feedback_summary(workbench, uc.SummaryRequest(instance=instance, include_imported=True))
    assert counted.summary.imported > 0
    by_source = client.get("/feedback/summary", params={"by": "source", "include_imported": "true"}).json()
    assert by_source["summary"]["answers"] == 1 + counted.summary.imported
    assert {(g["source"], g["answers"]) for g in by_source["groups"]} == {
        ("http", 1), ("imported", counted.summary.imported)}
    by_key = client.get("/feedback/summary", params={"by": "key"}).json()
    assert by_key["summary"]["answers"] == 1
    assert [(g["key"], g["answers"]) for g in by_key["groups"]] == [(client.key_name, 1)]


def test_memories_past_tasks_and_banks(client, instance, workbench):
    added = client.post("/memories", json={"content": "Maya is allergic to peanuts", "kind": "observation",
                                           "tags": ["health"], "id": "m-peanuts"})
    assert added.status_code == 201 and added.json()["id"] == "m-peanuts"
    found = client.post("/memories/search", json={"query": "peanuts allergy", "top_k": 5})
    assert found.status_code == 200, found.text
    assert any(h["id"] == "m-peanuts" for h in found.json()["hits"])
    gone = client.delete("/memories/m-peanuts")
    assert gone.status_code == 200 and gone.json()["index_rows"] == 1

    uc.ingest_texts(workbench, uc.IngestTexts(items=[uc.ProducedTextInput(
        instance=instance, user_id="maya", task="meeting minutes", title="Budget review",
        production="We agreed to cut the travel budget by ten percent next quarter.")]))
    tasks = client.post("/past-tasks/search", json={"user_id": "maya", "query": "travel budget",
                                                       "max_distance": 2})
    assert tasks.status_code == 200, tasks.text
    assert [h["title"] for h in tasks.json()["search"]["hits"]] == ["Budget review"]

    entry = {"entry": {"skill_name": "search", "thinking": "look for flights", "command": "search flights",
                       "result": "3 found", "importance": 0.8}}
    assert client.post("/banks/trip/entries", json=entry).status_code == 201
    assert [b["name"] for b in client.get("/banks").json()] == ["trip"]
    assert client.get("/banks/trip").json()["live_entries"] == 1
    assert len(client.get("/banks/trip/snapshot").json()["entries"]) == 1
    hits = client.post("/banks/trip/query", json={"keywords": ["flights"]})
    assert hits.status_code == 200 and len(hits.json()) == 1
    assert client.delete("/banks/trip/entries").json()["bank_rows"] == 1
    assert client.delete("/banks/trip").status_code == 200


def test_a_bank_step_without_a_skill_name_reads_as_a_step(client):
    """skill_name is optional: a step added without one (or with a blank one) is stored without one, and
    reads "Step 1: …" where it is shown, not "step 1: …" after an empty name; the stats count it apart."""
    for skill in (None, "  "):
        entry = {"command": "pwd", "result": "/home/user/project"} | ({"skill_name": skill} if skill else {})
        added = client.post("/banks/paths/entries", json={"entry": entry})
        assert added.status_code == 201 and added.json()["entry"]["skill_name"] == "", added.text
    assert client.get("/banks/paths").json()["skills"] == {"(no skill named)": 2}
    found = client.post("/memories/search", json={"query": "pwd project", "mode": "text"}).json()["hits"]
    assert sorted(h["content"].splitlines()[0] for h in found) == [
        "Step 1: ran `pwd` → /home/user/project", "Step 2: ran `pwd` → /home/user/project"], found


def test_the_instance_list_is_the_keys_scope(client, api, instance):
    listed = client.get(f"{api}/v1/instances")
    assert listed.status_code == 200 and listed.json() == {"instances": [instance]}


@pytest.mark.parametrize(("method", "path", "body", "status"), [
    ("post", "/remember", {}, 422),
    ("post", "/remember", {"thought": "   "}, 422),
    ("post", "/remember", {"thought": "hi", "top_k": 0}, 422),
    ("post", "/remember", {"thought": "hi", "surprise": 1}, 422),
    ("post", "/remember", {"thought": "hi", "instance": "another"}, 422),
    ("post", "/retrieve", {"query": ""}, 422),
    ("post", "/memories", {"content": "x", "kind": "gossip"}, 422),
    ("post", "/memories", {"content": "x", "metadata": {"k": "v" * 30_000}}, 422),
    ("post", "/memories/search", {"query": " "}, 422),
    ("post", "/memories/search", {"query": "bike", "kinds": ["gossip"]}, 422),
    ("delete", "/memories/not%20an%20id", None, 422),
    ("post", "/past-tasks/search", {"user_id": "maya"}, 422),
    ("get", "/chains?page=0", None, 422),
    ("get", "/chains?order=sideways", None, 422),
    ("get", "/chains/no-such-chain", None, 404),
    ("get", "/chains/no-such-chain/export", None, 404),
    ("post", "/banks/trip/entries", {"entry": {"nonsense": 1}}, 422),
    ("post", "/banks/trip/query", {"max_results": 0}, 422),
    ("get", "/feedback/summary?by=weather", None, 422),
    ("get", "/feedback/summary?include_imported=maybe", None, 422),
    ("get", "/feedback/summary?since=yesterday-ish", None, 422),
    ("post", "/feedback", {"answer_id": "no-such-answer", "rating": "up"}, 404),
    ("post", "/feedback", {"answer_id": "a", "rating": "meh"}, 422),
])
def test_bad_input_is_refused_with_a_problem_naming_the_field(client, method, path, body, status):
    response = client.request(method.upper(), path, json=body)
    problem = assert_problem(response, status, "not_found" if status == 404 else "invalid_input")
    assert len(problem["detail"]) < 600


def test_malformed_json_unknown_routes_and_methods(client, api):
    broken = client.post("/remember", content=b"{not json", headers={"content-type": "application/json"})
    assert "body: not valid JSON (Expecting property name" in assert_problem(broken, 422, "invalid_input")["detail"]
    # These were 400 "There was an error parsing the body" (code http_error), naming nothing to change.
    json_body = {"content-type": "application/json"}
    latin1 = client.post("/remember", content='{"thought": "latin1 été"}'.encode("latin-1"), headers=json_body)
    assert assert_problem(latin1, 422, "invalid_input")["detail"] == (
        "body: not UTF-8 (byte 0xe9 at position 20 is not UTF-8 text); send the JSON encoded as UTF-8")
    depth = 20_000  # within the test server's 64 KiB limit; the JSON reader stops at about 1,000
    deep = f'{{"thought": "x", "intermediate_steps": {"[" * depth}{"]" * depth}}}'.encode()
    assert assert_problem(client.post("/remember", content=deep, headers=json_body), 422, "invalid_input")[
        "detail"] == "body: JSON nested too deeply to read; send fewer levels of lists and objects inside each other"
    huge = client.post("/remember", content=b'{"thought": "x", "top_k": ' + b"9" * 5000 + b"}", headers=json_body)
    assert assert_problem(huge, 422, "invalid_input")["detail"] == (
        "body: not valid JSON (Exceeds the limit (4300 digits) for integer string conversion: value has 5000 "
        "digits)")
    text = client.post("/remember", content=b"thought=hi", headers={"content-type": "text/plain"})
    assert "Content-Type: application/json" in assert_problem(text, 422, "invalid_input")["detail"]
    assert_problem(httpx.get(f"{api}/v1/nowhere"), 404, "not_found")
    assert_problem(client.put("/remember", json={"thought": "x"}), 405, "method_not_allowed")


def test_bodies_over_the_limit_get_413(client):
    big = {"thought": "x" * (70 * 1024)}
    assert_problem(client.post("/remember", json=big), 413, "payload_too_large")

    def chunks():  # no Content-Length: refused while the body streams in
        for _ in range(100):
            yield b"x" * 1024

    assert_problem(client.post("/remember", content=chunks(), headers={"content-type": "application/json"}),
                   413, "payload_too_large")
    assert client.post("/remember", json={"thought": "small enough"}).status_code == 200


def test_health_readiness_and_openapi(api):
    assert httpx.get(f"{api}/healthz").json() == {"status": "ok"}
    ready = httpx.get(f"{api}/readyz")
    assert ready.status_code == 200 and {s["name"] for s in ready.json()["services"]} == {"Redis", "Postgres"}
    assert httpx.get(f"{api}/docs").status_code == 404  # Swagger UI needed a CDN: the document is served instead
    spec = httpx.get(f"{api}/openapi.json").json()
    paths = spec["paths"]
    # The export's body is the chain document itself; the deletes and the chain read document their 404.
    export = paths["/v1/instances/{instance}/chains/{chain_id}/export"]["get"]["responses"]
    assert export["200"]["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/ChainDocument"}
    assert set(spec["components"]["schemas"]["ChainDocument"]["properties"]) == set(uc.ChainDocument.model_fields)
    for path, method in (("chains/{chain_id}", "get"), ("chains/{chain_id}", "delete"),
                         ("memories/{memory_id}", "delete"), ("banks/{bank}", "delete")):
        assert "already deleted" in paths[f"/v1/instances/{{instance}}/{path}"][method]["responses"]["404"][
            "description"], path
    assert {"/v1/instances/{instance}/remember", "/v1/instances/{instance}/retrieve", "/healthz",
            "/v1/instances/{instance}/memories/search", "/v1/instances/{instance}/past-tasks/search",
            "/v1/instances/{instance}/feedback/summary", "/v1/instances/{instance}/banks"} <= set(paths)


def test_readyz_is_503_when_the_services_are_down(settings):
    down = Workbench(settings.model_copy(update={"redis_url": "redis://127.0.0.1:9",
                                                 "database_url": "postgresql://127.0.0.1:9/none"}))
    with thread_server(down, mcp=False) as url:
        ready = httpx.get(f"{url}/readyz", timeout=30)
        problem = assert_problem(ready, 503, "service_unavailable")
        assert ready.headers["retry-after"] and not any(s["reachable"] for s in problem["services"])
        assert "127.0.0.1:9" not in ready.text  # no address on an endpoint that needs no key
        turn = httpx.post(f"{url}/v1/instances/x/remember", json={"thought": "hi"}, timeout=30)
        assert_problem(turn, 503, "service_unavailable")
        assert turn.headers["retry-after"]
    down.close()
