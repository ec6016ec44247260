"""The shared vocabulary of the memory index and retrieval (pydantic models).

Feature-specific models live beside their feature (e.g. `core.conversation.turn` for ui_remember's params).
"""

from __future__ import annotations

import calendar
import json
import math
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator

from core.ids import Id, labelled_id, pg_json


def _some_text(value: str) -> str:
    if not value.strip():
        raise ValueError("must contain some text")
    return value


def _distinct_tags(tags: list[str]) -> list[str]:
    for tag in tags:
        if not (1 <= len(tag) <= 64) or not tag.isprintable():
            raise ValueError("each tag must be 1–64 printable characters")
    return list(dict.fromkeys(tags))


# What stands where deleted text was (`core.admin.redaction`), in copies and in a message a fact was forgotten from.
DELETED = "[deleted]"
METADATA_MAX_CHARS = 20_000  # of a memory's metadata written as JSON: every result that shows it carries it


def _bounded_metadata(metadata: dict[str, Any]) -> dict[str, Any]:
    said = json.dumps(metadata, default=str, ensure_ascii=False)
    if len(said) > METADATA_MAX_CHARS:
        raise ValueError(f"must be at most {METADATA_MAX_CHARS:,} characters as JSON (this is {len(said):,}); "
                         "keep large data elsewhere and put its reference here")
    try:  # a lone surrogate ("\ud800") passes Python but not Postgres, which refused the row unnamed
        said.encode("utf-8")
    except UnicodeEncodeError as e:
        raise ValueError(f"holds a lone surrogate ({said[e.start:e.end]!a}), which is no character: send "
                         "text as UTF-8") from None
    return metadata


# Text a person or an assistant wrote: refused when it is only white space.
SomeText = Annotated[str, AfterValidator(_some_text), Field(json_schema_extra={"pattern": r"\S"})]
# Tags of a turn or a memory: at most 32 of 1–64 printable characters, repeats dropped (order kept).
# What the published schemas say of one tag (no control character; "printable" says the rest).
TAG_SCHEMA = {"type": "string", "minLength": 1, "maxLength": 64, "pattern": r"^[^\x00-\x1f\x7f-\x9f]*$",
              "description": "printable characters"}
Tags = Annotated[list[str], Field(max_length=32, json_schema_extra={"items": TAG_SCHEMA}),
                 AfterValidator(_distinct_tags)]
# What a caller attaches to a memory it adds or imports (the stored metadata adds the product's own keys).
Metadata = Annotated[dict[str, Any], AfterValidator(_bounded_metadata)]


# What a row of the memory index is. Thoughts are indexed as "user" / "assistant"; the others are session
# summaries, important and shared ("federation") items, MemoryScope's memory types (conversation,
# observation, obs_customized, insight), memory-bank entries and summaries, and the conversation turns of
# an evaluation dataset ("turn").
MemoryKind = Literal["user", "assistant", "session_summary", "important", "federation", "conversation",
                     "observation", "obs_customized", "insight", "bank_entry", "bank_summary", "turn"]


class EventTime(BaseModel):
    """When the remembered event happened, part by part; -1 means unknown (matches anything)."""

    model_config = ConfigDict(frozen=True)

    year: int = -1
    month: int = -1
    day: int = -1
    hour: int = -1
    weekday: int = -1  # Monday = 0

    def as_tuple(self) -> tuple[int, int, int, int, int]:
        return (self.year, self.month, self.day, self.hour, self.weekday)

    def beside(self, said: datetime) -> str | None:
        """The event's date as far as it is known ("2030-01-01", "2030-01", "2030", "March"), when it tells
        more than the date the memory was said (`said`); None when it does not: an answer that dates a
        memory by when it was stored would give "Visited grandma" (event 2030) as 2026's."""
        said = said.astimezone(UTC)
        if self.year < 0:
            return calendar.month_name[self.month] if 1 <= self.month <= 12 and self.month != said.month else None
        parts = [f"{self.year:04d}"]
        if 1 <= self.month <= 12:
            parts.append(f"{self.month:02d}")
            if 1 <= self.day <= 31:
                parts.append(f"{self.day:02d}")
        shown = "-".join(parts)
        return None if f"{said:%Y-%m-%d}".startswith(shown) else shown


class MemoryContext(BaseModel):
    """The messages around a memory in its conversation, nearest first (at most three each side).

    Searched with less weight than the memory's own words and never shown as its content: a reply
    like "Yes, last weekend!" is found by the question it answers (see `core.index.text`).
    """

    model_config = ConfigDict(extra="forbid")

    before: list[str] = Field([], max_length=3)
    after: list[str] = Field([], max_length=3)

    @field_validator("before", "after")
    @classmethod
    def _storable(cls, v: list[str]) -> list[str]:
        return [pg_json(t[:4000]) for t in v]  # a neighbour's gist is in its first lines


class MemoryRecord(BaseModel):
    """A memory to write into the index."""

    model_config = ConfigDict(extra="forbid")

    instance: Id
    id: Id
    kind: MemoryKind
    content: str = Field(min_length=1)
    created_at: datetime
    chain_id: str | None = None
    event_time: EventTime = EventTime()
    tags: list[str] = []
    metadata: dict[str, Any] = {}
    context: MemoryContext = MemoryContext()

    @field_validator("created_at")
    @classmethod
    def _aware(cls, v: datetime) -> datetime:
        return v if v.tzinfo else v.replace(tzinfo=UTC)

    @field_validator("content", "chain_id", "tags", "metadata")
    @classmethod
    def _storable(cls, v):
        return pg_json(v)


