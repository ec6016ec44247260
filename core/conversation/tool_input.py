"""Memory for tools: `ToolInputSchema` (chat history, latest message, user settings, intermediate steps)
and the standard query format a tool is given:

    Chat history: ...
    Intermediate tool outputs: ...
    Latest user question: ...

Chat history is kept within a token budget by dropping the oldest turns first; how many were dropped
is reported, never silent. Every text in it (a message, a step's output, the question) is `quoted`: only
the headers, "[title]" and "Human:"/"AI:" begin a line.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from core.conversation.prompts import quoted
from core.tokens import count_tokens


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: Literal["human", "ai"]
    content: str
    additional_kwargs: dict[str, Any] = {}
    example: bool = False


class UserSettings(BaseModel):
    data: dict[str, Any] = {}


class ToolInputSchema(BaseModel):
    model_config = ConfigDict(extra="forbid")

    chat_history: list[ChatMessage] = []
    latest_human_message: str
    user_settings: UserSettings | None = None
    intermediate_steps: dict[str, str] = {}


class FormattedQuery(BaseModel):
    text: str
    history_turns_kept: int
    history_turns_dropped: int
    history_tokens: int
    history_budget: int = Field(description="token budget the chat history had to fit in")


def format_history(messages: list[ChatMessage]) -> str:
    """The messages as lines, each "Human: " or "AI: " and its text: the chat history is one block of the
    prompt's user message, not a message of the API each, so a message's further lines are indented."""
    return "\n".join(f"{'Human' if m.type == 'human' else 'AI'}: {quoted(m.content)}" for m in messages)


def fit_history(messages: list[ChatMessage], budget: int) -> tuple[list[ChatMessage], int]:
    """The newest messages whose formatted lines fit in `budget` tokens; returns (kept, tokens)."""
    kept: list[ChatMessage] = []
    used = 0
    for m in reversed(messages):
        cost = count_tokens(format_history([m])) + 1  # + the newline that joins it
        if used + cost > budget:
            break
        kept.append(m)
        used += cost
    kept.reverse()
    return kept, used


def format_query(tool_input: ToolInputSchema, history_budget: int = 4000) -> FormattedQuery:
    """The standard query format, with the chat history cut to `history_budget` tokens."""
    kept, used = fit_history(tool_input.chat_history, history_budget)
    steps = "\n".join(f"[{name}]\n{quoted(output, block=True)}"
                      for name, output in tool_input.intermediate_steps.items())
    text = (f"Chat history:\n{format_history(kept) or '(none)'}\n"
            f"Intermediate tool outputs:\n{steps or '(none)'}\n"
            f"Latest user question:\n{quoted(tool_input.latest_human_message, block=True)}")
    return FormattedQuery(text=text, history_turns_kept=len(kept),
                          history_turns_dropped=len(tool_input.chat_history) - len(kept),
                          history_tokens=used, history_budget=history_budget)
