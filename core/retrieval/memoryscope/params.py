"""The ops' parameters under their specified flat names (`op.<op_name>.params.<name>`) and defaults
(the MemoryScope specification: see "The specification" in docs/ARCHITECTURE.md).

Each op has its own model; `ScopeParams` holds them all and reads or writes the flat names:

    ScopeParams.from_flat({"op.retrieve_memory_op.params.top_k": 5}).retrieve_memory_op.top_k == 5

Parameters the specification does not name but the product needs (the candidate pool of hybrid search, the
ratio of an unknown memory type, the target name of read_message) sit beside them, documented.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from core.errors import InvalidInput, explain_validation

DEFAULT_FUSE_RATIOS = {"conversation": 0.5, "observation": 1.0, "obs_customized": 1.2, "insight": 2.0}

# The seed's memory type of each kind of the memory index that is one of them (`core.models.MemoryKind`);
# fuse_rerank multiplies a memory's score by its type's ratio. The seed's four types are themselves.
#   kind                      seed type     why
#   user, assistant           conversation  a message of a chat: what the seed's conversation memories are
#   turn                      conversation  a conversation turn of an evaluation dataset (LoCoMo)
#   important                 conversation  a user's message copied word for word when marked important
#   session_summary           observation   the facts a user stated in a chat, restated in a few sentences
#   bank_entry, bank_summary  (unknown)     an agent's task steps (seed 004), not memories of the person
#   federation                (unknown)     nothing writes it yet; what a shared item is, is open
SEED_TYPE_OF_KIND = {"user": "conversation", "assistant": "conversation", "turn": "conversation",
                     "important": "conversation", "session_summary": "observation"}


def memory_type_of(kind: str) -> str:
    """The seed's memory type of a memory-index kind (`SEED_TYPE_OF_KIND`); any other kind is its own."""
    return SEED_TYPE_OF_KIND.get(kind, kind)


def counted_as(seed_type: str) -> list[str]:
    """The kinds other than `seed_type` itself that count as it, e.g. conversation: user, assistant, ..."""
    return [kind for kind, t in SEED_TYPE_OF_KIND.items() if t == seed_type]


class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class SetQueryParams(_Params):
    timestamp: int | None = Field(None, ge=0, description="Unix seconds to use instead of the current time")


class ExtractTimeParams(_Params):
    language: Literal["en"] = Field("en", description="Language of the time expressions (English only)")


class RetrieveMemoryParams(_Params):
    recall_key: str = Field("query", description="Context key holding the text to search with")
    top_k: int = Field(3, ge=1, le=1000, description="Most memories to retrieve")
    threshold_score: float | None = Field(None, ge=0, le=1, allow_inf_nan=False,
                                          description="Drop memories whose relevance (the retrieval score "
                                                      "without its recency part, in [0, 1]) is below this")
    # Product additions: how hybrid search gathers its candidates.
    pool_size: int = Field(50, ge=1, le=2000, description="Candidates taken from each leg before fusion")
    similarity_threshold: float = Field(0.0, ge=0, le=1, allow_inf_nan=False,
                                        description="Minimum cosine of the query to a candidate")
    kinds: list[str] | None = Field(None, description="Only these memory types (all when unset)")


class SemanticRankParams(_Params):
    enable_ranker: bool = Field(True, description="Ask the LLM to score relevance when there are too many")
    output_memory_max_count: int = Field(10, ge=1, le=1000, description="Most memories to keep")


class FuseRerankParams(_Params):
    fuse_score_threshold: float = Field(0.1, ge=0, allow_inf_nan=False,
                                        description="Drop memories whose relevance (the model's score, "
                                                    "else the retrieval score without recency) is below "
                                                    "this")
    fuse_ratio_dict: dict[str, float] = Field(
        default_factory=lambda: dict(DEFAULT_FUSE_RATIOS),
        description="Score multiplier per memory type. User and assistant messages, dataset turns and "
                    "important copies count as conversation, session summaries as observation; a kind "
                    "named here itself (e.g. user) takes its own ratio instead")
    fuse_time_ratio: float = Field(2.0, ge=0, allow_inf_nan=False,
                                   description="Multiplier when the memory's event time matches the query's")
    output_memory_max_count: int = Field(5, ge=1, le=1000, description="Most memories to output")
    unknown_type_ratio: float = Field(0.1, ge=0, allow_inf_nan=False,
                                      description="Multiplier for a memory type not in fuse_ratio_dict "
                                                  "(bank entries and summaries, by default)")

    @field_validator("fuse_ratio_dict")
    @classmethod
    def _ratios(cls, v: dict[str, float]) -> dict[str, float]:
        bad = [k for k, r in v.items() if not (r >= 0)]
        if bad:
            raise ValueError(f"ratios must be numbers >= 0; check {', '.join(bad)}")
        return v

    @staticmethod
    def counted_as(seed_type: str) -> list[str]:
        """The kinds other than `seed_type` that take its ratio (`counted_as`), for a front end to say so."""
        return counted_as(seed_type)

    def ratio_for(self, kind: str) -> tuple[str | None, float]:
        """(the fuse_ratio_dict key a memory of `kind` takes its ratio from, the ratio): the kind itself when
        named there, else its seed type (`memory_type_of`), else (None, unknown_type_ratio)."""
        for key in (kind, memory_type_of(kind)):
            if key in self.fuse_ratio_dict:
                return key, self.fuse_ratio_dict[key]
        return None, self.unknown_type_ratio


class PrintMemoryParams(_Params):
    pass


class ReadMessageParams(_Params):
    contextual_msg_max_count: int = Field(10, ge=0, le=10_000, description="Most messages to return")
    target_name: str | None = Field(None, description="Keep conversations with a message from this name")


class ScopeParams(_Params):
    set_query_op: SetQueryParams = SetQueryParams()
    extract_time_op: ExtractTimeParams = ExtractTimeParams()
    retrieve_memory_op: RetrieveMemoryParams = RetrieveMemoryParams()
    semantic_rank_op: SemanticRankParams = SemanticRankParams()
    fuse_rerank_op: FuseRerankParams = FuseRerankParams()
    print_memory_op: PrintMemoryParams = PrintMemoryParams()
    read_message_op: ReadMessageParams = ReadMessageParams()

    @classmethod
    def from_flat(cls, values: dict[str, Any]) -> ScopeParams:
        """Build from seed names, e.g. {"op.fuse_rerank_op.params.fuse_time_ratio": 3}."""
        nested: dict[str, dict[str, Any]] = {}
        for key, value in values.items():
            parts = key.split(".")
            well_formed = len(parts) == 4 and parts[0] == "op" and parts[2] == "params"
            if not well_formed or parts[1] not in cls.model_fields:
                raise InvalidInput(f"unknown parameter {key!r}: names look like op.<op_name>.params.<name> "
                                   f"with op_name one of {', '.join(cls.model_fields)}")
            nested.setdefault(parts[1], {})[parts[3]] = value
        try:
            return cls.model_validate(nested)
        except ValidationError as e:
            raise InvalidInput(explain_validation(e)) from e

    def flat(self) -> dict[str, Any]:
        """Every parameter under its seed name."""
        out: dict[str, Any] = {}
        for op_name in type(self).model_fields:
            for name, value in getattr(self, op_name).model_dump().items():
                out[f"op.{op_name}.params.{name}"] = value
        return out
