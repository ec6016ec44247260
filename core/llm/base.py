"""The LLM contract: `complete` returns text with the provider's token usage; `stream` yields text."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator

from pydantic import BaseModel, ConfigDict

from core.errors import ProviderError


class Message(BaseModel):
    model_config = ConfigDict(frozen=True)

    role: str  # "system" | "user" | "assistant"
    content: str


class Completion(BaseModel):
    text: str
    model: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    total_tokens: int | None = None
    # Why the server stopped: "stop", "length" (the answer reached max_tokens and was cut there), …; None
    # when it did not say.
    finish_reason: str | None = None


class LLMCallFailed(ProviderError):
    """A chat call failed after its retries. `reason` says what happened in a few words ("HTTP 500", "no
    answer within 30 s"), for a label beside the fallback; the message says it in full, with what to do.
    `partial`: the answer had begun to stream when it failed, so the pieces already yielded are void."""

    def __init__(self, message: str, reason: str, *, partial: bool = False):
        super().__init__(message)
        self.reason = reason
        self.partial = partial


class LLM(ABC):
    """A chat model provider. `configured` is False only for `NoLLM`."""

    provider: str
    configured = True

    @abstractmethod
    def complete(self, messages: list[Message], *, model: str, temperature: float = 0.2,
                 max_tokens: int = 512, json_mode: bool = False) -> Completion:
        """Send the messages and return the answer with the provider's usage figures."""

    def stream(self, messages: list[Message], *, model: str, temperature: float = 0.2,
               max_tokens: int = 512) -> Iterator[str | Completion]:
        """Yield pieces of text as they arrive, then one final `Completion` (full text and usage).

        Providers that cannot stream inherit this: the whole answer as one piece.
        """
        done = self.complete(messages, model=model, temperature=temperature, max_tokens=max_tokens)
        yield done.text
        yield done
