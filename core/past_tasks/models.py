"""What the internal memory tool takes and gives: its query, the texts found, the key points extracted
from them, and the record of each execution. Shared by the search (`search`) and the key-point
extraction (`keypoints`), so neither imports the other for them."""

from __future__ import annotations

from datetime import UTC, date, datetime, time
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    WithJsonSchema,
    computed_field,
    field_validator,
    model_validator,
)

from core.errors import InvalidInput
from core.ids import Id, UserId, pg_text
from core.limits import QUERY_MAX_CHARS
from core.retrieval import timeparse

DEFAULT_MAX_DISTANCE = 0.2  # the seed's limit, for OpenAI embeddings and any model not calibrated
DEFAULT_N_MAX = 10
# Each embedder spreads texts differently: WordLlama puts a text holding the query's words at ~0.5, where
# 0.2 finds nothing. Calibrated on tests/data/past_task_pairs.jsonl (README, "Past tasks"): the largest
# 0.05 step at least 0.05 below the nearest unrelated pair, so no unrelated pair of the set is found.
MAX_DISTANCE_BY_EMBEDDER = {"wordllama-l2-supercat-256": 0.65}


def default_max_distance(embedder_name: str) -> float:
    """The default `max_distance` for vectors of this embedding model."""
    return MAX_DISTANCE_BY_EMBEDDER.get(embedder_name, DEFAULT_MAX_DISTANCE)


# -- which texts: task types and a produced-date range ----------------------------------------------

TASK_TYPES_MAX = 50
DATE_HELP = timeparse.WINDOW_HELP


def read_bound(value: str | date | datetime | None, *, end: bool, name: str) -> datetime | None:
    """One end of a produced-date range: text as every other window's bound is read
    (`core.retrieval.timeparse.read_bound`: "--until 2025-11-30" includes the 30th), a `date` as that
    whole day, a `datetime` as it is (UTC when it has no zone); None or blank: open."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, date):
        return datetime.combine(value, time.max if end else time.min, UTC)
    return timeparse.read_bound(value, datetime.now(UTC), end=end, name=name)


def _bound_reader(end: bool):
    def read(value: Any, info: ValidationInfo) -> Any:
        if value is None or isinstance(value, str | date):
            try:
                return read_bound(value, end=end, name=info.field_name or "date")
            except InvalidInput as e:
                raise ValueError(str(e).split(": ", 1)[1]) from None  # pydantic names the field itself
        return value
    return read


# Written as a person writes a day: the schema says text, not an ISO timestamp, so a model sends "2025-11-30".
_DAY_TEXT = WithJsonSchema({"anyOf": [{"type": "string"}, {"type": "null"}]})


class PastTaskFilter(BaseModel):
    """Which of a user's texts a search or a listing looks at: texts of these task types only, produced
    (their latest version's date, the one every front end shows) within [date_from, date_to], both
    included. Empty: every text. An unknown type name is refused, naming the types that exist."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    task_types: list[Annotated[str, Field(min_length=1, max_length=64)]] = Field(
        [], max_length=TASK_TYPES_MAX,
        description="only texts of these task types, by name as stored (e.g. 'email', 'meeting minutes'); "
                    "empty: every type")
    date_from: Annotated[datetime | None, _DAY_TEXT] = Field(
        None, description=f"only texts produced on or after this day (or period, from its start; UTC): {DATE_HELP}")
    date_to: Annotated[datetime | None, _DAY_TEXT] = Field(
        None, description="only texts produced on or before this day (or period, to its end: '2025-11-30' "
                          "includes the 30th; UTC)")

    _read_from = field_validator("date_from", mode="before")(_bound_reader(end=False))
    _read_to = field_validator("date_to", mode="before")(_bound_reader(end=True))

    @field_validator("task_types")
    @classmethod
    def _names_as_stored(cls, v: list[str]) -> list[str]:  # stored lower-case (ProducedTextInput.task)
        return list(dict.fromkeys(name.lower() for name in v))

    @model_validator(mode="after")
    def _ordered(self) -> PastTaskFilter:
        if self.date_from and self.date_to and self.date_from > self.date_to:
            raise ValueError("date_from must not be after date_to")
        return self

    def label(self) -> str | None:
        """The active filter as a result line shows it: "email, note · 1–30 Nov 2025"; None without one."""
        parts = [", ".join(self.task_types)] if self.task_types else []
        if period := period_label(self.date_from, self.date_to):
            parts.append(period)
        return " · ".join(parts) or None


def _is_day_start(t: datetime) -> bool:
    return t.timetz().replace(tzinfo=None) == time.min


def _is_day_end(t: datetime) -> bool:
    return t.timetz().replace(tzinfo=None) == time.max


def _day(t: datetime, *, year: bool = True, month: bool = True, clock: bool = False) -> str:
    text = f"{t.day}" + (f" {t:%b}" if month else "") + (f" {t.year}" if year else "")
    return text + (f" {t:%H:%M}" if clock else "")


