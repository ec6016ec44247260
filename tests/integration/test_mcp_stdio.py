"""The MCP server over stdio, as a desktop or IDE assistant runs it: `python -m core.cli mcp` spawned by
the SDK's own client, on the session's servers (DATA_DIR) and a fresh instance (INSTANCE)."""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

from core import usecases as uc
from core.bank.types import SUMMARY_SKILL
from core.ids import ID_PATTERN
from tests.support.mcp_client import TOOLS, failure, invalid, ok, refused

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def server_log(tmp_path) -> Path:
    """The server's standard error: it must never hold a traceback (every failure is a tool error)."""
    path = tmp_path / "mcp-server.log"
    yield path
    if path.exists():  # a test skipped before its server started wrote none
        assert "Traceback" not in path.read_text(encoding="utf-8")


@asynccontextmanager
async def stdio_session(data_dir: Path, instance: str, log: Path) -> AsyncIterator[ClientSession]:
    env = {"DATA_DIR": str(data_dir), "INSTANCE": instance,
           "WORKBENCH_SECRETS_FILE": os.environ["WORKBENCH_SECRETS_FILE"]}
    params = StdioServerParameters(command=sys.executable, args=["-m", "core.cli", "mcp"], env=env,
                                   cwd=str(ROOT))
    with log.open("w", encoding="utf-8") as errlog:
        async with (stdio_client(params, errlog=errlog) as (read, write),
                    ClientSession(read, write) as session):
            await session.initialize()
            yield session


def test_tools_have_schemas_from_the_requests_and_descriptions(data_dir, instance, server_log):
    async def scenario() -> None:
        async with stdio_session(data_dir, instance, server_log) as session:
            tools = {t.name: t for t in (await session.list_tools()).tools}
            templates = (await session.list_resource_templates()).resource_templates

        assert set(tools) == TOOLS
        for tool in tools.values():
            schema = tool.input_schema
            assert schema["type"] == "object" and schema["additionalProperties"] is False
            assert len(tool.description) > 200 and "Returns" in tool.description
            assert all(prop.get("description") for prop in schema["properties"].values()), tool.name
            assert "instance" in schema["properties"] and "instance" not in schema.get("required", [])
            assert tool.output_schema and tool.output_schema["type"] == "object"
        # Every ui_remember parameter and result field is there, none left out.
        ui = tools["ui_remember"]
        assert set(ui.input_schema["properties"]) == set(uc.UiRememberParams.model_fields)
        assert {"intermediate_steps", "include_history"} <= set(ui.input_schema["properties"])
        assert set(ui.output_schema["properties"]) == set(uc.UiRememberResult.model_fields)
        assert ui.input_schema["required"] == ["thought"]
        internal = tools["internal_memory"].input_schema
        assert set(internal["properties"]) == set(uc.PastTaskQuery.model_fields)
        # Optional alike in every tool (internal_memory's was a bare string, its text saying it had a default).
        assert {json.dumps(t.input_schema["properties"]["instance"]) for t in tools.values()} == {json.dumps(
            {"anyOf": [{"type": "string", "pattern": ID_PATTERN.pattern, "minLength": 1, "maxLength": 128},
                       {"type": "null"}], "default": None, "title": "Instance",
             "description": "the memory instance; default: the key's instance when it is allowed only one, else "
                            "the instance this server is configured with"})}
        # The query's fields beside the bank, as the HTTP API takes them.
        bank_query = tools["memory_bank_query"].input_schema["properties"]
        assert set(bank_query) == {"instance", "bank", *uc.MemoryQuery.model_fields}
        recall = tools["retrieve_memory"].description
        assert "at most 3 memories by default" in recall and "`similarity`, the cosine" in recall
        assert tools["retrieve_memory"].annotations.read_only_hint
        assert f'skill_name "{SUMMARY_SKILL}"' in tools["memory_bank_query"].description
        assert tools["forget"].annotations.destructive_hint
        # Annotated idempotent, and it is: the description says what forgetting what is not there returns.
        assert tools["forget"].annotations.idempotent_hint
        assert "not there is not an error, so a retry is safe" in tools["forget"].description
        assert {t.uri_template for t in templates} == {"workbench://chains/{chain_id}{?instance}",
                                                       "workbench://banks/{bank}{?instance}"}

    anyio.run(scenario)


