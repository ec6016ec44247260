"""Offline time hints: find a time expression in English text and turn it into parts and a range.

`parse_time_hint(text, now)` is the rule-based half of MemoryScope's extract_time and the
`temporal` parameter of ui_remember. Spans are found with whole-word patterns (so "May I" is not a
date), then read by `dateparser` relative to `now`, preferring the past; the periods dateparser does
not know (weekends, seasons, "recently") are read here (`_named_period`), and so are the spans a person
uses over a long history (`_read`): a range ("from March to May", "between 3 and 9 August": `_between`), a
time up to now ("since the summer", "since March": `_since`; "in the last two weeks": `_rolling`), a season
("in spring", "over the summer": `_season`), a week of a month ("the first week of August") and a part of
one ("early October"). Before, these were read as their last words ("of August": all of it; "since March":
March alone) or not at all ("in spring"), so a year's questions searched the wrong months. The result carries both the parts MemoryScope
matches on (year, month, day, week, weekday, hour; week is the ISO week number) and a half-open datetime
range [start, end) for filtering. A range's parts are its start's: where a state began ("vegan since
January") is the event formation dates it by.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from core.errors import InvalidInput

TIME_PARTS = ("year", "month", "day", "week", "weekday", "hour")

_MONTHS = ("january|february|march|april|may|june|july|august|september|october|november|december|"
           "jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec")
_WEEKDAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_NUM = r"(?:\d{1,3}|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
_UNIT = r"(?:hour|day|week|month|year)s?"
_PART_OF_DAY = r"(?:morning|afternoon|evening|night)"
_SEASON = r"(?:spring|summer|autumn|fall|winter)"
_ORD = r"\d{1,2}(?:st|nd|rd|th)?"
_CLOCK = r"(?:\d{1,2}(?::\d{2})?\s?(?:am|pm|a\.m\.|p\.m\.)|\d{1,2}:\d{2})"

# A point a range runs from or to: a date, a month (with its year) or a season.
_POINT = (rf"(?:\d{{4}}-\d{{1,2}}-\d{{1,2}}|{_ORD}\s+(?:of\s+)?(?:{_MONTHS})\.?(?:,?\s+\d{{4}})?|"
          rf"(?:{_MONTHS})\.?(?:\s+{_ORD})?(?:,?\s+\d{{4}})?|(?:the\s+)?{_SEASON}(?:\s+(?:of\s+)?\d{{4}})?)")
_WEEK_OF_MONTH = r"(?:first|1st|second|2nd|third|3rd|fourth|4th|last|final)"
_PART_OF_MONTH = r"(?:(?:the\s+)?(?:start|beginning|middle|end)\s+of|early|mid|late)"

# Alternatives, most specific first. Month names alone need a number, a preposition or
# this/last/next beside them: "May I ask" and "march on" are not dates.
_SPAN_PATTERNS = [
    rf"(?:between|from)\s+{_POINT}\s+(?:and|to|till|until|through)\s+{_POINT}",
    (rf"(?:between|from)\s+{_ORD}\s+(?:and|to|till|until|through|-|–)\s*{_ORD}\s+(?:of\s+)?(?:{_MONTHS})\.?"
     rf"(?:,?\s+\d{{4}})?"),
    rf"(?:the\s+)?{_WEEK_OF_MONTH}\s+week\s+(?:of|in)\s+(?:{_MONTHS})\.?(?:,?\s+\d{{4}})?",
    rf"{_PART_OF_MONTH}[\s-]+(?:{_MONTHS})\.?(?:,?\s+\d{{4}})?",
    rf"(?:the\s+)?(?:last|past)\s+(?:{_NUM}|few|couple\s+of)\s+{_UNIT}",
    r"(?:the\s+)?past\s+(?:day|week|month|year)",
    rf"(?:in|during|over|since|through|throughout)\s+(?:the\s+)?{_SEASON}(?:\s+(?:of\s+)?(?:19|20)\d{{2}})?",
    rf"{_SEASON}\s+(?:of\s+)?(?:19|20)\d{{2}}",
    r"\d{4}-\d{1,2}-\d{1,2}",
    r"\d{1,2}/\d{1,2}/\d{2,4}",
    rf"{_ORD}\s+(?:of\s+)?(?:{_MONTHS})\.?(?:,?\s+\d{{4}})?",
    rf"(?:{_MONTHS})\.?\s+{_ORD}(?:,?\s+\d{{4}})?",
    rf"(?:{_MONTHS})\.?,?\s+\d{{4}}",
    rf"(?:in|during|since|of|from|this|last|next)\s+(?:{_MONTHS})(?:\.?,?\s+\d{{4}})?",  # "in May 2024" whole
    r"(?:in|during|since|of|from)\s+(?:19|20)\d{2}",
    rf"{_NUM}\s+{_UNIT}\s+ago",
    r"(?:the\s+)?day\s+before\s+yesterday",
    rf"(?:this|last|yesterday|tomorrow)\s+{_PART_OF_DAY}",
    r"today|yesterday|tomorrow|tonight",
    rf"(?:this|last|past)\s+(?:weekend|{_SEASON})",
    r"recently|lately",
    rf"(?:this|last|next)\s+(?:week|month|year|{_WEEKDAYS})",
    rf"(?:on\s+)?(?:{_WEEKDAYS})",
    rf"(?:at\s+)?{_CLOCK}",
]
_SPAN_RE = re.compile(r"\b(?:" + "|".join(_SPAN_PATTERNS) + r")\b", re.IGNORECASE)
_CLOCK_RE = re.compile(rf"^(?:at\s+)?{_CLOCK}$", re.IGNORECASE)
_BARE_MONTH_RE = re.compile(rf"^(?:in|during|since|of|from)\s+(?:{_MONTHS})$", re.IGNORECASE)
_BARE_WEEKDAY_RE = re.compile(rf"^(?:on\s+)?(?:{_WEEKDAYS})$", re.IGNORECASE)
_PART_OF_DAY_RE = re.compile(rf"\b(tonight|{_PART_OF_DAY})$", re.IGNORECASE)
_PART_HOURS = {"morning": (5, 12), "afternoon": (12, 17), "evening": (17, 22), "night": (18, 30),
               "tonight": (18, 30)}

# The cheap gate: any of these whole words, or a span above, means the query may carry a time.
_KEYWORDS = re.compile(
    r"\b(?:today|yesterday|tomorrow|tonight|morning|afternoon|evening|night|weekend|ago|recently|lately|"
    r"spring|summer|autumn|winter|holidays?|"
    r"days?|weeks?|months?|years?|hours?|last|next|earlier|"
    rf"{_WEEKDAYS}|january|february|april|june|july|august|september|october|november|december)\b"
    r"|\b(?:19|20)\d{2}\b",
    re.IGNORECASE)


class TimeHint(BaseModel):
    """A time found in a text: the parts it pins down and the range [start, end) it covers."""

    model_config = ConfigDict(frozen=True)

    parts: dict[str, int]
    start: datetime
    end: datetime
    expression: str
    source: Literal["rules", "llm"] = "rules"
    reading: str | None = Field(None, description="how a vague expression was read, e.g. 'the last 30 days'")

    def contains(self, moment: datetime) -> bool:
        return self.start <= moment < self.end


def has_time_keyword(text: str) -> bool:
    """The gate before any parsing or LLM call: a whole-word time keyword or a date-like span."""
    return bool(_KEYWORDS.search(text) or _SPAN_RE.search(text))


_SINCE_BEFORE_RE = re.compile(r"\bsince\s+(?:the\s+)?$", re.IGNORECASE)


def find_time_expression(text: str) -> str | None:
    """The first time expression in `text`, joined with a clock time right after it ("yesterday at 3pm"),
    and with a "since" right before it ("since last week": up to now)."""
    matches = list(_SPAN_RE.finditer(text))
    if not matches:
        return None
    first = matches[0]
    start, end = first.start(), first.end()
    if since := _SINCE_BEFORE_RE.search(text[:start]):
        start = since.start()
    for nxt in matches[1:]:
        gap = text[end:nxt.start()]
        if len(gap) <= 4 and _CLOCK_RE.match(nxt.group(0).strip()) and not _CLOCK_RE.match(first.group(0)):
            end = nxt.end()
        break
    return text[start:end]


@lru_cache(maxsize=1)
def _parser_class():
    from dateparser.date import DateDataParser  # imported on first use: loading it takes ~0.1 s

    return DateDataParser


def warm_up() -> None:
    """Read one relative date: dateparser loads and builds its patterns at its first reading, 0.2-0.6 s of
    a process's first turn that names a date ("yesterday"). The servers do it ahead
    (`core.usecases.conversation.warm_up_in_background`)."""
    parse_time_hint("What did I say yesterday?", datetime.now(UTC))


def parse_time_hint(text: str, now: datetime) -> TimeHint | None:
    """The time the text refers to, relative to `now` (naive `now` is taken as UTC), or None."""
    if not text or not has_time_keyword(text):
        return None
    expression = find_time_expression(text)
    if expression is None:
        return None
    now = now if now.tzinfo else now.replace(tzinfo=UTC)
    return _read(expression, now)


def _read(expression: str, now: datetime) -> TimeHint | None:
    """A time expression (`find_time_expression`'s) read against an aware `now`: the spans read here first,
    then what dateparser reads."""
    if re.match(r"since\b", expression, re.IGNORECASE):
        return _since(expression, now)  # up to now, or nothing: "since tomorrow" is not tomorrow
    for reading in (_between, _week_of_month, _part_of_month, _rolling, _season, _named_period, _last_or_next_month):
        if (hint := reading(expression, now)) is not None:
            return hint
    return _parsed(expression, now)


def _parsed(expression: str, now: datetime) -> TimeHint | None:
    """A date, a day, a week, a month or a year as dateparser reads it, preferring the past."""
    spoken = re.sub(r"^(?:in|during|since|of|from|on|at)\s+", "", expression.strip(), flags=re.IGNORECASE)
    spoken = re.sub(r"^this\s+(?=(?:" + _MONTHS + r")\b)", "", spoken, flags=re.IGNORECASE)
    local_now = now.replace(tzinfo=None)
    parser = _parser_class()(languages=["en"], settings={
        "RELATIVE_BASE": local_now, "PREFER_DATES_FROM": "past", "RETURN_TIME_AS_PERIOD": True})
    data = parser.get_date_data(spoken)
    if data is None or data.date_obj is None:
        return None
    moment = data.date_obj.replace(tzinfo=None)
    period = data.period or "day"
    lowered = expression.lower().strip()
    pod = _PART_OF_DAY_RE.search(lowered)
    try:
        if pod and not _CLOCK_RE.search(lowered):
            return _part_of_day(moment, pod.group(1), expression, now.tzinfo)
        start, end, parts = _period(moment, period)
    except (OverflowError, ValueError):  # a range past year 9999 ("31/12/9999"): not a usable time
        return None
    if period == "day" and _BARE_WEEKDAY_RE.match(lowered):
        parts = {"weekday": moment.weekday()}
    if period == "month" and _BARE_MONTH_RE.match(lowered):
        parts = {"month": moment.month}
    return TimeHint(parts=parts, start=start.replace(tzinfo=now.tzinfo), end=end.replace(tzinfo=now.tzinfo),
                    expression=expression)


RECENT_DAYS = 30  # "recently", "lately"
# Meteorological seasons of the northern hemisphere: (first month, months). Winter runs into next year.
_SEASONS = {"spring": (3, 3), "summer": (6, 3), "autumn": (9, 3), "fall": (9, 3), "winter": (12, 3)}


def _named_period(expression: str, now: datetime) -> TimeHint | None:
    """Weekends, seasons and "recently", which dateparser does not read; None for anything else.

    this weekend: Saturday and Sunday of the current week; last weekend: the latest one already over.
    this <season>: the one under way, else this year's; last <season>: the latest one already over.
    recently / lately: the last RECENT_DAYS days.
    """
    words = expression.lower().split()
    local = now.replace(tzinfo=None)
    if words[-1] in ("recently", "lately"):
        return TimeHint(parts={}, start=now - timedelta(days=RECENT_DAYS), end=now, expression=expression,
                        reading=f"the last {RECENT_DAYS} days")
    if len(words) != 2 or words[0] not in ("this", "last", "past") or words[1] not in {"weekend", *_SEASONS}:
        return None
    latest_over = words[0] != "this"
    if words[1] == "weekend":
        day0 = local.replace(hour=0, minute=0, second=0, microsecond=0)
        start = day0 - timedelta(days=day0.weekday()) + timedelta(days=5)  # this week's Saturday
        if latest_over and start + timedelta(days=2) > local:
            start -= timedelta(days=7)
        end = start + timedelta(days=2)
        iso = start.isocalendar()
        parts = {"year": iso.year, "week": iso.week}
    else:
        first, months = _SEASONS[words[1]]
        year = local.year - (1 if first == 12 and local.month < 3 else 0)  # Jan-Feb: last December's
        start = datetime(year, first, 1)
        end = _add_months(start, months)
        if latest_over and end > local:
            start, end = start.replace(year=year - 1), end.replace(year=end.year - 1)
        parts = {"year": start.year} if start.year == (end - timedelta(days=1)).year else {}
    return TimeHint(parts=parts, start=start.replace(tzinfo=now.tzinfo), end=end.replace(tzinfo=now.tzinfo),
                    expression=expression, reading=f"{start:%Y-%m-%d} to {end - timedelta(days=1):%Y-%m-%d}")


def _last_or_next_month(expression: str, now: datetime) -> TimeHint | None:
    """"last March": the latest March already over (asked in December 2026, March 2026; asked in March 2026,
    March 2025); "next March": the next one to begin. dateparser reads neither. None for anything else."""
    match = re.fullmatch(rf"(last|next)\s+({_MONTHS})\.?", expression.strip(), re.IGNORECASE)
    if match is None:
        return None
    month = _MONTH_NUMBERS[match[2].lower()[:3]]
    if match[1].lower() == "last":
        year = now.year if month < now.month else now.year - 1
    else:
        year = now.year if month > now.month else now.year + 1
    start = datetime(year, month, 1, tzinfo=now.tzinfo)
    return _span(start, _next_month(start), {"year": year, "month": month}, expression)


_MONTH_NUMBERS = {name: i for i, name in enumerate(
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), start=1)}


def _span(start: datetime, end: datetime, parts: dict[str, int], expression: str, reading: str | None = None
          ) -> TimeHint:
    """A hint over [start, end), said how it was read (its first and last day) unless `reading` says."""
    return TimeHint(parts=parts, start=start, end=end, expression=expression,
                    reading=reading or f"{start:%Y-%m-%d} to {end - PERIOD_END:%Y-%m-%d}")


def _as_period(point: str) -> str:
    """A range's end point as `_read` takes it: a month or a season alone as "in <month>" (all of it)."""
    point = re.sub(r"^the\s+", "", point.strip(), flags=re.IGNORECASE)
    return f"in {point}" if re.fullmatch(rf"(?:{_MONTHS})\.?|{_SEASON}", point, re.IGNORECASE) else point


def _since(expression: str, now: datetime) -> TimeHint | None:
    """"since March", "since the summer", "since last week": from the start of that period up to now, with
    its parts (the time a state began: "vegan since January" is dated January). None for a start ahead."""
    match = re.fullmatch(r"since\s+(?:the\s+)?(.+)", expression.strip(), re.IGNORECASE)
    if match is None or (begun := _read(_as_period(match[1]), now)) is None or begun.start >= now:
        return None
    return _span(begun.start, now, begun.parts, expression, reading=f"{begun.start:%Y-%m-%d} until now")


def _between(expression: str, now: datetime) -> TimeHint | None:
    """"from March to May", "between the spring and August", "from 3 to 9 August": from the first point's
    start to the second's end, with the first's parts. A first point read after the second (each prefers
    the past: "from November to February" asked in December) is the year before's."""
    days = re.fullmatch(rf"(?:between|from)\s+({_ORD})\s+(?:and|to|till|until|through|-|–)\s*(.+)", expression.strip(),
                        re.IGNORECASE)
    if days is not None:  # "from 3 to 9 August": the first day is in the second's month
        last = _read(days[2], now)
        if last is None or "day" not in last.parts:
            return None
        try:
            first = last.start.replace(day=int(re.match(r"\d+", days[1])[0]))
        except ValueError:
            return None
        return _span(first, last.end, {**last.parts, "day": first.day}, expression) if first < last.end else None
    points = re.fullmatch(r"(?:between|from)\s+(.+?)\s+(?:and|to|till|until|through)\s+(.+)", expression.strip(),
                          re.IGNORECASE)
    if points is None:
        return None
    first, last = _read(_as_period(points[1]), now), _read(_as_period(points[2]), now)
    if first is None or last is None:
        return None
    start, parts = first.start, first.parts
    if start >= last.end:
        if re.search(r"\d{4}", points[1]):
            return None  # a year given, and after the end: no range
        start = start.replace(year=start.year - 1)
        parts = {**parts, "year": start.year} if "year" in parts else parts
    return _span(start, last.end, parts, expression)


_WEEK_NUMBERS = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4}


