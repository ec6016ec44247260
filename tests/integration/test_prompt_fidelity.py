"""What a turn says it sent to the LLM is what the LLM server received, through every front end.

A fake OpenAI-compatible server (real HTTP, tests/support/fake_llm.py) records every request body. For each
turn made through the dashboard's use case, the CLI, the HTTP API on uvicorn and MCP over streamable HTTP
(the SDK's client), the messages the server received are compared with the prompt the turn returns, the one
stored with it (what the Chat page and the Feedback transcript show) and the one a repeat returns; the token
figures with the server's usage; the memories listed as handed with the memories inside the prompt, in
order, with their relevance; and the chat history with its token budget, counted by the product's tokenizer.
"""

from __future__ import annotations

import json
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from core import usecases as uc
from core.conversation.tool_input import ChatMessage, fit_history
from core.llm import Message
from core.runtime import Workbench
from core.tokens import count_tokens
from tests.support.api import thread_server
from tests.support.cli import in_process_cli
from tests.support.mcp_client import ok

# Memories whose text must reach the LLM unchanged: Markdown, a code fence, HTML, emoji, accents.
CAT = "My cat is called ```Mochi``` 🐱 — **bold** <b>not html</b> naïve café"
DENTIST = "The dentist appointment is on Friday at 3pm"
UNRELATED = "Quarterly tax filing uses form 1040-ES every April"


@pytest.fixture
def wb(llm_settings, workbench, instance):
    w = Workbench(llm_settings.model_copy(update={"instance": instance}), embedder=workbench.embedder)
    for content in (CAT, DENTIST, UNRELATED):
        uc.add_memory(w, uc.AddMemory(instance=instance, content=content))
    yield w
    w.close()


# -- what each turn is checked against ---------------------------------------------------------------

def sent(fake, since: int) -> list[dict[str, Any]]:
    """The chat request bodies the server received since the `since`-th."""
    return [r["body"] for r in fake.chat_requests[since:]]


def memory_lines(user_text: str) -> list[str]:
    """The lines of the prompt's memory_retrieval step."""
    block = user_text.split("[memory_retrieval]\n", 1)[1].split("\nLatest user question:\n", 1)[0]
    return block.split("\n")


def history_of(user_text: str) -> str:
    return user_text.split("Chat history:\n", 1)[1].split("\nIntermediate tool outputs:\n", 1)[0]


def stored(w: Workbench, r: uc.UiRememberResult) -> uc.TurnMetrics:
    """The turn's metrics as the Chat page reads them, checked against the Feedback transcript's copy."""
    chain = uc.conversation(w, uc.ConversationRef(instance=r.instance, chain_id=r.chain_id))
    metrics = next(m.metrics for m in chain.messages if m.thought.id == r.thought2_id)
    transcript = uc.transcript(w, uc.TurnRef(instance=r.instance, chain_id=r.chain_id, answer_id=r.thought2_id))
    assert transcript.metrics == metrics
    return metrics


def check_turn(w: Workbench, fake, since: int, r: uc.UiRememberResult, usage: tuple[int, int, int],
               *, returned_prompt: bool = True) -> dict[str, Any]:
    """One LLM call, whose messages are the prompt returned and stored; the server's usage as reported;
    the memories of the prompt those of the context, in order; none of the instance's others in it."""
    (body,) = sent(fake, since)
    messages = [Message(**m) for m in body["messages"]]
    assert body["model"] == r.model_selected
    if returned_prompt:
        assert r.prompt == messages
    metrics = stored(w, r)
    assert metrics.prompt == messages
    prompt_tokens, completion_tokens, total = usage
    assert (r.usage_prompt_tokens, r.usage_completion_tokens, r.usage_total_tokens) == usage
    assert (metrics.prompt_tokens, metrics.completion_tokens, metrics.tokens) == usage
    assert metrics.tokens_line() == f"{total:,} tokens: {prompt_tokens:,} prompt + {completion_tokens:,} answer"
    lines = memory_lines(messages[1].content)
    if r.context:
        assert len(lines) == len(r.context)
        for line, item in zip(lines, r.context, strict=True):
            assert line.endswith(f") {item.content}") and f"({item.kind}, relevance {item.relevance:.2f}" in line
    else:
        assert lines == ["    (no memory matches this message)"]  # a step's output, quoted: one indent in
    assert [c.model_dump() for c in metrics.context] == [c.model_dump() for c in r.context]
    handed = {c.content for c in r.context}
    for other in {CAT, DENTIST, UNRELATED} - handed:
        assert all(other not in line for line in lines)
    return body


