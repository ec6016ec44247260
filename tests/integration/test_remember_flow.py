"""ui_remember end to end on the real servers: thoughts, feedback, retrieval, synthesis, sweep."""

import time
from datetime import UTC, datetime, timedelta

import pytest
from pydantic import ValidationError

from core.conversation.keys import chain_key
from core.conversation.metrics import TurnMetrics
from core.conversation.thoughts import CATEGORY_ASSISTANT, CATEGORY_METRICS, CATEGORY_USER
from core.conversation.turn import Remember, UiRememberParams
from core.errors import InvalidInput
from core.runtime import Workbench
from tests.support.clock import Clock


def test_one_call_stores_three_thoughts_with_their_chain_index(workbench, instance):
    r = Remember(workbench).run(UiRememberParams(thought="I adopted a dog named Rex", chain_id="c1",
                                                 thought_number=1, total_thoughts=3, tags=["pets"]),
                                instance=instance)
    assert r.status == "ok" and r.thought3_id
    thoughts = workbench.thoughts.chain_thoughts(instance, "c1")
    assert [t.category for t in thoughts] == [CATEGORY_USER, CATEGORY_ASSISTANT, CATEGORY_METRICS]
    assert [t.id for t in thoughts] == [r.thought1_id, r.thought2_id, r.thought3_id]
    assert all(t.thought_number == 1 and t.total_thoughts == 3 and t.tags == ["pets"] for t in thoughts)
    assert [t.seq for t in thoughts] == [1, 2, 3]
    assert workbench.redis().zcard(chain_key(instance, "c1")) == 3
    assert workbench.redis().exists(f"thought:{instance}:{{c1}}:{r.thought1_id}")
    fb = workbench.thoughts.feedback([r.thought2_id])[r.thought2_id]
    assert (fb.continued, fb.abandoned, fb.feedback_score) == (0, 0, None)
    assert r.synthesis == "extractive" and r.model_used is None and r.usage_total_tokens is None
    assert any("no LLM configured" in n for n in r.notes)
    # The metrics thought reads back as what the turn reported, stage timings included.
    metrics = TurnMetrics.from_fields(thoughts[2].to_hash())
    assert metrics == r.metrics()
    assert (metrics.model, metrics.tokens, metrics.answer_id, metrics.tags) == \
        ("extractive", None, r.thought2_id, ["pets"])
    assert metrics.latency.total_ms >= metrics.latency.synthesis_ms >= 0


def test_context_comes_from_other_chains_and_never_the_query_itself(workbench, instance):
    rm = Remember(workbench)
    rm.run(UiRememberParams(thought="My sister Ana is vegetarian", chain_id="family"), instance=instance)
    r = rm.run(UiRememberParams(thought="What food does my sister Ana eat?", chain_id="dinner"),
               instance=instance)
    contents = [c.content for c in r.context]
    assert "My sister Ana is vegetarian" in contents
    assert r.thought1_id not in {c.id for c in r.context}
    assert "What food does my sister Ana eat?" not in contents
    top = r.context[0]
    assert top.combined == pytest.approx(0.6 * top.semantic + 0.25 * top.text + 0.15 * top.recency)


def test_feedback_of_the_previous_answer_and_the_sweep(workbench, instance):
    clock = Clock(datetime.now(UTC) - timedelta(hours=2))
    rm = Remember(workbench, clock=clock)
    first = rm.run(UiRememberParams(thought="Where is the Louvre?", chain_id="fb"), instance=instance)
    clock.advance(20)
    second = rm.run(UiRememberParams(thought="Actually, I meant the Orsay", chain_id="fb"), instance=instance)
    fb = second.previous_feedback
    assert fb.answer_id == first.thought2_id and fb.continued == 1
    assert fb.time_to_next == pytest.approx(20, abs=0.01)
    assert fb.feedback_score == pytest.approx(0.8) and fb.synthesis_quality == pytest.approx(0.8)
    assert fb.corrected == "Actually, I meant the Orsay"
    # The second answer gets no follow-up: the sweep marks it abandoned (two hours have passed).
    assert workbench.thoughts.sweep_abandoned(instance) == 1
    again = workbench.thoughts.feedback([second.thought2_id])[second.thought2_id]
    assert again.abandoned == 1 and again.continued == 0
    assert workbench.thoughts.feedback([first.thought2_id])[first.thought2_id].abandoned == 0


