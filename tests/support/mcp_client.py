"""What the MCP tests share: reading a tool's result, and the message a refused call must carry."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from mcp import ClientSession
from mcp.types import CallToolResult
from pydantic import BaseModel

from core.errors import describe

TOOLS = {"ui_remember", "internal_memory", "retrieve_memory", "add_memory", "memory_bank_add",
         "memory_bank_query", "forget", "feedback", "feedback_summary"}


def text(result: CallToolResult) -> str:
    return "".join(c.text for c in result.content if c.type == "text")


async def ok(session: ClientSession, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """Call a tool that must accept its input; returns its structured result (the same as its text)."""
    result = await session.call_tool(tool, arguments)
    assert not result.is_error, text(result)
    assert result.structured_content == json.loads(text(result))
    return result.structured_content


async def refused(session: ClientSession, tool: str, arguments: dict[str, Any]) -> str:
    """Call a tool that must refuse its input; returns the tool error's one line."""
    result = await session.call_tool(tool, arguments)
    assert result.is_error and result.structured_content is None
    message = text(result)
    assert "\n" not in message and "Traceback" not in message and "Error executing tool" not in message
    return message


def invalid(model: type[BaseModel], arguments: dict[str, Any], instance: str) -> str:
    """The one-line message the CLI gives for these arguments (the server fills in the instance)."""
    return failure(lambda: model.model_validate({**arguments, "instance": instance}))


def failure(call: Callable[[], object]) -> str:
    try:
        call()
    except Exception as e:  # noqa: BLE001 - any refusal: its message is what is compared
        return describe(e).message
    raise AssertionError("the call was expected to fail")