def test_every_front_end_sends_what_it_shows(wb, fake_llm, instance, settings, workbench, monkeypatch):
    fake = fake_llm
    # 1. The dashboard's call: the streamed turn, as the Chat page makes it.
    since = len(fake.chat_requests)
    fake.reply("Your cat is Mochi.", prompt_tokens=311, completion_tokens=7, total_tokens=319)
    events = list(uc.remember_stream(wb, uc.UiRememberParams(thought="What is my cat called?", chain_id="fid",
                                                             instance=instance, request_id="fid-1"),
                                     origin=uc.Origin(source="dashboard")))
    first = events[-1]
    assert "".join(e for e in events[:-1]) == first.answer == "Your cat is Mochi."
    body = check_turn(wb, fake, since, first, (311, 7, 319))
    # The memory reached the LLM byte for byte; the unrelated one, left out, did not.
    assert CAT in body["messages"][1]["content"] and UNRELATED not in body["messages"][1]["content"]
    assert [c.content for c in first.context][:1] == [CAT]

    # 2. The CLI, in the same chain: its history is the first turn, as stored.
    monkeypatch.setenv("LLM_BASE_URL", fake.url + "/v1")
    monkeypatch.setenv("INSTANCE", instance)
    run = in_process_cli(settings, workbench, monkeypatch)
    since = len(fake.chat_requests)
    fake.reply("On Friday at 3pm.", prompt_tokens=402, completion_tokens=6, total_tokens=410)
    code, out, err = run("remember", "When is the dentist appointment?", "--chain", "fid", "--request-id", "fid-2")
    assert code == 0, err
    second = uc.UiRememberResult.model_validate_json(out)
    body = check_turn(wb, fake, since, second, (402, 6, 410))
    assert history_of(body["messages"][1]["content"]) == f"Human: What is my cat called?\nAI: {first.answer}"

    # Other tests of the session's servers may have made API keys, after which every request needs one.
    secret = uc.create_key(wb, uc.CreateKey(name=f"fid-{uuid.uuid4().hex[:8]}", instances=[instance])).secret
    auth = {"Authorization": f"Bearer {secret}"}
    with thread_server(wb) as url:
        # 3. The HTTP API on uvicorn.
        since = len(fake.chat_requests)
        fake.reply("Noted.", prompt_tokens=455, completion_tokens=2, total_tokens=457)
        response = httpx.post(f"{url}/v1/instances/{instance}/remember", timeout=60, headers=auth, json={
            "thought": "Thanks! ```and``` **this** stays as typed 🎉\n\n", "chain_id": "fid",
            "request_id": "fid-3"})
        assert response.status_code == 200, response.text
        third = uc.UiRememberResult.model_validate(response.json())
        body = check_turn(wb, fake, since, third, (455, 2, 457))
        # The question reaches the model as typed, quoted: each line indented (its empty last one too).
        assert body["messages"][1]["content"].endswith("Latest user question:\n    Thanks! ```and``` **this** stays "
                                                       "as typed 🎉\n    ")

        # 4. MCP over streamable HTTP, with the prompt asked for and without (the turn stores it either way).
        async def mcp_turns() -> list[dict[str, Any]]:
            async with (httpx2.AsyncClient(headers=auth, timeout=httpx2.Timeout(60.0)) as client,
                        streamable_http_client(url + "/mcp", http_client=client) as (read, write),
                        ClientSession(read, write) as session):
                await session.initialize()
                fake.reply("Mochi, still.", prompt_tokens=500, completion_tokens=4, total_tokens=504)
                asked = await ok(session, "ui_remember", {"thought": "And my cat's name again?", "chain_id": "fid",
                                                          "request_id": "fid-4", "include_prompt": True})
                fake.reply("Friday.", prompt_tokens=520, completion_tokens=2, total_tokens=522)
                quiet = await ok(session, "ui_remember", {"thought": "Which day is the dentist?",
                                                          "chain_id": "fid", "request_id": "fid-5"})
                return [asked, quiet]

        since = len(fake.chat_requests)
        asked, quiet = (uc.UiRememberResult.model_validate(t) for t in anyio.run(mcp_turns))
        bodies = sent(fake, since)
        assert len(bodies) == 2
        assert asked.prompt == [Message(**m) for m in bodies[0]["messages"]] == stored(wb, asked).prompt
        assert (asked.usage_prompt_tokens, asked.usage_completion_tokens, asked.usage_total_tokens) == (500, 4, 504)
        assert quiet.prompt == [] and any("include_prompt=false" in n for n in quiet.notes)
        assert stored(wb, quiet).prompt == [Message(**m) for m in bodies[1]["messages"]]
        assert (quiet.usage_prompt_tokens, quiet.usage_completion_tokens, quiet.usage_total_tokens) == (520, 2, 522)

        # A repeat of a request, through any front end, asks the LLM nothing and returns the first result.
        since = len(fake.chat_requests)
        again = httpx.post(f"{url}/v1/instances/{instance}/remember", timeout=60, headers=auth, json={
            "thought": "What is my cat called?", "chain_id": "fid", "request_id": "fid-1"})
        assert again.status_code == 200 and sent(fake, since) == []
        assert uc.UiRememberResult.model_validate(again.json()) == first

    # Every answer stored is the server's text, and each prompt's history is the chain as stored before it.
    chain = uc.conversation(wb, uc.ConversationRef(instance=instance, chain_id="fid"))
    answers = [m.thought.thought for m in chain.messages if m.role == "assistant"]
    assert answers == ["Your cat is Mochi.", "On Friday at 3pm.", "Noted.", "Mochi, still.", "Friday."]


