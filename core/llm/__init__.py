"""LLM clients: Groq, any OpenAI-compatible server, or none (steps that need one say they were skipped)."""

from __future__ import annotations

from core.config import Settings
from core.errors import LLMNotConfigured
from core.llm.base import LLM, Completion, Message
from core.llm.openai_compat import groq_llm, openai_compatible_llm


class NoLLM(LLM):
    """Stands for "no LLM configured". Callers check `configured` and show the step as skipped."""

    provider = "none"
    configured = False

    def complete(self, messages: list[Message], *, model: str, temperature: float = 0.2,
                 max_tokens: int = 512, json_mode: bool = False) -> Completion:
        raise LLMNotConfigured()


def make_llm(settings: Settings) -> LLM:
    common = dict(timeout_s=settings.llm_timeout_s, max_retries=settings.llm_max_retries)
    if settings.llm_base_url:
        key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else None
        return openai_compatible_llm(settings.llm_base_url, key, **common)
    if settings.groq_api_key:
        return groq_llm(settings.groq_api_key.get_secret_value(), base_url=settings.groq_base_url, **common)
    return NoLLM()


__all__ = ["LLM", "Completion", "Message", "NoLLM", "make_llm"]
