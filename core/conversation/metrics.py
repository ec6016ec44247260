"""A turn's metrics: what one ui_remember turn used, what it cost and how long each stage took.

`TurnMetrics` is the one vocabulary for them: the turn writes it as the extra fields of its metrics
thought (a Redis hash, beside the thought's own fields), and analytics, the Chat page, the Feedback
page's transcript and exports read it back. It has exactly two conversions, both here: `to_fields` (the
hash fields) and `from_fields` (back).

The hash layout is flat, one field per attribute, with the encodings of the first version: text as is,
everything else as JSON, and "" for a turn without a token count. So metrics stored by earlier versions
(the demo data of an existing install) still read, and analytics can fetch a few small fields of
10,000 turns with one HMGET each instead of whole hashes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, Field, ValidationError

from core.llm import Message
from core.models import FusionProfile


class Origin(BaseModel):
    """Which front end a turn came through, and with which API key: recorded with the turn so the Feedback
    page can tell the dashboard's traffic from an assistant's. "python": a program of its own, calling
    `core.usecases` with no origin (a turn with no source recorded was stored before sources were)."""

    source: Literal["dashboard", "cli", "mcp", "http", "demo", "python"]
    key: str | None = None


class ContextItem(BaseModel):
    """A memory that went into the prompt, with the score parts that ranked it."""

    id: str
    kind: str
    chain_id: str | None
    content: str
    created_at: datetime
    age_s: float
    semantic: float
    text: float
    recency: float
    combined: float
    tokens: int
    # The score without recency, which the relevance floor reads in a hybrid search (None: older turns).
    relevance: float | None = None
    # The text score against an ideal match's, which relevance weighs (None: turns stored before).
    coverage: float | None = None
    speaker: float = 0.0  # 1 when the query named the memory's speaker (0 in turns stored before)
    chain: float = 0.0  # the best score of its chain, mixed into combined (0 in turns stored before)


class FusionUsed(BaseModel):
    """The fusion a turn ranked its memories with, as it was then: the profile's definition and the speaker
    and chain parts. A profile saved over later changes what its name means, not what this turn used, so
    the turn's "why" still adds up."""

    name: str
    method: str
    w_sem: float
    w_text: float
    w_rec: float
    tau_s: float
    rrf_k: int
    speaker_weight: float = Field(description="added to own for a memory whose speaker the query names")
    chain_weight: float = Field(description="combined = (own + chain_weight·best own of its chain) / "
                                            "(1 + chain_weight)")
    search_type: str = Field("hybrid", description="vector or text: one leg alone, without the speaker "
                                                   "and chain parts")

    def profile(self) -> FusionProfile:
        """The recorded definition as a profile, for the functions that read one (`relevance_weights`); not
        validated again: it is what the turn used, whatever today's rules on names say."""
        return FusionProfile.model_construct(**self.model_dump(
            include={"name", "method", "w_sem", "w_text", "w_rec", "tau_s", "rrf_k"}))


# Whether a turn's answer drew on memory: some reached the relevance floor, none did, or retrieval failed.
MemoryOutcome = Literal["found", "none_matched", "unavailable"]


class StageLatency(BaseModel):
    """Milliseconds per stage of a turn. None: a stage the version that stored the turn did not time
    (index_ms before indexing was timed on its own); a turn being measured starts every stage at 0."""

    embed_ms: float | None = 0.0
    search_ms: float | None = 0.0
    synthesis_ms: float | None = 0.0
    store_ms: float | None = 0.0
    index_ms: float | None = 0.0
    total_ms: float | None = 0.0