def test_each_tool_accepts_good_input_and_refuses_bad_input_with_the_cli_message(
        workbench, data_dir, instance, server_log):
    uc.ingest_texts(workbench, uc.IngestTexts(items=[uc.ProducedTextInput(
        instance=instance, user_id="ada", task="report", title="Garage budget 2024",
        production="The airport garage budget grows by 4% in 2024, mostly for lighting on level 3.")]))
    unknown_answer = failure(lambda: uc.rate_answer(workbench, uc.RateAnswer(
        instance=instance, answer_id="no-such-answer", rating="up")))
    unknown_bank = failure(lambda: uc.bank_snapshot(workbench, uc.BankRef(instance=instance, bank="none")))

    async def scenario() -> None:
        async with stdio_session(data_dir, instance, server_log) as s:
            turn = await ok(s, "ui_remember", {
                "thought": "I parked on level 3 of the airport garage", "tags": ["car"],
                "intermediate_steps": {"Calendar": "Flight BA117 on Friday at 9:00"},
                "include_history": False, "include_prompt": True})
            assert turn["instance"] == instance and turn["tags"] == ["car"] and turn["thought2_id"]
            assert any("Flight BA117 on Friday" in m["content"] for m in turn["prompt"])
            assert any("include_history=false" in n for n in turn["notes"])
            # An assistant reads no prompt back unless it asks: the next turn's would hold this one.
            plain = await ok(s, "ui_remember", {"thought": "The car keys are in the blue bowl."})
            assert plain["prompt"] == [] and any("include_prompt=false" in n for n in plain["notes"])
            stored = uc.conversation(workbench, uc.ConversationRef(instance=instance, chain_id=plain["chain_id"]))
            assert stored.messages[-1].metrics.prompt  # kept with the turn

            found = await ok(s, "internal_memory", {"user_id": "ada", "query": "garage budget",
                                                    "max_distance": 1.5})
            [ref] = found["keypoints"]["references"]
            assert ref["produced_text_title"] == "Garage budget 2024"
            assert isinstance(ref["user_task_execution_pk"], int) and "task_icon" in ref
            assert isinstance(ref["extracted_informations"], list)

            recalled = await ok(s, "retrieve_memory", {"query": "where did I park?", "trace": True})
            assert recalled["instance"] == instance and isinstance(recalled["answer"], str)
            assert recalled["trace"]
            assert (await ok(s, "retrieve_memory", {"query": "where did I park?"}))["trace"] is None

            added = await ok(s, "add_memory", {"content": "Ada's favourite colour is teal", "kind": "insight",
                                               "tags": ["prefs"], "event_time": "2024-05-01T10:00:00Z"})
            assert added["kind"] == "insight" and added["event_time"]["year"] == 2024

            step = await ok(s, "memory_bank_add", {"bank": "trip", "entry": {
                "skill_name": "search", "thinking": "find a flight", "command": "flights LHR JFK",
                "result": "BA117 at 9:00"}})
            assert step["entry"]["step_number"] == 1
            # A nested argument sent as JSON text, as some desktop clients do, is read as JSON.
            matches = await ok(s, "memory_bank_query", {"bank": "trip", "keywords": json.dumps(["BA117"])})
            assert [e["id"] for e in matches["entries"]] == [step["entry"]["id"]]

            bank = json.loads((await s.read_resource("workbench://banks/trip")).contents[0].text)
            assert [e["entry"]["id"] for e in bank["entries"]] == [step["entry"]["id"]]
            uri = f"workbench://chains/{turn['chain_id']}"
            chain = json.loads((await s.read_resource(uri)).contents[0].text)
            assert [m["role"] for m in chain["messages"]] == ["user", "assistant"]
            with pytest.raises(MCPError) as refusal:
                await s.read_resource("workbench://banks/none")
            assert refusal.value.error.message == unknown_bank

            rated = await ok(s, "feedback", {"answer_id": turn["thought2_id"], "rating": "down",
                                             "comment": "wrong level"})
            assert (rated["rating"], rated["comment"]) == ("down", "wrong level")
            forgotten = await ok(s, "forget", {"target": "memory", "id": added["id"]})
            assert forgotten["index_rows"] == 1
            # A bank step by the id memory_bank_add returned ("no memory '…'" before: only "be-…" worked).
            step_gone = await ok(s, "forget", {"target": "memory", "id": step["entry"]["id"]})
            assert (step_gone["bank_rows"], step_gone["index_rows"]) == (1, 1)

            bad = [("ui_remember", uc.UiRememberParams, {"thought": "   "}),
                   ("ui_remember", uc.UiRememberParams,
                    {"thought": "hi", "intermediate_steps": {"[x]": "y"}}),
                   ("internal_memory", uc.PastTaskQuery, {"user_id": "ada", "query": "budget", "n_max": 0}),
                   ("retrieve_memory", uc.RetrieveReportRequest, {"query": "x", "depth": 3}),
                   ("add_memory", uc.AddMemory, {"content": "x", "kind": "dream"}),
                   ("memory_bank_add", uc.BankAdd, {"entry": {"importance": 2}}),
                   ("memory_bank_query", uc.BankQuery, {"max_results": 0}),
                   ("memory_bank_query", uc.BankQuery, {"query": {"keywords": ["a"]}, "keywords": ["b"]}),
                   ("forget", uc.Forget, {"target": "everything", "id": "x"}),
                   ("feedback", uc.RateAnswer, {"answer_id": "a", "rating": "sideways"})]
            for tool, model, arguments in bad:
                assert await refused(s, tool, arguments) == invalid(model, arguments, instance), tool
            # Refused by the use case itself, not by the request model: the same one line.
            assert await refused(s, "feedback", {"answer_id": "no-such-answer", "rating": "up"}) == \
                unknown_answer

    anyio.run(scenario)


