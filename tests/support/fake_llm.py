"""A local OpenAI-compatible HTTP server, so the real OpenAI and Groq SDK code runs in tests.

Serves POST /v1/chat/completions (OpenAI and OpenAI-compatible clients), /openai/v1/chat/completions
(the Groq SDK's path) and /v1/embeddings. Tests queue replies; with none queued, a handler set with
`answer_with` answers (calls made from several threads, whose order a queue cannot know), else it echoes.

    with FakeLLMServer() as srv:
        srv.reply("hello", total_tokens=42)     # next chat call answers "hello"
        srv.fail(429)                           # or: next call answers HTTP 429
        srv.answer_with(lambda body: "{}")      # every unqueued call: the handler's text (or status)
        settings = load_settings(llm_base_url=srv.url + "/v1")
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

# Given a chat request's JSON body: the answer's text, an HTTP status to fail with, or None to echo.
Handler = Callable[[dict[str, Any]], str | int | None]
USAGE = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}  # of an unscripted answer


class FakeLLMServer:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self._replies: deque[dict[str, Any]] = deque()
        self._handler_fn: Handler | None = None
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    # -- scripting --------------------------------------------------------------------------

    def reply(self, text: str, *, prompt_tokens: int = 10, completion_tokens: int = 5,
              total_tokens: int | None = None, model: str | None = None, to: str | None = None) -> None:
        """`to`: the reply of the next call whose request holds that text, however many other calls come
        first (a dashboard's background summaries call the LLM whenever they are due)."""
        self._replies.append({"kind": "text", "text": text, "usage": {
            "prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
            "total_tokens": total_tokens if total_tokens is not None else prompt_tokens + completion_tokens},
            "model": model, "to": to})

    def fail(self, status: int, times: int = 1, *, retry_after_ms: int | None = None) -> None:
        """The next `times` calls answer HTTP `status`; with `retry_after_ms`, a `retry-after-ms` header
        (which the OpenAI SDK honours) so retries need not wait the SDK's default backoff."""
        for _ in range(times):
            self._replies.append({"kind": "fail", "status": status, "retry_after_ms": retry_after_ms})

    def hang(self, seconds: float, until: threading.Event | None = None) -> None:
        """The next call waits `seconds` before its answer, or less once `until` is set."""
        self._replies.append({"kind": "hang", "seconds": seconds, "until": until or threading.Event()})

    def stall(self, seconds: float, times: int = 1) -> None:
        """The next `times` calls get no answer at all: the connection stays silent, then closes
        (a client timeout shorter than `seconds` sees a timeout on each)."""
        for _ in range(times):
            self._replies.append({"kind": "stall", "seconds": seconds})

    def answer_with(self, handler: Handler | None) -> None:
        """Answer every chat call that finds no queued reply by `handler(body)`: a str is the answer's
        text, an int an HTTP status to fail with, None the echo (None as the handler: echo again)."""
        self._handler_fn = handler

    @property
    def chat_requests(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if r["path"].endswith("/chat/completions")]

    def chat_requests_with(self, text: str) -> list[dict[str, Any]]:
        """The chat calls whose request holds `text`."""
        return [r for r in self.chat_requests if _holds(r["body"], text)]

    # -- serving ----------------------------------------------------------------------------

    def _next(self, body: dict[str, Any]) -> dict[str, Any] | None:
        """The first queued step for this call (one addressed `to` another call's text is left queued)."""
        for step in list(self._replies):
            if step.get("to") is None or _holds(body, step["to"]):
                self._replies.remove(step)
                return step
        return self._handled(body) if self._handler_fn else None

    def _handled(self, body: dict[str, Any]) -> dict[str, Any] | None:
        """The handler's answer as a queued step would have said it."""
        answer = self._handler_fn(body)
        if isinstance(answer, int):
            return {"kind": "fail", "status": answer, "retry_after_ms": None}
        return None if answer is None else {"kind": "text", "text": answer, "usage": USAGE, "model": None}

    def _handler(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                fake.requests.append({"path": self.path, "body": body,
                                      "headers": {k.lower(): v for k, v in self.headers.items()}})
                if self.path.endswith("/embeddings"):
                    return self._embeddings(body)
                if not self.path.endswith("/chat/completions"):
                    return self._send(404, {"error": {"message": "not found"}})
                step = fake._next(body)
                if step and step["kind"] == "fail":
                    headers = ({"retry-after-ms": str(step["retry_after_ms"])}
                               if step.get("retry_after_ms") is not None else {})
                    return self._send(step["status"], {"error": {"message": "scripted failure",
                                                                 "type": "server_error"}}, headers)
                if step and step["kind"] == "stall":
                    time.sleep(step["seconds"])
                    self.close_connection = True
                    return None
                if step and step["kind"] == "hang":
                    step["until"].wait(step["seconds"])
                    step = fake._next(body)
                if step is None:
                    last = body["messages"][-1]["content"]
                    step = {"text": f"echo: {last[:200]}", "usage": USAGE, "model": None}
                model = step.get("model") or body.get("model", "fake")
                if body.get("stream"):
                    return self._stream(step, model)
                self._send(200, {
                    "id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()),
                    "model": model,
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": step["text"]}}],
                    "usage": step["usage"]})

            def _stream(self, step: dict[str, Any], model: str) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                words = step["text"].split(" ")
                for i, w in enumerate(words):
                    piece = w if i == 0 else " " + w
                    chunk = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": model,
                             "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]}
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                final = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": model,
                         "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                         "x_groq": {"usage": step["usage"]}}
                usage = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": model,
                         "choices": [], "usage": step["usage"]}
                self.wfile.write(f"data: {json.dumps(final)}\n\n".encode())
                self.wfile.write(f"data: {json.dumps(usage)}\n\n".encode())
                self.wfile.write(b"data: [DONE]\n\n")

            def _embeddings(self, body: dict[str, Any]) -> None:
                inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
                data = []
                for i, text in enumerate(inputs):
                    dim = body.get("dimensions") or 1536
                    vec = [0.0] * dim
                    for word in str(text).lower().split():
                        vec[hash(word) % dim] += 1.0
                    data.append({"object": "embedding", "index": i, "embedding": vec})
                self._send(200, {"object": "list", "data": data, "model": body.get("model"),
                                 "usage": {"prompt_tokens": 1, "total_tokens": 1}})

            def _send(self, status: int, payload: dict[str, Any],
                      headers: dict[str, str] | None = None) -> None:
                raw = json.dumps(payload).encode()
                self.send_response(status)
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        return Handler


def _holds(body: dict[str, Any], text: str) -> bool:
    return text in json.dumps(body, ensure_ascii=False)
