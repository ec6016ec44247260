"""The LLM fails in every way a provider fails — no answer (timeout), 429, 5xx, an answer that is not the
asked JSON — at every step that uses it: ui_remember's synthesis, past-task key points, MemoryScope's time
extraction and semantic rank, memory-bank compression. Each time: the call is retried, then the step
falls back (offline path or a reported failure) with a note the user sees, and what is stored is whole.

The faults come from the local OpenAI-compatible server, so the real SDK and its retries run.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from core.bank import MemoryBank, MemoryEntry
from core.models import MemoryRecord
from core.conversation.turn import Remember, UiRememberParams
from core.retrieval.memoryscope import ScopeParams, run_memoryscope
from core.past_tasks.models import PastTaskQuery
from core.past_tasks.search import run_internal_memory
from core.retrieval.timeparse import parse_time_hint
from core.runtime import Workbench
from core.index.memory_index import MemoryIndex
from core.index.records import event_time_of
from core.past_tasks.store import PastTaskStore, ProducedTextInput
from core.conversation.thoughts import CATEGORY_ASSISTANT, CATEGORY_METRICS, CATEGORY_USER
from tests.support.embedders import KeywordEmbedder
from tests.support.fake_llm import FakeLLMServer
from core.errors import ProviderError
from core.llm import Message

RETRIES = 1  # the SDK's retries: every failing call is made twice
FAULTS = ["timeout", "429", "503", "not JSON"]
NOW = datetime(2024, 5, 15, 10, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def wb(settings, fake):
    w = Workbench(settings.model_copy(update={"llm_base_url": fake.url + "/v1", "llm_max_retries": RETRIES,
                                              "llm_timeout_s": 0.3}), embedder=KeywordEmbedder())
    yield w
    w.close()


@pytest.fixture(autouse=True)
def fresh(fake):
    fake._replies.clear()
    fake.requests.clear()
    yield
    assert not fake._replies, "a scripted fault was never requested: the step did not retry as expected"


def script(fake: FakeLLMServer, fault: str, calls: int = 1 + RETRIES) -> int:
    """Make the next `calls` chat calls fail with `fault`; returns how many requests that is. A timeout is
    one request: LLM_TIMEOUT_S bounds the whole call, and a retry would start past it."""
    if fault == "timeout":
        calls = 1
        fake.stall(1.0)
    elif fault == "not JSON":
        for _ in range(calls):
            fake.reply("Sorry, I can't do that right now.")
    else:
        fake.fail(int(fault), times=calls, retry_after_ms=10)
    return calls


# What the result says of each fault: its `synthesis_error`, and the note's account of it.
SAID = {"timeout": ("no answer within 0.3 s", "did not answer within 0.3 s (LLM_TIMEOUT_S) after 1 attempt"),
        "429": ("HTTP 429", "failed (HTTP 429) after 2 attempts"),
        "503": ("HTTP 503", "failed (HTTP 503) after 2 attempts")}


@pytest.mark.parametrize("fault", ["timeout", "429", "503"])
def test_synthesis_falls_back_to_extractive_and_says_the_llm_failed(wb, fake, instance, fault):
    """The answer was labelled "no LLM configured" while one was, and only the free-text note told a failure
    from no LLM; the note named the SDK's exception class (APITimeoutError) for a timeout."""
    expected = script(fake, fault)
    r = Remember(wb).run(UiRememberParams(thought="the budget meeting moved to Friday", chain_id="c"),
                         instance=instance)
    assert len(fake.chat_requests) == expected
    assert r.synthesis == "extractive" and r.model_used is None
    error, note = SAID[fault]
    assert r.synthesis_error == error
    assert any(note in n and n.endswith("Answered extractively instead.") for n in r.notes), r.notes
    thoughts = wb.thoughts.chain_thoughts(instance, "c")
    assert [t.category for t in thoughts] == [CATEGORY_USER, CATEGORY_ASSISTANT, CATEGORY_METRICS]
    assert thoughts[1].thought == r.answer
    assert r.answer.startswith(f"Extractive answer (the LLM failed: {error})")


