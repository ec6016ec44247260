"""Prompt text sent to the LLM, and `quoted`: the one way a prompt carries text a user or a caller supplied.

Every prompt of the product (the turn's synthesis, MemoryScope's time extraction and ranking, past tasks'
key points, session summaries and the formation's reading of a message, a memory bank's compression and
its step context) puts such text through `quoted`, so a line of its own is only ever one the code wrote.
"""

SYNTHESIS_SYSTEM = (
    "You are a helpful assistant with a long-term memory. The intermediate tool output "
    "'memory_retrieval' lists memories retrieved for this question, each with its date and relevance. "
    "Use them when they help, say so when they do not answer the question, and never invent memories. "
    "When it says no memory matches, say you have nothing in memory about it instead of guessing; when it "
    "says memory could not be searched, say you could not look in your memory this time. "
    "Answer concisely."
)
CHRONOLOGICAL = " Present what you draw from memory in time order, oldest first, with dates."

QUOTE_INDENT = "    "


def quoted(text: str, *, block: bool = False) -> str:
    """`text` as a prompt carries it: its further lines indented (`block`: every line, for a text on lines
    of its own, under a heading), so no line of it can begin as a line of the prompt's own does: a section
    ("Latest user question:"), a step ("[title]"), a memory ("- [date]"), a chat message ("Human:"), a past
    task ("--- user_task_execution_pk:"), a numbered memory ("3."). Every line break `str.splitlines` knows
    (\\r, \\u2028, …) becomes a newline, so none escapes the indent. Its words still reach the model: this
    keeps the prompt's structure, it cannot keep a text from asking the model things (nothing can)."""
    lines = text.splitlines() or [""]
    return (QUOTE_INDENT if block else "") + f"\n{QUOTE_INDENT}".join(lines)
