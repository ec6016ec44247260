"""A memory's time, for a time window on the event time and in print_memory's line, is when what it says
happened: its own event time when it has one, else when it was stored (`hybrid_sql.WINDOW`,
`core.index.records`). A window on the stored time (the default) reads when it was stored."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from core.conversation.turn import Remember, UiRememberParams
from core.index.records import event_time_of
from core.models import EventTime, MemoryRecord
from core.retrieval.hybrid import SearchRequest, hybrid_search
from core.retrieval.hybrid_sql import WINDOW, window_params
from core.retrieval.memoryscope import ScopeParams, run_memoryscope
from core.retrieval.timeparse import parse_time_hint
from core.usecases.memories import AddMemory, add_memory


def event_period(ev: EventTime) -> tuple[datetime, datetime] | None:
    """The period an event time's known parts cover, in UTC; None without a year."""
    if ev.year < 0:
        return None
    if ev.month < 1:
        start = datetime(ev.year, 1, 1, tzinfo=UTC)
        return start, start.replace(year=ev.year + 1)
    if ev.day < 1:
        start = datetime(ev.year, ev.month, 1, tzinfo=UTC)
        return start, (start + timedelta(days=32)).replace(day=1)
    if ev.hour < 0:
        start = datetime(ev.year, ev.month, ev.day, tzinfo=UTC)
        return start, start + timedelta(days=1)
    start = datetime(ev.year, ev.month, ev.day, ev.hour, tzinfo=UTC)
    return start, start + timedelta(hours=1)


def in_window(r: MemoryRecord, since: datetime | None, until: datetime | None) -> bool:
    """The rule, written plainly: an event time of its own (known, and not the hour the memory was stored)
    when its period overlaps [since, until); else the stored time within it."""
    period = event_period(r.event_time)
    stored_hour = r.created_at.astimezone(UTC).replace(minute=0, second=0, microsecond=0)
    own = period is not None and (r.event_time.hour < 0 or period[0] != stored_hour)
    if own:
        return (since is None or period[1] > since) and (until is None or period[0] < until)
    return (since is None or r.created_at >= since) and (until is None or r.created_at < until)


def test_the_window_sql_follows_the_rule(keyword_workbench, instance):
    rng = random.Random(7)
    base = datetime(2024, 5, 1, tzinfo=UTC)

    def moment() -> datetime:
        return base + timedelta(minutes=rng.randrange(0, 90 * 24 * 60))

    records = []
    for i in range(240):
        at = moment()
        said = moment()
        ev = rng.choice([
            event_time_of(at),  # a message: its event time is the moment it was said (to the hour)
            EventTime(),  # an added memory given no event time
            event_time_of(said),  # an event time given to the hour
            event_time_of(said.date()),  # a day
            EventTime(year=said.year, month=said.month),  # a month
            EventTime(year=said.year),  # a year
        ])
        records.append(MemoryRecord(instance=instance, id=f"m{i}", kind="observation", content=f"memory {i}",
                                    created_at=at, event_time=ev))
    keyword_workbench.index.add(records)
    with keyword_workbench.pool().connection() as conn:
        query = "SELECT m.id FROM memory m WHERE m.instance = %(instance)s AND " + WINDOW.as_string(conn)
        for _ in range(150):
            since, until = sorted([moment(), moment()])
            since = rng.choice([since, since.replace(minute=0), None])
            until = rng.choice([until, until.replace(minute=0), None])
            if since is None and until is None:
                continue
            got = {r[0] for r in conn.execute(query, {"instance": instance} | window_params(since, until))}
            want = {r.id for r in records if in_window(r, since, until)}
            assert got == want, (since, until, sorted(got ^ want))


def bicycle_instance(wb, instance: str) -> None:
    add_memory(wb, AddMemory(instance=instance, content="Ivan bought a red bicycle.",
                             event_time="2024-06-03"))
    add_memory(wb, AddMemory(instance=instance, content="Ivan's bicycle has a wicker basket."))  # no event


def searched(wb, instance: str, temporal: str, time_of: str) -> list[str]:
    hint = parse_time_hint(temporal, datetime.now(UTC))
    found = hybrid_search(wb.search_pool(), wb.embedder, SearchRequest(
        query="What about Ivan's bicycle?", instance=instance, since=hint.start, until=hint.end,
        time_of=time_of))
    return [m.memory.content for m in found.results]


def test_a_window_on_the_event_time_finds_a_memory_by_its_event_date(workbench, instance):
    bicycle_instance(workbench, instance)
    assert searched(workbench, instance, "in June 2024", "event") == ["Ivan bought a red bicycle."]
    # Stored today, it happened in June 2024; the basket, given no event time, is today's.
    assert searched(workbench, instance, "today", "event") == ["Ivan's bicycle has a wicker basket."]
    assert searched(workbench, instance, "in July 2024", "event") == []
    # On the stored time (the default: "said before the correction", the explorer's dates) both are today's.
    assert sorted(searched(workbench, instance, "today", "stored")) == [
        "Ivan bought a red bicycle.", "Ivan's bicycle has a wicker basket."]
    assert searched(workbench, instance, "in June 2024", "stored") == []


def test_ui_remember_temporal_finds_a_memory_by_its_event_date(workbench, instance):
    bicycle_instance(workbench, instance)

    def context(temporal: str) -> list[str]:
        r = Remember(workbench).run(UiRememberParams(thought="What about Ivan's bicycle?", temporal=temporal),
                                    instance=instance)
        return [c.content for c in r.context]

    assert context("in June 2024") == ["Ivan bought a red bicycle."]
    assert context("today") == ["Ivan's bicycle has a wicker basket."]


def test_a_window_keeps_messages_by_when_they_were_said(keyword_workbench, instance):
    said = datetime(2024, 6, 3, 10, 40, tzinfo=UTC)
    keyword_workbench.index.add([MemoryRecord(instance=instance, id="msg", kind="user", content="sushi food",
                                              created_at=said, chain_id="c", event_time=event_time_of(said))])

    def found(since, until):
        out = hybrid_search(keyword_workbench.search_pool(), keyword_workbench.embedder, SearchRequest(
            query="sushi food", instance=instance, since=since, until=until, time_of="event"), now=said)
        return [m.memory.id for m in out.results]

    at = lambda h, m: datetime(2024, 6, 3, h, m, tzinfo=UTC)
    assert found(at(10, 30), at(10, 45)) == ["msg"]
    assert found(at(10, 50), at(11, 50)) == []  # the hour it was said overlaps; the moment does not
    assert found(at(10, 0), None) == ["msg"] and found(None, at(10, 40)) == []


def test_print_memory_adds_the_event_date_to_the_stored_time(workbench, instance):
    bicycle_instance(workbench, instance)
    r = run_memoryscope(workbench, "Ivan bicycle bought", instance=instance,
                        params=ScopeParams.from_flat({"op.retrieve_memory_op.params.top_k": 2}))
    lines = dict(zip([m.memory.content for m in r.memories], r.formatted, strict=True))
    today = f"[{datetime.now(UTC):%Y-%m-%d} "
    assert lines["Ivan bought a red bicycle."].startswith(today)
    assert lines["Ivan bought a red bicycle."].endswith("] Ivan bought a red bicycle. (event 2024-06-03)")
    assert lines["Ivan's bicycle has a wicker basket."].endswith("] Ivan's bicycle has a wicker basket.")
    assert "Ivan bought a red bicycle. (event 2024-06-03)" in r.answer