def period_label(start: datetime | None, stop: datetime | None) -> str | None:
    """A produced-date range in a few characters, in UTC: "1–30 Nov 2025", "28 Oct – 3 Nov 2025",
    "from 1 Nov 2025", "until 30 Nov 2025"; a bound that is not a day's edge shows its time."""
    start = start.astimezone(UTC) if start else None
    stop = stop.astimezone(UTC) if stop else None
    clock_from = start is not None and not _is_day_start(start)
    clock_to = stop is not None and not _is_day_end(stop)
    if start is None and stop is None:
        return None
    if stop is None:
        return f"from {_day(start, clock=clock_from)}"
    if start is None:
        return f"until {_day(stop, clock=clock_to)}"
    if clock_from or clock_to:
        return f"{_day(start, clock=clock_from)} – {_day(stop, clock=clock_to)}"
    if start.date() == stop.date():
        return _day(start)
    if (start.year, start.month) == (stop.year, stop.month):
        return f"{start.day}–{_day(stop)}"
    if start.year == stop.year:
        return f"{_day(start, year=False)} – {_day(stop)}"
    return f"{_day(start)} – {_day(stop)}"


class _QueryFields(BaseModel):
    """The query's own fields: a base of `PastTaskQuery`, so a schema lists them before the filter's."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    instance: Id
    user_id: UserId
    query: str = Field(min_length=1, max_length=QUERY_MAX_CHARS, description="precise keywords")
    max_distance: float | None = Field(None, ge=0, le=2, allow_inf_nan=False,
                                       description="cosine distance, strictly below; None: the embedder's "
                                                   "default (0.2 for OpenAI models)")
    n_max: int = Field(DEFAULT_N_MAX, ge=1, le=100)

    @field_validator("query")
    @classmethod
    def _storable(cls, v: str) -> str:  # the query is recorded in Postgres with the tool execution
        return pg_text(v)


class PastTaskQuery(PastTaskFilter, _QueryFields):
    """One query of the internal memory tool: whose texts, the query (precise keywords), and the limits of
    its search (strictly below `max_distance`, at most `n_max` results), among the texts its filter lets
    through (`PastTaskFilter`: task types, produced dates). Without `max_distance`, the search uses the
    active embedder's default, and the recorded query says which value that was."""


class PastTaskHit(BaseModel):
    """A neighbour: the latest embedded version of one task execution."""

    user_task_execution_pk: int
    produced_text_pk: int
    version_pk: int
    task_name: str
    task_icon: str
    title: str
    production: str = ""
    date: datetime
    distance: float


class PastTaskSearch(BaseModel):
    hits: list[PastTaskHit]
    candidates: int = Field(description="the user's searchable texts that the filter (task types, dates) "
                                        "lets through")
    nearest_distance: float | None = Field(description="over all candidates, whatever max_distance")
    searchable: int | None = Field(None, description="the user's searchable texts, whatever the filter")


class PastTaskReference(BaseModel):
    """One result of the tool: the execution, its text's title and icon, the key points extracted for
    the query, and the distance and date of the version they were read from."""

    user_task_execution_pk: int
    produced_text_title: str
    task_icon: str
    extracted_informations: list[str]
    distance: float
    date: datetime


class FailedBatch(BaseModel):
    user_task_execution_pks: list[int]
    reason: str
    attempts: int


class KeyPoints(BaseModel):
    mode: Literal["llm", "extractive", "none"]
    references: list[PastTaskReference]
    dropped: list[int] = Field([], description="executions the LLM judged irrelevant to the query")
    failed_batches: list[FailedBatch] = []
    note: str | None = None
    model: str | None = None
    total_tokens: int = 0
    llm_calls: int = 0


class InternalMemoryResult(BaseModel):
    execution_id: str
    query: PastTaskQuery
    search: PastTaskSearch
    keypoints: KeyPoints
    created_at: datetime

    @property
    def references(self) -> list[PastTaskReference]:
        return self.keypoints.references

    @computed_field(description="why nothing was found, when nothing was: the user has no searchable past "
                                "tasks here (a mistyped user id?), or how far the nearest one is")
    @property
    def nothing_within(self) -> str | None:
        """The sentence to show when no text is within the distance, naming the nearest one: in every front
        end's result, so an assistant tells a wrong user id from nothing relevant."""
        if self.search.hits:
            return None
        q, found = self.query, self.search
        within = f" ({label})" if (label := q.label()) else ""
        if found.nearest_distance is None and not found.searchable:
            return (f"User {q.user_id!r} has no searchable past tasks in instance {q.instance!r} (check the "
                    "user id: past tasks are searched per user).")
        if found.nearest_distance is None and found.candidates:
            return ("The query's vector is all zeros (the embedder knows none of its words), so it is at no "
                    "distance from any past task; use other words.")
        if found.nearest_distance is None:
            return (f"None of the {found.searchable} searchable past tasks of user {q.user_id!r} matches the "
                    f"filter{within}; widen it.")
        return (f"Nothing within distance {q.max_distance:.2f}; the nearest past task{within} is at "
                f"{found.nearest_distance:.4f}.")



class PastToolExecution(BaseModel):
    """One recorded tool execution: its query, and its result when it finished."""

    execution_id: str
    query: str
    status: str = Field(description="running, done, partial (a key-point batch failed) or failed")
    created_at: datetime
    result: InternalMemoryResult | None = None
    error: str | None = None
