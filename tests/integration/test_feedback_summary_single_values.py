"""`feedback_summary` over MCP with one model or one rating sent as a string (`"ratings": "down"`), as an
assistant may well send it: taken as a list of one, where it was refused ("Input should be a valid list").
Driven by the MCP SDK's own client at /mcp of the API on a real uvicorn, on the answers of
test_feedback_summary_tool (two in the week of 5 May 2025, two in that of 19 May, one of them rated down)."""

from __future__ import annotations

import anyio
import httpx

from core import usecases as uc
from tests.integration import test_feedback_summary_tool as tool
from tests.integration.test_feedback_summary_tool import DEEP, FAST, key, mcp_session
from tests.support.mcp_client import invalid, ok, refused

answers, server = tool.answers, tool.server  # that file's fixtures: its answers, served on a real uvicorn


def test_one_model_or_rating_as_a_string_is_a_list_of_one(answers, server, instance):
    mine = {"since": "2025-05-05", "until": "2025-05-25", "instance": instance}

    async def scenario() -> list[tuple[dict, dict]]:
        async with mcp_session(server, key(answers, instance, read_only=True)) as s:
            tool = next(t for t in (await s.list_tools()).tools if t.name == "feedback_summary")
            # The schema says what is taken: one value or a list (it said "array" alone, and a string was
            # taken besides).
            ratings, models = (tool.input_schema["properties"][f] for f in ("ratings", "models"))
            rating = {"enum": ["up", "down", "none"], "type": "string"}
            assert ratings["anyOf"] == [rating, {"items": rating, "type": "array"}, {"type": "null"}]
            assert models["anyOf"] == [{"type": "string"}, {"items": {"type": "string"}, "type": "array"},
                                       {"type": "null"}]
            assert uc.SummaryRequest.model_json_schema()["properties"]["ratings"]["anyOf"] == ratings["anyOf"]
            # null, as an assistant sends a filter it leaves out, is no filter (it was refused as "Input should
            # be a valid list" while since, until and by took it)
            unfiltered = await ok(s, "feedback_summary", mine)
            assert await ok(s, "feedback_summary", {**mine, "ratings": None, "models": None}) == unfiltered
            pairs = []
            for field, one in (("ratings", "down"), ("models", DEEP), ("models", FAST)):
                as_string = await ok(s, "feedback_summary", {**mine, "by": "model", field: one})
                as_list = await ok(s, "feedback_summary", {**mine, "by": "model", field: [one]})
                pairs.append((as_string, as_list))
            # A wrong name is still refused, in the CLI's one line, naming the field.
            message = await refused(s, "feedback_summary", {**mine, "ratings": "sideways"})
            assert message == invalid(uc.SummaryRequest, {**mine, "ratings": "sideways"}, instance)
            assert message.startswith("invalid input — ratings") and "'up', 'down' or 'none'" in message
            return pairs

    (down, down_list), (deep, deep_list), (fast, fast_list) = anyio.run(scenario)
    assert (down, deep, fast) == (down_list, deep_list, fast_list)
    assert down["ratings"] == ["down"] and deep["models"] == [DEEP] and fast["models"] == [FAST]
    assert [(g["model"], g["answers"], g["rated_down"]) for g in down["groups"]] == [(FAST, 1, 1)]
    assert (deep["summary"]["answers"], fast["summary"]["answers"]) == (1, 3)


def test_the_request_model_reads_a_single_string_for_the_cli_and_the_http_api_too():
    req = uc.SummaryRequest(instance="i", ratings="none", models="extractive (no model)")
    assert (req.ratings, req.models) == (["none"], ["extractive (no model)"])
    assert uc.SummaryRequest(instance="i", ratings=("up", "down")).ratings == ["up", "down"]
    unfiltered = uc.SummaryRequest(instance="i", ratings=None, models=None)
    assert (unfiltered.ratings, unfiltered.models) == ([], [])


def test_the_http_apis_empty_week_has_counts_0_and_figures_null(answers, server, instance):
    """As README.md says of `GET …/feedback/summary?by=week`: every week of the window, those without answers
    with their counts 0 and their figures null: from the week of 1 April to that of 30 June, 14 weeks (it
    listed the 3 from the first answer's to the last's)."""
    got = httpx.get(f"{server}/v1/instances/{instance}/feedback/summary", timeout=60,
                    params={"since": "2025-04-01", "until": "2025-06-30", "by": "week"},
                    headers=key(answers, instance, read_only=True)).json()
    weeks = [g["week"][:10] for g in got["groups"]]
    assert (len(weeks), weeks[0], weeks[-1]) == (14, "2025-03-31", "2025-06-30")
    assert [g["answers"] for g in got["groups"]] == [0] * 5 + [2, 0, 2] + [0] * 6
    empty = got["groups"][weeks.index("2025-05-12")]
    assert (empty["answers"], empty["rated_down"], empty["mean_score"]) == (0, 0, None)