def _week_of_month(expression: str, now: datetime) -> TimeHint | None:
    """"the first week of August": days 1-7 of that month (the second: 8-14, …); "the last week of
    November": its last 7 days. The month's parts."""
    match = re.fullmatch(rf"(?:the\s+)?({_WEEK_OF_MONTH})\s+week\s+(?:of|in)\s+(.+)", expression.strip(),
                         re.IGNORECASE)
    if match is None or (month := _whole_month(match[2], now)) is None:
        return None
    number = _WEEK_NUMBERS.get(match[1].lower())
    start = month.end - timedelta(days=7) if number is None else month.start + timedelta(days=7 * (number - 1))
    return _span(start, min(start + timedelta(days=7), month.end), month.parts, expression)


# early / mid / late in a month: its first ten days, the next ten, the rest.
_THIRDS = {"early": 0, "start": 0, "beginning": 0, "mid": 1, "middle": 1, "late": 2, "end": 2}


def _part_of_month(expression: str, now: datetime) -> TimeHint | None:
    """"early October" (days 1-10), "mid-May" (11-20), "late September", "the end of August" (21 to the
    end); "the start of", "the middle of" likewise. The month's parts."""
    match = re.fullmatch(r"(?:the\s+)?(early|mid|late|start|beginning|middle|end)(?:\s+of)?[\s-]+(.+)",
                         expression.strip(), re.IGNORECASE)
    if match is None or (month := _whole_month(match[2], now)) is None:
        return None
    third = _THIRDS[match[1].lower()]
    start = month.start + timedelta(days=10 * third)
    end = month.end if third == 2 else start + timedelta(days=10)
    return _span(start, end, month.parts, expression)


