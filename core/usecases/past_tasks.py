"""Past tasks (internal memory): store a user's produced texts, search them, and read what was asked."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field, ValidationError, field_validator

from core.errors import InvalidInput, explain_validation
from core.ids import UserId, validate_user_id
from core.limits import QUERY_MAX_CHARS
from core.past_tasks.models import (
    DEFAULT_MAX_DISTANCE,
    DEFAULT_N_MAX,
    MAX_DISTANCE_BY_EMBEDDER,
    InternalMemoryResult,
    PastTaskFilter,
    PastTaskQuery,
    PastToolExecution,
    default_max_distance,
)
from core.past_tasks.search import history, run_internal_memory
from core.past_tasks.store import TEXT_SUFFIXES, IngestedText, ProducedTextInput, StoredText, text_from_file
from core.usecases.base import InstanceRequest, Request

if TYPE_CHECKING:
    from core.runtime import Workbench

# For the front ends: the search's defaults, and reading an uploaded file, or a text given without a
# title (`text_from_file(None, text)`: its first line when short, else its first words), into
# (title, production); the filter by task type and produced date that the search and the listing share
# (`PastTaskFilter`, whose `label()` a result line shows; its bounds read as every window's are,
# `read_window`).
__all__ = ["DEFAULT_MAX_DISTANCE", "DEFAULT_N_MAX", "TEXT_SUFFIXES", "PastTaskFilter", "text_from_file"]


def internal_memory(wb: Workbench, req: PastTaskQuery, *, execution_id: str | None = None
                    ) -> InternalMemoryResult:
    """One tool execution: the user's nearest produced texts with their key points, recorded. A caller's
    `execution_id` answers one query only: a second call with it is refused."""
    return run_internal_memory(wb, req, execution_id=execution_id)


class SearchDefaults(BaseModel):
    embedder: str
    max_distance: float = Field(description="used when a query gives none")
    calibrated: bool = Field(description="measured for this embedder; otherwise the seed's 0.2")
    n_max: int = DEFAULT_N_MAX


def past_task_defaults(wb: Workbench) -> SearchDefaults:
    """The search's defaults for the active embedder, to show beside the limits a user may change."""
    name = wb.embedder.name
    return SearchDefaults(embedder=name, max_distance=default_max_distance(name),
                          calibrated=name in MAX_DISTANCE_BY_EMBEDDER)


class IngestTexts(Request):
    items: list[ProducedTextInput] = Field(min_length=1)
    batch_size: int = Field(64, ge=1, le=1024)


def ingest_texts(wb: Workbench, req: IngestTexts, *, progress: Callable[[int, int], None] | None = None
                 ) -> list[IngestedText]:
    """Store texts (a new execution, or a new version of the one `source_key` names), embedded."""
    return wb.past_tasks.ingest(req.items, batch_size=req.batch_size, progress=progress)


class TextFile(Request):
    """A Markdown or text file holding one produced text: a path to read, or an upload's bytes with its
    name. The name (without folders) identifies the text: the same name again adds a version."""

    path: Path
    content: bytes | None = Field(None, description="the file's bytes; None: read them from `path`")


class IngestFiles(InstanceRequest):
    """Files produced for one user by one task type, stored one text each."""

    files: list[TextFile] = Field(min_length=1)
    user_id: UserId
    task: str = Field(description="task type name, e.g. 'meeting minutes'")
    icon: str | None = Field(None, description="the task type's icon; None: one chosen for the type")
    batch_size: int = Field(64, ge=1, le=1024)


class IngestedFile(IngestedText):
    file: str = Field(description="the file's path as given")


def read_text_files(wb: Workbench, req: IngestFiles) -> list[ProducedTextInput]:
    """Each file as a produced text, its first line the title when short (`text_from_file`). InvalidInput
    names the first file that is not Markdown or text, not UTF-8 text, empty, or not a valid text."""
    instance = req.instance_in(wb)
    return [_produced_text(file, instance, req) for file in req.files]


class CheckedFiles(BaseModel):
    texts: list[ProducedTextInput] = Field(description="the files that can be stored, in order")
    refused: list[str] = Field(description="one sentence per file that cannot, naming it and why")


def check_text_files(wb: Workbench, req: IngestFiles) -> CheckedFiles:
    """`read_text_files` for an upload of many files: a file that cannot be stored is named with its
    reason, and the others are still read, so one empty file does not sink the batch."""
    instance = req.instance_in(wb)
    texts, refused = [], []
    for file in req.files:
        try:
            texts.append(_produced_text(file, instance, req))
        except InvalidInput as e:
            refused.append(str(e))
    return CheckedFiles(texts=texts, refused=refused)


def _is_text(content: str) -> bool:
    """No NUL and almost no other control characters: bytes that happen to decode as UTF-8 (a binary
    file renamed .txt) are still not a text a person wrote."""
    controls = sum(1 for ch in content if ch < " " and ch not in "\t\n\r\f")
    return "\x00" not in content and controls <= len(content) // 100


