"""What flows between the ops: the memories with every score kept apart, the context, the trace."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from core.models import FusionProfile, MemoryRow, ScoreParts
from core.retrieval.memoryscope.params import memory_type_of
from core.retrieval.timeparse import TimeHint

WEEKDAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


class ScopeMemory(BaseModel):
    """A memory on its way through the ops.

    `retrieval` holds hybrid search's parts (semantic, text, recency, combined, similarity, relevance);
    `llm_score` is set only by semantic_rank for memories the model scored. `base_score` is what
    fuse_rerank starts from: the model's score when there is one, else the retrieval score; `base_source`
    says which. `relevance` is what the thresholds compare: the model's score, else the retrieval score
    without its recency part. `memory_type` is the seed's type of the memory's kind (a user's or an
    assistant's message is a conversation memory, `params.SEED_TYPE_OF_KIND`); `ratio_from` the
    fuse_ratio_dict key its type ratio came from, None when unknown_type_ratio applied.
    """

    memory: MemoryRow
    retrieval: ScoreParts
    llm_score: float | None = None
    type_ratio: float | None = None
    ratio_from: str | None = None
    time_ratio: float | None = None
    time_matched: bool | None = None
    fused_score: float | None = None
    formatted: str | None = None

    @property
    def memory_type(self) -> str:
        return memory_type_of(self.memory.kind)

    @property
    def base_score(self) -> float:
        return self.llm_score if self.llm_score is not None else self.retrieval.combined

    @property
    def relevance(self) -> float:
        return self.llm_score if self.llm_score is not None else self.retrieval.relevance

    @property
    def base_source(self) -> Literal["llm", "retrieval"]:
        return "llm" if self.llm_score is not None else "retrieval"

    def summary(self) -> dict[str, Any]:
        """A flat row for traces and tables."""
        row = {"id": self.memory.id, "kind": self.memory.kind, "type": self.memory_type,
               "content": self.memory.content,
               "similarity": round(self.retrieval.similarity, 4), "semantic": round(self.retrieval.semantic, 4),
               "text": round(self.retrieval.text, 4), "recency": round(self.retrieval.recency, 4),
               "speaker": self.retrieval.speaker, "chain": round(self.retrieval.chain, 4),
               "retrieval": round(self.retrieval.combined, 4), "relevance": round(self.relevance, 4),
               "llm_score": self.llm_score, "base_source": self.base_source}
        if self.fused_score is not None:
            row |= {"type_ratio": self.type_ratio, "ratio_from": self.ratio_from or "unknown_type_ratio",
                    "time_ratio": self.time_ratio,
                    "fused": round(self.fused_score, 4)}
        return row


class ChatMessage(BaseModel):
    """A chat message for read_message: its role, the speaker's name, the content, when it was written and
    whether it is already memorized."""

    model_config = ConfigDict(extra="forbid")

    role: str = "user"
    role_name: str = ""
    content: str
    time_created: datetime | None = None
    memorized: bool = False


class OpTrace(BaseModel):
    """One op's step: what it got, what it gave, with which parameters, how long it took."""

    op: str
    status: Literal["ran", "skipped", "fallback"] = "ran"
    note: str | None = None
    params: dict[str, Any] = {}
    input_size: int = 0
    output_size: int = 0
    output: Any = None
    ms: float = 0.0


class ScopeResult(BaseModel):
    query: str
    instance: str
    timestamp: datetime
    profile: FusionProfile
    time_hint: TimeHint | None = None
    memories: list[ScopeMemory] = Field(default_factory=list, description="fuse_rerank's output, best first")
    formatted: list[str] = []
    answer: str = ""
    trace: list[OpTrace] = []
    total_ms: float = 0.0


@dataclass
class ScopeContext:
    """The mutable context the ops read and write: each op reads what earlier ops left in it."""

    query: str
    instance: str
    profile: FusionProfile
    now: datetime | None = None
    time_hint: TimeHint | None = None
    memories: list[ScopeMemory] = field(default_factory=list)
    formatted: list[str] = field(default_factory=list)
    answer: str = ""
    messages: list[ChatMessage] = field(default_factory=list)
