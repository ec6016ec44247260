"""The personal-memory retrieval flow:

    set_query → (extract_time ∥ retrieve_memory → semantic_rank) → fuse_rerank → print_memory

The parallel branch runs on a two-thread pool. Every run returns its trace: each op's input size,
output, parameters, status and time in milliseconds.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from typing import TYPE_CHECKING

from core.models import FusionProfile
from core.retrieval.memoryscope.llm_ops import ExtractTimeOp, SemanticRankOp
from core.retrieval.memoryscope.ops import (
    FuseRerankOp,
    PrintMemoryOp,
    ReadMessageOp,
    RetrieveMemoryOp,
    SetQueryOp,
)
from core.retrieval.memoryscope.params import ScopeParams
from core.retrieval.memoryscope.types import ChatMessage, OpTrace, ScopeContext, ScopeResult

if TYPE_CHECKING:
    from core.runtime import Workbench

_EXECUTOR = ThreadPoolExecutor(max_workers=8, thread_name_prefix="memoryscope")


def run_memoryscope(wb: Workbench, query: str, *, instance: str | None = None,
                    profile: FusionProfile | None = None,
                    params: ScopeParams | None = None, now: datetime | None = None) -> ScopeResult:
    """Run the flow for `query` on `instance` (default: the INSTANCE setting) with a fusion profile
    (default: the instance's active one). `now` stands in for the current time when set_query has no
    timestamp parameter."""
    t0 = time.perf_counter()
    instance = instance or wb.settings.instance
    params = params or ScopeParams()
    profile = profile or wb.profiles.active(instance)
    ctx = ScopeContext(query=query, instance=instance, profile=profile, now=now)
    trace: list[OpTrace] = [SetQueryOp(params.set_query_op)(ctx, wb)]

    # Both branches write to different fields of the context: time_hint, and memories.
    time_branch = _EXECUTOR.submit(ExtractTimeOp(params.extract_time_op), ctx, wb)
    retrieved = RetrieveMemoryOp(params.retrieve_memory_op)(ctx, wb)
    ranked = SemanticRankOp(params.semantic_rank_op)(ctx, wb)
    extracted = time_branch.result()
    trace += [extracted, retrieved, ranked]
    trace.append(FuseRerankOp(params.fuse_rerank_op)(ctx, wb))
    trace.append(PrintMemoryOp(params.print_memory_op)(ctx, wb))
    return ScopeResult(query=query, instance=instance, timestamp=ctx.now, profile=profile,
                       time_hint=ctx.time_hint, memories=ctx.memories, formatted=ctx.formatted,
                       answer=ctx.answer, trace=trace, total_ms=(time.perf_counter() - t0) * 1000)


def read_recent_messages(conversations: Sequence[Sequence[ChatMessage]] | Sequence[ChatMessage],
                         params: ScopeParams | None = None) -> tuple[list[ChatMessage], OpTrace]:
    """read_message on its own: the unmemorized recent messages, with the op's trace."""
    params = params or ScopeParams()
    ctx = ScopeContext(query="", instance="-", profile=FusionProfile(), messages=list(conversations))
    trace = ReadMessageOp(params.read_message_op)(ctx)
    return ctx.messages, trace