def _produced_text(file: TextFile, instance: str, req: IngestFiles) -> ProducedTextInput:
    path = file.path
    if path.suffix.lower() not in TEXT_SUFFIXES:
        raise InvalidInput(f"{path}: only Markdown or text files ({', '.join(TEXT_SUFFIXES)}) "
                           "can be ingested")
    try:
        content = path.read_text(encoding="utf-8") if file.content is None else file.content.decode("utf-8")
    except FileNotFoundError as e:
        raise InvalidInput(f"{path}: no such file") from e
    except UnicodeDecodeError as e:
        raise InvalidInput(f"{path}: this is not text (it cannot be read as UTF-8); only Markdown or "
                           "text files can be stored") from e
    except OSError as e:
        raise InvalidInput(f"{path}: cannot be read ({type(e).__name__})") from e
    if not content.strip():
        raise InvalidInput(f"{path}: the file is empty")
    if not _is_text(content):
        raise InvalidInput(f"{path}: this is not text (it holds binary data); only Markdown or text files "
                           "can be stored")
    title, production = text_from_file(path.name, content)
    try:
        return ProducedTextInput(instance=instance, user_id=req.user_id, task=req.task, task_icon=req.icon,
                                 title=title, production=production, source_key=path.name)
    except ValidationError as e:
        raise InvalidInput(f"{path}: {explain_validation(e)}") from None


def ingest_files(wb: Workbench, req: IngestFiles, *, progress: Callable[[int, int], None] | None = None
                 ) -> list[IngestedFile]:
    """Store each file as a produced text (as `ingest_texts`). Every file is read and checked before
    anything is stored; then `progress(0, total)`, and `progress(done, total)` after each batch."""
    items = read_text_files(wb, req)
    if progress:
        progress(0, len(items))
    stored = ingest_texts(wb, IngestTexts(items=items, batch_size=req.batch_size), progress=progress)
    return [IngestedFile(file=str(file.path), **text.model_dump())
            for file, text in zip(req.files, stored, strict=True)]


def check_user_id(user_id: str) -> str:
    """A user id as typed (a new user starts with their first text); InvalidInput says what an id may be."""
    return validate_user_id(user_id, "user")


class UserRequest(InstanceRequest):
    user_id: UserId


class ListTexts(PastTaskFilter, UserRequest):
    """The user's stored texts, newest first, narrowed by the filter the search takes (task types, the
    produced-date range)."""

    limit: int = Field(500, ge=1, le=10_000, description="at most this many texts, newest first")
    with_text: bool = Field(True, description="each text's production too (false: titles only)")


def list_texts(wb: Workbench, req: ListTexts) -> list[StoredText]:
    """InvalidInput when the filter names a task type that does not exist, naming those that do."""
    return wb.past_tasks.list_texts(req.instance_in(wb), req.user_id, limit=req.limit,
                                    with_text=req.with_text, where=req)


class MarkDeleted(UserRequest):
    execution_pk: int = Field(ge=1)
    deleted: bool = True


def mark_deleted(wb: Workbench, req: MarkDeleted) -> None:
    """The user deleted (or restored) a text: searches leave it out (or find it again)."""
    wb.past_tasks.mark_deleted(req.instance_in(wb), req.user_id, req.execution_pk, deleted=req.deleted)


class HistoryRequest(UserRequest):
    limit: int = Field(50, ge=1, le=1000)
    contains: str | None = Field(None, max_length=QUERY_MAX_CHARS,
                                 description="only the queries holding this text, in any letter case")

    @field_validator("contains")
    @classmethod
    def _blank_is_none(cls, v: str | None) -> str | None:
        return (v or "").strip() or None


def tool_history(wb: Workbench, req: HistoryRequest) -> list[PastToolExecution]:
    """The user's recorded tool executions, newest first (those whose query holds `contains`, if given)."""
    return history(wb, req.instance_in(wb), req.user_id, req.limit, req.contains)


class PastTaskCatalogue(BaseModel):
    instance: str
    users: list[str]
    task_types: list[tuple[str, str]] = Field(description="(name, icon) of every task type, for a new text")
    types_in_use: list[str] = Field([], description="the task types of the instance's texts: what a filter "
                                                    "may name")
    llm_configured: bool = Field(description="key points come from the LLM; without one, the sentences most "
                                             "similar to the query (extractive)")


def catalogue(wb: Workbench, req: InstanceRequest) -> PastTaskCatalogue:
    """The users with stored texts, the task types with their icons, and how key points are made."""
    instance = req.instance_in(wb)
    return PastTaskCatalogue(instance=instance, users=wb.past_tasks.users(instance),
                             task_types=wb.past_tasks.task_types(),
                             types_in_use=[name for name, _ in wb.past_tasks.task_types(instance)],
                             llm_configured=wb.llm.configured)


class EmbedPending(InstanceRequest):
    batch_size: int = Field(256, ge=1, le=4096)


class EmbedPendingResult(BaseModel):
    instance: str
    model: str = Field(description="the active embedding model")
    embedded: int = Field(description="versions given a vector of it")


def embed_pending(wb: Workbench, req: EmbedPending, *, progress: Callable[[int], None] | None = None
                  ) -> EmbedPendingResult:
    """Give every version without a vector of the active model one; `progress(done)` after each batch."""
    instance = req.instance_in(wb)
    done = wb.past_tasks.embed_pending(instance, batch_size=req.batch_size, progress=progress)
    return EmbedPendingResult(instance=instance, model=wb.embedder.name, embedded=done)
