"""Two API replicas on one Redis and one Postgres, called at once: each writer here has a Workbench (and so
Redis and Postgres clients) of its own, served by its own uvicorn, or is a `workbench api` process killed
mid-turn. What one process would do alone must hold when two do it together: a request id served once with
one answer, a chain's turns in the order they were stored, one "instance is new", one count per abandoned
answer, and a turn whose process died after storing it finished once by its retry."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from core import usecases as uc
from core.conversation.indexing import LOCK_WAIT_S
from core.conversation.keys import OUTBOX_LOCK, summarising_key
from core.conversation.prompts import SYNTHESIS_SYSTEM
from core.conversation.thoughts import CATEGORY_METRICS
from core.conversation.turn import FINISHED_BY_REPEAT, REPEAT_WAIT_S
from core.errors import InvalidInput
from core.formation.important import derived_id
from core.formation.observations import FORMATION_SYSTEM
from core.formation.summaries import SUMMARY_KIND, SUMMARY_SYSTEM
from core.runtime import Workbench
from tests.support.api import api_env, start_api, thread_server


def at_once(*calls: Callable[[], Any]) -> list[Any]:
    """The calls in threads released together by a barrier; their results in order."""
    barrier = threading.Barrier(len(calls))

    def run(call: Callable[[], Any]) -> Any:
        barrier.wait()
        return call()

    with ThreadPoolExecutor(len(calls)) as pool:
        return list(pool.map(run, calls))


@pytest.fixture
def replicas(settings, workbench) -> Iterator[list[Workbench]]:
    """Two more Workbenches on the session's servers, each with clients of its own (the embedder shared:
    loading wordllama again would only cost time)."""
    made = [Workbench(settings, embedder=workbench.embedder) for _ in range(2)]
    for wb in made:  # connected before the test's calls, so that they do run at once
        wb.thoughts.instances()
        wb.index.instances()
    yield made
    for wb in made:
        wb.close()


@pytest.fixture
def key(workbench, instance) -> dict[str, str]:
    created = uc.create_key(workbench, uc.CreateKey(name=f"k-{uuid.uuid4().hex[:10]}", instances=[instance]))
    return {"Authorization": f"Bearer {created.secret}"}


@pytest.fixture
def servers(replicas) -> Iterator[tuple[str, str]]:
    with thread_server(replicas[0]) as one, thread_server(replicas[1]) as two:
        yield one, two


def turn(url: str, instance: str, key: dict[str, str], body: dict[str, Any], timeout: float = 120) -> dict[str, Any]:
    response = httpx.post(f"{url}/v1/instances/{instance}/remember", headers=key, json=body, timeout=timeout)
    assert response.status_code == 200, response.text
    return response.json()


IDS = ("thought1_id", "thought2_id", "thought3_id", "chain_id", "answer")


@pytest.fixture
def reading_servers(llm_settings, workbench, fake_llm) -> Iterator[tuple[str, str]]:
    """Two replicas whose LLM answers at once and takes a second to read a message (FORMATION_LLM), so that
    a turn is stored a second before its call finishes it: the window in which a copy of the request sent
    to the other replica finds it stored."""
    def answer(body: dict[str, Any]) -> str | int:
        if body["messages"][0]["content"].startswith(SYNTHESIS_SYSTEM[:40]):
            return "She does, at the Saturday market."
        time.sleep(1.0)
        return 500  # the rules read the message

    fake_llm.answer_with(answer)
    settings = llm_settings.model_copy(update={"formation_llm": True, "llm_max_retries": 0})
    made = [Workbench(settings, embedder=workbench.embedder) for _ in range(2)]
    try:
        with thread_server(made[0]) as one, thread_server(made[1]) as two:
            yield one, two
    finally:
        for wb in made:
            wb.close()


def test_one_request_sent_to_both_replicas_at_once_is_one_turn_with_one_answer(reading_servers, workbench, instance,
                                                                              key):
    one, two = reading_servers
    first = turn(one, instance, key, {"thought": "My sister Ana keeps bees in Braga", "chain_id": "bees"})
    body = {"thought": "Thanks! Does she sell the honey?", "chain_id": "bees", "request_id": "bees-2"}
    both = at_once(lambda: turn(one, instance, key, body), lambda: turn(two, instance, key, body))
    again = [turn(url, instance, key, body) for url in (two, one)]

    # The copy that lost the race waited for the turn to be finished: the same ids, the metrics thought's
    # included, and the same previous feedback as the copy that stored it.
    for result in [*both[1:], *again]:
        assert {k: result[k] for k in IDS} == {k: both[0][k] for k in IDS}
        assert result["previous_feedback"] == both[0]["previous_feedback"]
    assert both[0]["thought3_id"] and both[0]["previous_feedback"]["answer_id"] == first["thought2_id"]
    chain = uc.conversation(workbench, uc.ConversationRef(instance=instance, chain_id="bees"))
    assert [m.role for m in chain.messages] == ["user", "assistant"] * 2
    assert all(m.metrics for m in chain.messages if m.role == "assistant")
    feedback = workbench.thoughts.feedback([first["thought2_id"]])[first["thought2_id"]]
    assert feedback.continued == 1 and feedback.time_to_next is not None


def test_turns_sent_at_once_to_one_chain_through_both_replicas_keep_each_question_before_its_answer(
        servers, workbench, instance, key):
    one, two = servers
    turn(one, instance, key, {"thought": "We are packing the house", "chain_id": "move"})
    colours = ["red", "green", "blue", "grey", "white", "black"]
    results = at_once(*(lambda url=url, c=c: turn(url, instance, key, {
        "thought": f"The {c} box goes to the attic", "chain_id": "move"}) for url, c in zip([one, two] * 3, colours)))

    messages = uc.conversation(workbench, uc.ConversationRef(instance=instance, chain_id="move")).messages
    assert [m.role for m in messages] == ["user", "assistant"] * 7
    answer_of = {r["thought1_id"]: r["thought2_id"] for r in results}
    for question, answer in zip(messages[0::2], messages[1::2]):
        assert answer_of.get(question.thought.id, answer.thought.id) == answer.thought.id
        assert question.thought.timestamp <= answer.thought.timestamp
    # Shown in the order stored: numbered 1..7, each answer but the last followed by the next question.
    assert [m.thought.thought_number for m in messages[0::2]] == list(range(1, 8))
    times = [m.thought.timestamp for m in messages]
    assert times == sorted(times)
    assert [m.feedback.continued for m in messages[1::2]] == [1] * 6 + [0]
    followed = sorted(r["previous_feedback"]["answer_id"] for r in results)
    assert followed == sorted(m.thought.id for m in messages[1:-1:2])


def test_of_two_first_writes_to_a_new_instance_at_once_one_is_told_it_is_new(replicas, workbench):
    typo = f"t-{uuid.uuid4().hex[:12]}-typo"
    caller = uc.Principal(name="assistant", instances=[typo])
    one, two = replicas
    results = at_once(
        lambda: uc.remember(one, uc.UiRememberParams(thought="The spare key is under the blue pot", instance=typo),
                            caller=caller),
        lambda: uc.remember(two, uc.UiRememberParams(thought="The wifi password is on the fridge", instance=typo),
                            caller=caller),
        lambda: uc.add_memory(one, uc.AddMemory(instance=typo, content="The boiler was serviced in October"),
                              caller=caller))
    told = [n for r in results for n in r.notes if "is new" in n]
    assert len(told) == 1, told
    assert told[0].startswith(f"instance {typo!r} is new: this is its first memory")
    later = uc.remember(workbench, uc.UiRememberParams(thought="And the car is on level 3", instance=typo))
    assert not any("is new" in n for n in later.notes)


def test_two_sweeps_at_once_count_each_abandoned_answer_once(replicas, workbench, instance):
    long_ago = datetime.now(UTC) - timedelta(minutes=20)
    answers = [uc.remember(workbench, uc.UiRememberParams(thought=f"Water the ficus on floor {n}", instance=instance),
                           clock=lambda: long_ago).thought2_id for n in range(12)]
    one, two = replicas
    swept = at_once(lambda: uc.sweep(one), lambda: uc.sweep(two),
                    lambda: uc.sweep_instance(workbench, uc.InstanceRequest(instance=instance)))

    marked = [swept[0].abandoned_marked[instance], swept[1].abandoned_marked[instance], swept[2].abandoned_marked]
    assert sum(marked) == len(answers), marked
    assert all(f.abandoned == 1 for f in workbench.thoughts.feedback(answers).values())
    report = uc.feedback_summary(workbench, uc.SummaryRequest(instance=instance))
    assert (report.summary.answers, report.summary.abandoned) == (len(answers), len(answers))


PASSPORT = "I keep my passport in the desk drawer. My sister Marta renewed hers in Porto."


def killed_mid_call(data_dir, instance: str, key: str, fake_llm, system: str, body: dict[str, Any], *,
                    while_held: Callable[[], None] = lambda: None) -> list[BaseException]:
    """A `workbench api` process sent the turn `body`, killed (SIGKILL) while the fake LLM holds its first call
    whose system prompt opens as `system` (`while_held` runs then); what its client heard (the connection
    dropped). The LLM answers the synthesis, and fails the rest, so the rules read and summarise instead."""
    held, released = threading.Event(), threading.Event()

    def answer(request: dict[str, Any]) -> str | int:
        prompt = request["messages"][0]["content"]
        if prompt.startswith(SYNTHESIS_SYSTEM[:40]):
            return "Your passport is in the desk drawer."
        if prompt.startswith(system[:40]) and not held.is_set():  # the dead call's: held to the end
            held.set()
            released.wait(60)
        return 500

    fake_llm.answer_with(answer)
    env = api_env(data_dir, LLM_BASE_URL=fake_llm.url + "/v1", FORMATION_LLM="true", LLM_MAX_RETRIES="0")
    proc, url = start_api([], env)
    heard: list[BaseException] = []

    def first_call() -> None:
        try:
            turn(url, instance, key, body)
        except httpx.TransportError as e:
            heard.append(e)

    try:
        call = threading.Thread(target=first_call)
        call.start()
        assert held.wait(60), "the replica never made the call to hold"
        while_held()
        proc.kill()
        call.join(30)
    finally:
        released.set()
        proc.kill()
        proc.wait()
    return heard


def test_a_turn_whose_replica_was_killed_after_storing_it_is_finished_once_by_its_retry_on_the_other(
        data_dir, servers, workbench, instance, key, fake_llm):
    """A `workbench api` process summarises the chain its turn ended with the LLM, after storing and indexing
    the turn; the LLM holds that call, and the process is killed (SIGKILL) meanwhile. The client hears the
    connection drop; the retry with the same request id on the other replica gets the stored turn, finished
    once: its metrics thought, and the chain's summary the dead call did not make. (Killed while the LLM
    reads the message, the process also holds the index outbox's lock: see the next test.)"""
    body = {"thought": PASSPORT, "chain_id": "papers", "request_id": "papers-1", "tags": ["important"],
            "next_thought_needed": False}
    heard = killed_mid_call(data_dir, instance, key, fake_llm, SUMMARY_SYSTEM, body)
    assert len(heard) == 1, heard  # "Server disconnected without sending a response." (or a reset)
    stored = workbench.thoughts.chain_thoughts(instance, "papers")
    assert sorted(t.category.split(":")[1] for t in stored) == ["assistant", "user"]  # no metrics thought yet

    started = time.monotonic()
    retried = turn(servers[0], instance, key, body)
    assert time.monotonic() - started >= REPEAT_WAIT_S
    assert retried["thought3_id"] and FINISHED_BY_REPEAT.format(wait=REPEAT_WAIT_S) in retried["notes"]
    assert {t.id for t in stored} == {retried["thought1_id"], retried["thought2_id"]}
    again = turn(servers[1], instance, key, body)
    assert {k: again[k] for k in IDS} == {k: retried[k] for k in IDS}
    thoughts = workbench.thoughts.chain_thoughts(instance, "papers")
    metrics = [t for t in thoughts if t.category == CATEGORY_METRICS]
    assert [m.id for m in metrics] == [retried["thought3_id"]] and len(thoughts) == 3
    chain = uc.conversation(workbench, uc.ConversationRef(instance=instance, chain_id="papers"))
    assert chain.messages[1].metrics.answer_id == retried["thought2_id"]
    assert chain.messages[1].metrics.source == "http"  # the first call's front end, as the answer records
    # What the call does after the store, done once: the turn indexed, the message's important copy, and the
    # ended chain's summary, which the dead call left to the retry.
    user_id = retried["thought1_id"]
    rows = workbench.index.get(instance, [user_id, retried["thought2_id"], derived_id("important", user_id),
                                          derived_id("summary", "papers")])
    assert sorted(r.kind for r in rows) == ["assistant", "important", "session_summary", "user"]
    assert not any('"papers"' in e for e in workbench.thoughts.r.lrange("index:outbox", 0, -1))


