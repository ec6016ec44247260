"""The real OpenAI and Groq SDK code against a local OpenAI-compatible HTTP server."""

import time

import pytest

from core.config import load_settings
from core.errors import LLMNotConfigured, ProviderError
from core.llm import Completion, Message, NoLLM, make_llm

MSG = [Message(role="user", content="hi")]


def test_usage_is_read_from_the_response(fake_llm, llm_settings):
    fake_llm.reply("Paris.", prompt_tokens=12, completion_tokens=3)
    out = make_llm(llm_settings).complete(MSG, model="llama3-8b-8192")
    assert (out.text, out.total_tokens, out.prompt_tokens, out.model) == ("Paris.", 15, 12, "llama3-8b-8192")
    assert fake_llm.chat_requests[-1]["body"]["model"] == "llama3-8b-8192"


def test_429_and_5xx_are_retried(fake_llm, llm_settings):
    fake_llm.fail(429)
    fake_llm.fail(503)
    fake_llm.reply("ok after retries")
    assert make_llm(llm_settings).complete(MSG, model="m").text == "ok after retries"
    assert len(fake_llm.chat_requests) == 3


def test_failure_after_retries_is_a_provider_error(fake_llm, llm_settings):
    fake_llm.fail(500, times=3)
    with pytest.raises(ProviderError, match="HTTP 500"):
        make_llm(llm_settings).complete(MSG, model="m")


def test_timeout_is_enforced(fake_llm, llm_settings):
    fake_llm.hang(3)
    s = llm_settings.model_copy(update={"llm_timeout_s": 0.5, "llm_max_retries": 0})
    started = time.monotonic()
    with pytest.raises(ProviderError):
        make_llm(s).complete(MSG, model="m")
    assert time.monotonic() - started < 2.5


def test_streaming_yields_pieces_then_usage(fake_llm, llm_settings):
    fake_llm.reply("one two three", total_tokens=21)
    pieces = list(make_llm(llm_settings).stream(MSG, model="m"))
    assert "".join(p for p in pieces if isinstance(p, str)) == "one two three"
    assert isinstance(pieces[-1], Completion) and pieces[-1].total_tokens == 21


def test_groq_path_with_its_own_sdk(fake_llm, settings):
    s = settings.model_copy(update={"groq_api_key": load_settings(groq_api_key="gsk_x").groq_api_key,
                                    "groq_base_url": fake_llm.url, "llm_max_retries": 1})
    llm = make_llm(s)
    assert llm.provider == "groq"
    fake_llm.reply("bonjour", total_tokens=9)
    assert llm.complete(MSG, model="llama3-70b-8192").total_tokens == 9
    fake_llm.reply("streamed reply", total_tokens=11)
    last = list(llm.stream(MSG, model="llama3-70b-8192"))[-1]
    assert last.text == "streamed reply" and last.total_tokens == 11
    assert fake_llm.chat_requests[-1]["path"] == "/openai/v1/chat/completions"
    assert fake_llm.chat_requests[-1]["headers"]["authorization"] == "Bearer gsk_x"


def test_no_llm_is_explicit():
    llm = make_llm(load_settings())
    assert isinstance(llm, NoLLM) and not llm.configured
    with pytest.raises(LLMNotConfigured, match="skipped: no LLM configured"):
        llm.complete(MSG, model="m")