def test_what_an_assistant_slipped_on(workbench, data_dir, instance, server_log):
    """A mistyped instance is told to be new (once), the bank query's fields are taken as the HTTP API takes
    them (inside `query` too), and retrieve_memory returns as many memories as its description says."""
    for i in range(8):
        uc.add_memory(workbench, uc.AddMemory(instance=instance, content=f"Ada's bike number {i} is teal"))
    typo = f"{instance}-typo"

    async def scenario() -> None:
        async with stdio_session(data_dir, instance, server_log) as s:
            first = await ok(s, "ui_remember", {"thought": "hello", "instance": typo})
            assert first["notes"][0].startswith(f"instance {typo!r} is new: this is its first memory (known "
                                                "instances: ")
            again = await ok(s, "ui_remember", {"thought": "hello", "instance": typo})
            assert not any("is new" in n for n in again["notes"])

            step = await ok(s, "memory_bank_add", {"bank": "trip", "entry": {
                "skill_name": "search", "thinking": "find a df", "command": "ls", "result": "df.csv"}})
            assert not any("is new" in n for n in step["notes"])  # the server's instance holds memory
            flat = await ok(s, "memory_bank_query", {"bank": "trip", "keywords": ["df"]})
            nested = await ok(s, "memory_bank_query", {"bank": "trip", "query": {"keywords": ["df"]}})
            assert flat == nested and [e["id"] for e in flat["entries"]] == [step["entry"]["id"]]
            assert await refused(s, "memory_bank_query", {"bank": "trip", "query": "df"}) == (
                "invalid input — query: give the query's fields (keywords, min_importance, max_results, "
                "tags, date_from, date_to) beside bank, not in query")

            few = await ok(s, "retrieve_memory", {"query": "Ada's teal bike"})
            assert len(few["memories"]) == 3
            assert {"similarity", "semantic", "text", "recency", "retrieval", "relevance", "fused"} <= set(
                few["memories"][0])
            more = await ok(s, "retrieve_memory", {"query": "Ada's teal bike", "params": {
                "retrieve_memory_op": {"top_k": 10}, "fuse_rerank_op": {"output_memory_max_count": 10}}})
            assert len(more["memories"]) == 8

    anyio.run(scenario)


