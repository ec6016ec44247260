"""The MemoryScope ops that need no LLM: set_query, retrieve_memory, fuse_rerank, print_memory,
read_message. Each op is a small class run on a `ScopeContext`; its maths are pure functions here.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, ClassVar

from pydantic import BaseModel

from core.errors import InvalidInput
from core.index.records import event_time_of
from core.models import EventTime, MemoryRow
from core.retrieval.hybrid import SearchRequest, hybrid_search
from core.retrieval.memoryscope.params import (
    FuseRerankParams,
    PrintMemoryParams,
    ReadMessageParams,
    RetrieveMemoryParams,
    SetQueryParams,
)
from core.retrieval.memoryscope.types import WEEKDAY_NAMES, ChatMessage, OpTrace, ScopeContext, ScopeMemory
from core.retrieval.ranking import LeftOut

if TYPE_CHECKING:
    from core.runtime import Workbench


class Op(ABC):
    """An op: `run` reads and writes the context and says what it did; `__call__` adds time and params."""

    name: ClassVar[str]

    def __init__(self, params: BaseModel):
        self.params = params

    def __call__(self, ctx: ScopeContext, wb: Workbench | None = None) -> OpTrace:
        t0 = time.perf_counter()
        trace = self.run(ctx, wb)
        trace.op = self.name
        trace.params = self.params.model_dump(mode="json")
        trace.ms = (time.perf_counter() - t0) * 1000
        return trace

    @abstractmethod
    def run(self, ctx: ScopeContext, wb: Workbench) -> OpTrace:
        """Do the op's work on the context."""


# -- pure maths ---------------------------------------------------------------------------------

def iso_week(ev: EventTime) -> int:
    """ISO week number of the event's date, or -1 when year, month or day is unknown."""
    if min(ev.year, ev.month, ev.day) < 1:
        return -1
    try:
        return date(ev.year, ev.month, ev.day).isocalendar().week
    except ValueError:
        return -1


def time_matches(parts: dict[str, int], ev: EventTime) -> bool:
    """True when every extracted part equals the memory's event-time part, -1 (unknown) matching anything.

    No extracted parts: False (there is no time to match, so no boost).
    """
    if not parts:
        return False
    for key, wanted in parts.items():
        have = iso_week(ev) if key == "week" else getattr(ev, key, -1)
        if have != -1 and have != wanted:
            return False
    return True


def memory_time(memory: MemoryRow) -> EventTime:
    """The time a memory's extracted-time match reads: its event time, or, when it has none (a memory added
    or imported with only the time it was stored), that time's parts, as a time window does
    (`core.index.records`). Read as "unknown, matching anything", fuse_time_ratio boosted every such memory
    alike, so a time in the query reordered nothing."""
    return memory.event_time if memory.event_time.year >= 0 else event_time_of(memory.created_at)


def fused_score(base: float, type_ratio: float, time_ratio: float) -> float:
    """fused = base * type_ratio * time_ratio."""
    return base * type_ratio * time_ratio


def format_memory_line(created_at: datetime, content: str, event: EventTime | None = None) -> str:
    """`[YYYY-MM-DD HH:MM:SS Weekday] content`, the time when the memory was stored (the seed's timestamp),
    in UTC; then `(event 2024-06-03)` when the memory's event time tells more than that date
    (`EventTime.beside`), as ui_remember's answers date a memory."""
    t = created_at.astimezone(UTC)
    line = f"[{t:%Y-%m-%d %H:%M:%S} {WEEKDAY_NAMES[t.weekday()]}] {content}"
    beside = event.beside(created_at) if event is not None else None
    return f"{line} (event {beside})" if beside else line


def memory_line(m: ScopeMemory) -> str:
    """`format_memory_line` of a memory."""
    return format_memory_line(m.memory.created_at, m.memory.content, m.memory.event_time)