class MemoryRow(BaseModel):
    """A memory as read back from the index."""

    instance: str
    id: str
    kind: str
    content: str
    created_at: datetime
    chain_id: str | None = None
    event_time: EventTime = EventTime()
    tags: list[str] = []
    metadata: dict[str, Any] = {}


class ScoreParts(BaseModel):
    """The parts of a candidate's score and how they were combined (`core.retrieval.fusion.fuse`).

    Each part lies in [0, 1]. `semantic` is the cosine to the query expanded by its best text matches (the
    part fusion weighs); `similarity` the cosine to the query alone (what `similarity_threshold` reads);
    `relevance` semantic and `coverage` weighed as the profile weighs semantic and text, rescaled, without
    recency or the chain's part (what relevance thresholds read, so a fresh memory does not pass them on
    its age alone, nor a weak match for being the pool's best). `combined` and `relevance`
    reach 1 + SPEAKER_WEIGHT when the query names the memory's speaker.
    """

    semantic: float
    text: float
    recency: float
    combined: float
    similarity: float
    relevance: float
    # The text score against an ideal match's (every query word once), what relevance weighs; `text` is
    # relative to the pool's best match, what ranking weighs.
    coverage: float = 0.0
    speaker: float = 0.0  # 1 when the query names the memory's speaker (`core.retrieval.speakers`)
    # What the coverage gained for stating the attribute the query names, of whom it asks it, without the
    # query's word for it (`core.retrieval.attributes.AttributeAsk`); 0 for any other memory.
    held: float = 0.0
    # Whether it states the attribute the query names, of whom it asks it, in any of its ways. The floor reads
    # it: beside a best match stating it, the others need the floor itself (`core.retrieval.fusion.others_bar`).
    stated: bool = False
    chain: float = 0.0  # the best own score among the candidates of the memory's chain, mixed into combined
    vector_rank: int | None = None  # 1-based rank in the vector leg, None if not found by it
    text_rank: int | None = None


class ScoredMemory(BaseModel):
    memory: MemoryRow
    score: ScoreParts

    @property
    def age_seconds(self) -> float:
        return max(0.0, (datetime.now(UTC) - self.memory.created_at).total_seconds())


FusionMethod = Literal["linear", "rrf"]
ProfileName = labelled_id("profile name")
# What a user message is (`core.formation.kinds`); stored as `message_kind` in the metadata of its row and
# of the observations made from it. "acknowledgement" covers small talk too.
MessageKind = Literal["statement", "question", "acknowledgement", "correction", "instruction"]
MESSAGE_KINDS: tuple[MessageKind, ...] = ("statement", "question", "acknowledgement", "correction", "instruction")
RETRIEVED_KINDS: tuple[MessageKind, ...] = ("statement", "correction", "instruction")


class FusionProfile(BaseModel):
    """A named way of fusing the parts of a candidate's score (the presets below, or saved by a user).

    linear: combined = w_sem * semantic + w_text * text + w_rec * exp(-age_seconds / tau_s)
    rrf:    combined = sum over legs of w_leg / (rrf_k + rank_leg)  (recency is a leg ranked by age)
    """

    model_config = ConfigDict(extra="forbid")

    name: ProfileName = "balanced-default"
    method: FusionMethod = "linear"
    w_sem: float = Field(0.60, ge=0, le=1, allow_inf_nan=False)
    w_text: float = Field(0.25, ge=0, le=1, allow_inf_nan=False)
    w_rec: float = Field(0.15, ge=0, le=1, allow_inf_nan=False)
    tau_s: float = Field(86400.0, gt=0, le=10 * 365 * 86400, allow_inf_nan=False)
    rrf_k: int = Field(60, ge=1, le=10_000)
    retrieve_kinds: list[MessageKind] | None = Field(
        list(RETRIEVED_KINDS), description="the kinds of user message retrieved as memories (statements and "
                                           "corrections through their observations); questions and "
                                           "acknowledgements stay in the transcript by default. None: every "
                                           "memory as stored, whatever formation marked on it")
    include_superseded: bool = Field(False, description="retrieve memories a correction superseded too "
                                                        "(by default only current facts are)")

    @model_validator(mode="after")
    def _weights_sum_to_one(self) -> FusionProfile:
        total = self.w_sem + self.w_text + self.w_rec
        if not math.isclose(total, 1.0, abs_tol=1e-6):
            raise ValueError(f"weights w_sem + w_text + w_rec must sum to 1; they sum to {total:.4g}")
        return self

    @property
    def half_life_s(self) -> float:
        return self.tau_s * math.log(2)


PRESET_PROFILES: dict[str, FusionProfile] = {
    p.name: p
    for p in (
        FusionProfile(name="balanced-default", w_sem=0.60, w_text=0.25, w_rec=0.15),
        FusionProfile(name="fast-chat", w_sem=0.45, w_text=0.40, w_rec=0.15),
        FusionProfile(name="deep-research", w_sem=0.75, w_text=0.10, w_rec=0.15),
        FusionProfile(name="recall-recent", w_sem=0.45, w_text=0.15, w_rec=0.40),
    )
}
DEFAULT_PROFILE = "balanced-default"
# Every memory as stored, whatever formation marked on it: what the Memory explorer searches.
AS_STORED = PRESET_PROFILES[DEFAULT_PROFILE].model_copy(update={"retrieve_kinds": None, "include_superseded": True})