def test_a_conversation_its_rating_and_forgetting_it(workbench, data_dir, instance, server_log):
    async def scenario() -> None:
        async with stdio_session(data_dir, instance, server_log) as s:
            first = await ok(s, "ui_remember",
                             {"thought": "I parked the car on level 3 of the airport garage"})
            second = await ok(s, "ui_remember", {"thought": "Which level did I park on?",
                                                 "chain_id": first["chain_id"]})
            assert second["chain_id"] == first["chain_id"]
            # The follow-up scored the first answer.
            assert second["previous_feedback"]["answer_id"] == first["thought2_id"]
            assert second["previous_feedback"]["continued"] == 1

            await ok(s, "feedback", {"answer_id": first["thought2_id"], "rating": "up", "comment": "right"})
            uri = f"workbench://chains/{first['chain_id']}"
            chain = json.loads((await s.read_resource(uri)).contents[0].text)
            assert [m["thought"]["thought"] for m in chain["messages"]] == [
                "I parked the car on level 3 of the airport garage", first["answer"],
                "Which level did I park on?", second["answer"]]
            answer = chain["messages"][1]
            assert (answer["feedback"]["rating"], answer["feedback"]["rating_comment"]) == ("up", "right")
            # The turn records the front end it came through and the caller (the local user on stdio).
            assert (answer["metrics"]["source"], answer["metrics"]["key"]) == ("mcp", "local")

            report = await ok(s, "forget", {"target": "chain", "id": first["chain_id"]})
            assert report["target"] == "chain" and report["thoughts"] == 6
            # Gone: the transcript is an error (it read as a chain without messages), and a retried forget
            # is no error but a report of nothing removed.
            gone = f"no chain {first['chain_id']!r} in instance {instance!r}"
            with pytest.raises(MCPError) as missing:
                await s.read_resource(uri)
            assert missing.value.error.message == f"{gone} (it may have been deleted)"
            again = await ok(s, "forget", {"target": "chain", "id": first["chain_id"]})
            assert {k: v for k, v in again.items() if isinstance(v, int) and v} == {}
            assert again["notes"] == [f"{gone}: nothing was there to forget (already forgotten, or a mistyped id)"]

    anyio.run(scenario)


def test_the_readme_configuration_serves_the_tools(workbench, data_dir, instance, tmp_path, server_log):
    """The `mcpServers` block of the README, as written (the checkout's path filled in), started from
    another folder as an assistant does; only its settings' values point at the test's servers."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = next(b for b in re.findall(r"```json\n(.*?)```", readme, re.DOTALL) if '"command"' in b)
    config = json.loads(block.replace("/absolute/path/to/memory-workbench", str(ROOT)))
    server = config["mcpServers"]["memory-workbench"]
    if not Path(server["command"]).exists():
        pytest.skip("no .venv in the checkout")
    assert server["args"] == ["mcp"]
    assert set(server["env"]) == {"INSTANCE", "WORKBENCH_SECRETS_FILE"}  # DATA_DIR: the per-user default
    env = {"DATA_DIR": str(data_dir), "INSTANCE": instance,
           "WORKBENCH_SECRETS_FILE": os.environ["WORKBENCH_SECRETS_FILE"]}
    params = StdioServerParameters(command=server["command"], args=server["args"], env=env, cwd=str(tmp_path))

    async def scenario() -> None:
        with server_log.open("w", encoding="utf-8") as errlog:
            async with (stdio_client(params, errlog=errlog) as (read, write),
                        ClientSession(read, write) as session):
                await session.initialize()
                assert {t.name for t in (await session.list_tools()).tools} == TOOLS
                recalled = await ok(session, "retrieve_memory", {"query": "anything at all"})
                assert recalled["instance"] == instance

    anyio.run(scenario)
