"""Past tasks (internal memory): a user's nearest produced texts, with key points; the texts stored.

Both take the same filter (`uc.PastTaskFilter`): task types by name, and a produced-date range whose
bounds read as `workbench tasks search --since/--until` reads them ("2025-11-30" as `date_to` is that
whole day). The search takes it in its body, the listing as query parameters; either way the core's
request model validates it, so a bound or a type name is refused with the same message everywhere.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from core import usecases as uc
from core.api.deps import USER_ID_JSON_SCHEMA, WB, ReadInstance, on_path, query_of

router = APIRouter(prefix="/v1/instances/{instance}/past-tasks", tags=["past tasks"])


# Not `PastTaskSearch`: that is the result's `search` part, and the OpenAPI page named the two
# "PastTaskSearch-Input" and "PastTaskSearch-Output".
class PastTaskSearchBody(uc.PastTaskQuery):
    """One query of the internal memory tool (the path names the instance)."""

    instance: str | None = None


@router.post("/search", response_model=uc.InternalMemoryResult)
def search(instance: ReadInstance, body: PastTaskSearchBody, wb: WB) -> uc.InternalMemoryResult:
    """The user's texts strictly nearer than `max_distance`, at most `n_max`, with key points; the query
    is recorded as one tool execution (a read: a read-only key may search). `task_types`, `date_from` and
    `date_to` narrow the search to texts of those types produced in that range (`search.candidates`
    counts the texts they let through, `search.searchable` all of the user's); a type name that does not
    exist is refused (422) naming the types that do."""
    return uc.internal_memory(wb, uc.PastTaskQuery(**on_path(body, instance=instance).model_dump()))


def _described(field: str, **extra: Any) -> Any:
    """A query parameter documented by the request model's own field."""
    return query_of(uc.ListTexts, field, **extra)


@router.get("/texts", response_model=list[uc.StoredText])
def texts(instance: ReadInstance, wb: WB,
          user_id: Annotated[str, Query(description="whose texts (as any query value, a '+' in it is sent as %2B)",
                                        json_schema_extra=USER_ID_JSON_SCHEMA)],
          task_types: Annotated[list[str], _described("task_types",
                                                      examples=[["email", "meeting minutes"]])] = [],  # noqa: B006
          date_from: Annotated[str | None, _described("date_from", examples=["2025-11-01"])] = None,
          date_to: Annotated[str | None, _described("date_to", examples=["2025-11-30"])] = None,
          limit: Annotated[int, _described("limit")] = 100,
          with_text: Annotated[bool, _described("with_text")] = False) -> list[uc.StoredText]:
    """The user's produced texts, newest first, each as its latest version (deleted ones marked); with
    `task_types` (repeat the parameter: `?task_types=email&task_types=note`), `date_from` and `date_to`,
    only those of these types whose latest version was produced in the range."""
    return uc.list_texts(wb, uc.ListTexts(instance=instance, user_id=user_id, task_types=task_types,
                                          date_from=date_from, date_to=date_to, limit=limit,
                                          with_text=with_text))
