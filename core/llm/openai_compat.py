"""Chat completions over the OpenAI wire protocol: Groq, and any OpenAI-compatible server.

Both use the vendors' own SDKs, with their retries turned off: the SDKs retry a timeout too, each try
waiting the whole timeout again, so a slow server held a turn for (1 + LLM_MAX_RETRIES) × LLM_TIMEOUT_S.
Here `timeout_s` bounds the whole call, retries included (tenacity): 408/409/429/5xx and connection errors
are tried again (up to `max_retries` times, after the server's Retry-After or an exponential backoff) only
while the next try can start before that deadline, and each try waits only for what is left of it. A failure is an
`LLMCallFailed` that says what happened (the status, the host that refused, the wait a 429 asked for).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from email.utils import parsedate_to_datetime
from typing import Any, TypeVar

from tenacity import Retrying, retry_if_exception, stop_after_attempt, stop_before_delay

from core.llm.base import LLM, Completion, LLMCallFailed, Message

T = TypeVar("T")
RETRIED_STATUSES = (408, 409, 429)  # and every 5xx: what a later try can get past
BACKOFF_S, BACKOFF_MAX_S = 0.5, 8.0  # the wait before the n-th retry: BACKOFF_S · 2^(n-1), capped


class ChatCompletionsLLM(LLM):
    def __init__(self, client: Any, provider: str, sdk: Any, *, timeout_s: float, max_retries: int,
                 url_setting: str):
        """`sdk`: the vendor's module (its error classes); `url_setting`: the setting that names the
        server, for a message about a server that could not be reached."""
        self._client = client
        self.provider = provider
        self._errors = sdk.APIError  # every failure of a call (a connection's too)
        self._timeout_error = sdk.APITimeoutError
        self._connection_error = sdk.APIConnectionError
        self._timeout_s = timeout_s
        self._max_retries = max_retries
        self._url_setting = url_setting

    def complete(self, messages: list[Message], *, model: str, temperature: float = 0.2,
                 max_tokens: int = 512, json_mode: bool = False) -> Completion:
        extra: dict[str, Any] = {"response_format": {"type": "json_object"}} if json_mode else {}
        resp = self._with_retries(lambda left: self._client.chat.completions.create(
            model=model, messages=[m.model_dump() for m in messages], temperature=temperature,
            max_tokens=max_tokens, timeout=left, **extra))
        usage = resp.usage
        return Completion(text=resp.choices[0].message.content or "", model=resp.model or model,
                          prompt_tokens=getattr(usage, "prompt_tokens", None),
                          completion_tokens=getattr(usage, "completion_tokens", None),
                          total_tokens=getattr(usage, "total_tokens", None),
                          finish_reason=resp.choices[0].finish_reason)

    def stream(self, messages: list[Message], *, model: str, temperature: float = 0.2,
               max_tokens: int = 512) -> Iterator[str | Completion]:
        """Retried only until the answer starts: once pieces were yielded, a failure is `partial`.

        A stream that ends without a choice saying why it finished (`finish_reason`) broke off: a server or
        proxy that closed the connection mid-answer ends the body cleanly over HTTP/1.0 or a closed chunked
        body, and its first words were taken for the whole answer."""
        chunks = self._with_retries(lambda left: self._client.chat.completions.create(
            model=model, messages=[m.model_dump() for m in messages], temperature=temperature,
            max_tokens=max_tokens, stream=True, timeout=left, **self._stream_options()))
        parts: list[str] = []
        usage = None
        served_model = model
        finish_reason: str | None = None
        try:
            for chunk in chunks:
                served_model = getattr(chunk, "model", None) or served_model
                # OpenAI sends usage on a last chunk without choices; Groq in `x_groq.usage`.
                usage = getattr(chunk, "usage", None) or getattr(getattr(chunk, "x_groq", None), "usage",
                                                                 None) or usage
                for choice in chunk.choices or []:
                    finish_reason = getattr(choice, "finish_reason", None) or finish_reason
                    piece = getattr(choice.delta, "content", None)
                    if piece:
                        parts.append(piece)
                        yield piece
        except self._errors as e:
            raise LLMCallFailed(f"{self.provider} chat completion broke off mid-answer ({_what(e)}): check "
                                "the server and retry.", "the answer broke off", partial=bool(parts)) from e
        if finish_reason is None:
            raise LLMCallFailed(f"{self.provider} chat completion broke off mid-answer (the stream ended without "
                                "saying the answer finished): check the server and retry.",
                                "the answer broke off", partial=bool(parts))
        yield Completion(text="".join(parts), model=served_model,
                         prompt_tokens=getattr(usage, "prompt_tokens", None),
                         completion_tokens=getattr(usage, "completion_tokens", None),
                         total_tokens=getattr(usage, "total_tokens", None), finish_reason=finish_reason)

    def _stream_options(self) -> dict[str, Any]:
        return {"stream_options": {"include_usage": True}} if self.provider != "groq" else {}

    # -- retries within one deadline ----------------------------------------------------------

    def _with_retries(self, send: Callable[[float], T]) -> T:
        """`send(seconds_left)` tried until it succeeds, the error is not worth a retry (`_retry_wait`), the
        retries are used up, or the next try could not start before the deadline (`timeout_s` from the
        first: tenacity's `stop_before_delay` counts the wait before it)."""
        deadline = time.monotonic() + self._timeout_s
        retrying = Retrying(
            retry=retry_if_exception(lambda e: isinstance(e, self._errors) and self._retry_wait(e, 1) is not None),
            stop=stop_after_attempt(1 + self._max_retries) | stop_before_delay(self._timeout_s),
            wait=lambda state: self._retry_wait(state.outcome.exception(), state.attempt_number) or 0,
            reraise=True)
        try:
            for attempt in retrying:
                with attempt:
                    return send(max(deadline - time.monotonic(), 0.001))
        except self._errors as e:
            raise self._failure(e, retrying.statistics["attempt_number"]) from e
        raise AssertionError("unreachable: tenacity returns or raises")

    def _retry_wait(self, e: BaseException, attempt: int) -> float | None:
        """How long to wait before trying again; None: a retry would not help (a timeout used the whole
        deadline, a 4xx other than 408/409/429 says the request itself is wrong)."""
        if isinstance(e, self._timeout_error):
            return None
        status = getattr(e, "status_code", None)
        if status is not None and status not in RETRIED_STATUSES and status < 500:
            return None
        asked = _retry_after(e)
        return asked if asked is not None else min(BACKOFF_S * 2 ** (attempt - 1), BACKOFF_MAX_S)

    def _failure(self, e: BaseException, attempts: int) -> LLMCallFailed:
        """What failed after `attempts`, in words a user acts on. A retry that was due and had retries left
        was stopped by the deadline: its wait (`wait_too_long`) went past it."""
        wait = self._retry_wait(e, attempts)
        wait_too_long = wait if wait is not None and attempts <= self._max_retries else None
        tries = f"after {attempts} attempt{'s' if attempts > 1 else ''}"
        limit = f"{self._timeout_s:g} s (LLM_TIMEOUT_S)"
        if isinstance(e, self._timeout_error):
            return LLMCallFailed(f"{self.provider} did not answer within {limit} {tries}: a slow model or "
                                 "server needs a larger LLM_TIMEOUT_S.", f"no answer within {self._timeout_s:g} s")
        if isinstance(e, self._connection_error):
            host = self._host()
            return LLMCallFailed(f"{self.provider}: could not connect to {host} ({self._url_setting}) {tries} "
                                 f"({_what(e)}): check that the server runs there.", f"{host} unreachable")
        status = getattr(e, "status_code", None)
        if status == 429 and wait_too_long is not None and wait_too_long == _retry_after(e):
            return LLMCallFailed(f"{self.provider} rate limited the call (HTTP 429) {tries}: the server asked to "
                                 f"wait {wait_too_long:g} s, longer than what is left of {limit}; retry after "
                                 "that wait.", "HTTP 429")
        hint = {401: "the API key was refused: check it", 404: "the model name is unknown to the server",
                429: "rate limited even after retries: wait and retry"}.get(status or 0, "check the server and retry")
        return LLMCallFailed(f"{self.provider} chat completion failed ({_what(e)}) {tries}: {hint}.", _what(e))

    def _host(self) -> str:
        url = self._client.base_url
        return f"{url.host}:{url.port}" if url.port else url.host


def _what(e: BaseException) -> str:
    """The failure in a few words: the HTTP status, or what the connection's error said."""
    status = getattr(e, "status_code", None)
    if status is not None:
        return f"HTTP {status}"
    cause = e.__cause__
    return str(cause) if cause is not None and str(cause) else type(e).__name__


def _retry_after(e: BaseException) -> float | None:
    """The wait the server asked for, in seconds (`retry-after-ms`, or `retry-after` in seconds or as a
    date), or None."""
    headers = getattr(getattr(e, "response", None), "headers", None)
    if not headers:
        return None
    try:
        if (ms := headers.get("retry-after-ms")) is not None:
            return max(float(ms) / 1000, 0.0)
        if (value := headers.get("retry-after")) is None:
            return None
        try:
            return max(float(value), 0.0)
        except ValueError:
            return max(parsedate_to_datetime(value).timestamp() - time.time(), 0.0)
    except (TypeError, ValueError):
        return None


def groq_llm(api_key: str, *, base_url: str | None, timeout_s: float, max_retries: int) -> LLM:
    import groq

    client = groq.Groq(api_key=api_key, base_url=base_url, timeout=timeout_s, max_retries=0)
    return ChatCompletionsLLM(client, "groq", groq, timeout_s=timeout_s, max_retries=max_retries,
                              url_setting="GROQ_BASE_URL")


def openai_compatible_llm(base_url: str, api_key: str | None, *, timeout_s: float, max_retries: int) -> LLM:
    import openai

    client = openai.OpenAI(base_url=base_url, api_key=api_key or "not-needed", timeout=timeout_s, max_retries=0)
    return ChatCompletionsLLM(client, "openai-compatible", openai, timeout_s=timeout_s,
                              max_retries=max_retries, url_setting="LLM_BASE_URL")
