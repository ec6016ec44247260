"""Compressing a run of memory-bank entries into one summary: by the LLM when one is configured,
otherwise (or when the LLM fails) by rule. The result says which method made it and why."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel

from core.bank.types import MemoryEntry, _clip
from core.conversation.prompts import quoted
from core.errors import ProviderError
from core.llm import LLM, Message

SUMMARY_MAX_CHARS = 1200  # a summary stays short enough to be one search hit and one prompt line
FIELD_MAX_CHARS = 400  # per thinking/command/result in the LLM prompt, so 50 steps stay within budget

COMPRESS_SYSTEM = (
    "You compress the execution history of an assistant's shell task into one memory. Keep what a later "
    "step needs: the goal, the main actions and commands, key results and findings, errors and how they "
    "were handled. Never invent facts that are not in the steps. Reply with JSON only: "
    '{"title": "<at most 10 words>", "content": "<at most 120 words>"}'
)


class Compressed(BaseModel):
    title: str
    content: str
    method: Literal["llm", "rule"]
    model: str | None = None
    tokens: int | None = None
    note: str = ""


def step_line(e: MemoryEntry) -> str:
    return f"{e.step_label()}: {e.summary}"


def rule_summary(entries: Sequence[MemoryEntry]) -> tuple[str, str]:
    """Title names the step range; content is each step's one-line summary, oldest first."""
    first, last = entries[0].step_number, entries[-1].step_number
    steps = f"step {first}" if first == last else f"steps {first}–{last}"
    title = f"Summary of {len(entries)} {'step' if len(entries) == 1 else 'steps'} ({steps})"
    return title, _clip(" | ".join(step_line(e) for e in entries), SUMMARY_MAX_CHARS)


def _prompt(entries: Sequence[MemoryEntry]) -> list[Message]:
    """The steps, each under its "Step n" line; the caller's texts `quoted` (the fields are clipped to one
    line already, the skill's name is not), so none can begin a line as a step does."""
    lines = []
    for e in entries:
        named = f"{quoted(e.skill_name)}, " if e.skill_name else ""
        parts = [f"Step {e.step_number} ({named}importance {e.importance:.1f})"]
        for label, value in (("thinking", e.thinking), ("command", e.command), ("result", e.result)):
            if value.strip():
                parts.append(f"  {label}: {quoted(_clip(value, FIELD_MAX_CHARS))}")
        lines.append("\n".join(parts))
    return [Message(role="system", content=COMPRESS_SYSTEM),
            Message(role="user", content="Steps to compress:\n\n" + "\n\n".join(lines))]


def _parse(text: str) -> tuple[str, str]:
    """The model's JSON reply → (title, content); ValueError when it is not the asked shape."""
    start, end = text.find("{"), text.rfind("}")
    data = json.loads(text[start:end + 1] if 0 <= start < end else text)
    title, content = data.get("title"), data.get("content")
    if not isinstance(title, str) or not isinstance(content, str) or not title.strip() or not content.strip():
        raise ValueError("reply lacks a non-empty 'title' and 'content'")
    return _clip(title, 200), _clip(content, SUMMARY_MAX_CHARS)


def compress(entries: Sequence[MemoryEntry], llm: LLM, model: str) -> Compressed:
    if not entries:
        raise ValueError("nothing to compress")
    if not llm.configured:
        title, content = rule_summary(entries)
        return Compressed(title=title, content=content, method="rule",
                          note="LLM compression skipped: no LLM configured; rule-based summary")
    try:
        done = llm.complete(_prompt(entries), model=model, temperature=0.2, max_tokens=400, json_mode=True)
        title, content = _parse(done.text)
        return Compressed(title=title, content=content, method="llm", model=done.model,
                          tokens=done.total_tokens)
    except ProviderError as e:
        reason = str(e)
    except (ValueError, AttributeError) as e:  # invalid JSON, or JSON that is not an object
        reason = f"the model's reply was not the asked JSON ({type(e).__name__})"
    title, content = rule_summary(entries)
    return Compressed(title=title, content=content, method="rule",
                      note=f"LLM compression failed: {_clip(reason, 200)}; rule-based summary used")