def test_a_first_write_to_a_new_instance_that_fails_gives_up_its_claim_so_the_next_write_is_told(replicas):
    """A turn refused after its new-instance check (a `temporal` naming no time) stores nothing: the write on
    the other replica, which does store the instance's first memory, is the one told."""
    typo = f"t-{uuid.uuid4().hex[:12]}-typo"
    one, two = replicas
    with pytest.raises(InvalidInput):
        uc.remember(one, uc.UiRememberParams(thought="The spare key is under the blue pot", instance=typo,
                                             temporal="whenever it suits"))
    stored = uc.add_memory(two, uc.AddMemory(instance=typo, content="The spare key is under the blue pot"))
    told = [n for n in stored.notes if "is new" in n]
    assert len(told) == 1 and told[0].startswith(f"instance {typo!r} is new: this is its first memory"), told
    later = uc.remember(one, uc.UiRememberParams(thought="And the car is on level 3", instance=typo))
    assert not any("is new" in n for n in later.notes)


def quiet_chains(workbench: Workbench, instance: str, n: int) -> list[str]:
    """`n` chains of two statements each, their last activity 20 minutes ago: the sweep summarises them."""
    long_ago = datetime.now(UTC) - timedelta(minutes=20)
    chains = [f"quiet-{i}" for i in range(n)]
    for i, chain in enumerate(chains):
        for text in (f"My colleague Rui{i} drives a red Fiat", f"Rui{i} moved to Faro in June"):
            uc.remember(workbench, uc.UiRememberParams(thought=text, chain_id=chain, instance=instance),
                        clock=lambda: long_ago)
    return chains