def _whole_month(text: str, now: datetime) -> TimeHint | None:
    """A month named in `text` ("August", "August 2026"), read as `in August` is; None for anything else."""
    hint = _read(_as_period(text), now)
    return hint if hint is not None and "month" in hint.parts and "day" not in hint.parts else None


_COUNTS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
           "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "few": 3, "couple of": 2}


def _rolling(expression: str, now: datetime) -> TimeHint | None:
    """"the last two weeks", "the past 3 months", "the past year": that long up to now (not calendar
    periods: "last week" is one). No single part pins it down."""
    match = re.fullmatch(rf"(?:the\s+)?(?:last|past)\s+(?:({_NUM}|few|couple\s+of)\s+)?(hour|day|week|month|year)s?",
                         expression.strip(), re.IGNORECASE)
    if match is None or (match[1] is None and expression.split()[-2].lower() == "last"):
        return None  # "last week" is the calendar week before this one: dateparser's
    said = " ".join((match[1] or "one").lower().split())
    count, unit = int(said) if said.isdigit() else _COUNTS[said], match[2].lower()
    if unit in ("month", "year"):
        start = _months_back(now, count * (12 if unit == "year" else 1))
    else:
        start = now - timedelta(**{f"{unit}s": count})
    return TimeHint(parts={}, start=start, end=now, expression=expression,
                    reading=f"the last {count} {unit}{'s' if count != 1 else ''}")