def fuse_rerank(memories: Sequence[ScopeMemory], parts: dict[str, int],
                p: FuseRerankParams) -> tuple[list[ScopeMemory], int]:
    """Drop memories whose `relevance` (the model's score, else retrieval without recency) is below
    fuse_score_threshold, score the rest with `fused_score` (type ratio `FuseRerankParams.ratio_for` the
    memory's kind: its seed type's in fuse_ratio_dict, a user's or assistant's message a conversation's,
    else unknown_type_ratio; time ratio fuse_time_ratio when `time_matches`, else 1), sort best first and keep
    output_memory_max_count. The memories the model scored come first, then the unscored: a model's
    score and a retrieval score are never compared (semantic_rank's promise).
    Returns (kept, how many fell below the threshold)."""
    scored, below = [], 0
    for m in memories:
        if m.relevance < p.fuse_score_threshold:
            below += 1
            continue
        ratio_from, type_ratio = p.ratio_for(m.memory.kind)
        matched = time_matches(parts, memory_time(m.memory))
        time_ratio = p.fuse_time_ratio if matched else 1.0
        scored.append(m.model_copy(update={
            "type_ratio": type_ratio, "ratio_from": ratio_from, "time_ratio": time_ratio,
            "time_matched": matched, "fused_score": fused_score(m.base_score, type_ratio, time_ratio),
            "formatted": memory_line(m)}))
    scored.sort(key=lambda m: (m.llm_score is None, -(m.fused_score or 0.0), -m.memory.created_at.timestamp(),
                               m.memory.id))
    return scored[: p.output_memory_max_count], below


def read_messages(conversations: Sequence[Sequence[ChatMessage]] | Sequence[ChatMessage],
                  p: ReadMessageParams) -> list[ChatMessage]:
    """The unmemorized recent messages: conversations that hold a message from `target_name` (any,
    when unset), flattened, memorized messages left out, sorted by time (messages without a time keep
    their order after the timed ones), the last `contextual_msg_max_count` kept.
    A flat list of messages counts as one conversation."""
    if all(isinstance(c, ChatMessage) for c in conversations):
        groups = [list(conversations)]
    else:
        groups = [[c] if isinstance(c, ChatMessage) else list(c) for c in conversations]
    flat = []
    for group in groups:
        if p.target_name is not None and not any(m.role_name == p.target_name for m in group):
            continue
        flat.extend(m for m in group if not m.memorized)
    timed = sorted((m for m in flat if m.time_created is not None), key=lambda m: m.time_created)
    ordered = timed + [m for m in flat if m.time_created is None]
    if p.contextual_msg_max_count == 0:
        return []
    return ordered[-p.contextual_msg_max_count:]


def type_ratios_note(memories: Sequence[ScopeMemory]) -> str:
    """The ratio each kind of memory got and where from, e.g. "type ratios: conversation ×0.5 for user,
    assistant; observation ×1; unknown_type_ratio ×0.1 for bank_entry"."""
    groups: dict[tuple[str, float], list[str]] = {}
    for m in memories:
        kinds = groups.setdefault((m.ratio_from or "unknown_type_ratio", m.type_ratio or 0.0), [])
        if m.memory.kind not in kinds:
            kinds.append(m.memory.kind)
    said = [f"{source} ×{ratio:g}" + ("" if kinds == [source] else f" for {', '.join(kinds)}")
            for (source, ratio), kinds in groups.items()]
    return "type ratios: " + ("; ".join(said) if said else "none")


# The index's own bookkeeping in a memory's metadata (which message an observation came from, what
# formation read it as, the observations a message left, the relations retrieval reads, which its text
# says already): ids and labels that mean nothing to the model the printed memories are put before. The
# trace and the explorer show them.
BOOKKEEPING = frozenset({"formed_by", "message_kind", "source_thought", "observations", "thought_number",
                         "relations", "rules"})


def print_memories(memories: Sequence[ScopeMemory]) -> str:
    """Number each memory with its type (and kind when another, "conversation, user"), its time, its
    `when_to_use` and other metadata when present (the index's `BOOKKEEPING` left out)."""
    blocks = []
    for i, m in enumerate(memories, start=1):
        line = m.formatted or memory_line(m)
        kind = m.memory_type if m.memory_type == m.memory.kind else f"{m.memory_type}, {m.memory.kind}"
        lines = [f"Memory {i} ({kind}): {line}"]
        meta = {k: v for k, v in m.memory.metadata.items() if k not in BOOKKEEPING}
        if when := meta.pop("when_to_use", None):
            lines.append(f"  when to use: {when}")
        if meta:
            lines.append("  metadata: " + ", ".join(f"{k}={v}" for k, v in sorted(meta.items())))
        blocks.append("\n".join(lines))
    return "\n".join(blocks)


# -- ops ----------------------------------------------------------------------------------------

class SetQueryOp(Op):
    name = "set_query_op"
    params: SetQueryParams

    def run(self, ctx: ScopeContext, wb: Workbench) -> OpTrace:
        if not ctx.query.strip():
            raise InvalidInput("query must not be empty")
        ts = self.params.timestamp
        ctx.now = datetime.fromtimestamp(ts, UTC) if ts is not None else (ctx.now or datetime.now(UTC))
        return OpTrace(op=self.name, input_size=1, output_size=1,
                       output={"query": ctx.query, "timestamp": ctx.now.isoformat()},
                       note="timestamp from parameters" if ts is not None else None)