def summary_rows(workbench: Workbench, instance: str) -> list[str]:
    with workbench.pool().connection() as conn:
        return [r[0] for r in conn.execute("SELECT chain_id FROM memory WHERE instance = %s AND kind = %s",
                                           (instance, SUMMARY_KIND)).fetchall()]


def test_two_sweeps_at_once_count_each_session_summary_they_stored_once(replicas, workbench, instance):
    chains = quiet_chains(workbench, instance, 5)
    swept = at_once(*(lambda wb=wb: uc.sweep_instance(wb, uc.InstanceRequest(instance=instance)) for wb in replicas))

    assert sorted(summary_rows(workbench, instance)) == chains
    assert sum(s.summarised for s in swept) == len(chains), [s.summarised for s in swept]
    assert sum(s.abandoned_marked for s in swept) == len(chains)


def test_a_chain_another_process_is_summarising_is_left_to_it_and_to_a_later_sweep(replicas, workbench, instance):
    """A sweep that finds a chain's summary claimed throughout SUMMARY_WAIT_S (another process storing it)
    neither writes nor counts it, and keeps its mark at that chain: should the other process have stopped,
    the next sweep summarises it."""
    chains = quiet_chains(workbench, instance, 2)
    one, two = replicas
    key = summarising_key(instance, chains[0])
    token = two.thoughts.claim(key, 60)  # "the other process", stopped after claiming the chain
    first = uc.sweep_instance(one, uc.InstanceRequest(instance=instance))
    assert (first.summarised, summary_rows(workbench, instance)) == (1, [chains[1]])
    two.thoughts.release(key, token)
    later = uc.sweep_instance(one, uc.InstanceRequest(instance=instance))
    assert later.summarised == 1 and sorted(summary_rows(workbench, instance)) == chains