def test_a_history_over_its_budget_drops_the_oldest_and_says_how_many(llm_settings, workbench, fake_llm, instance):
    budget = 60
    w = Workbench(llm_settings.model_copy(update={"instance": instance, "chat_history_token_budget": budget}),
                  embedder=workbench.embedder)
    try:
        said = [f"Note {i}: the ferry to the island number {i} leaves from pier {i + 3} at dawn" for i in range(4)]
        results = []
        for i, text in enumerate(said):
            fake_llm.reply(f"Answer {i}.")
            results.append(uc.remember(w, uc.UiRememberParams(thought=text, chain_id="long", instance=instance)))
    finally:
        w.close()
    last, body = results[-1], fake_llm.chat_requests[-1]["body"]
    history = history_of(body["messages"][1]["content"])
    earlier = [ChatMessage(type=t, content=c) for i, text in enumerate(said[:-1])
               for t, c in (("human", text), ("ai", f"Answer {i}."))]
    kept, used = fit_history(earlier, budget)
    # What was sent: the newest messages that fit, within the budget by the product's own count.
    assert history == "\n".join(f"{'Human' if m.type == 'human' else 'AI'}: {m.content}" for m in kept)
    assert count_tokens(history) <= used <= budget
    older = earlier[len(earlier) - len(kept) - 1]
    assert used + count_tokens(f"{'Human' if older.type == 'human' else 'AI'}: {older.content}") + 1 > budget
    # What was said: the count dropped, in the result and in the note the page shows.
    dropped = len(earlier) - len(kept)
    assert dropped > 0 and last.history_turns_dropped == dropped
    cut = f"chat history cut to the last {len(kept)} messages ({dropped} older "
    assert any(n.startswith(cut) and n.endswith(f"dropped to fit {budget} tokens)") for n in last.notes)
    assert stored(workbench, last).prompt == [Message(**m) for m in body["messages"]]


