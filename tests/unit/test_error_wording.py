"""`describe` words a message for the front end that shows it: the dashboard's (its sidebar, its server
log) stays as it was; the command line names the setting to check and how to see a traceback; an HTTP or
MCP client is told to retry, the server's operator what to check."""

from __future__ import annotations

import psycopg
import pytest
import redis

from core.errors import ServiceTimeout, describe

FAILURES = [redis.exceptions.ConnectionError("refused"), redis.exceptions.TimeoutError("slow"),
            psycopg.OperationalError("refused"), ServiceTimeout("Postgres", 3, "its process runs: is it suspended?")]


@pytest.mark.parametrize("exc", FAILURES, ids=type)
def test_the_dashboard_is_sent_to_its_sidebar_and_the_command_line_to_the_setting(exc):
    assert describe(exc).message.endswith("Check that it is running (see the sidebar), then retry.")
    on_cli = describe(exc, "cli").message
    assert "sidebar" not in on_cli and "`workbench services`" in on_cli
    assert ("DATABASE_URL" if "Postgres" in on_cli else "REDIS_URL") in on_cli
    assert describe(exc, "cli").code == describe(exc).code
    over_http = describe(exc, "api").message  # an HTTP or MCP client: the server is not theirs to look at
    assert "sidebar" not in over_http and over_http.endswith("the server's operator can check `workbench services`.")


def test_a_timeout_keeps_its_own_message_for_the_dashboard():
    exc = ServiceTimeout("Redis", 1, "its process runs: is it suspended?")
    assert str(exc) == describe(exc).message == ("Redis did not answer within 1 s (its process runs: is it "
                                                 "suspended?). Check that it is running (see the sidebar), then "
                                                 "retry.")
    assert (describe(exc, "cli").code, describe(exc, "cli").retryable) == ("timeout", True)


def test_an_unexpected_error_says_where_its_details_are():
    exc = KeyError("a secret")
    assert describe(exc).message == "Unexpected KeyError. The details are in the server log; please report it."
    assert describe(exc, "cli").message == ("Unexpected KeyError. Rerun with WORKBENCH_DEBUG=1 to see the "
                                            "traceback; please report it.")


def _refusal(**fields) -> str:
    from core import usecases as uc

    with pytest.raises(Exception) as refused:
        uc.SummaryRequest(instance="i", **fields)
    return describe(refused.value).message


@pytest.mark.parametrize("ratings", ["7", ["7"], ["up", "7"], 7])
def test_one_wrong_value_is_named_by_its_field_and_value_not_a_list_index(ratings):
    """A user who sent one rating wrote no list: "ratings.0" named a list and a place they never wrote."""
    shown = "7" if ratings == 7 else "'7'"
    assert _refusal(ratings=ratings) == f"invalid input — ratings: Input should be 'up', 'down' or 'none', not {shown}"


def test_an_item_of_a_list_of_objects_keeps_its_place():
    from pydantic import BaseModel, ValidationError

    class Item(BaseModel):
        name: str

    class Items(BaseModel):
        items: list[Item]

    with pytest.raises(ValidationError) as refused:
        Items.model_validate({"items": [{"name": "a"}, {"name": 3}]})
    assert describe(refused.value).message == "invalid input — items.1.name: Input should be a valid string"


@pytest.mark.parametrize("since", ["in 3 days", "2999-06-01", "next week"])
def test_a_window_of_answers_that_starts_in_the_future_is_refused(since):
    message = _refusal(since=since)
    assert message.startswith(f"invalid input — since: {since!r} (") and "is in the future" in message
    assert message.endswith("give a start up to now ('today', '7 days ago', 'last week') or leave it out")


def test_a_window_that_ends_in_the_future_means_up_to_now():
    from core import usecases as uc

    assert uc.SummaryRequest(instance="i", since="today", until="2999-06-01").until.year == 2999
    with pytest.raises(Exception, match="^--since: 'in 3 days' .* is in the future"):
        uc.read_answer_window("in 3 days", None, ("--since", "--until"))
