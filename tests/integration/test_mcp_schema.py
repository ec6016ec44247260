"""The MCP tools against their own published contract, as an assistant that reads only tools/list sees it:
every tool publishes an output schema and a description for each input, ids follow the rule the core
checks, and any arguments — valid ones, ones broken in one place, unknown fields named with control
characters — give either a result that matches the tool's output schema or a tool error of one readable
line, never an exception out of the server."""

from __future__ import annotations

import uuid
from collections import Counter
from typing import Any

import anyio
import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.ids import ID_PATTERN
from core.mcp.server import build_mcp_server
from tests.support.hostile import SERVICE, ids, texts, wrong_type
from tests.support.mcp_client import TOOLS

OUTCOMES: Counter[str] = Counter()  # "tool ok|error" → calls; printed at the end (pytest -s)

# The smallest arguments each tool accepts; the property test breaks them in one place at a time.
ARGUMENTS: dict[str, dict[str, Any]] = {
    "ui_remember": {"thought": "I keep my bike in the shed"},
    "internal_memory": {"user_id": "u1", "query": "report"},
    "retrieve_memory": {"query": "where is my bike"},
    "add_memory": {"content": "the bike is blue"},
    "memory_bank_add": {"bank": "trip", "entry": {"skill_name": "search", "thinking": "look in the shed"}},
    "memory_bank_query": {"bank": "trip"},
    "forget": {"target": "memory", "id": "none-such"},
    "feedback": {"answer_id": "none-such", "rating": "up"},
    "feedback_summary": {"since": "last week", "by": "week"},
}


@pytest.fixture(scope="module", autouse=True)
def _report():
    yield
    print("\nMCP calls by tool and outcome:", dict(sorted(OUTCOMES.items())))


@pytest.fixture(scope="module")
def server(workbench):
    return build_mcp_server(workbench)


@pytest.fixture(scope="module")
def tools(server) -> dict[str, Any]:
    return {t.name: t for t in anyio.run(server.list_tools)}


@pytest.fixture(scope="module")
def instance(server) -> str:
    """One instance for the module, with the bank the arguments name."""
    name = f"mcp-schema-{uuid.uuid4().hex[:8]}"
    added = anyio.run(server.call_tool, "memory_bank_add", {**ARGUMENTS["memory_bank_add"], "instance": name})
    assert not added.is_error, added.content
    return name


def test_every_tool_publishes_its_output_and_describes_its_inputs(tools):
    assert set(tools) == TOOLS
    for name, tool in tools.items():
        assert tool.output_schema and tool.output_schema["type"] == "object", name
        for field, prop in tool.input_schema["properties"].items():
            assert prop.get("description"), (name, field)
        assert tool.input_schema["properties"]["instance"]["anyOf"][0]["pattern"] == ID_PATTERN.pattern, name
        jsonschema.Draft202012Validator.check_schema(tool.input_schema)
        jsonschema.Draft202012Validator.check_schema(tool.output_schema)
        assert jsonschema.Draft202012Validator(tool.input_schema).is_valid(ARGUMENTS[name]), name


def arguments(tool: str) -> st.SearchStrategy[dict[str, Any]]:
    base = ARGUMENTS[tool]
    fields = sorted({*base, "instance", "tags", "chain_id", "request_id", "max_results", "n_max"})
    broken = st.builds(lambda field, value: {**base, field: value}, st.sampled_from(fields),
                       st.one_of(wrong_type(), ids(), texts(60, big=False)))
    unknown = st.builds(lambda field: {**base, field: 1}, st.text(min_size=1, max_size=12))
    return st.one_of(st.just(base), st.just(base), broken, unknown)


@settings(SERVICE, max_examples=150)
@given(data=st.data())
def test_any_arguments_give_a_result_of_the_output_schema_or_a_one_line_error(server, tools, instance, data):
    name = data.draw(st.sampled_from(sorted(ARGUMENTS)), label="tool")
    args = {"instance": instance, **data.draw(arguments(name), label="arguments")}
    result = anyio.run(server.call_tool, name, args)
    text = "".join(c.text for c in result.content if c.type == "text")
    OUTCOMES[f"{name} {'error' if result.is_error else 'ok'}"] += 1
    if result.is_error:
        assert result.structured_content is None, (name, args)
        assert text and "\n" not in text and "Traceback" not in text and len(text) < 2000, (name, args, text)
    else:
        jsonschema.validate(result.structured_content, tools[name].output_schema)


def test_an_unknown_argument_named_with_control_characters_is_refused_in_one_line(server, instance):
    """The name was echoed as it came: its newline broke the one-line message."""
    result = anyio.run(server.call_tool, "add_memory", {"content": "x", "instance": instance, "a\nb\x1b[2J": 1})
    assert result.is_error
    assert result.content[0].text == "invalid input — a\\nb\\x1b[2J: Extra inputs are not permitted"