def _months_back(moment: datetime, months: int) -> datetime:
    """The same day `months` months before `moment` (the month's last day when it has no such day)."""
    year, month = divmod(moment.year * 12 + moment.month - 1 - months, 12)
    for day in range(moment.day, 27, -1):
        try:
            return moment.replace(year=year, month=month + 1, day=day)
        except ValueError:
            continue
    return moment.replace(year=year, month=month + 1, day=min(moment.day, 28))


def _season(expression: str, now: datetime) -> TimeHint | None:
    """"in spring", "over the summer", "in summer 2026": the season of that year, or the latest one begun
    (the one under way included: "in winter" asked on 7 December is the winter just begun). "this" and
    "last" seasons are `_named_period`'s."""
    match = re.fullmatch(rf"(?:(?:in|during|over|through|throughout)\s+)?(?:the\s+)?({_SEASON})"
                         r"(?:\s+(?:of\s+)?((?:19|20)\d{2}))?", expression.strip(), re.IGNORECASE)
    if match is None:
        return None
    first, months = _SEASONS[match[1].lower()]
    local = now.replace(tzinfo=None)
    start = datetime(int(match[2]) if match[2] else local.year, first, 1)
    if match[2] is None and start > local:
        start = start.replace(year=start.year - 1)
    end = _add_months(start, months)
    parts = {"year": start.year} if start.year == (end - timedelta(days=1)).year else {}
    return _span(start.replace(tzinfo=now.tzinfo), end.replace(tzinfo=now.tzinfo), parts, expression)


