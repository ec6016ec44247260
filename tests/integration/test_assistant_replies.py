"""An assistant's reply that says nothing ("Noted.", "Thanks for the update!") on the real Redis and Postgres,
with the LLM served at the HTTP layer: its row stays in the index, marked an acknowledgement, and is not
handed to synthesis in place of a memory; a reply that tells a fact still is. Imported replies (OpenAI
JSONL, ChatGPT, LoCoMo's second speaker) are marked by the same function (`indexing.thought_record`)."""

from __future__ import annotations

import json

import pytest

from core import usecases as uc
from core.conversation.turn import Remember, UiRememberParams
from core.models import AS_STORED
from core.retrieval.hybrid import SearchRequest, hybrid_search
from core.runtime import Workbench
from tests.support.chatgpt_export import conversation, write_export


@pytest.fixture(scope="module")
def wb(settings, fake):
    # The default embedder: through its neighbour's words, "Noted." was handed at relevance 0.64 (as the CLI
    # showed), so the test fails without the mark.
    w = Workbench(settings.model_copy(update={"llm_base_url": fake.url + "/v1", "llm_max_retries": 0}))
    yield w
    w.close()


def kinds(wb, instance) -> dict[str, str | None]:
    """Each assistant row's text and the message kind its metadata records."""
    with wb.pool().connection() as conn:
        return {r[0]: r[1] for r in conn.execute(
            "SELECT content, metadata->>'message_kind' FROM memory WHERE instance = %s AND kind = 'assistant'",
            (instance,)).fetchall()}


def turn(wb, fake, instance, said: str, answer: str, chain: str):
    fake.reply(answer)
    return Remember(wb).run(UiRememberParams(thought=said, chain_id=chain, include_history=False),
                            instance=instance)


def test_an_empty_reply_is_stored_but_not_handed_to_synthesis(wb, fake, instance):
    turn(wb, fake, instance, "My flight to Berlin is on Friday at 7:40.", "Noted.", "a")
    turn(wb, fake, instance, "Ana is vegetarian.", "Noted: Ana is vegetarian.", "b")
    asked = turn(wb, fake, instance, "When is my flight?", "At 7:40.", "q")
    handed = [c.content for c in asked.context]
    assert "My flight to Berlin is on Friday at 7:40." in handed
    assert "Noted." not in handed
    assert kinds(wb, instance)["Noted."] == "acknowledgement"
    assert kinds(wb, instance)["Noted: Ana is vegetarian."] is None
    # In the transcript, and in the index as stored (the Memory explorer's profile finds it).
    assert [t.thought for t in wb.thoughts.chain_thoughts(instance, "a")][1] == "Noted."
    stored = hybrid_search(wb.pool(), wb.embedder, SearchRequest(query="flight Berlin Friday noted", instance=instance,
                                                                   top_k=10, profile=AS_STORED))
    assert "Noted." in [r.memory.content for r in stored.results]


def test_a_reply_that_tells_a_fact_is_still_retrieved(wb, fake, instance):
    turn(wb, fake, instance, "What does Ana eat?", "Noted: Ana is vegetarian, no fish either.", "a")
    asked = turn(wb, fake, instance, "Is Ana vegetarian, and does she eat fish?", "She does not.", "q")
    assert "Noted: Ana is vegetarian, no fish either." in [c.content for c in asked.context]


def test_imported_replies_are_marked_alike(wb, instance, tmp_path):
    lines = [{"id": "c1", "created_at": "2024-03-02T09:15:00Z", "messages": [
        {"role": "user", "content": "My passport expires in May 2027."},
        {"role": "assistant", "content": "Got it, thanks for letting me know!"},
        {"role": "user", "content": "When does my passport expire?"},
        {"role": "assistant", "content": "Your passport expires in May 2027."}]}]
    path = tmp_path / "chat.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines), encoding="utf-8")
    uc.import_file(wb, uc.ImportFile(path=path, instance=instance))
    chatgpt = write_export(tmp_path / "conversations.json", [conversation("Trip", "t1", [
        ("user", "We land in Porto at noon.", 1_700_000_000.0),
        ("assistant", "Sounds great! Enjoy your trip!", 1_700_000_010.0)])])
    uc.import_file(wb, uc.ImportFile(path=chatgpt, instance=instance))
    marked = kinds(wb, instance)
    assert marked["Got it, thanks for letting me know!"] == "acknowledgement"
    assert marked["Sounds great! Enjoy your trip!"] == "acknowledgement"
    assert marked["Your passport expires in May 2027."] is None


def test_locomo_second_speaker_is_marked_by_the_same_rule(wb, instance, tmp_path):
    """LoCoMo's second speaker is imported as the assistant, its turns written "Name: text": a turn that
    says nothing after the name is marked; the first speaker's are user messages, left to formation."""
    sample = [{"sample_id": "s1", "conversation": {
        "speaker_a": "Caroline", "speaker_b": "Melanie", "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [{"speaker": "Caroline", "dia_id": "D1:1", "text": "I went to a LGBTQ support group."},
                      {"speaker": "Melanie", "dia_id": "D1:2", "text": "Sounds great! Bye for now!"},
                      {"speaker": "Caroline", "dia_id": "D1:3", "text": "Bye!"},
                      {"speaker": "Melanie", "dia_id": "D1:4", "text": "I painted a sunrise last week."}]}}]
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(sample), encoding="utf-8")
    uc.import_file(wb, uc.ImportFile(path=path, instance=instance, format="locomo"))
    marked = kinds(wb, instance)
    assert marked["Melanie: Sounds great! Bye for now!"] == "acknowledgement"
    assert marked["Melanie: I painted a sunrise last week."] is None


def test_formation_run_marks_the_empty_replies_indexed_before(wb, fake, instance):
    """A data directory kept across versions holds "Noted." unmarked: re-forming its chain marks it."""
    from core.formation.run import form_instance

    turn(wb, fake, instance, "My bike is in the shed.", "Noted.", "old")
    with wb.pool().connection() as conn:  # as a version before 2026-12-07 indexed it
        conn.execute("UPDATE memory SET metadata = metadata - 'message_kind' WHERE instance = %s AND content = %s",
                     (instance, "Noted."))
    assert kinds(wb, instance)["Noted."] is None
    form_instance(wb, instance, chains=["old"])
    assert kinds(wb, instance)["Noted."] == "acknowledgement"