def test_without_an_llm_the_answer_says_none_is_configured(keyword_workbench, instance):
    r = Remember(keyword_workbench).run(UiRememberParams(thought="my kite is green", chain_id="n"),
                                        instance=instance)
    assert r.synthesis == "extractive" and r.synthesis_error is None
    assert r.answer.startswith("Extractive answer (no LLM configured)")


def test_an_empty_answer_is_answered_extractively_and_later_turns_are_indexed(wb, fake, instance):
    """An empty answer was stored as the LLM's, and its empty row failed the index's sync: every later turn
    of the instance then failed with "content: String should have at least 1 character" (a false
    "invalid input", the turn stored)."""
    fake.reply("")
    r = Remember(wb).run(UiRememberParams(thought="my bike is blue", chain_id="empty"), instance=instance)
    assert r.synthesis == "extractive" and r.synthesis_error == "empty answer"
    assert r.answer.startswith("Extractive answer (the LLM failed: empty answer)")
    assert any("returned an empty answer" in n for n in r.notes), r.notes
    fake.reply("Noted: your car is red.")
    later = Remember(wb).run(UiRememberParams(thought="my car is red", chain_id="after"), instance=instance)
    assert later.synthesis == "llm" and not any("deferred" in n for n in later.notes), later.notes
    with wb.pool().connection() as conn:
        assert conn.execute("SELECT count(*) FROM memory WHERE instance = %s AND kind = 'user' "
                            "AND content = 'my car is red'", (instance,)).fetchone()[0] == 1


def test_an_empty_answer_stored_before_is_no_row_of_the_index():
    """An empty answer an older version stored as the LLM's stays queued for the index: it makes no row
    (its row failed every later sync of the instance)."""
    from core.conversation.indexing import thought_records
    from core.conversation.thoughts import Thought

    def said(n: int, category: str, text: str) -> Thought:
        return Thought(id=f"t{n}", instance="i", chain_id="c", thought=text, timestamp=NOW, category=category,
                       thought_number=1, total_thoughts=2, next_thought_needed=False, seq=n,
                       extra={} if category == CATEGORY_USER else {"synthesis": "llm"})

    thread = [said(1, CATEGORY_USER, "my bike is blue"), said(2, CATEGORY_ASSISTANT, "")]
    assert [r.id for r in thought_records(thread, {"t1", "t2"})] == ["t1"]


@pytest.mark.parametrize("fault", FAULTS)
def test_past_task_key_points_report_the_failed_batch(wb, fake, instance, fault):
    store = PastTaskStore(wb.pool(), wb.embedder)
    store.ingest([ProducedTextInput(instance=instance, user_id="u1", task="note", title="Budget",
                                    production="The budget meeting is on Monday with the travel team.")])
    # Key points retry a reply that is not JSON 3 more times; HTTP failures are the SDK's own retries.
    expected = script(fake, fault, calls=4 if fault == "not JSON" else 1 + RETRIES)
    result = run_internal_memory(wb, PastTaskQuery(instance=instance, user_id="u1", query="budget meeting",
                                                   max_distance=2.0))
    assert len(fake.chat_requests) == expected
    kp = result.keypoints
    assert kp.mode == "llm" and kp.references == [] and len(kp.failed_batches) == 1
    assert kp.note == "1 of 1 batches failed; their past tasks have no key points."
    assert len(result.search.hits) == 1  # the search itself is kept and shown
    (record,) = store.tool_executions(instance, "u1")
    assert record.status == "partial" and record.result["keypoints"]["failed_batches"]


def _seed(wb, instance: str) -> None:
    words = ["sushi food", "sushi food with a friend", "the user loves sushi food", "food in paris",
             "sushi and music", "travel food"]
    at = [NOW - timedelta(days=i + 1) for i in range(len(words))]
    MemoryIndex(wb.pool(), wb.embedder).add([
        MemoryRecord(instance=instance, id=f"m{i}", kind="observation", content=text, created_at=at[i],
                     event_time=event_time_of(at[i]))
        for i, text in enumerate(words)])


