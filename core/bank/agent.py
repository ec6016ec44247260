"""The memory bank inside an agent's task loop, as seed 004's "Integration with task execution" describes:
before each step the bank's memories relevant to it (and the latest steps) are handed to the step; after
it, the executed step is added to the bank, which compresses its oldest entries when full.

    memory = TaskMemory(MemoryBank(wb, instance, "deploy-shop-api"))   # or uc.default_bank("…")
    for task in plan:
        outcome = memory.step(task, lambda context: run_skill(task, context.prompt()))

`run_skill` gets the context and returns the `MemoryEntry` of what it did (skill, thinking, command,
result, importance, tags). A loop that runs its steps itself calls `context_for` and `record` instead.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from pydantic import BaseModel, Field

from core.bank.bank import AddEntryResult, MemoryBank
from core.bank.types import SUMMARY_SKILL, MemoryEntry, MemoryQuery
from core.conversation.prompts import quoted

# Words that say nothing about a step's subject: the bank matches keywords as substrings, so "with"
# or "then" would recall every step. Words under four letters are left out too.
_FILLER_WORDS = frozenset({
    "about", "after", "again", "also", "before", "check", "does", "done", "each", "from", "have", "into", "just",
    "make", "more", "most", "only", "other", "over", "same", "some", "sure", "than", "that", "their", "them",
    "then", "there", "these", "they", "this", "those", "very", "want", "what", "when", "where", "which",
    "while", "will", "with", "would", "should", "could", "your"})


def keywords_of(task: str, limit: int = 12) -> list[str]:
    """The task's distinct content words (four letters or more), in order: what the bank is asked about."""
    words = (w.lower() for w in re.findall(r"[^\W_][\w.-]*[^\W_]", task))
    return list(dict.fromkeys(w for w in words if len(w) >= 4 and w not in _FILLER_WORDS))[:limit]


class StepContext(BaseModel):
    """What a step is handed before it runs: the bank's memories relevant to its task (summaries of
    compressed steps included) and the latest steps, none of them twice."""

    task: str
    keywords: list[str]
    relevant: list[MemoryEntry] = Field(description="matching the task, by importance then time")
    recent: list[MemoryEntry] = Field(description="the latest live steps, oldest first")

    def prompt(self) -> str:
        """The context as lines for a skill selector's prompt; empty before the first step."""
        parts = []
        if self.relevant:
            parts += ["Relevant memories:", *(f"- {_line(e)}" for e in self.relevant)]
        if self.recent:
            parts += ["Recent steps:", *(f"- {_line(e)}" for e in self.recent)]
        return "\n".join(parts)


def _line(e: MemoryEntry) -> str:
    """An entry as one item of the context: its texts (the caller's) `quoted`, so none adds a heading or an
    item of its own."""
    if e.skill_name == SUMMARY_SKILL:  # a summary read back as an entry: its title, then its content
        return f"summary from step {e.step_number}: {quoted(e.summary)}: {quoted(e.result)}"
    return f"step {e.step_number}{f' ({quoted(e.skill_name)})' if e.skill_name else ''}: {quoted(e.summary)}"


class StepOutcome(BaseModel):
    context: StepContext = Field(description="what the step was handed")
    added: AddEntryResult = Field(description="the step as stored, and the compression it caused, if any")


class TaskMemory:
    """A memory bank used by an agent's loop: `context_for` before a step, `record` after it (or `step`
    for both)."""

    def __init__(self, bank: MemoryBank, *, relevant: int = 5, recent: int = 3, min_importance: float = 0.0):
        self.bank = bank
        self.relevant, self.recent, self.min_importance = relevant, recent, min_importance

    def context_for(self, task: str, *, keywords: Sequence[str] | None = None,
                    tags: Sequence[str] = ()) -> StepContext:
        """The memories to hand a step about `task` (keywords: the task's content words unless given)."""
        words = list(keywords) if keywords is not None else keywords_of(task)
        recent = self.bank.get_recent_entries(self.recent) if self.recent else []
        relevant = []
        if words or tags:
            seen = {e.id for e in recent}
            query = MemoryQuery(keywords=words, tags=list(tags), min_importance=self.min_importance,
                                max_results=self.relevant + len(seen))
            relevant = [e for e in self.bank.get_relevant_memories(query) if e.id not in seen][:self.relevant]
        return StepContext(task=task, keywords=words, relevant=relevant, recent=recent)

    def record(self, entry: MemoryEntry) -> AddEntryResult:
        """Add the executed step to the bank (numbered by the bank unless it has a step number)."""
        return self.bank.add_entry(entry)

    def step(self, task: str, execute: Callable[[StepContext], MemoryEntry], *,
             tags: Sequence[str] = ()) -> StepOutcome:
        """Run one step: hand `execute` the context for `task`, then record the entry it returns."""
        context = self.context_for(task, tags=tags)
        return StepOutcome(context=context, added=self.record(execute(context)))