def _add_months(start: datetime, months: int) -> datetime:
    for _ in range(months):
        start = _next_month(start)
    return start


def _period(moment: datetime, period: str) -> tuple[datetime, datetime, dict[str, int]]:
    day0 = moment.replace(hour=0, minute=0, second=0, microsecond=0)
    if period == "year":
        start = day0.replace(month=1, day=1)
        return start, start.replace(year=start.year + 1), {"year": start.year}
    if period == "month":
        start = day0.replace(day=1)
        return start, _next_month(start), {"year": start.year, "month": start.month}
    if period == "week":
        start = day0 - timedelta(days=day0.weekday())
        iso = start.isocalendar()
        return start, start + timedelta(days=7), {"year": iso.year, "week": iso.week}
    if period == "time":
        start = moment.replace(minute=0, second=0, microsecond=0)
        return start, start + timedelta(hours=1), {"year": start.year, "month": start.month,
                                                   "day": start.day, "hour": start.hour}
    return day0, day0 + timedelta(days=1), {"year": day0.year, "month": day0.month, "day": day0.day}


def _part_of_day(moment: datetime, word: str, expression: str, tz) -> TimeHint:
    first, last = _PART_HOURS[word.lower()]
    day0 = moment.replace(hour=0, minute=0, second=0, microsecond=0)
    start, end = day0 + timedelta(hours=first), day0 + timedelta(hours=last)
    return TimeHint(parts={"year": day0.year, "month": day0.month, "day": day0.day},
                    start=start.replace(tzinfo=tz), end=end.replace(tzinfo=tz), expression=expression)


