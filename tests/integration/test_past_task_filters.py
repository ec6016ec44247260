"""Past tasks narrowed by task type and produced date, on real Postgres, through every front end: the core
search and listing, `workbench tasks search|list --type --since --until`, the HTTP API on a real uvicorn,
and the MCP tool through the SDK's client at /mcp of that server.

The seed's rules hold inside the filter: the user's own texts only, each execution's latest version with
a vector (its date is the one filtered), strictly below max_distance, at most n_max, deleted texts left
out. Both days of a range are included, read as the feedback's --since/--until read them.

The keyword embedder makes every distance a formula: a text's vector counts its vocabulary words. Task
types are one table for every instance, so each test names its own (`kinds`).
"""

from __future__ import annotations

import json
import math
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, date, datetime

import anyio
import httpx
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from pydantic import ValidationError

from core import usecases as uc
from core.errors import InvalidInput
from core.mcp.server import MCP_PATH
from core.past_tasks.models import period_label
from core.past_tasks.search import search_past_tasks
from tests.support.api import assert_problem, thread_server
from tests.support.cli import in_process_cli
from tests.support.mcp_client import failure, ok, refused

NOV_1 = datetime(2025, 11, 1, tzinfo=UTC)
NOV_30_LAST_MINUTE = datetime(2025, 11, 30, 23, 59, tzinfo=UTC)
DEC_1 = datetime(2025, 12, 1, tzinfo=UTC)
TRAVEL_DISTANCE = 1 - 1 / math.sqrt(2)  # "budget" against a text of "budget" and "travel"


@pytest.fixture
def kinds(instance) -> dict[str, str]:
    """This test's task type names: the type table is shared by every instance (and every test)."""
    tag = instance[-8:]
    return {"email": f"email {tag}", "note": f"note {tag}", "plan": f"plan {tag}"}


def text(instance, kind, title, production, at, *, user="ann", **kw) -> uc.ProducedTextInput:
    return uc.ProducedTextInput(instance=instance, user_id=user, task=kind, title=title, production=production,
                                created_at=at, **kw)


@pytest.fixture
def texts(keyword_workbench, instance, kinds) -> dict[str, int]:
    """Ann's texts around November 2025 (and one of Bob's, one Ann deleted), by name -> execution pk."""
    email, note = kinds["email"], kinds["note"]
    items = {
        "first instant": text(instance, email, "budget", "budget", NOV_1),
        "last minute": text(instance, email, "budget", "travel", NOV_30_LAST_MINUTE),
        "december": text(instance, email, "budget", "budget", DEC_1),
        "a note": text(instance, note, "budget", "budget", datetime(2025, 11, 15, tzinfo=UTC)),
        "bob's": text(instance, email, "budget", "budget", datetime(2025, 11, 10, tzinfo=UTC), user="bob"),
        "deleted": text(instance, email, "budget", "budget", datetime(2025, 11, 11, tzinfo=UTC)),
    }
    stored = keyword_workbench.past_tasks.ingest(list(items.values()))
    pks = {name: s.user_task_execution_pk for name, s in zip(items, stored, strict=True)}
    keyword_workbench.past_tasks.mark_deleted(instance, "ann", pks["deleted"])
    return pks


def query(instance, q="budget", **kw) -> uc.PastTaskQuery:
    return uc.PastTaskQuery(instance=instance, user_id="ann", query=q, **kw)


def test_the_search_keeps_the_types_and_days_asked_for_and_the_seeds_rules(
        keyword_workbench, instance, kinds, texts):
    wb = keyword_workbench
    found = search_past_tasks(wb.pool(), wb.embedder, query(
        instance, max_distance=0.5, task_types=[kinds["email"]], date_from="2025-11-01", date_to="2025-11-30"))
    # Both edges of November are in, December's first instant is not; the note, Bob's text and the
    # deleted one never are. Nearest first.
    assert [(h.user_task_execution_pk, round(h.distance, 6)) for h in found.hits] == [
        (texts["first instant"], 0.0), (texts["last minute"], round(TRAVEL_DISTANCE, 6))]
    assert (found.candidates, found.searchable) == (2, 4)  # Ann's searchable texts: all but the deleted one
    assert {h.task_name for h in found.hits} == {kinds["email"]}
    # max_distance stays strict and n_max still counts, inside the filter.
    strict = search_past_tasks(wb.pool(), wb.embedder, query(
        instance, max_distance=found.hits[1].distance, task_types=[kinds["email"]], date_to="2025-11"))
    assert [h.user_task_execution_pk for h in strict.hits] == [texts["first instant"]]
    one = search_past_tasks(wb.pool(), wb.embedder, query(instance, max_distance=2, n_max=1, date_from="2025-12"))
    assert ([h.user_task_execution_pk for h in one.hits], one.candidates) == ([texts["december"]], 1)
    # Two types, and a range given as dates (as the page sends them): a day counts whole.
    both = search_past_tasks(wb.pool(), wb.embedder, query(
        instance, max_distance=2, task_types=[kinds["note"], kinds["email"]], date_from=date(2025, 11, 15),
        date_to=date(2025, 11, 30)))
    assert {h.user_task_execution_pk for h in both.hits} == {texts["a note"], texts["last minute"]}