def test_a_recent_answer_is_not_swept(workbench, instance):
    r = Remember(workbench).run(UiRememberParams(thought="hello", chain_id="fresh"), instance=instance)
    assert workbench.thoughts.sweep_abandoned(instance) == 0
    assert workbench.thoughts.sweep_abandoned(instance, now=time.time() + 601) == 1
    assert workbench.thoughts.feedback([r.thought2_id])[r.thought2_id].abandoned == 1


def test_repeated_request_id_is_served_once(workbench, instance):
    rm = Remember(workbench)
    p = UiRememberParams(thought="idempotent please", chain_id="idem", request_id="req-1")
    a, b = rm.run(p, instance=instance), rm.run(p, instance=instance)
    assert a.thought1_id == b.thought1_id
    assert len(workbench.thoughts.chain_thoughts(instance, "idem")) == 3
    # The same id with another message is refused: it would get the first one's result, and be stored nowhere.
    with pytest.raises(InvalidInput, match="request_id 'req-1' was first sent with another message"):
        rm.run(p.model_copy(update={"thought": "something else entirely"}), instance=instance)
    assert len(workbench.thoughts.chain_thoughts(instance, "idem")) == 3


def test_llm_synthesis_model_choice_usage_and_stream(llm_settings, fake_llm, instance):
    wb = Workbench(llm_settings)
    rm = Remember(wb)
    fake_llm.reply("Rex is your dog.", prompt_tokens=70, completion_tokens=7)
    pieces = list(rm.stream(UiRememberParams(thought="Who is Rex?", chain_id="llm"), instance=instance))
    result = pieces[-1]
    assert "".join(p for p in pieces[:-1]) == "Rex is your dog."
    assert result.synthesis == "llm" and result.usage_total_tokens == 77
    # The split is kept where the total is: the metrics thought, which the pages read.
    assert (result.usage_prompt_tokens, result.usage_completion_tokens) == (70, 7)
    stored = TurnMetrics.from_fields(wb.thoughts.chain_thoughts(instance, "llm")[2].to_hash())
    assert (stored.tokens, stored.prompt_tokens, stored.completion_tokens) == (77, 70, 7)
    assert stored.tokens_line() == "77 tokens: 70 prompt + 7 answer"
    assert result.model_used == "llama3-8b-8192"
    body = fake_llm.chat_requests[-1]["body"]
    assert body["stream"] is True and body["model"] == "llama3-8b-8192"
    sent = body["messages"][-1]["content"]
    assert "Chat history:" in sent and "Latest user question:\n    Who is Rex?" in sent
    assert result.prompt[-1].content == sent

    fake_llm.reply("deep answer", total_tokens=5)
    deep = rm.run(UiRememberParams(thought="Explain Rex", chain_id="llm", style="Deep"), instance=instance)
    assert deep.model_used == "llama3-70b-8192"
    fake_llm.reply("many items")
    many = rm.run(UiRememberParams(thought="everything", chain_id="llm", top_k=20), instance=instance)
    assert (len(many.context) > 8) == (many.model_selected == "llama3-70b-8192")
    wb.close()


def test_llm_failure_falls_back_to_extractive_with_a_note(llm_settings, fake_llm, instance):
    wb = Workbench(llm_settings)
    fake_llm.fail(503, times=3)
    r = Remember(wb).run(UiRememberParams(thought="anything", chain_id="down"), instance=instance)
    assert r.synthesis == "extractive" and any("HTTP 503" in n for n in r.notes)
    assert len(wb.thoughts.chain_thoughts(instance, "down")) == 3
    wb.close()


def test_history_truncation_and_token_cap_are_reported(workbench, instance):
    # No relevance floor: "and now?" relates to nothing, and the token cap is what is tested here.
    small = Workbench(workbench.settings.model_copy(update={"chat_history_token_budget": 30,
                                                            "relevance_floor": 0.0}))
    rm = Remember(small)
    for i in range(4):
        rm.run(UiRememberParams(thought=f"turn {i}: a longish message about the garden and the roses",
                                chain_id="long"), instance=instance)
    r = rm.run(UiRememberParams(thought="and now?", chain_id="long", token_cap=15), instance=instance)
    assert r.history_turns_dropped > 0 and any("chat history cut" in n for n in r.notes)
    assert sum(c.tokens for c in r.context) <= 15
    assert r.context_dropped_by_token_cap > 0
    small.close()