def test_a_retry_takes_the_outbox_lock_of_a_replica_killed_while_forming_the_turn(
        data_dir, servers, workbench, instance, key, fake_llm):
    """A `workbench api` process is killed (SIGKILL) while the LLM reads its turn's message for formation:
    it dies holding the index outbox's lock. The retry on the other replica (this host) takes that lock
    over at once, rather than wait LOCK_WAIT_S (10 s) for it, and finishes the turn: indexed with its
    important copy and the ended chain's summary."""
    body = {"thought": PASSPORT, "chain_id": "passport", "request_id": "passport-1", "tags": ["important"],
            "next_thought_needed": False}

    def holds_the_lock() -> None:
        assert workbench.redis().get(OUTBOX_LOCK), "the replica forms the turn without the outbox lock"

    killed_mid_call(data_dir, instance, key, fake_llm, FORMATION_SYSTEM, body, while_held=holds_the_lock)

    started = time.monotonic()
    retried = turn(servers[0], instance, key, body)
    took = time.monotonic() - started
    assert took < REPEAT_WAIT_S + LOCK_WAIT_S / 2, took  # was REPEAT_WAIT_S + LOCK_WAIT_S and more
    user_id = retried["thought1_id"]
    rows = workbench.index.get(instance, [user_id, retried["thought2_id"], derived_id("important", user_id),
                                          derived_id("summary", "passport")])
    assert sorted(r.kind for r in rows) == ["assistant", "important", "session_summary", "user"]
    assert not any('"passport"' in e for e in workbench.thoughts.r.lrange("index:outbox", 0, -1))