def asked_of_search(p: RetrieveMemoryParams) -> int:
    """How many memories the op asks hybrid search for: its top_k, or, with a threshold_score, the ranking
    on past them (2 × pool_size, at most 1000), whose next memories take the places of those below it.
    Either way the first top_k are the same (each is decided only by those ranked above it)."""
    return p.top_k if p.threshold_score is None else max(p.top_k, min(1000, 2 * p.pool_size))


class RetrieveMemoryOp(Op):
    """The ranking chat, the evaluation and the Tune page read (`core.retrieval.ranking.rank_pool`: fusion,
    identical texts once, near-duplicates after the distinct memories, top k), then threshold_score."""

    name = "retrieve_memory_op"
    params: RetrieveMemoryParams

    def run(self, ctx: ScopeContext, wb: Workbench) -> OpTrace:
        p = self.params
        if p.recall_key != "query":
            raise InvalidInput(f"op.retrieve_memory_op.params.recall_key {p.recall_key!r} is not in the "
                               "context; available: query")
        req = SearchRequest(query=ctx.query, instance=ctx.instance, top_k=asked_of_search(p),
                            pool_size=p.pool_size, profile=ctx.profile,
                            similarity_threshold=p.similarity_threshold, kinds=p.kinds)
        found = hybrid_search(wb.search_pool(), wb.embedder, req, now=ctx.now)
        ranked = [ScopeMemory(memory=s.memory, retrieval=s.score) for s in found.results]
        # The threshold reads relevance (the retrieval score without its recency part): a memory an hour
        # old would otherwise pass 0.1 on its age alone.
        kept = ranked if p.threshold_score is None else [m for m in ranked
                                                         if m.retrieval.relevance >= p.threshold_score]
        ctx.memories = kept[: p.top_k]
        boost = found.time_note()
        note = (f"{found.candidates} candidates from hybrid search "
                f"({ctx.profile.name}, {ctx.profile.method}), ranked as chat ranks them (identical texts "
                f"once); {boost + '; ' if boost else ''}{_left_out(found.left_out)}; "
                f"{len(ranked) - len(kept)} below threshold_score (on relevance, without recency); "
                f"kept {len(ctx.memories)}")
        return OpTrace(op=self.name, input_size=found.candidates, output_size=len(ctx.memories),
                       output=[m.summary() for m in ctx.memories], note=note)


def _left_out(left_out: Sequence[LeftOut]) -> str:
    """What the trace says of them: "2 near-duplicates left out: d085 (like d134), d096 (like d023)"."""
    if not left_out:
        return "no near-duplicate left out"
    return (f"{len(left_out)} near-duplicate{'s' if len(left_out) > 1 else ''} left out: "
            + ", ".join(f"{x.id} (like {x.like_id})" for x in left_out))


class FuseRerankOp(Op):
    name = "fuse_rerank_op"
    params: FuseRerankParams

    def run(self, ctx: ScopeContext, wb: Workbench) -> OpTrace:
        parts = ctx.time_hint.parts if ctx.time_hint else {}
        before = len(ctx.memories)
        ctx.memories, below = fuse_rerank(ctx.memories, parts, self.params)
        ctx.formatted = [m.formatted or "" for m in ctx.memories]
        note = (f"{below} below fuse_score_threshold (on relevance, without recency); "
                f"{type_ratios_note(ctx.memories)}; time parts {parts or 'none'}; model-scored first; "
                f"kept {len(ctx.memories)} of {before}")
        return OpTrace(op=self.name, input_size=before, output_size=len(ctx.memories),
                       output=[m.summary() | {"formatted": m.formatted} for m in ctx.memories], note=note)


class PrintMemoryOp(Op):
    name = "print_memory_op"
    params: PrintMemoryParams

    def run(self, ctx: ScopeContext, wb: Workbench) -> OpTrace:
        ctx.answer = print_memories(ctx.memories)
        return OpTrace(op=self.name, input_size=len(ctx.memories), output_size=1 if ctx.answer else 0,
                       output=ctx.answer)


class ReadMessageOp(Op):
    name = "read_message_op"
    params: ReadMessageParams

    def run(self, ctx: ScopeContext, wb: Workbench) -> OpTrace:
        before = len(ctx.messages)
        ctx.messages = read_messages(ctx.messages, self.params)
        return OpTrace(op=self.name, input_size=before, output_size=len(ctx.messages),
                       output=[m.model_dump(mode="json") for m in ctx.messages])