def _params(**flat) -> ScopeParams:
    base = {"op.set_query_op.params.timestamp": int(NOW.timestamp())}
    return ScopeParams.from_flat(base | {f"op.{k.replace('__', '.params.')}": v for k, v in flat.items()})


@pytest.mark.parametrize("fault", FAULTS)
def test_time_extraction_falls_back_to_the_rules(wb, fake, instance, fault):
    _seed(wb, instance)
    expected = script(fake, fault, calls=1 if fault == "not JSON" else 1 + RETRIES)
    r = run_memoryscope(wb, "what food did I have yesterday", instance=instance,
                        params=_params(semantic_rank_op__enable_ranker=False))
    assert len(fake.chat_requests) == expected
    step = r.trace[1]
    assert step.status == "fallback" and "LLM failed" in step.note and "rule-based parser used" in step.note
    assert r.time_hint == parse_time_hint("what food did I have yesterday", NOW)


@pytest.mark.parametrize("fault", FAULTS)
def test_semantic_rank_keeps_the_retrieval_order(wb, fake, instance, fault):
    _seed(wb, instance)
    expected = script(fake, fault, calls=1 if fault == "not JSON" else 1 + RETRIES)
    r = run_memoryscope(wb, "sushi food", instance=instance, params=_params(
        retrieve_memory_op__top_k=5, semantic_rank_op__output_memory_max_count=3,
        fuse_rerank_op__fuse_score_threshold=0.0))
    assert len(fake.chat_requests) == expected
    step = r.trace[3]
    if fault == "not JSON":  # an answer, but no score in it: said so, and no model score is invented
        assert "LLM scored 0 of 5" in step.note and all(m["base_source"] == "retrieval" for m in step.output)
    else:
        assert step.status == "skipped" and "semantic rank failed" in step.note
    assert step.output_size == 3 and r.memories


@pytest.mark.parametrize("fault", FAULTS)
def test_bank_compression_falls_back_to_rules(wb, fake, instance, fault):
    bank = MemoryBank(wb, instance, "fault")
    for i in range(1, 6):
        bank.add_entry(MemoryEntry(thinking=f"step {i}", command=f"ls /tmp/{i}", result="ok", importance=0.5))
    expected = script(fake, fault, calls=1 if fault == "not JSON" else 1 + RETRIES)
    done = bank.add_entry(MemoryEntry(thinking="step 6", command="ls", result="ok"))
    assert len(fake.chat_requests) == expected
    event = done.compression
    assert event is not None and event.method == "rule"
    assert event.note.startswith("LLM compression failed"), event.note
    # Whole: the summary exists and exactly the entries it names are marked compressed into it.
    snap = bank.snapshot()
    (summary,) = snap.summaries
    compressed = [e.entry.id for e in snap.entries if e.compressed_into == summary.id]
    assert sorted(compressed) == sorted(summary.source_entries) and len(compressed) == 3


def test_a_slow_llm_holds_the_turn_for_llm_timeout_s_not_once_per_retry(wb, fake, instance):
    """The SDK retried a timeout, each try waiting LLM_TIMEOUT_S again: 129.7 s for a 40 s LLM at the
    defaults. LLM_TIMEOUT_S bounds the whole call now."""
    fake.stall(1.0)
    r = Remember(wb).run(UiRememberParams(thought="the boat leaves at nine", chain_id="slow"), instance=instance)
    assert len(fake.chat_requests) == 1
    assert r.latency.synthesis_ms < 2 * 300  # 0.3 s (LLM_TIMEOUT_S), not (1 + RETRIES) times it
    assert r.synthesis_error == "no answer within 0.3 s"


