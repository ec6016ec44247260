"""Key points against a local OpenAI-compatible HTTP server (the real client code runs), and offline.

Batches run in parallel, so the fake server's queued replies are written to fit whichever batch gets
them: an answer may name every past task, and each batch keeps only its own.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime

import pytest

from core.past_tasks.keypoints import extract_key_points, sentences
from core.past_tasks.models import PastTaskHit, PastTaskQuery
from core.past_tasks.search import history, run_internal_memory
from core.runtime import Workbench
from core.past_tasks.store import PastTaskStore, ProducedTextInput
from tests.support.embedders import KeywordEmbedder


@pytest.fixture
def llm_wb(llm_settings):
    wb = Workbench(llm_settings, embedder=KeywordEmbedder())
    yield wb
    wb.close()


def hit(pk: int, production: str = "The paris museum opens at nine.") -> PastTaskHit:
    return PastTaskHit(user_task_execution_pk=pk, produced_text_pk=pk, version_pk=pk, task_name="note",
                       task_icon="🗒️", title=f"Text {pk}", production=production,
                       date=datetime(2024, 3, pk % 28 + 1, tzinfo=UTC), distance=pk / 100)


def answer(pks, points=("a key point",)) -> str:
    return json.dumps({"results": [{"user_task_execution_pk": pk, "produced_text_title": "renamed by model",
                                    "task_icon": "🤖", "extracted_informations": list(points)}
                                   for pk in pks]})


def prompt_pks(request) -> list[int]:
    prompt = request["body"]["messages"][1]["content"]
    return [int(p) for p in re.findall(r"user_task_execution_pk: (\d+)", prompt)]


def test_results_are_read_in_batches_of_three(llm_wb, fake_llm):
    hits = [hit(pk) for pk in range(1, 8)]
    for _ in range(3):
        fake_llm.reply(answer(range(1, 8)), total_tokens=100)
    kp = extract_key_points(llm_wb, "paris museum", hits)
    batches = sorted((prompt_pks(r) for r in fake_llm.chat_requests), key=lambda b: b[0])
    assert batches == [[1, 2, 3], [4, 5, 6], [7]]
    assert all(r["body"]["response_format"] == {"type": "json_object"} for r in fake_llm.chat_requests)
    assert (kp.mode, kp.llm_calls, kp.total_tokens, kp.failed_batches) == ("llm", 3, 300, [])
    assert [r.user_task_execution_pk for r in kp.references] == list(range(1, 8))  # by distance
    ref = kp.references[0]
    # Title and icon come from the database, whatever the model wrote.
    assert (ref.produced_text_title, ref.task_icon) == ("Text 1", "🗒️")
    assert ref.extracted_informations == ["a key point"]


def test_irrelevant_results_are_dropped(llm_wb, fake_llm):
    fake_llm.reply(json.dumps({"results": [
        {"user_task_execution_pk": 1, "produced_text_title": "Text 1", "task_icon": "🗒️",
         "extracted_informations": ["Opens at nine."]},
        {"user_task_execution_pk": 2, "produced_text_title": "Text 2", "task_icon": "🗒️",
         "extracted_informations": []},
        {"user_task_execution_pk": 99, "produced_text_title": "invented", "task_icon": "?",
         "extracted_informations": ["not a hit of this batch"]}]}))
    kp = extract_key_points(llm_wb, "paris museum", [hit(1), hit(2), hit(3)])
    assert [r.user_task_execution_pk for r in kp.references] == [1]
    assert kp.dropped == [2, 3]


def test_invalid_json_is_retried_then_accepted(llm_wb, fake_llm):
    fake_llm.reply("Sure! Here are the key points: {")
    fake_llm.reply('{"answer": "no list"}')
    fake_llm.reply("```json\n" + answer([1]) + "\n```")
    kp = extract_key_points(llm_wb, "paris museum", [hit(1)])
    assert [r.user_task_execution_pk for r in kp.references] == [1] and kp.llm_calls == 3
    retry = fake_llm.chat_requests[1]["body"]["messages"]
    assert retry[2]["role"] == "assistant" and "not valid" in retry[3]["content"]


def test_a_batch_failing_after_three_retries_is_reported_and_the_others_return(llm_wb, fake_llm):
    fake_llm.reply(answer(range(1, 5)))
    for _ in range(4):
        fake_llm.reply("not json")
    kp = extract_key_points(llm_wb, "paris museum", [hit(pk) for pk in range(1, 5)])
    assert len(fake_llm.chat_requests) == 5  # one good answer, then 1 + 3 retries for the other batch
    [failed] = kp.failed_batches
    assert failed.attempts == 4 and "no valid JSON after 4 attempts" in failed.reason
    assert failed.user_task_execution_pks in ([1, 2, 3], [4])
    returned = [r.user_task_execution_pk for r in kp.references]
    assert sorted(returned + failed.user_task_execution_pks) == [1, 2, 3, 4]
    assert kp.note and "1 of 2 batches failed" in kp.note


def test_provider_failure_fails_the_batch_with_the_reason(llm_wb, fake_llm):
    fake_llm.fail(500, times=3)  # the client's own retries (llm_max_retries=2) are used up first
    kp = extract_key_points(llm_wb, "paris museum", [hit(1)])
    assert kp.references == [] and "HTTP 500" in kp.failed_batches[0].reason


def test_offline_key_points_are_the_most_similar_sentences(keyword_workbench):
    production = "The dog sleeps all day.\n- Lunch was sushi food again.\n- The paris museum opens at nine."
    kp = extract_key_points(keyword_workbench, "paris museum", [hit(1, production)])
    assert kp.mode == "extractive" and "extractive" in kp.note
    assert kp.references[0].extracted_informations[0] == "The paris museum opens at nine."
    assert len(kp.references[0].extracted_informations) == 3


def test_tool_run_with_the_llm_records_the_references(llm_wb, fake_llm, instance):
    store = PastTaskStore(llm_wb.pool(), llm_wb.embedder)
    [a] = store.ingest([ProducedTextInput(instance=instance, user_id="ann", task="email",
                                          title="paris museum",
                                          production="Tickets for the paris museum are booked.")])
    fake_llm.reply(answer([a.user_task_execution_pk], ["Tickets are booked."]))
    q = PastTaskQuery(instance=instance, user_id="ann", query="paris museum")
    result = run_internal_memory(llm_wb, q)
    assert [r.extracted_informations for r in result.references] == [["Tickets are booked."]]
    assert result.references[0].task_icon == "✉️"
    [execution] = history(llm_wb, instance, "ann")
    recorded = execution.result
    assert recorded.keypoints.mode == "llm" and recorded.references == result.references


LETTER = ("Dear Prof. Daniel Weber,\nThank you for the quick reply.\nThe paris museum opens at nine on Tuesdays.\n"
          "Hi team, the museum tickets cost 12 euros.\nBest regards,\nAnna Keller")


def test_salutations_are_never_key_points(llm_wb, fake_llm, keyword_workbench):
    offline = extract_key_points(keyword_workbench, "Dear Prof. Daniel Weber museum", [hit(1, LETTER)])
    points = offline.references[0].extracted_informations
    assert points and not any(p.startswith(("Dear", "Best regards")) for p in points)
    assert "Hi team, the museum tickets cost 12 euros." in points  # a greeting with news in it stays

    fake_llm.reply(answer([1], points=("Dear Prof. Daniel Weber,", "The paris museum opens at nine.",
                                       "Kind regards, Anna Keller")))
    kp = extract_key_points(llm_wb, "paris museum", [hit(1, LETTER)])
    assert kp.references[0].extracted_informations == ["The paris museum opens at nine."]


def test_a_sentence_broken_across_lines_is_one_key_point(keyword_workbench):
    wrapped = ("# Q3 report\nThe Nordic region led growth, while\nthe southern region declined 3%.\n\n"
               "- churn fell in every region that\n  moved to the new plan\nDear Prof. Weber,\nThe budget review is on Friday.")
    assert sentences(wrapped) == ["The Nordic region led growth, while the southern region declined 3%.",
                                  "churn fell in every region that moved to the new plan",
                                  "The budget review is on Friday."]
