"""The feedback summary over MCP (`feedback_summary`) and the empty periods of `by=day|week`.

An assistant (or its developer) asking "how were my answers rated this week, by model?" over MCP had no
tool for it: the tool calls the use case the CLI and the HTTP API call, with their request, scoped by the
caller's API key. Driven by the MCP SDK's own client at /mcp of the API on a real uvicorn, beside the
HTTP API and the CLI on the same data. Three weeks of turns, the middle one without any: `by=week` and
`by=day` list it (and its days) with 0 answers, where they listed nothing while the chart showed the gap."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta

import anyio
import httpx
import httpx2
import pytest
from click.testing import CliRunner
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from core import usecases as uc
from core.cli import cli, main
from core.conversation.turn import Remember, UiRememberParams
from core.mcp.server import MCP_PATH
from core.runtime import Workbench
from tests.support.api import thread_server
from tests.support.embedders import KeywordEmbedder
from tests.support.mcp_client import failure, invalid, ok, refused

MONDAY = datetime(2025, 5, 5, 9, 0, tzinfo=UTC)  # weeks from Mon 5 May, 12 May (no answers) and 19 May 2025
WEEKS = ["2025-05-05", "2025-05-12", "2025-05-19"]
FAST, DEEP = "llama3-8b-8192", "llama3-70b-8192"


@pytest.fixture
def answers(llm_settings, fake_llm, instance):
    """Two answers on Monday 5 May (the first, deep, followed up 20 s later with thanks) and two on
    Wednesday 21 May (the first, fast, corrected and rated down); none in the week between."""
    wb = Workbench(llm_settings, embedder=KeywordEmbedder())
    now = [MONDAY]
    remember = Remember(wb, clock=lambda: now[0])

    def turn(text: str, at: datetime, chain: str, **kw) -> uc.UiRememberResult:
        now[0] = at
        fake_llm.reply(f"About: {text}", total_tokens=50)
        return remember.run(UiRememberParams(thought=text, chain_id=chain, **kw), instance=instance)

    turn("Plan a museum day in Paris", MONDAY, "paris", style="deep")
    turn("Thanks, that works.", MONDAY + timedelta(seconds=20), "paris", next_thought_needed=False)
    later = MONDAY + timedelta(days=16)
    wrong = turn("Which train to Lyon?", later, "lyon")
    turn("Actually, I meant the night train.", later + timedelta(seconds=40), "lyon", next_thought_needed=False)
    uc.rate_answer(wb, uc.RateAnswer(instance=instance, answer_id=wrong.thought2_id, rating="down",
                                     comment="the wrong train"))
    yield wb
    wb.close()


@pytest.fixture
def server(answers):
    with thread_server(answers) as url:
        yield url


def key(wb: Workbench, instance: str, **options) -> dict[str, str]:
    created = uc.create_key(wb, uc.CreateKey(name=f"k-{instance}-{len(options)}", instances=[instance], **options))
    return {"Authorization": f"Bearer {created.secret}"}


@asynccontextmanager
async def mcp_session(url: str, headers: dict[str, str]) -> AsyncIterator[ClientSession]:
    async with (httpx2.AsyncClient(timeout=httpx2.Timeout(60.0), headers=headers) as client,
                streamable_http_client(url + MCP_PATH, http_client=client) as (read, write),
                ClientSession(read, write) as session):
        await session.initialize()
        yield session


def test_the_tool_gives_the_http_apis_figures_to_a_read_only_key(answers, server, instance):
    reader = key(answers, instance, read_only=True)
    window = {"since": "2025-05-05", "until": "2025-05-25"}

    async def scenario() -> list[dict]:
        async with mcp_session(server, reader) as s:
            tool = next(t for t in (await s.list_tools()).tools if t.name == "feedback_summary")
            assert tool.annotations.read_only_hint and not tool.annotations.destructive_hint
            assert tool.input_schema["properties"]["since"]["anyOf"] == [{"type": "string"}, {"type": "null"}]
            mine = {**window, "instance": instance}  # the server's own instance is another
            return [await ok(s, "feedback_summary", {**mine, "by": "week"}),
                    await ok(s, "feedback_summary", {**mine, "by": "model", "ratings": ["down"]}),
                    await ok(s, "feedback_summary", {**mine, "models": [DEEP]})]

    by_week, down_by_model, deep = anyio.run(scenario)
    url = f"{server}/v1/instances/{instance}/feedback/summary"
    for got, params in ((by_week, {**window, "by": "week"}),
                        (down_by_model, {**window, "by": "model", "rating": "down"}),
                        (deep, {**window, "model": DEEP})):
        http = httpx.get(url, params=params, headers=reader, timeout=60)
        assert http.status_code == 200, http.text
        assert got == http.json()  # the same use case, request and result: the same document

    assert [g["week"][:10] for g in by_week["groups"]] == WEEKS
    assert [g["answers"] for g in by_week["groups"]] == [2, 0, 2]
    assert by_week["summary"]["rated_down"] == 1 and by_week["summary"]["mean_score"] == pytest.approx(
        (1.0 + 0.6) / 2)  # thanks after 20 s: 0.9 + 0.1; a correction after 40 s: 0.7 − 0.1
    assert [(g["model"], g["answers"], g["rated_down"]) for g in down_by_model["groups"]] == [(FAST, 1, 1)]
    assert (deep["summary"]["answers"], deep["models"]) == (1, [DEEP])
    # "until" a day counts that whole day, as the CLI and the HTTP API read it.
    assert by_week["until"].startswith("2025-05-25T23:59:59.999999")


def test_bad_arguments_are_one_line_tool_errors(answers, server, instance):
    async def scenario() -> None:
        async with mcp_session(server, key(answers, instance, read_only=True)) as s:
            for arguments in ({"by": "month"}, {"since": "the day after"}, {"ratings": ["sideways"]},
                              {"since": "2025-06", "until": "2025-05"}, {"period": "this week"},
                              {"ratings": 7}, {"ratings": ["7"]}, {"since": "in 3 days"}):
                message = await refused(s, "feedback_summary", {**arguments, "instance": instance})
                assert message == invalid(uc.SummaryRequest, arguments, instance), arguments
            assert await refused(s, "feedback_summary", {"by": "month", "instance": instance}) == (
                "invalid input — by: Input should be 'day', 'week', 'model', 'profile', 'chain', 'tag', 'source' "
                "or 'key'")
            assert "could not read 'the day after' as a date; try" in await refused(
                s, "feedback_summary", {"since": "the day after", "instance": instance})
            # One value is named by its field and value, not as a list's item ("ratings.0").
            for ratings, shown in ((7, "7"), ("7", "'7'"), (["up", "7"], "'7'")):
                assert await refused(s, "feedback_summary", {"ratings": ratings, "instance": instance}) == (
                    f"invalid input — ratings: Input should be 'up', 'down' or 'none', not {shown}")
            assert "since: 'next week' (" in await refused(
                s, "feedback_summary", {"since": "next week", "instance": instance})
            assert not (await s.call_tool("feedback_summary", {"until": "2999-01-01", "instance": instance})).is_error

    anyio.run(scenario)


def test_a_key_of_another_instance_is_refused(answers, server, instance):
    other = f"{instance}-other"

    async def scenario() -> None:
        async with mcp_session(server, key(answers, other)) as s:
            assert await refused(s, "feedback_summary", {"instance": instance}) == failure(
                lambda: uc.authorize(uc.Principal(name=f"k-{other}-0", instances=[other]), instance, write=False))
            assert (await ok(s, "feedback_summary", {"instance": other}))["summary"]["answers"] == 0

    anyio.run(scenario)


def test_the_cli_lists_the_week_and_the_days_without_answers(answers, instance, settings, monkeypatch):
    monkeypatch.setenv("DATA_DIR", str(settings.data_dir))
    runner = CliRunner()

    def rows(by: str, *window: str) -> dict[str, dict[str, str]]:
        out = runner.invoke(cli, ["--instance", instance, "feedback", "summary", "--by", by, *window])
        assert out.exit_code == 0, out.output
        lines = out.output.rstrip().splitlines()
        header = next(i for i, line in enumerate(lines) if line.split()[:1] == [by])
        names = lines[header].split()
        return {r.split()[0]: dict(zip(names, r.split(), strict=True)) for r in lines[header + 1:]}

    weeks = rows("week")  # the whole history: from the first answer's week to the last's
    assert list(weeks) == WEEKS
    assert (weeks["2025-05-12"]["answers"], weeks["2025-05-12"]["mean_score"], weeks["2025-05-12"]["rated"]) == (
        "0", "—", "0")
    days = rows("day", "--since", "2025-05-01", "--until", "2025-05-31")
    # Every day of the window asked for, before the first answer and after the last too: a month by day is
    # 31 rows (it listed only 5 to 21 May, where the answers were).
    assert list(days) == [f"2025-05-{d:02d}" for d in range(1, 32)]
    assert [days[d]["answers"] for d in ("2025-05-01", "2025-05-05", "2025-05-06", "2025-05-14", "2025-05-21",
                                         "2025-05-31")] == ["0", "2", "0", "0", "2", "0"]
    # A bound left out: since, from the first answer; until, to now (the week of today, answers or not).
    assert list(rows("day", "--until", "2025-05-08")) == [f"2025-05-{d:02d}" for d in range(5, 9)]
    def this_week() -> str:
        today = datetime.now(UTC)
        return (today - timedelta(days=today.weekday())).strftime("%Y-%m-%d")

    before = this_week()
    to_now = rows("week", "--since", "2025-05-12")
    assert list(to_now)[:3] == [*WEEKS[1:], "2025-05-26"] and list(to_now)[-1] in {before, this_week()}
    assert all(r["answers"] == "0" for w, r in to_now.items() if w > WEEKS[-1])
    # A window of one empty week is still said in one line, not a table of zeros.
    out = runner.invoke(cli, ["--instance", instance, "feedback", "summary", "--by", "week", "--since",
                              "2025-05-12", "--until", "2025-05-18"])
    assert out.output.splitlines()[-1] == "no answers in this period"


def test_a_window_of_too_many_periods_is_refused_in_one_line(answers, server, instance, settings, monkeypatch,
                                                            capsys):
    """`--since 2000 --by day` would list 9,800 days: refused, saying what to change, in the CLI (exit 2),
    the HTTP API (422) and the MCP tool alike; by week the same window is listed."""
    monkeypatch.setenv("DATA_DIR", str(settings.data_dir))
    monkeypatch.setattr(sys, "argv", ["workbench", "--instance", instance, "feedback", "summary", "--by", "day",
                                      "--since", "2000-01-01", "--until", "2025-05-31"])
    with pytest.raises(SystemExit) as e:
        main()
    said = "by day: 2000-01-01 to 2025-05-31 is 9,283 days, and at most 3,660 are listed: give a later since " \
           "or an earlier until, or group by week"
    assert (e.value.code, capsys.readouterr().err.strip()) == (2, f"error: {said}")
    reader = key(answers, instance, read_only=True)
    url = f"{server}/v1/instances/{instance}/feedback/summary"
    http = httpx.get(url, params={"by": "day", "since": "2000-01-01", "until": "2025-05-31"}, headers=reader,
                     timeout=60)
    assert http.status_code == 422 and said in http.text
    weeks = httpx.get(url, params={"by": "week", "since": "2000-01-01", "until": "2025-05-31"}, headers=reader,
                      timeout=60).json()["groups"]
    assert (weeks[0]["week"][:10], weeks[-1]["week"][:10], len(weeks)) == ("1999-12-27", "2025-05-26", 1327)

    async def scenario() -> str:
        async with mcp_session(server, reader) as s:
            return await refused(s, "feedback_summary", {"by": "day", "since": "2000-01-01", "until": "2025-05-31",
                                                         "instance": instance})

    assert said in anyio.run(scenario)


def test_an_explicit_window_is_listed_in_an_instance_without_answers(answers, instance):
    """A window asked for is listed whether or not the instance has answers; a window left open at its
    start has none to start from there."""
    empty = f"{instance}-empty"
    since = datetime.now(UTC) - timedelta(days=2)
    days = uc.feedback_summary(answers, uc.SummaryRequest(instance=empty, since=since, by="day")).groups
    assert len(days) in (3, 4) and days[0]["day"][:10] == f"{since:%Y-%m-%d}"  # to today (a midnight between)
    assert all(d["answers"] == 0 and d["mean_score"] is None for d in days)
    assert uc.feedback_summary(answers, uc.SummaryRequest(instance=empty, until=since, by="day")).groups == []
    assert uc.feedback_summary(answers, uc.SummaryRequest(instance=empty, by="week")).groups == []


def test_the_http_api_names_one_value_and_refuses_a_window_starting_in_the_future(answers, server, instance):
    url, reader = f"{server}/v1/instances/{instance}/feedback/summary", key(answers, instance, read_only=True)
    for params, detail in (({"rating": "7"}, ("invalid input — query.rating: Input should be 'up', 'down' or "
                                              "'none', not '7'")),
                           ({"since": "in 3 days"}, "since: 'in 3 days' (")):
        got = httpx.get(url, params=params, headers=reader, timeout=60)
        assert got.status_code == 422 and got.headers["content-type"] == "application/problem+json"
        assert got.json()["code"] == "invalid_input" and got.json()["detail"].startswith(detail), got.text
    assert "is in the future" in httpx.get(url, params={"since": "2999-01-01"}, headers=reader, timeout=60).text
    assert httpx.get(url, params={"until": "2999-01-01"}, headers=reader, timeout=60).status_code == 200
