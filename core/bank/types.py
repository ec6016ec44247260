"""The memory bank's vocabulary: `MemoryEntry`, `MemorySummary`, `MemoryQuery`, and what the
bank reports about itself (compression events, stats, a snapshot for the dashboard)."""

from __future__ import annotations

import re
import uuid
from datetime import UTC, date, datetime, time
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from core.ids import ID_PATTERN, pg_text
from core.models import TAG_SCHEMA

# How a summary appears among the results of `get_relevant_memories`, which returns MemoryEntries only:
# as an entry of this skill, its title the entry's summary and its content the entry's result.
SUMMARY_SKILL = "MemorySummary"
# How a bank's stats count the steps that name no skill (`skill_name` is optional, as in the seed).
NO_SKILL = "(no skill named)"
ENTRY_ID_MAX = 100  # its index row id adds a prefix (`core.bank.index_ids`) and must stay within 128
# An id's rule (`ID_PATTERN`) at this length, as the published schemas say it.
ENTRY_ID_PATTERN = ID_PATTERN.pattern.replace("{0,127}", f"{{0,{ENTRY_ID_MAX - 1}}}")
AUTO_SUMMARY_MAX = 240
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")  # a date without a time, as ISO 8601 writes it


def _now() -> datetime:
    return datetime.now(UTC)


def _new_id() -> str:
    return uuid.uuid4().hex


def _check_id(v: str) -> str:
    if not re.fullmatch(ENTRY_ID_PATTERN, v):
        raise ValueError(f"must be 1–{ENTRY_ID_MAX} characters: letters, digits, '.', '_' or '-', "
                         "starting with a letter or digit")
    return v


def _check_tags(v: list[str]) -> list[str]:
    for tag in v:
        if not (1 <= len(tag) <= 64) or not tag.isprintable():
            raise ValueError("each tag must be 1–64 printable characters")
    return list(dict.fromkeys(t.strip() for t in v if t.strip()))


def _aware(v: datetime) -> datetime:
    return v if v.tzinfo else v.replace(tzinfo=UTC)


def _clip(text: str, limit: int) -> str:
    """Cut at a word boundary and mark the cut, so a summary never ends mid-word silently."""
    text = re.sub(r"\s+", " ", text).strip()
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rsplit(" ", 1)[0]
    return cut + "…"


def auto_summary(thinking: str, command: str, result: str) -> str:
    """One line from an entry's parts: what was done and what came of it."""
    parts = []
    if command.strip():
        parts.append(f"ran `{_clip(command, 80)}`")
    if result.strip():
        parts.append(f"→ {_clip(result, 100)}")
    if thinking.strip() and not parts:
        parts.append(_clip(thinking, 160))
    elif thinking.strip():
        parts.insert(0, _clip(thinking.split(". ")[0], 80).rstrip(" .…:") + ":")
    return _clip(" ".join(parts), AUTO_SUMMARY_MAX) or "(empty step)"


