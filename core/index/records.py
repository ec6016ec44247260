"""A memory-index row in and out of Python: the columns read back, the text its vector is made from,
the event-time parts of a moment. Shared by the index's writers (`memory_index`, `bulk_load`) and its
readers (`core.retrieval`), so none of them imports another for these."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime
from functools import lru_cache
from typing import Any

from core.models import EventTime, MemoryRecord, MemoryRow

ROW_COLUMNS = ("instance, id, kind, chain_id, content, created_at, ev_year, ev_month, ev_day, ev_hour, "
               "ev_weekday, tags, metadata")
ROW_WIDTH = len(ROW_COLUMNS.split(","))  # the values of a row that make its `MemoryRow`


def row_from_tuple(r: Sequence[Any]) -> MemoryRow:
    """A row selected as `ROW_COLUMNS`."""
    return MemoryRow(instance=r[0], id=r[1], kind=r[2], chain_id=r[3], content=r[4], created_at=r[5],
                     event_time=_event_time(r[6], r[7], r[8], r[9], r[10]),
                     tags=list(r[11]), metadata=dict(r[12]))


@lru_cache(maxsize=4096)
def _event_time(year: int, month: int, day: int, hour: int, weekday: int) -> EventTime:
    """One `EventTime` (frozen, so shared safely) per moment: the turns of a conversation's session share
    theirs. Building one per row read took decoding a LoCoMo search's 83 candidates from 0.58 to 0.69 ms."""
    return EventTime(year=year, month=month, day=day, hour=hour, weekday=weekday)


def embedding_text(record: MemoryRecord) -> str:
    """What a memory's vector is made from: its content after the message it follows, when known, so a
    reply's vector says what it replies to (LoCoMo, dense leg alone: R@10 0.396 -> 0.466)."""
    return embedding_text_of(record.content, record.context.before)


def embedding_text_of(content: str, before: list[str] | None) -> str:
    """`embedding_text` from a stored row's content and the messages before it."""
    # A space, not a newline: WordLlama's tokenizer turns "\n" into a byte token of its own and reads
    # the next word as a word-piece, which cost 0.03 R@10 on the dense leg.
    return f"{before[0]} {content}" if before else content


def event_time_of(moment: datetime | date) -> EventTime:
    """A moment's parts; a date alone leaves the hour unknown."""
    return EventTime(year=moment.year, month=moment.month, day=moment.day,
                     hour=moment.hour if isinstance(moment, datetime) else -1, weekday=moment.weekday())
