"""What the internal memory tool takes and gives: its query, the texts found, the key points extracted
from them, and the record of each execution. Shared by the search (`search`) and the key-point
extraction (`keypoints`), so neither imports the other for them."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field, field_validator

from core.ids import Id, UserId, pg_text
from core.limits import QUERY_MAX_CHARS

DEFAULT_MAX_DISTANCE = 0.2  # the seed's limit, for OpenAI embeddings and any model not calibrated
DEFAULT_N_MAX = 10
# Each embedder spreads texts differently: WordLlama puts a text holding the query's words at ~0.5, where
# 0.2 finds nothing. Calibrated on tests/data/past_task_pairs.jsonl (README, "Past tasks"): the largest
# 0.05 step at least 0.05 below the nearest unrelated pair, so no unrelated pair of the set is found.
MAX_DISTANCE_BY_EMBEDDER = {"wordllama-l2-supercat-256": 0.65}


def default_max_distance(embedder_name: str) -> float:
    """The default `max_distance` for vectors of this embedding model."""
    return MAX_DISTANCE_BY_EMBEDDER.get(embedder_name, DEFAULT_MAX_DISTANCE)


class PastTaskQuery(BaseModel):
    """One query of the internal memory tool: whose texts, the query (precise keywords), and the limits of
    its search (strictly below `max_distance`, at most `n_max` results). Without `max_distance`, the
    search uses the active embedder's default, and the recorded query says which value that was."""

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
    candidates: int = Field(description="the user's searchable texts")
    nearest_distance: float | None = Field(description="over all candidates, whatever max_distance")


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
        q = self.query
        if self.search.nearest_distance is None:
            return (f"User {q.user_id!r} has no searchable past tasks in instance {q.instance!r} (check the "
                    "user id: past tasks are searched per user).")
        return (f"Nothing within distance {q.max_distance:.2f}; the nearest past task is at "
                f"{self.search.nearest_distance:.4f}.")



class PastToolExecution(BaseModel):
    """One recorded tool execution: its query, and its result when it finished."""

    execution_id: str
    query: str
    status: str = Field(description="running, done, partial (a key-point batch failed) or failed")
    created_at: datetime
    result: InternalMemoryResult | None = None
    error: str | None = None