class MemoryEntry(BaseModel):
    """One step of a task: a skill's thinking, the command it ran and the result."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(default_factory=_new_id, json_schema_extra={
        "pattern": ENTRY_ID_PATTERN, "minLength": 1, "maxLength": ENTRY_ID_MAX})
    timestamp: datetime = Field(default_factory=_now)
    skill_name: str = Field("", max_length=128, description="the skill that made the step; optional: a step "
                            "that names none is shown as \"Step 3: …\"")
    thinking: str = Field("", max_length=100_000)
    command: str = Field("", max_length=100_000)
    result: str = Field("", max_length=100_000)
    summary: str = Field("", max_length=10_000, description="generated from thinking, command and result "
                         "when left empty")
    importance: float = Field(0.5, ge=0.0, le=1.0, allow_inf_nan=False)
    tags: list[str] = Field([], max_length=32, json_schema_extra={"items": TAG_SCHEMA})
    step_number: int = Field(0, ge=0, le=10_000_000, description="0 = the bank numbers the step")

    @field_validator("id")
    @classmethod
    def _valid_id(cls, v: str) -> str:
        return _check_id(v)

    @field_validator("tags")
    @classmethod
    def _valid_tags(cls, v: list[str]) -> list[str]:
        return _check_tags(v)

    @field_validator("skill_name", "thinking", "command", "result", "summary")
    @classmethod
    def _storable(cls, v: str) -> str:  # stored in Postgres, which refuses NUL in text
        return pg_text(v)

    @field_validator("skill_name")
    @classmethod
    def _name(cls, v: str) -> str:  # a blank name is none: shown and counted as a step without one
        return v.strip()

    @field_validator("timestamp")
    @classmethod
    def _valid_timestamp(cls, v: datetime) -> datetime:
        return _aware(v)

    @model_validator(mode="after")
    def _summarise(self) -> MemoryEntry:
        if not (self.thinking.strip() or self.command.strip() or self.result.strip() or self.summary.strip()):
            raise ValueError("an entry needs at least one of thinking, command, result or summary")
        if not self.summary.strip():
            self.summary = auto_summary(self.thinking, self.command, self.result)
        return self

    def step_label(self) -> str:
        """"Step 3 (CommandSkill)", or "Step 3" for a step that names no skill."""
        return f"Step {self.step_number}" + (f" ({self.skill_name})" if self.skill_name else "")

    def search_text(self) -> str:
        """What the memory index stores and searches for this entry: "CommandSkill step 3: …", or
        "Step 3: …" for a step that names no skill."""
        head = f"{self.skill_name} step {self.step_number}" if self.skill_name else f"Step {self.step_number}"
        lines = [f"{head}: {self.summary}"]
        for label, value in (("Thinking", self.thinking), ("Command", self.command), ("Result", self.result)):
            if value.strip():
                lines.append(f"{label}: {value}")
        return "\n".join(lines)


class MemorySummary(BaseModel):
    """A compressed summary of several entries, with how and over which period it was made."""

    id: str = Field(default_factory=_new_id)
    timestamp: datetime = Field(default_factory=_now)
    title: str
    content: str
    source_entries: list[str] = []
    tags: list[str] = []
    importance: float = 0.5  # the highest importance among the source entries
    period_start: datetime | None = None
    period_end: datetime | None = None
    method: Literal["llm", "rule"] = "rule"

    def search_text(self) -> str:
        return f"{self.title}\n{self.content}"


class MemoryQuery(BaseModel):
    """Which memories to retrieve. Keywords match any, case-insensitively; tags match any."""

    model_config = ConfigDict(extra="forbid")

    keywords: list[str] = Field([], max_length=64)
    min_importance: float = Field(0.0, ge=0.0, le=1.0, allow_inf_nan=False)
    max_results: int = Field(10, ge=1, le=1000)
    tags: list[str] = Field([], max_length=32, json_schema_extra={"items": TAG_SCHEMA})
    date_from: datetime | None = Field(None, description="ISO 8601; without a time zone, UTC; a date alone: "
                                       "from the start of that day")
    date_to: datetime | None = Field(None, description="ISO 8601; without a time zone, UTC; a date alone: "
                                     "to the end of that day")

    @field_validator("keywords")
    @classmethod
    def _keywords(cls, v: list[str]) -> list[str]:
        if any(len(k) > 200 for k in v):
            raise ValueError("each keyword must be at most 200 characters")
        # Stored text holds U+FFFD where a NUL was (`pg_text`): a keyword with one matches it so, and
        # Postgres, which refuses NUL in a text value, never sees one.
        return [pg_text(k.strip()) for k in v if k.strip()]

    @field_validator("tags")
    @classmethod
    def _valid_tags(cls, v: list[str]) -> list[str]:
        return _check_tags(v)

    @field_validator("date_from", "date_to", mode="before")
    @classmethod
    def _whole_days(cls, v: object, info: ValidationInfo) -> object:
        """A date without a time is that whole day (UTC): date_to "2024-05-03" includes the steps of May 3
        (the seed's "latest date to include"), which its midnight left out."""
        day = v if isinstance(v, date) and not isinstance(v, datetime) else None
        if isinstance(v, str) and _DAY.fullmatch(v.strip()):
            day = date.fromisoformat(v.strip())
        if day is None:
            return v
        return datetime.combine(day, time.max if info.field_name == "date_to" else time.min, UTC)

    @field_validator("date_from", "date_to")
    @classmethod
    def _dates(cls, v: datetime | None) -> datetime | None:
        return None if v is None else _aware(v)

    @model_validator(mode="after")
    def _range(self) -> MemoryQuery:
        if self.date_from and self.date_to and self.date_from > self.date_to:
            raise ValueError("date_from must not be after date_to")
        return self


class CompressionEvent(BaseModel):
    """One compression: which entries went into which summary, how, and what it left live."""

    id: int
    at: datetime
    summary_id: str | None  # None once the summary has been deleted
    entries_compressed: int
    live_before: int
    live_after: int
    method: Literal["llm", "rule"]
    model: str | None = None
    tokens: int | None = None
    note: str = ""


class BankEntryState(BaseModel):
    entry: MemoryEntry
    compressed_into: str | None = None  # the summary that now stands for this entry


class BankStats(BaseModel):
    instance: str
    bank: str
    max_entries: int
    compression_threshold: int
    live_entries: int
    compressed_entries: int
    total_entries: int
    summaries: int
    compressions: int
    average_importance: float | None
    first_entry_at: datetime | None
    last_entry_at: datetime | None
    skills: dict[str, int] = Field(description=f"entries per skill name, most first; those that name none "
                                       f"under {NO_SKILL!r}")
    pending_index: int  # rows stored but not yet in the memory index (indexed by the next write)


class BankInfo(BaseModel):
    instance: str
    name: str
    max_entries: int
    compression_threshold: int
    entries: int
    summaries: int
    created_at: datetime
    last_at: datetime | None


class BankSnapshot(BaseModel):
    """Everything the dashboard shows about one bank, read in one call."""

    stats: BankStats
    entries: list[BankEntryState]
    summaries: list[MemorySummary]
    events: list[CompressionEvent]
