"""A memory-index row in and out of Python: the columns read back, the text its vector is made from,
the event-time parts of a moment. Shared by the index's writers (`memory_index`, `bulk_load`) and its
readers (`core.retrieval`), so none of them imports another for these."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, date, datetime, timedelta
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


# The words of the message before that a memory's vector is made with, at most: its last ones, nearest the
# reply. LoCoMo's turns are at most 87 words (99 % within 61), so its figures are the same with or without the
# bound (R@5 / R@10 0.7125 / 0.7973 both); a reply after a pasted 5,000-character message was a vector of the
# paste (cosine to "What is my cat called?" −0.08 for "… My cat is called Miso.", −0.01 with 64 words before it).
BEFORE_WORDS = 64


def embedding_text(record: MemoryRecord) -> str:
    """What a memory's vector is made from: its content after the message it follows, when known, so a
    reply's vector says what it replies to (LoCoMo, dense leg alone: R@10 0.396 -> 0.466); an observation's
    own words alone, since formation states each as a fact that stands alone (`stands_alone`)."""
    return embedding_text_of(record.content, record.context.before, stands_alone(record.kind, record.metadata))


def stands_alone(kind: str, metadata: dict[str, Any] | None) -> bool:
    """Whether a memory's vector is its words alone: an observation's, unless it supersedes a fact, whose words
    formation puts first in its context so that a question in the old fact's words finds what replaced it
    ("Where do I live now?" → "We just moved to Denver last week." after "I live in Chicago …",
    `core.formation.supersede`). With the message before it (in a chat, the assistant's last answer, about the
    previous topic), a plain observation's vector was diluted by what it does not say: the labelled notes told
    as chat turns, one a turn (`tests/data/notes_labelled`, 44 questions), handed R@5 / R@10 0.841 / 0.864 with
    it, 0.864 / 0.886 without, as the same notes imported give."""
    return kind == "observation" and not (metadata or {}).get("supersedes")


def embedding_text_of(content: str, before: list[str] | None, alone: bool = False) -> str:
    """`embedding_text` from a stored row's content, the messages before it, and whether it `stands_alone`."""
    if alone or not before:
        return content
    # A space, not a newline: WordLlama's tokenizer turns "\n" into a byte token of its own and reads
    # the next word as a word-piece, which cost 0.03 R@10 on the dense leg.
    return f"{' '.join(before[0].split()[-BEFORE_WORDS:])} {content}"


def event_time_of(moment: datetime | date) -> EventTime:
    """A moment's parts; a date alone leaves the hour unknown."""
    return EventTime(year=moment.year, month=moment.month, day=moment.day,
                     hour=moment.hour if isinstance(moment, datetime) else -1, weekday=moment.weekday())


# A memory's time for a window on the event time (`core.retrieval.hybrid_sql.WINDOW`) is when what it says
# happened: its own event time when it has one (a date given with it, or one its words name), else when it
# was stored. A message's event time is the moment it was said (`event_time_of(created_at)`), to the hour;
# an event time that is not that is the memory's own. The SQL below reads it from a row's columns (`m`:
# the table's alias with its dot, or "" in an index's definition): the event period's first and last hour
# as `hour_key`s, from the parts it knows (an hour, a day, a month or a year; day 31 stands for a month's
# last, as the keys are only compared, and no date is made per row, nor one that may not exist), and
# whether the event time is the row's own. `memory_event_stated` (`memory_index.DDL`) indexes the rows
# that have one, so a window finds them without reading the others, which `memory_created` finds by their
# stored time.

def event_first_hour_sql(m: str = "") -> str:
    return (f"({m}ev_year::int8 * 1000000 + CASE WHEN {m}ev_month < 1 THEN 10100 "
            f"WHEN {m}ev_day < 1 THEN {m}ev_month * 10000 + 100 "
            f"ELSE {m}ev_month * 10000 + {m}ev_day * 100 + greatest({m}ev_hour, 0) END)")


def event_last_hour_sql(m: str = "") -> str:
    return (f"({m}ev_year::int8 * 1000000 + CASE WHEN {m}ev_month < 1 THEN 123123 "
            f"WHEN {m}ev_day < 1 THEN {m}ev_month * 10000 + 3123 "
            f"WHEN {m}ev_hour < 0 THEN {m}ev_month * 10000 + {m}ev_day * 100 + 23 "
            f"ELSE {m}ev_month * 10000 + {m}ev_day * 100 + {m}ev_hour END)")


def stated_event_sql(m: str = "") -> str:
    """True for a row whose event time is its own: known, and not the hour it was stored (in UTC)."""
    utc = f"({m}created_at AT TIME ZONE 'UTC')"
    # date_part, a float8, rather than extract, a numeric: exact at these sizes, and a search reads it on
    # every row a window's stored time finds
    stored = (f"(date_part('year', {utc}) * 1000000 + date_part('month', {utc}) * 10000 "
              f"+ date_part('day', {utc}) * 100 + date_part('hour', {utc}))::int8")
    return f"({m}ev_year >= 0 AND ({m}ev_hour < 0 OR {event_first_hour_sql(m)} <> {stored}))"


def hour_key(moment: datetime, *, up: bool = False) -> int:
    """The UTC hour of `moment` as the integer yyyymmddhh: the hour it falls in, or with `up` the first hour
    that starts at or after it. The keys sort as the hours do."""
    t = moment.astimezone(UTC)
    hour = t.replace(minute=0, second=0, microsecond=0)
    if up and hour < t:
        try:
            hour += timedelta(hours=1)
        except OverflowError:  # within the last hour of year 9999: no hour starts after it
            return 10_000_010_100
    return ((hour.year * 100 + hour.month) * 100 + hour.day) * 100 + hour.hour