class TurnMetrics(BaseModel):
    """The extra fields of a turn's metrics thought. A field an older version did not write reads as
    None (or empty), so readers can tell "not recorded" from a real zero."""

    model: str | None = Field(None, description="the model that answered, or 'extractive'")
    model_selected: str | None = Field(None, description="the model the heuristic chose (routing)")
    synthesis: str | None = Field(None, description="'llm' or 'extractive'")
    profile: str | None = Field(None, description="the fusion profile retrieval used")
    # Origin: None in turns stored before it was recorded (analytics read them as "unknown").
    source: str | None = Field(None, description="the front end the turn came through (Origin.source)")
    key: str | None = Field(None, description="the name of the API key it came with, if any")
    tags: list[str] = Field(default_factory=list)
    tokens: int | None = Field(None, description="the LLM's total token usage; None when extractive")
    prompt_tokens: int | None = Field(None, description="of those, the prompt's (None: extractive, not "
                                                        "reported by the LLM, or recorded before it was)")
    completion_tokens: int | None = Field(None, description="of those, the answer's")
    context_items: int | None = Field(None, description="how many memories went into the prompt")
    memory: MemoryOutcome | None = Field(None, description="whether memories were found for the answer "
                                                           "(None: recorded before it was)")
    answer_id: str | None = Field(None, description="the assistant thought these metrics are about")
    latency: StageLatency | None = None
    fusion: FusionUsed | None = Field(None, description="the fusion retrieval ranked with, as it was then "
                                                        "(None: recorded before it was; the profile's name "
                                                        "is all there is)")
    # What was retrieved and the exact prompt, so the dashboard can show "why" for every answer.
    context: list[ContextItem] = Field(default_factory=list)
    prompt: list[Message] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)

    # The fields the turn's answer thought carries too (its tags are the thought's own `tags` field, the
    # same hash field), so it describes the turn when the metrics thought is missing.
    ANSWER_FIELDS: ClassVar[tuple[str, ...]] = ("model", "model_selected", "synthesis", "profile", "source",
                                                "key")
    # Kilobytes a turn, or what only one turn's "why" reads: left out when many turns are read at once
    # (see `summary_fields`).
    DETAIL_FIELDS: ClassVar[tuple[str, ...]] = ("context", "prompt", "notes", "fusion")
    # The answer the metrics are about: a reader of many turns starts from their answers, so it needs it
    # only to check a metrics thought found another way (by its time, in older data).
    LINK_FIELDS: ClassVar[tuple[str, ...]] = ("answer_id",)
    # Stored as they are; every other field is stored as JSON.
    _TEXT_FIELDS: ClassVar[frozenset[str]] = frozenset({"model", "model_selected", "synthesis", "profile",
                                                        "source", "key", "answer_id", "memory"})

    @classmethod
    def summary_fields(cls, *, linked: bool = False) -> tuple[str, ...]:
        """What analytics fetch for each of many turns: every field but the bulky ones and, unless
        `linked`, the answer's id (10,000 ids cost a twentieth of the whole read)."""
        left_out = cls.DETAIL_FIELDS if linked else (*cls.DETAIL_FIELDS, *cls.LINK_FIELDS)
        return tuple(name for name in cls.model_fields if name not in left_out)

    def to_fields(self, names: Iterable[str] | None = None) -> dict[str, str]:
        """The hash fields (all, or those named), in today's stored encodings. A field that is None is
        left out, as older versions left it out; tokens is the exception: "" says "no token count"."""
        wanted = set(type(self).model_fields if names is None else names)
        out: dict[str, str] = {}
        for name, value in self.model_dump(mode="json", include=wanted).items():
            if value is None:
                if name == "tokens":
                    out[name] = ""
            elif name in self._TEXT_FIELDS:
                out[name] = value
            else:
                out[name] = json.dumps(value)
        return out

    @classmethod
    def from_fields(cls, fields: Mapping[str, Any]) -> TurnMetrics:
        """Read the hash fields back (HGETALL's mapping; fields of no metrics are ignored). Values that
        `Thought.from_hash` already decoded from JSON are taken as they are. An absent, empty or
        malformed field reads as not recorded, as the readers before this model did."""
        names = [name for name in cls.model_fields if name in fields]
        columns = cls.decode_fields(names, [[fields[name] for name in names]])
        values = {name: column[0] for name, column in columns.items() if column[0] is not None}
        if isinstance(latency := values.get("latency"), Mapping):  # a stage it does not name: not timed
            values["latency"] = {stage: latency.get(stage) for stage in StageLatency.model_fields}
        if "fusion" in values:  # one the model cannot read is not recorded, not a turn that cannot be read
            try:
                values["fusion"] = FusionUsed.model_validate(values["fusion"])
            except ValidationError:
                del values["fusion"]
        return cls.model_validate(values)

    @classmethod
    def decode_fields(cls, names: Sequence[str], rows: Sequence[Sequence[Any]]) -> dict[str, list[Any]]:
        """`from_fields` for many turns at once, column by column, without a model per turn: HMGET's
        values of `names` for each turn, decoded, by field name (None: not recorded; a name that is no
        field of the model is left out). `latency` stays a dict of the stages it names. The frame of
        10,000 answers reads this way: a model per turn would cost as much again as the whole read."""
        out: dict[str, list[Any]] = {}
        for name, values in zip(names, zip(*rows, strict=True) if rows else [()] * len(names), strict=True):
            if name not in cls.model_fields:
                continue
            if name not in cls._TEXT_FIELDS:
                out[name] = _json_values(values)
            elif set(map(type, values)) <= {str, type(None)}:  # as Redis gives them
                out[name] = list(values)
            else:  # Thought.from_hash reads JSON-looking text as JSON: a profile named "7" came back as 7
                out[name] = [v if v is None or isinstance(v, str) else json.dumps(v) for v in values]
        return out

    def tokens_line(self) -> str | None:
        """"1,234 tokens: 1,100 prompt + 134 answer" (without the split when the LLM gave only a total),
        for a person reading what a turn cost; None when no LLM answered."""
        if self.tokens is None:
            return None
        split = (f": {self.prompt_tokens:,} prompt + {self.completion_tokens:,} answer"
                 if self.prompt_tokens is not None and self.completion_tokens is not None else "")
        return f"{self.tokens:,} tokens{split}"

    def thought_text(self) -> str:
        """The metrics thought's one line of text, for whoever reads the chain as plain thoughts."""
        lat = self.latency or StageLatency()
        return (f"model={self.model or 'extractive'} tokens={self.tokens} context={self.context_items} "
                f"embed={lat.embed_ms or 0:.1f}ms search={lat.search_ms or 0:.1f}ms "
                f"synthesis={lat.synthesis_ms or 0:.1f}ms")


def _json_values(values: Sequence[Any]) -> list[Any]:
    """Decode JSON texts; None, "" (no tokens) and malformed texts read as None, and values already
    decoded pass through. One `json.loads` over the joined texts is several times faster than one call
    per value; if the texts do not join into exactly one value each, each is read alone."""
    try:  # the common case: every value a JSON text
        decoded = json.loads("[" + ",".join(values) + "]")
        if len(decoded) == len(values):
            return decoded
    except (TypeError, ValueError):  # a None or a decoded value among them, or a "" (no tokens)
        pass
    out = [None if v is None or isinstance(v, str) else v for v in values]
    texts = [i for i, v in enumerate(values) if isinstance(v, str) and v]
    try:
        decoded = json.loads("[" + ",".join(values[i] for i in texts) + "]")
    except ValueError:
        decoded = []
    if len(decoded) != len(texts):
        decoded = [_json_or_none(values[i]) for i in texts]
    for i, value in zip(texts, decoded, strict=True):
        out[i] = value
    return out


def _json_or_none(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None