def test_an_older_version_inside_the_range_does_not_bring_a_text_back(keyword_workbench, instance, kinds):
    """The date filtered is the latest version's (the one the search reads and every front end shows)."""
    store = keyword_workbench.past_tasks
    [v1] = store.ingest([text(instance, kinds["plan"], "budget", "budget", datetime(2025, 11, 10, tzinfo=UTC),
                              source_key="plan.md")])
    [v2] = store.ingest([text(instance, kinds["plan"], "budget", "travel", datetime(2025, 12, 5, tzinfo=UTC),
                              source_key="plan.md")])
    november = {"date_from": "2025-11", "date_to": "2025-11"}
    nov = search_past_tasks(keyword_workbench.pool(), keyword_workbench.embedder,
                            query(instance, max_distance=2, **november))
    assert (nov.hits, nov.candidates) == ([], 0)
    dec = search_past_tasks(keyword_workbench.pool(), keyword_workbench.embedder,
                            query(instance, max_distance=2, date_from="2025-12"))
    assert [h.version_pk for h in dec.hits] == [v2.version_pk] and v2.version_pk != v1.version_pk
    listed = uc.list_texts(keyword_workbench, uc.ListTexts(instance=instance, user_id="ann", **november))
    assert listed == []
    [latest] = uc.list_texts(keyword_workbench, uc.ListTexts(instance=instance, user_id="ann", date_to="2025-12-05"))
    assert (latest.versions, latest.production) == (2, "travel")


def test_the_listing_takes_the_same_filter(keyword_workbench, instance, kinds, texts):
    def listed(**kw) -> list[int]:
        req = uc.ListTexts(instance=instance, user_id="ann", with_text=False, **kw)
        return [t.user_task_execution_pk for t in uc.list_texts(keyword_workbench, req)]

    # Newest first; the listing shows deleted texts (marked), as it always did.
    assert listed(task_types=[kinds["email"]], date_from="2025-11-01", date_to="2025-11-30") == [
        texts["last minute"], texts["deleted"], texts["first instant"]]
    assert listed(task_types=[kinds["note"].upper()]) == [texts["a note"]]  # names as stored: lower case
    assert listed(date_from="2025-12-01") == [texts["december"]]
    assert listed(date_to="2025-11-01") == [texts["first instant"]]
    assert len(listed()) == 5


def test_an_unknown_type_is_refused_naming_the_types_and_nothing_is_recorded(keyword_workbench, instance, kinds,
                                                                             texts):
    wb = keyword_workbench
    with pytest.raises(InvalidInput) as refused_search:
        uc.internal_memory(wb, query(instance, task_types=[kinds["email"] + "s"]), execution_id=f"x-{instance}")
    message = str(refused_search.value)
    # Only this instance's types are named: the table serves every instance, each key sees its own.
    assert message == (f"no task type named '{kinds['email']}s' in instance {instance!r} (did you mean "
                       f"'{kinds['email']}'?); its task types are: {kinds['email']}, {kinds['note']}")
    # Refused before the execution was recorded: its id may still make its one query.
    assert uc.tool_history(wb, uc.HistoryRequest(instance=instance, user_id="ann")) == []
    assert uc.internal_memory(wb, query(instance), execution_id=f"x-{instance}").search.hits
    with pytest.raises(InvalidInput, match=f"no task type named 'nothing like it' in instance '{instance}'; its"):
        uc.list_texts(wb, uc.ListTexts(instance=instance, user_id="ann", task_types=["nothing like it"]))
    # A type of another instance is no type here.
    other = f"{instance}-b"
    wb.past_tasks.ingest([text(other, kinds["plan"], "budget", "budget", NOV_1)])
    with pytest.raises(InvalidInput, match=f"no task type named '{kinds['plan']}' in instance '{instance}'"):
        uc.list_texts(wb, uc.ListTexts(instance=instance, user_id="ann", task_types=[kinds["plan"]]))
    assert [t.task_name for t in uc.list_texts(wb, uc.ListTexts(instance=other, user_id="ann",
                                                                task_types=[kinds["plan"]]))] == [kinds["plan"]]


