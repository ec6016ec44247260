"""Chat completions over the OpenAI wire protocol: Groq, and any OpenAI-compatible server.

Both use the vendors' own SDKs, which time out and retry 408/409/429/5xx and connection errors with
exponential backoff (`max_retries`). Failures after the retries become `ProviderError`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from core.errors import ProviderError
from core.llm.base import LLM, Completion, Message


class ChatCompletionsLLM(LLM):
    def __init__(self, client: Any, provider: str, error_types: tuple[type[BaseException], ...]):
        self._client = client
        self.provider = provider
        self._errors = error_types

    def complete(self, messages: list[Message], *, model: str, temperature: float = 0.2,
                 max_tokens: int = 512, json_mode: bool = False) -> Completion:
        extra: dict[str, Any] = {"response_format": {"type": "json_object"}} if json_mode else {}
        try:
            resp = self._client.chat.completions.create(
                model=model, messages=[m.model_dump() for m in messages], temperature=temperature,
                max_tokens=max_tokens, **extra)
        except self._errors as e:
            raise self._wrap(e) from e
        usage = resp.usage
        return Completion(text=resp.choices[0].message.content or "", model=resp.model or model,
                          prompt_tokens=getattr(usage, "prompt_tokens", None),
                          completion_tokens=getattr(usage, "completion_tokens", None),
                          total_tokens=getattr(usage, "total_tokens", None))

    def stream(self, messages: list[Message], *, model: str, temperature: float = 0.2,
               max_tokens: int = 512) -> Iterator[str | Completion]:
        try:
            chunks = self._client.chat.completions.create(
                model=model, messages=[m.model_dump() for m in messages], temperature=temperature,
                max_tokens=max_tokens, stream=True, **self._stream_options())
            parts: list[str] = []
            usage = None
            served_model = model
            for chunk in chunks:
                served_model = getattr(chunk, "model", None) or served_model
                # OpenAI sends usage on a last chunk without choices; Groq in `x_groq.usage`.
                usage = getattr(chunk, "usage", None) or getattr(getattr(chunk, "x_groq", None), "usage",
                                                                 None) or usage
                for choice in chunk.choices or []:
                    piece = getattr(choice.delta, "content", None)
                    if piece:
                        parts.append(piece)
                        yield piece
        except self._errors as e:
            raise self._wrap(e) from e
        yield Completion(text="".join(parts), model=served_model,
                         prompt_tokens=getattr(usage, "prompt_tokens", None),
                         completion_tokens=getattr(usage, "completion_tokens", None),
                         total_tokens=getattr(usage, "total_tokens", None))

    def _stream_options(self) -> dict[str, Any]:
        return {"stream_options": {"include_usage": True}} if self.provider != "groq" else {}

    def _wrap(self, e: BaseException) -> ProviderError:
        status = getattr(e, "status_code", None)
        what = f"HTTP {status}" if status else type(e).__name__
        hint = {401: "the API key was refused: check it", 404: "the model name is unknown to the server",
                429: "rate limited even after retries: wait and retry"}.get(status or 0,
                                                                            "check the server and retry")
        return ProviderError(f"{self.provider} chat completion failed ({what}): {hint}.")


def groq_llm(api_key: str, *, base_url: str | None, timeout_s: float, max_retries: int) -> LLM:
    import groq

    client = groq.Groq(api_key=api_key, base_url=base_url, timeout=timeout_s, max_retries=max_retries)
    return ChatCompletionsLLM(client, "groq", (groq.GroqError,))


def openai_compatible_llm(base_url: str, api_key: str | None, *, timeout_s: float, max_retries: int) -> LLM:
    import openai

    client = openai.OpenAI(base_url=base_url, api_key=api_key or "not-needed", timeout=timeout_s,
                           max_retries=max_retries)
    return ChatCompletionsLLM(client, "openai-compatible", (openai.OpenAIError,))