def test_temporal_restricts_and_bad_temporal_is_refused(workbench, instance):
    from core.errors import InvalidInput

    rm = Remember(workbench, clock=Clock(datetime.now(UTC) - timedelta(days=10)))
    rm.run(UiRememberParams(thought="old note about tulips", chain_id="t"), instance=instance)
    r = Remember(workbench).run(UiRememberParams(thought="tulips", chain_id="t2", temporal="yesterday"),
                                instance=instance)
    assert all("tulips" not in c.content for c in r.context)
    assert any("restricted" in n for n in r.notes)
    with pytest.raises(InvalidInput, match="temporal"):
        Remember(workbench).run(UiRememberParams(thought="x", temporal="the blue moon"),  # names no time
                                instance=instance)


def test_indexed_thoughts_carry_their_conversation_context(workbench, instance):
    rm = Remember(workbench)
    rm.run(UiRememberParams(thought="Where should we go hiking this weekend?", chain_id="ctx"), instance=instance)
    r = rm.run(UiRememberParams(thought="Yes, with the kids!", chain_id="ctx"), instance=instance)
    with workbench.pool().connection() as conn:
        context = conn.execute("SELECT context FROM memory WHERE instance = %s AND id = %s",
                               (instance, r.thought1_id)).fetchone()[0]
    # The previous user turn; the extractive answer between them quotes other memories and is left out.
    assert context["before"] == ["Where should we go hiking this weekend?"]


def test_a_memory_is_dated_by_its_event_when_that_says_more(workbench, instance):
    """Answers and prompts dated a memory by when it was stored: "Visited grandma" (event 1 January 2030),
    stored today, was answered as today's."""
    from core.usecases.memories import AddMemory, add_memory

    add_memory(workbench, AddMemory(instance=instance, content="Visited grandma in Ghent",
                                    event_time=datetime(2030, 1, 1, tzinfo=UTC)))
    r = Remember(workbench).run(UiRememberParams(thought="When did I visit grandma in Ghent?", chain_id="when"),
                                instance=instance)
    today = datetime.now(UTC).date().isoformat()
    assert f"- {today} (event 2030-01-01): Visited grandma in Ghent" in r.answer
    assert any(", event 2030-01-01) Visited grandma in Ghent" in m.content for m in r.prompt)


def test_an_event_given_as_a_day_leaves_its_hour_unknown(workbench, instance):
    """A date alone was read as midnight (hour 0), which is a time the caller never said."""
    from core.usecases.memories import AddMemory, add_memory

    for given in ("2024-03-03", "2024-03-03T10:00:00"):
        added = add_memory(workbench, AddMemory.model_validate({"instance": instance, "content": f"Dentist {given}",
                                                                "event_time": given}))
        assert (added.event_time.day, added.event_time.hour) == (3, -1 if len(given) == 10 else 10)
    with pytest.raises(ValidationError, match=r"'yesterday' is not an ISO date or time: give a day \(2024-03-03\)"):
        AddMemory.model_validate({"instance": instance, "content": "Dentist", "event_time": "yesterday"})


def test_offline_a_statement_is_noted_and_a_question_answered_from_memory(workbench, instance):
    """Offline, a statement was answered as a question: "I switched from my Kindle to a Kobo last week." got
    "the most relevant memories: We changed it last week." It is noted now, its related memories after."""
    rm = Remember(workbench)
    rm.run(UiRememberParams(thought="I read every night on my Kindle.", chain_id="reader"), instance=instance)
    told = rm.run(UiRememberParams(thought="I switched from my Kindle to a Kobo.", chain_id="reader"),
                  instance=instance)
    assert told.answer.startswith("Extractive answer (no LLM configured): noted. Your message is stored")
    assert "Related memories:\n- " in told.answer and "my Kindle" in told.answer
    asked = rm.run(UiRememberParams(thought="What did I switch to from my Kindle?", chain_id="later"), instance=instance)
    assert asked.answer.startswith("Extractive answer (no LLM configured) — the most relevant memories:\n- "), (asked.notes, asked.context)
    assert "Kobo" in asked.answer