class BreakingLLM:
    """An OpenAI-compatible server whose streamed answer breaks off after `pieces` words: the connection
    closes in the middle of its chunked body, as a server that crashed mid-answer does."""

    def __init__(self, pieces: list[str]):
        import http.server
        import json
        import threading

        def chunk(data: str) -> bytes:
            raw = data.encode()
            return f"{len(raw):x}\r\n".encode() + raw + b"\r\n"

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                for piece in pieces:
                    event = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m",
                             "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]}
                    self.wfile.write(chunk(f"data: {json.dumps(event)}\n\n"))
                self.wfile.write(b"ff\r\ndata: {")  # a chunk cut short, and no last chunk
                self.wfile.flush()
                self.close_connection = True

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_a_stream_broken_mid_answer_is_marked_before_the_fallback(settings, instance):
    """`remember_stream` yielded the LLM's first words and then the extractive answer, with nothing to say
    the first were void: joined, the pieces were garbled."""
    from core.usecases.conversation import AnswerRestarts, Synthesising, remember_stream

    server = BreakingLLM(["FAKE", " answer", " begins"])
    w = Workbench(settings.model_copy(update={"llm_base_url": server.url, "llm_max_retries": 0,
                                              "llm_timeout_s": 5.0}), embedder=KeywordEmbedder())
    try:
        events = list(remember_stream(w, UiRememberParams(thought="my kite is green", chain_id="mid",
                                                          instance=instance)))
    finally:
        w.close()
        server.close()
    result = events[-1]
    assert isinstance(events[0], Synthesising) and events[1:4] == ["FAKE", " answer", " begins"]
    assert isinstance(events[4], AnswerRestarts) and "broke off mid-answer" in events[4].reason
    after = events[5:-1]
    assert "".join(after) == result.answer and result.answer.startswith("Extractive answer (the LLM failed: ")
    assert result.synthesis_error == "the answer broke off"


def test_a_refused_connection_names_the_host(settings):
    import socket

    from core.llm.openai_compat import openai_compatible_llm

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    llm = openai_compatible_llm(f"http://127.0.0.1:{port}/v1", None, timeout_s=5.0, max_retries=1)
    with pytest.raises(ProviderError, match=rf"could not connect to 127\.0\.0\.1:{port} \(LLM_BASE_URL\) after "
                                            r"2 attempts \(.*[Cc]onnection refused"):
        llm.complete([Message(role="user", content="hi")], model="m")


def test_a_429_asking_for_a_longer_wait_than_the_deadline_says_the_wait(wb, fake):
    """The SDK ignored a Retry-After above 60 s, retried at once, and said only "wait and retry"."""
    fake.fail(429, retry_after_ms=600_000)
    with pytest.raises(ProviderError, match=r"HTTP 429\) after 1 attempt: the server asked to wait 600 s"):
        wb.llm.complete([Message(role="user", content="hi")], model="m")
    assert len(fake.chat_requests) == 1


def test_a_time_reply_that_is_not_json_falls_back_to_the_rules(wb, fake, instance):
    """A reply with a "{" that does not parse once counted as "parsed by the LLM: no time", and the time
    filter the rules would have read was silently dropped."""
    _seed(wb, instance)
    fake.reply("Sure! Here is what I think: kind=statement, facts: none {oops")
    r = run_memoryscope(wb, "what food did I have yesterday", instance=instance,
                        params=_params(semantic_rank_op__enable_ranker=False))
    step = r.trace[1]
    assert step.status == "fallback" and "not the asked JSON" in step.note and "{oops" in step.note
    assert step.note.endswith("rule-based parser used")
    assert r.time_hint == parse_time_hint("what food did I have yesterday", NOW) and r.time_hint is not None


def test_a_turn_whose_answer_failed_does_not_ask_the_server_again_to_form_its_message(settings, fake, instance):
    """With FORMATION_LLM on, a turn whose answer's call failed asked the same server again to read the
    message (8 calls, 7.9 s against a server answering 500): the rules read it at once."""
    w = Workbench(settings.model_copy(update={"llm_base_url": fake.url + "/v1", "llm_max_retries": RETRIES,
                                              "llm_timeout_s": 2, "formation_llm": True}), embedder=KeywordEmbedder())
    try:
        expected = script(fake, "503")
        r = Remember(w).run(UiRememberParams(thought="my bike is blue", chain_id="f"), instance=instance)
        assert len(fake.chat_requests) == expected and r.synthesis == "extractive"
        assert any("not asked after the LLM server failed on this turn's answer" in n for n in r.notes), r.notes
    finally:
        w.close()