def test_a_failed_call_is_stored_as_extractive_with_the_prompt_it_sent(wb, fake_llm, instance):
    fake_llm.fail(500, times=3, retry_after_ms=1)  # llm_max_retries = 2: every try fails
    since = len(fake_llm.chat_requests)
    r = uc.remember(wb, uc.UiRememberParams(thought="What is my cat called?", chain_id="down", request_id="down-1",
                                            instance=instance))
    bodies = sent(fake_llm, since)
    assert len(bodies) == 3 and all(b == bodies[0] for b in bodies)
    assert r.prompt == stored(wb, r).prompt == [Message(**m) for m in bodies[0]["messages"]]
    assert (r.synthesis, r.synthesis_error, r.usage_total_tokens) == ("extractive", "HTTP 500", None)
    assert any("failed (HTTP 500) after 3 attempts" in n and "Answered extractively instead" in n for n in r.notes)
    # Stored: the message and the extractive answer are the chain's; a repeat asks the LLM nothing.
    chain = uc.conversation(wb, uc.ConversationRef(instance=instance, chain_id="down"))
    assert [m.thought.thought for m in chain.messages] == ["What is my cat called?", r.answer]
    since = len(fake_llm.chat_requests)
    assert uc.remember(wb, uc.UiRememberParams(thought="What is my cat called?", chain_id="down",
                                               request_id="down-1", instance=instance)) == r
    assert sent(fake_llm, since) == []


def test_a_timeout_is_stored_as_extractive_and_says_so(llm_settings, workbench, fake_llm, instance):
    w = Workbench(llm_settings.model_copy(update={"instance": instance, "llm_timeout_s": 1.0}),
                  embedder=workbench.embedder)
    fake_llm.stall(3)
    try:
        r = uc.remember(w, uc.UiRememberParams(thought="Where is the ferry pier?", chain_id="slow",
                                               instance=instance))
        assert r.synthesis_error == "no answer within 1 s"
        assert any("did not answer within 1 s (LLM_TIMEOUT_S)" in n for n in r.notes)
        assert stored(w, r).prompt == r.prompt == [Message(**m) for m in fake_llm.chat_requests[-1]["body"]
                                                   ["messages"]]
    finally:
        w.close()


class CutStream:
    """An OpenAI-compatible server whose streamed answer stops after its first words with a clean end of
    the body (no finish_reason, no [DONE]): a proxy or server that dropped the answer half-way."""

    def __init__(self) -> None:
        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                chunk = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m",
                         "choices": [{"index": 0, "delta": {"content": "Your cat is"}, "finish_reason": None}]}
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.close_connection = True

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_an_answer_cut_off_without_its_end_is_not_stored_as_the_llms(settings, workbench, instance):
    """The first words of a stream that ended without saying it finished were stored as the LLM's whole
    answer ("Your cat is"), with no note."""
    server = CutStream()
    w = Workbench(settings.model_copy(update={"llm_base_url": server.url, "llm_max_retries": 0,
                                              "instance": instance}), embedder=workbench.embedder)
    try:
        events = list(uc.remember_stream(w, uc.UiRememberParams(thought="What is my cat called?",
                                                                instance=instance)))
    finally:
        w.close()
        server.close()
    r = events[-1]
    assert any(isinstance(e, uc.AnswerRestarts) for e in events)
    assert (r.synthesis, r.synthesis_error) == ("extractive", "the answer broke off")
    assert any("broke off mid-answer (the stream ended without saying the answer finished)" in n for n in r.notes)
    assert r.answer != "Your cat is" and r.answer.startswith("Extractive answer (the LLM failed: ")