@pytest.mark.parametrize(("fields", "wrong"), [
    ({"date_from": "yesterday-ish"}, "date_from: could not read 'yesterday-ish' as a date; try 2025-11-01"),
    ({"date_to": "2025-13-01"}, "date_to: could not read '2025-13-01' as a date"),
    # The day's end is the next day's start, past datetime's range: refused, not an "Unexpected OverflowError".
    ({"date_to": "9999-12-31"}, "date_to: '9999-12-31' reaches past the last date there is (9999-12-31)"),
    ({"date_from": "9999-12"}, "date_from: '9999-12' reaches past the last date there is"),
    ({"date_from": "2025-12", "date_to": "2025-11"}, "date_from: must not be after date_to"),
    ({"task_types": [" "]}, "task_types: String should have at least 1 character, not ' '"),
    ({"task_types": "email"}, "task_types: Input should be a valid list"),
])
def test_a_bad_filter_is_refused_naming_the_field(fields, wrong):
    with pytest.raises(ValidationError) as refused_filter:
        query("t", **fields)
    assert wrong in failure(lambda: query("t", **fields)), refused_filter.value


def test_nothing_within_says_whether_the_filter_or_the_distance_left_nothing(keyword_workbench, instance, kinds,
                                                                             texts):
    wb = keyword_workbench
    none_match = uc.internal_memory(wb, query(instance, task_types=[kinds["note"]], date_from="2025-12"))
    assert none_match.nothing_within == (
        f"None of the 4 searchable past tasks of user 'ann' matches the filter ({kinds['note']} · from 1 Dec 2025);"
        " widen it.")
    far = uc.internal_memory(wb, query(instance, "dog", task_types=[kinds["email"]], date_to="2025-11-30"))
    assert far.nothing_within == (f"Nothing within distance 0.20; the nearest past task ({kinds['email']} · until "
                                  "30 Nov 2025) is at 1.0000.")
    nobody = uc.internal_memory(wb, uc.PastTaskQuery(instance=instance, user_id="anne", query="budget",
                                                     task_types=[kinds["email"]]))
    assert nobody.nothing_within.startswith("User 'anne' has no searchable past tasks")


def test_the_filter_is_recorded_with_the_query_in_the_history(keyword_workbench, instance, kinds, texts):
    wb = keyword_workbench
    uc.internal_memory(wb, query(instance, max_distance=0.5, task_types=[kinds["email"]], date_from="2025-11-01",
                                 date_to="2025-11-30"))
    [past] = uc.tool_history(wb, uc.HistoryRequest(instance=instance, user_id="ann"))
    assert past.result.query.label() == f"{kinds['email']} · 1–30 Nov 2025"
    assert past.result.query.date_to == datetime(2025, 11, 30, 23, 59, 59, 999999, tzinfo=UTC)
    assert len(past.result.references) == 2


def test_the_bounds_read_as_the_feedback_window_reads_them():
    """A filter's bounds are read by the rules every window's are (`read_window`, which the feedback's
    --since/--until use too): the same instants for every way of writing a bound."""
    for since, until in [("2025-11-01", "2025-11-30"), ("2025-11", "2025-11"), ("2025", None), (None, "2025"),
                         ("last week", "yesterday"), ("March 2025", "2025/03/31"),
                         ("2025-11-03T10:00:00+02:00", "2025-11-03T18:00:00Z")]:
        f = uc.PastTaskFilter(date_from=since, date_to=until)
        assert (f.date_from, f.date_to) == uc.read_window(since, until), (since, until)


