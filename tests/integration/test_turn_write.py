"""A turn's write is idempotent and honest (issue 16, points 6 and 7), on the real servers.

Every turn has a request id, checked inside the turn's script: a repeat returns the stored result and
writes nothing. When Redis stalls (SIGSTOP) or dies (SIGKILL) inside the write, the caller is told the
turn "may have been stored; retrying with the same request id is safe", and the retry leaves exactly one
copy with the chain's counters exact. A turn on a chain deleted meanwhile is refused and stores nothing.
The fault tests stop and kill servers of their own (`fault_dir`), never the session's.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest

from core.config import load_settings
from core.conversation.feedback import feedback_score
from core.conversation.keys import chain_tombstone, request_key
from core.conversation.thoughts import CATEGORY_ASSISTANT, CATEGORY_METRICS, CATEGORY_USER, Thought
from core.conversation.turn import Remember, UiRememberParams
from core.errors import NotFound, OutcomeUnknown, ServiceTimeout, describe
from core.runtime import Workbench
from core.services import EmbeddedRedis
from tests.integration.conftest import kill_redis
from tests.support.embedders import KeywordEmbedder

UNKNOWN = "may have been stored; retrying with the same request id is safe"
QUESTION = "When does the ferry leave?"  # the Chat page test's message, which tells its calls to the model


def counts(wb: Workbench, instance: str, chain: str) -> Counter[str]:
    return Counter(t.category for t in wb.thoughts.chain_thoughts(instance, chain))


def test_every_turn_gets_a_request_id_and_its_repeat_writes_nothing(workbench, instance):
    rm = Remember(workbench)
    first = rm.run(UiRememberParams(thought="the boat leaves at nine"), instance=instance)
    assert first.request_id and first.request_id.startswith("req-")
    # The repeat names no chain, only the request id: a new chain's id comes from it, so the repeat finds it.
    again = rm.run(UiRememberParams(thought="the boat leaves at nine", request_id=first.request_id),
                   instance=instance)
    assert again == first
    assert counts(workbench, instance, first.chain_id) == {CATEGORY_USER: 1, CATEGORY_ASSISTANT: 1,
                                                           CATEGORY_METRICS: 1}
    meta = workbench.thoughts.chain_meta(instance, first.chain_id)
    assert (meta["turns"], meta["seq"]) == ("1", "3")


def test_thought_numbers_come_from_the_store_and_a_differing_one_is_noted(workbench, instance):
    rm = Remember(workbench)
    results = [rm.run(UiRememberParams(thought=f"turn {n}", chain_id="numbered", thought_number=1),
                      instance=instance) for n in range(3)]
    users = [t for t in workbench.thoughts.chain_thoughts(instance, "numbered") if t.category == CATEGORY_USER]
    assert [t.thought_number for t in users] == [1, 2, 3]
    assert not any("thought_number" in n for n in results[0].notes)
    assert any("thought_number 1 given; stored as 3" in n for n in results[2].notes)


def test_a_turn_on_a_deleted_chain_is_refused_and_stores_nothing(workbench, instance):
    rm = Remember(workbench)
    rm.run(UiRememberParams(thought="my first message", chain_id="doomed"), instance=instance)
    before = counts(workbench, instance, "doomed")
    # The deletion comes while the turn is under way: after its checks, before its write.
    pieces = rm.stream(UiRememberParams(thought="a late turn", chain_id="doomed", request_id="late-1"),
                       instance=instance)
    assert isinstance(next(pieces), str)  # the answer's text: the write comes next
    workbench.redis().set(chain_tombstone(instance, "doomed"), "1")  # what a chain deletion sets first
    with pytest.raises(NotFound, match="was deleted: nothing of this turn was stored"):
        list(pieces)
    assert counts(workbench, instance, "doomed") == before
    assert not workbench.redis().exists(request_key(instance, "doomed", "late-1"))
    # And a turn that starts after the deletion is refused before it does any work.
    with pytest.raises(NotFound, match="Start a new conversation"):
        rm.run(UiRememberParams(thought="another", chain_id="doomed"), instance=instance)


# -- Redis stalls or dies inside the write ---------------------------------------------------------

@pytest.fixture
def quick_wb(fault_wb):
    """A Workbench on the fault servers whose Redis calls wait at most 1 s for an answer (the URL's
    socket_timeout): a stalled server fails the write within seconds."""
    url = EmbeddedRedis(fault_wb.settings.data_dir).ensure_running()
    settings = load_settings(data_dir=fault_wb.settings.data_dir).model_copy(
        update={"redis_url": f"{url}{'&' if '?' in url else '?'}socket_timeout=1"})
    wb = Workbench(settings, embedder=KeywordEmbedder())
    yield wb
    wb.close()


def redis_pid(wb: Workbench) -> int:
    return int((wb.settings.data_dir / "redis" / "redis.pid").read_text().strip())


def fail_inside_the_write(wb: Workbench, instance: str, params: UiRememberParams, fault) -> OutcomeUnknown:
    """Run the turn up to its write, call `fault()` there, and return the error the write raised."""
    pieces = Remember(wb).stream(params, instance=instance)
    assert isinstance(next(pieces), str)  # the answer's text is out: the write comes next
    fault()
    with pytest.raises(OutcomeUnknown) as caught:
        list(pieces)
    return caught.value


def assert_one_copy(wb: Workbench, instance: str, chain: str, turns: int) -> None:
    """Exactly `turns` turns in the chain, numbered 1..turns, counters exact, each answer but the last
    followed once."""
    thoughts = wb.thoughts.chain_thoughts(instance, chain)
    by_cat = Counter(t.category for t in thoughts)
    assert by_cat[CATEGORY_USER] == by_cat[CATEGORY_ASSISTANT] == turns
    assert sorted(t.thought_number for t in thoughts if t.category == CATEGORY_USER) == list(range(1, turns + 1))
    meta = wb.thoughts.chain_meta(instance, chain)
    assert (int(meta["turns"]), int(meta["seq"])) == (turns, 3 * turns)
    answers = [t.id for t in sorted(thoughts, key=lambda t: t.seq) if t.category == CATEGORY_ASSISTANT]
    feedback = wb.thoughts.feedback(answers)
    assert [feedback[a].continued for a in answers] == [1] * (turns - 1) + [0]


def test_a_stall_inside_the_write_says_so_and_the_retry_stores_one_copy(quick_wb, instance):
    wb = quick_wb
    first = Remember(wb).run(UiRememberParams(thought="where is the key?", chain_id="stall"), instance=instance)
    params = UiRememberParams(thought="thanks, and the car?", chain_id="stall", request_id="stall-2")
    pid = redis_pid(wb)
    resumed = threading.Timer(8.0, os.kill, (pid, signal.SIGCONT))  # well after the client gave up
    try:
        error = fail_inside_the_write(wb, instance, params, lambda: (os.kill(pid, signal.SIGSTOP),
                                                                    resumed.start()))
    finally:
        resumed.join()
        os.kill(pid, signal.SIGCONT)
    info = describe(error)
    assert UNKNOWN in info.message and "stall-2" in info.message
    assert (info.code, info.retryable) == ("service_unavailable", True)  # HTTP 503, CLI exit 1
    # The stalled server ran what it had queued when it resumed (the write, maybe re-sent): the retry
    # returns that, or stores the turn if none of it ran. Either way, one copy.
    retry = Remember(wb).run(params, instance=instance)
    ran = retry.thought3_id is None
    print(f"\nstalled write {'was applied; the retry returned it' if ran else 'never ran; the retry stored it'}")
    assert retry.previous_feedback is None or retry.previous_feedback.answer_id == first.thought2_id
    assert_one_copy(wb, instance, "stall", 2)
    assert Remember(wb).run(params, instance=instance).thought1_id == retry.thought1_id


def test_a_crash_inside_the_write_says_so_and_the_retry_stores_one_copy(quick_wb, instance):
    wb = quick_wb
    Remember(wb).run(UiRememberParams(thought="my dog is called Rex", chain_id="crash"), instance=instance)
    params = UiRememberParams(thought="what is my dog called?", chain_id="crash", request_id="crash-2")
    error = fail_inside_the_write(wb, instance, params, lambda: kill_redis(wb.settings.data_dir))
    assert UNKNOWN in str(error)
    EmbeddedRedis(wb.settings.data_dir).ensure_running()
    retry = Remember(wb).run(params, instance=instance)
    assert retry.previous_feedback and retry.previous_feedback.continued == 1
    assert_one_copy(wb, instance, "crash", 2)


def test_the_cli_says_the_outcome_is_unknown_and_its_retry_is_safe(fault_wb, fake_llm, instance):
    """A real `workbench remember` process: Redis is stopped while the LLM answers, so the write stalls.
    Exit 1 with one line naming the request id; the same command with that id stores one copy."""
    url = EmbeddedRedis(fault_wb.settings.data_dir).ensure_running()
    env = {**os.environ, "DATA_DIR": str(fault_wb.settings.data_dir), "LLM_BASE_URL": fake_llm.url + "/v1",
           "REDIS_URL": f"{url}{'&' if '?' in url else '?'}socket_timeout=1"}
    command = [sys.executable, "-m", "core.cli", "--instance", instance, "remember", "hello there",
               "--chain", "cli", "--request-id", "cli-1", "--brief"]
    fake_llm.hang(3)  # the answer comes after Redis is stopped
    fake_llm.reply("Hello!")
    pid = redis_pid(fault_wb)
    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not fake_llm.chat_requests:
            assert time.monotonic() < deadline and proc.poll() is None, proc.stderr.read()
            time.sleep(0.05)
        os.kill(pid, signal.SIGSTOP)
        _, err = proc.communicate(timeout=60)
    finally:
        os.kill(pid, signal.SIGCONT)
        proc.kill()
    assert proc.returncode == 1, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and UNKNOWN in lines[0] and "cli-1" in lines[0], err
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert_one_copy(fault_wb, instance, "cli", 1)


def test_http_and_mcp_report_an_unknown_outcome_as_such():
    from core.api.problems import from_exception
    from core.mcp.server import _tool_error

    error = OutcomeUnknown("Redis", "this turn", "r-1")
    response = from_exception(error)
    assert response.status_code == 503 and response.media_type == "application/problem+json"
    assert UNKNOWN.encode() in response.body and b"r-1" in response.body
    tool = _tool_error("ui_remember", error)
    assert tool.is_error and UNKNOWN in tool.content[0].text and "r-1" in tool.content[0].text
    # A server that did not answer in time is down for this request: 503 with Retry-After, not a 500.
    hung = from_exception(ServiceTimeout("Postgres", 32, "POSTGRES_STATEMENT_TIMEOUT_S"))
    assert hung.status_code == 503 and hung.headers["retry-after"] and b'"retryable":true' in hung.body



def test_the_chat_page_offers_a_retry_with_the_same_request_id(fault_wb, fake_llm, instance, monkeypatch):
    """The Chat page while Redis stalls inside the turn's write: the message says the outcome is unknown,
    and its Retry sends the same request id, so the conversation holds the message once."""
    import streamlit as st

    from dashboard.resources import get_workbench
    from tests.app.conftest import open_page

    # A chain of another instance, quiet for 15 minutes: the dashboard's start-up upkeep asks the model for
    # its summary, as it did in two full runs of the suite once the earlier tests' chains went quiet.
    past = datetime.now(UTC) - timedelta(minutes=15)
    Remember(fault_wb, clock=lambda: past).run(UiRememberParams(thought="The garden needs water.",
                                                                chain_id="garden"), instance=f"{instance}-q")
    url = EmbeddedRedis(fault_wb.settings.data_dir).ensure_running()
    monkeypatch.setenv("DATA_DIR", str(fault_wb.settings.data_dir))
    monkeypatch.setenv("REDIS_URL", f"{url}{'&' if '?' in url else '?'}socket_timeout=1")
    monkeypatch.setenv("LLM_BASE_URL", fake_llm.url + "/v1")
    get_workbench.clear()
    st.cache_data.clear()
    pid = redis_pid(fault_wb)

    # The turn's own calls to the model, told by its question: the dashboard's start-up upkeep may ask the
    # model too (summaries of other tests' chains that went quiet), so neither the stall nor the hang may
    # follow the first call of any kind.
    turn_calls: list[dict] = []

    def answer(body: dict) -> str | None:
        if QUESTION not in json.dumps(body):
            return None  # another chain's summary: echoed
        turn_calls.append(body)
        if len(turn_calls) == 1:
            time.sleep(3)  # the turn's first call hangs while Redis is stopped
        return "The ferry leaves at ten."

    def stall_while_the_llm_answers() -> None:
        while not turn_calls:
            time.sleep(0.02)
        os.kill(pid, signal.SIGSTOP)
        time.sleep(8.0)  # the LLM answers after 3 s; the write gives up soon after
        os.kill(pid, signal.SIGCONT)

    fake_llm.answer_with(answer)
    staller = threading.Thread(target=stall_while_the_llm_answers)
    try:
        at = open_page("pages/chat.py", instance=instance)
        staller.start()
        at.chat_input[0].set_value(QUESTION).run(timeout=120)
        staller.join()
        assert not at.exception
        errors = "\n".join(e.value for e in at.error)
        assert UNKNOWN in errors, errors
        request_id = at.session_state["chat_unsure"]["request_id"]
        assert request_id.startswith("chat-") and request_id in errors
        at.button(key="chat_retry").click().run(timeout=120)
        assert not at.exception and not at.error
        assert "chat_unsure" not in at.session_state
        chain = at.session_state["chat_chain_select"]
        assert_one_copy(fault_wb, instance, chain, 1)
    finally:
        os.kill(pid, signal.SIGCONT)
        get_workbench().close()
        get_workbench.clear()
        st.cache_data.clear()



def test_a_write_sent_twice_runs_once(workbench, instance):
    """The 8 s stall of issue 16.7: a client re-sent the turn's write after a timeout and both copies ran.
    Whatever a client re-sends, the second copy of the same call finds the first and writes nothing, and
    answers with the first copy's numbers, so the call carries on as if it had run once."""
    store = workbench.thoughts
    Remember(workbench).run(UiRememberParams(thought="where is the key?", chain_id="twice"), instance=instance)
    state = store.turn_state(instance, "twice", "twice-2")
    now = datetime.now(UTC)
    common = {"instance": instance, "chain_id": "twice"}
    user = Thought(id=str(uuid.uuid4()), thought="and the car?", timestamp=now, category=CATEGORY_USER, **common)
    answer = Thought(id=str(uuid.uuid4()), thought="in the garage", timestamp=now, category=CATEGORY_ASSISTANT,
                     **common)

    def write():
        return store.append_turn(user, answer, request_id="twice-2", result_json="{}",
                                 score=lambda elapsed: feedback_score(elapsed, user.thought),
                                 expected=state.last_answer, index_answer=False)

    first, second = write(), write()
    assert second == first and (first.seq, first.number) == (4, 2) and first.previous
    assert_one_copy(workbench, instance, "twice", 2)
