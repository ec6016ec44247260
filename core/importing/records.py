"""What every format's reader yields: conversations, memories and past tasks in one vocabulary, or an
invalid record with where it is and what is wrong.

A reader is a generator over a file opened in binary; it reads one line or one JSON item at a time and
never the whole file, so a 1 GB export imports in bounded memory. Each item is checked as it is read
(pydantic models below), so the validation pass and the write pass see exactly the same records.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any, ClassVar, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from core.errors import explain_validation
from core.ids import ID_PATTERN, UserId, pg_text, validate_id
from core.models import Metadata, SomeText, Tags
from core.past_tasks.store import first_words

# A clock a few minutes ahead of ours is not "the future"; a year ahead is a broken export.
FUTURE_SLACK = timedelta(minutes=5)
Role = Literal["user", "assistant"]
DatedBy = Literal["messages", "conversation", "file"]


class InvalidRecord(BaseModel):
    """A record that cannot be imported: where it is ("line 4", "conversation 12") and what is wrong."""

    where: str
    problem: str

    def line(self) -> str:
        return f"{self.where}: {self.problem}"


class StorableTexts(BaseModel):
    """A record whose texts Postgres stores, and a text or jsonb value cannot hold NUL (U+0000): each NUL
    is replaced by U+FFFD as the record is read (`pg_text`), so the text the chain keeps and the one the
    index finds are the same, and the record says so, for the import's result to count."""

    TEXTS: ClassVar[tuple[str, ...]] = ()
    nul_replaced: bool = Field(False, description="its text held NUL characters, stored as U+FFFD")

    @model_validator(mode="before")
    @classmethod
    def _without_nul(cls, data: Any) -> Any:
        texts = {f: data[f] for f in cls.TEXTS if isinstance(data, dict) and isinstance(data.get(f), str)}
        if any("\x00" in text for text in texts.values()):
            return {**data, **{f: pg_text(text) for f, text in texts.items()}, "nul_replaced": True}
        return data


class ImportedMessage(StorableTexts):
    """One message of a conversation, with the time it was written."""

    model_config = ConfigDict(extra="forbid")
    TEXTS = ("content",)

    role: Role
    content: SomeText
    at: datetime
    source_id: str | None = None
    place: str = Field("", description="what knows the message without a source id: its place among the "
                                       "conversation's user and assistant messages (system-N for a kept "
                                       "system or tool message, attachment-N for the line standing for "
                                       "attachments sent alone, N its place among all)")
    attachments: list[str] = Field([], description="names of attachments, whose content is not imported (text "
                                                   "is kept)")


class ImportedConversation(BaseModel):
    """A conversation as the source kept it; becomes a chain of user and assistant thoughts."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["conversation"] = "conversation"
    format: str
    source_id: str = Field(description="the source's id, or a hash of the content when it has none")
    title: str = ""
    messages: list[ImportedMessage] = Field(min_length=1)
    model: str | None = Field(None, description="the model that answered, when the export names it")
    tags: Tags = []
    keep_ids: bool = Field(False, description="the source is the workbench's own export: its chain id is "
                                              "kept as it is")
    dated_by: DatedBy = Field("messages", description="where its messages' times come from: their own "
                              "(one without follows its predecessor), the conversation's (none has one), or "
                              "the file's (neither has one: the time the import gave the file)")
    attachment_only: int = Field(0, description="user messages that were attachments alone, kept as a line "
                                                "naming them (`chats.attachment_line`)")
    attachment_only_left_out: int = Field(0, description="such messages left out: their attachments have no "
                                                         "name")

    @field_validator("title")
    @classmethod
    def _title(cls, v: str) -> str:
        return pg_text(v)

    @model_validator(mode="after")
    def _own_id(self) -> ImportedConversation:
        if self.keep_ids:
            validate_id(self.source_id, "chain_id")
        return self

    @property
    def chain_id(self) -> str:
        """Derived from the source's id, so importing the file again finds the same chain."""
        return self.source_id if self.keep_ids else f"{self.format}-{digest(self.source_id)}"


# The kinds an imported memory may have: those MemoryScope's memories have (`core.models.MemoryKind`).
ImportedKind = Literal["observation", "insight", "obs_customized", "conversation"]
IMPORTED_KINDS: tuple[str, ...] = get_args(ImportedKind)