def test_the_period_label():
    def at(*parts) -> datetime:
        return datetime(*parts, tzinfo=UTC)

    end_of = (23, 59, 59, 999999)
    assert period_label(at(2025, 11, 1), at(2025, 11, 30, *end_of)) == "1–30 Nov 2025"
    assert period_label(at(2025, 10, 28), at(2025, 11, 3, *end_of)) == "28 Oct – 3 Nov 2025"
    assert period_label(at(2024, 12, 28), at(2025, 1, 3, *end_of)) == "28 Dec 2024 – 3 Jan 2025"
    assert period_label(at(2025, 11, 3), at(2025, 11, 3, *end_of)) == "3 Nov 2025"
    assert period_label(at(2025, 11, 1), None) == "from 1 Nov 2025"
    assert period_label(None, at(2025, 11, 30, *end_of)) == "until 30 Nov 2025"
    assert period_label(at(2025, 11, 3, 8), at(2025, 11, 3, 18)) == "3 Nov 2025 08:00 – 3 Nov 2025 18:00"
    assert period_label(None, None) is None


# -- the command line ---------------------------------------------------------------------------------

def test_the_cli_takes_type_since_and_until(settings, keyword_workbench, instance, kinds, texts, monkeypatch):
    cli = in_process_cli(settings, keyword_workbench, monkeypatch)
    email = kinds["email"]
    code, out, err = cli("--instance", instance, "tasks", "search", "budget", "--user", "ann", "--max-distance",
                         "0.5", "--type", email, "--since", "2025-11-01", "--until", "2025-11-30")
    assert code == 0, err
    assert [r["user_task_execution_pk"] for r in json.loads(out)] == [texts["first instant"], texts["last minute"]]
    assert f"2 of the 2 past tasks searched ({email} · 1–30 Nov 2025) within distance 0.50" in err
    code, out, err = cli("--instance", instance, "tasks", "list", "--user", "ann", "--type", email, "--type",
                         kinds["note"], "--since", "2025-11-15", "--until", "2025-11")
    assert code == 0, err
    assert [t["user_task_execution_pk"] for t in json.loads(out)] == [texts["last minute"], texts["a note"]]
    assert err.strip() == f"2 produced texts ({email}, {kinds['note']} · 15–30 Nov 2025)"

    unknown_type = f"error: no task type named '{email}s' in instance '{instance}' (did you mean '{email}'?)"
    for args, wrong in [(["--type", f"{email}s"], unknown_type),
                        (["--since", "yesterday-ish"], "error: --since: could not read 'yesterday-ish' as a date"),
                        (["--since", "2025-12", "--until", "2025-11"], "error: --since must not be after --until"),
                        (["--until", "9999-12-31"], "error: --until: '9999-12-31' reaches past the last date")]:
        for command in (["search", "budget"], ["list"]):
            code, out, err = cli("--instance", instance, "tasks", *command, "--user", "ann", *args)
            assert code == 2 and out == "", (command, args, err)
            [line] = err.strip().splitlines()
            assert line.startswith(wrong), (command, args, line)
    # The feedback's window is read by the same rules: its last day was an "Unexpected OverflowError".
    code, out, err = cli("--instance", instance, "feedback", "summary", "--since", "9999-12-31")
    assert code == 2 and err.strip() == "error: --since: '9999-12-31' reaches past the last date there is (9999-12-31)"


# -- the HTTP API and the MCP tool on a real uvicorn -----------------------------------------------------

@pytest.fixture(scope="module")
def server(keyword_workbench):
    with thread_server(keyword_workbench) as url:
        yield url


@pytest.fixture
def key(keyword_workbench, instance) -> dict[str, str]:
    created = uc.create_key(keyword_workbench, uc.CreateKey(name=f"k-{instance}", instances=[instance]))
    return {"Authorization": f"Bearer {created.secret}"}