def range_of_parts(parts: dict[str, int], now: datetime) -> tuple[datetime, datetime] | None:
    """The [start, end) a set of parts pins down when year is known (an LLM's answer), else None."""
    year = parts.get("year")
    if year is None or year < 1:
        return None
    tz = now.tzinfo or UTC
    try:
        if "week" in parts and "month" not in parts:
            start = datetime.fromisocalendar(year, parts["week"], 1).replace(tzinfo=tz)
            return start, start + timedelta(days=7)
        if "month" not in parts:
            start = datetime(year, 1, 1, tzinfo=tz)
            return start, start.replace(year=year + 1)
        if "day" not in parts:
            start = datetime(year, parts["month"], 1, tzinfo=tz)
            end = _next_month(start)
            return start, end
        start = datetime(year, parts["month"], parts["day"], tzinfo=tz)
        if "hour" in parts:
            start += timedelta(hours=parts["hour"])
            return start, start + timedelta(hours=1)
        return start, start + timedelta(days=1)
    except ValueError:
        return None


def _next_month(start: datetime) -> datetime:
    """The first day of the month after `start`'s (whose day must be 1)."""
    if start.month == 12:
        return start.replace(year=start.year + 1, month=1)
    return start.replace(month=start.month + 1)


def window_bound(text: str, now: datetime, *, end: bool = False) -> datetime | None:
    """A bound of a time window written by a person (the CLI's --since and --until), aware, in UTC:
    a moment as written in ISO form; a period from its start, or as the window's end to its end ("today",
    "this morning", "March 2026", "2026-03", "last week", a date alone). None when the text is no time, an
    impossible ISO date ("2026-13-01") included: it is not read another way.

    "today" as --since read as this very moment, and "2026-03" as the 6th of March when today was a 6th:
    the periods are the retrieval's own (`parse_time_hint`), so "in March" means the same everywhere."""
    text = " ".join(text.split())
    now = now if now.tzinfo else now.replace(tzinfo=UTC)
    if re.fullmatch(r"\d{4}/\d{1,2}/\d{1,2}", text):
        text = "-".join(f"{int(n):02d}" for n in text.split("/"))
    if re.fullmatch(_MONTHS, text, re.IGNORECASE):  # "March" alone: the month, as "in March" reads
        text = f"in {text}"
    span = None
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):  # a day: all of it
        try:
            day = datetime.fromisoformat(text).replace(tzinfo=now.tzinfo)
        except ValueError:
            return None
        span = (day, day + timedelta(days=1))
    elif re.fullmatch(r"(?:19|20)\d{2}", text):  # a year
        first = datetime(int(text), 1, 1, tzinfo=now.tzinfo)
        span = (first, first.replace(year=first.year + 1))
    elif month := re.fullmatch(r"(\d{4})-(\d{1,2})", text):
        if not 1 <= int(month[2]) <= 12:
            return None
        first = datetime(int(month[1]), int(month[2]), 1, tzinfo=now.tzinfo)
        span = (first, _next_month(first))
    elif re.fullmatch(r"\d{4}-\d{1,2}-\d{1,2}\b.*", text):  # a moment in ISO form
        try:
            moment = datetime.fromisoformat(text)
        except ValueError:
            return None
        return (moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment).astimezone(UTC)
    elif re.fullmatch(rf"{_NUM}\s+(?:minute|hour)s?\s+ago", text, re.IGNORECASE):
        return _moment(text, now)  # as exact as it was said
    elif (hint := parse_time_hint(text, now)) is not None and len(hint.expression) >= len(text) - 3:
        span = (hint.start, hint.end)  # the whole text is the expression (give or take "in", "on", "at")
    if span is not None:
        return span[end].astimezone(UTC)
    return _moment(text, now)