class ImportedMemory(StorableTexts):
    """A memory to index as it is (a fact, an insight, a line of conversation)."""

    model_config = ConfigDict(extra="forbid")
    TEXTS = ("content",)

    kind: Literal["memory"] = "memory"
    memory_kind: ImportedKind = "observation"
    id: str
    content: SomeText
    created_at: datetime | None = Field(None, description="None: stored with the time of the import")
    event_time: datetime | None = None
    tags: Tags = []
    metadata: Metadata = {}

    @field_validator("id")
    @classmethod
    def _id(cls, v: str) -> str:
        # An id the index cannot take (spaces, a mem0 hash with other characters) is kept in the
        # metadata by the reader and replaced by a digest of itself.
        return v if ID_PATTERN.fullmatch(v) else f"mem-{digest(v)}"


class ImportedPastTask(StorableTexts):
    """A produced text for a user (the internal memory tool's past tasks)."""

    model_config = ConfigDict(extra="forbid")
    TEXTS = ("task", "title", "production")

    kind: Literal["past_task"] = "past_task"
    user_id: UserId
    task: str
    title: str = Field(min_length=1, max_length=300)
    production: SomeText
    created_at: datetime | None = None
    source_key: str


Item = ImportedConversation | ImportedMemory | ImportedPastTask


def digest(text: str, n: int = 16) -> str:
    """A short stable hash: the ids of imported records (same source, same id, on every import)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:n]


def content_id(value: Any) -> str:
    """A record without an id of its own is known by a hash of its content."""
    return digest(json.dumps(value, sort_keys=True, ensure_ascii=False, default=str), 24)


def parse_time(value: Any, field: str, *, now: datetime | None = None) -> datetime:
    """A timestamp as exports write them: ISO 8601 text (zone or UTC), or Unix seconds (milliseconds
    when too large for seconds). ValueError names the field; a time in the future is refused."""
    if isinstance(value, bool) or value is None or value == "":
        raise ValueError(f"{field} is missing")
    if isinstance(value, int | float):
        seconds = value / 1000 if value > 1e11 else value
        try:
            at = datetime.fromtimestamp(seconds, UTC)
        except (OverflowError, OSError, ValueError) as e:
            raise ValueError(f"{field} {value!r} is not a Unix time") from e
    elif isinstance(value, str):
        try:
            at = datetime.fromisoformat(value.strip())
        except ValueError as e:
            raise ValueError(f"{field} {value[:40]!r} is not a time: ISO 8601 like 2024-05-01T12:30:00Z, "
                             "or Unix seconds like 1714566600") from e
        at = at if at.tzinfo else at.replace(tzinfo=UTC)
    else:
        raise TypeError(f"{field} must be an ISO 8601 text or Unix seconds, not {type(value).__name__}")
    if at > (now or datetime.now(UTC)) + FUTURE_SLACK:
        raise ValueError(f"{field} {at:%Y-%m-%d %H:%M} is in the future: check the export's clock or zone")
    return at.astimezone(UTC)


def each(values: Iterable[tuple[str, Any]], build: Callable[[Any], Item]) -> Iterator[Item | InvalidRecord]:
    """Each (where, value) a source yields, built into a record (or the `InvalidRecord` it already is)."""
    for where, value in values:
        yield value if isinstance(value, InvalidRecord) else checked(named(where, value), partial(build, value))


NAME_KEYS = ("title", "name", "id", "uuid", "conversation_id", "sample_id")  # what exports call a record


def named(where: str, value: Any) -> str:
    """`where` with the record's own name when it has one, so a report finds it in the user's export:
    "conversation 3 ('Lisbon trip')" rather than "conversation 3" alone."""
    if isinstance(value, dict):
        for key in NAME_KEYS:
            name = value.get(key)
            if isinstance(name, str | int) and not isinstance(name, bool) and str(name).strip():
                return f"{where} ({first_words(str(name), 60)!r})"
    return where


def checked(where: str, build) -> Item | InvalidRecord:
    """Run a record's builder; any problem it finds becomes an `InvalidRecord` naming where it is."""
    try:
        return build()
    except ValidationError as e:
        return InvalidRecord(where=where, problem=explain_validation(e).removeprefix("invalid input — "))
    except (ValueError, TypeError, KeyError, AttributeError) as e:
        return InvalidRecord(where=where, problem=f"{e} is missing" if isinstance(e, KeyError) else str(e))


def text_of(content: Any, attachments: list[str]) -> str:
    """The text of a message whose content is a string or a list of parts (OpenAI, Claude, ChatGPT):
    text parts are kept, anything else (images, files) is named in `attachments`."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        raise TypeError(f"content must be text or a list of parts, not {type(content).__name__}")
    texts = []
    for part in content:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict) and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif isinstance(part, dict):
            attachments.append(str(part.get("name") or part.get("file_name") or part.get("content_type")
                                   or part.get("type") or "attachment")[:120])
    return "\n".join(t for t in texts if t)
