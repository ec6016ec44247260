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

RETRIES = 1  # the SDK's retries: every failing call is made twice
FAULTS = ["timeout", "429", "503", "not JSON"]
NOW = datetime(2024, 5, 15, 10, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def fake():
    with FakeLLMServer() as srv:
        yield srv


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
    """Make the next `calls` chat calls fail with `fault`; returns how many requests that is."""
    if fault == "timeout":
        fake.stall(1.0, times=calls)
    elif fault == "not JSON":
        for _ in range(calls):
            fake.reply("Sorry, I can't do that right now.")
    else:
        fake.fail(int(fault), times=calls, retry_after_ms=10)
    return calls


@pytest.mark.parametrize("fault", ["timeout", "429", "503"])
def test_synthesis_falls_back_to_extractive(wb, fake, instance, fault):
    expected = script(fake, fault)
    r = Remember(wb).run(UiRememberParams(thought="the budget meeting moved to Friday", chain_id="c"),
                         instance=instance)
    assert len(fake.chat_requests) == expected
    assert r.synthesis == "extractive" and r.model_used is None
    assert any("failed" in n and "extractively" in n for n in r.notes), r.notes
    thoughts = wb.thoughts.chain_thoughts(instance, "c")
    assert [t.category for t in thoughts] == [CATEGORY_USER, CATEGORY_ASSISTANT, CATEGORY_METRICS]
    assert thoughts[1].thought == r.answer and r.answer.startswith("Extractive answer")


def test_an_empty_answer_is_answered_extractively_and_later_turns_are_indexed(wb, fake, instance):
    """An empty answer was stored as the LLM's, and its empty row failed the index's sync: every later turn
    of the instance then failed with "content: String should have at least 1 character" (a false
    "invalid input", the turn stored)."""
    fake.reply("")
    r = Remember(wb).run(UiRememberParams(thought="my bike is blue", chain_id="empty"), instance=instance)
    assert r.synthesis == "extractive" and r.answer.startswith("Extractive answer")
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