def test_the_http_api_takes_the_filter_in_the_body_and_the_query_string(server, key, instance, kinds, texts):
    with httpx.Client(base_url=f"{server}/v1/instances/{instance}/past-tasks", headers=key, timeout=60) as c:
        found = c.post("/search", json={"user_id": "ann", "query": "budget", "max_distance": 0.5,
                                        "task_types": [kinds["email"]], "date_from": "2025-11",
                                        "date_to": "2025-11-30"})
        assert found.status_code == 200, found.text
        body = found.json()
        assert [h["user_task_execution_pk"] for h in body["search"]["hits"]] == [
            texts["first instant"], texts["last minute"]]
        assert (body["search"]["candidates"], body["search"]["searchable"]) == (2, 4)
        assert body["query"]["date_to"] == "2025-11-30T23:59:59.999999Z"

        listed = c.get("/texts", params={"user_id": "ann", "task_types": [kinds["email"], kinds["note"]],
                                         "date_from": "2025-11-15", "date_to": "2025-11-30"})
        assert listed.status_code == 200, listed.text
        assert [t["user_task_execution_pk"] for t in listed.json()] == [texts["last minute"], texts["a note"]]
        assert all(t["production"] == "" for t in listed.json())  # titles only unless with_text

        unknown = assert_problem(c.post("/search", json={"user_id": "ann", "query": "budget",
                                                         "task_types": ["no such type"]}), 422, "invalid_input")
        assert unknown["detail"] == (f"no task type named 'no such type' in instance {instance!r}; its task types "
                                     f"are: {kinds['email']}, {kinds['note']}")
        assert assert_problem(c.get("/texts", params={"user_id": "ann", "date_to": "soonish"}), 422,
                              "invalid_input")["detail"] == (
            "invalid input — date_to: could not read 'soonish' as a date; try 2025-11-01, 2025-11, 2025, "
            "'today', 'last week', '7 days ago' or an ISO time")
        assert_problem(c.get("/texts", params={"user_id": "ann", "task_types": [kinds["email"] + "s"]}), 422,
                       "invalid_input")

    spec = httpx.get(f"{server}/openapi.json").json()
    listing = spec["paths"]["/v1/instances/{instance}/past-tasks/texts"]["get"]
    params = {p["name"]: p for p in listing["parameters"] if p["in"] == "query"}
    assert set(params) == {"user_id", "task_types", "date_from", "date_to", "limit", "with_text"}
    assert params["task_types"]["schema"]["type"] == "array"
    for name in ("task_types", "date_from", "date_to"):
        assert params[name]["description"] == uc.ListTexts.model_fields[name].description
    ref = spec["paths"]["/v1/instances/{instance}/past-tasks/search"]["post"]["requestBody"]["content"][
        "application/json"]["schema"]["$ref"]
    searched = spec["components"]["schemas"][ref.rsplit("/", 1)[1]]["properties"]
    assert {"task_types", "date_from", "date_to"} <= set(searched)
    assert "2025-11-30' includes the 30th" in searched["date_to"]["description"]


@asynccontextmanager
async def mcp_session(url: str, headers: dict[str, str]) -> AsyncIterator[ClientSession]:
    async with (httpx2.AsyncClient(timeout=httpx2.Timeout(60.0), headers=headers) as client,
                streamable_http_client(url, http_client=client) as (read, write),
                ClientSession(read, write) as session):
        await session.initialize()
        yield session


def test_the_mcp_tool_takes_task_types_and_dates(server, key, instance, kinds, texts):
    async def scenario() -> None:
        async with mcp_session(f"{server}{MCP_PATH}", key) as s:
            tool = next(t for t in (await s.list_tools()).tools if t.name == "internal_memory")
            props = tool.input_schema["properties"]
            assert tool.input_schema["required"] == ["user_id", "query"]  # the seed's query, and whose texts
            for name in ("task_types", "date_from", "date_to"):
                assert props[name]["description"] == uc.PastTaskQuery.model_fields[name].description
            assert props["date_to"]["anyOf"] == [{"type": "string"}, {"type": "null"}]  # a day as written
            assert "`task_types`" in tool.description and "`date_from` / `date_to`" in tool.description

            found = await ok(s, "internal_memory", {"instance": instance, "user_id": "ann", "query": "budget",
                                                    "max_distance": 0.5, "task_types": [kinds["email"]],
                                                    "date_from": "2025-11-01", "date_to": "2025-11-30"})
            assert [r["user_task_execution_pk"] for r in found["keypoints"]["references"]] == [
                texts["first instant"], texts["last minute"]]
            # A list sent as JSON text, as some desktop clients send nested arguments, is read as the list.
            as_text = await ok(s, "internal_memory", {"instance": instance, "user_id": "ann", "query": "budget",
                                                      "task_types": json.dumps([kinds["note"]])})
            assert [h["user_task_execution_pk"] for h in as_text["search"]["hits"]] == [texts["a note"]]

            wrong_type = await refused(s, "internal_memory", {"instance": instance, "user_id": "ann",
                                                              "query": "budget", "task_types": ["emails"]})
            assert wrong_type == (f"no task type named 'emails' in instance {instance!r}; its task types are: "
                                  f"{kinds['email']}, {kinds['note']}")
            arguments = {"user_id": "ann", "query": "budget", "date_to": "soonish"}
            assert await refused(s, "internal_memory", {"instance": instance, **arguments}) == failure(
                lambda: uc.PastTaskQuery(instance=instance, **arguments))

    anyio.run(scenario)