def _moment(text: str, now: datetime) -> datetime | None:
    """What `parse_time_hint` does not read as a period ("1765000000", "2 hours ago" as written)."""
    import dateparser

    when = dateparser.parse(text, languages=["en"], settings={
        "TIMEZONE": "UTC", "TO_TIMEZONE": "UTC", "RETURN_AS_TIMEZONE_AWARE": True, "PREFER_DATES_FROM": "past",
        "RELATIVE_BASE": now.astimezone(UTC).replace(tzinfo=None)})
    return when.astimezone(UTC) if when is not None else None


# The last instant of a period, before the next one starts: times are kept to the microsecond.
PERIOD_END = timedelta(microseconds=1)
WINDOW_HELP = "2025-11-01, 2025-11, 2025, 'today', 'last week', '7 days ago' or an ISO time"


def read_bound(text: str, now: datetime, *, end: bool, name: str) -> datetime:
    """One bound of a window as a person writes it (`window_bound`): a period counts whole, from its start
    as a start (`end` False) and to its last microsecond as an end, so adjacent periods share no instant
    ("--until 2026-12-04" and "--since 2026-12-05"). InvalidInput naming the bound (`name`) when it is no
    time, or a period whose end passes the last date there is ("9999-12-31")."""
    try:
        when = window_bound(text, now, end=end)
        if end and when is not None and when != window_bound(text, now):  # a period: its last instant
            when -= PERIOD_END
    except (OverflowError, ValueError):  # the period's other end past year 9999
        raise InvalidInput(f"{name}: {text!r} reaches past the last date there is (9999-12-31)") from None
    if when is None:
        raise InvalidInput(f"{name}: could not read {text!r} as a date; try {WINDOW_HELP}")
    return when


def read_window(since: str | None, until: str | None, names: tuple[str, str] = ("since", "until")
                ) -> tuple[datetime | None, datetime | None]:
    """A window's two bounds as a person writes them (`read_bound`; None: open), refused the wrong way
    round; `names` as the front end calls them (the CLI's "--since", the API's "since")."""
    now = datetime.now(UTC)
    start = None if since is None else read_bound(since, now, end=False, name=names[0])
    stop = None if until is None else read_bound(until, now, end=True, name=names[1])
    if start and stop and start > stop:
        raise InvalidInput(f"{names[0]} must not be after {names[1]}")
    return start, stop
