"""Secrets never show: API keys and service passwords stay out of logs, error messages, every page of
the dashboard, the CLI's output, and what the product stores or exports (chain JSON, feedback CSV)."""

from __future__ import annotations

import json
import logging
import os
import socket
import subprocess
import sys

import pytest
import streamlit as st
from pydantic import SecretStr

from core.analytics.export import to_csv
from core.analytics.load import load_feedback
from core.config import load_settings
from core.errors import ConfigError, describe
from core.admin.explorer import export_chain
from core.conversation.turn import Remember, UiRememberParams
from core.runtime import Workbench
from tests.app.conftest import open_page

KEY = "sk-live-SECRET-7f3a9c2e5b1d"
GROQ_KEY = "gsk_SECRET-groq-4d2c1b0a"
REDIS_PW = "SECRET-redis-pw-81"
PG_PW = "SECRET-pg-pw-82"
SECRETS = (KEY, GROQ_KEY, REDIS_PW, PG_PW)
PAGES = ["pages/overview.py", "pages/chat.py", "pages/past_tasks.py", "pages/explorer.py", "pages/tune.py",
         "pages/feedback.py"]


def assert_clean(text: str, where: str) -> None:
    for secret in SECRETS:
        assert secret not in text, f"a secret appears in {where}"


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_logs_errors_and_stored_data(settings, fake_llm, instance, caplog):
    caplog.set_level(logging.DEBUG)
    s = settings.model_copy(update={"llm_base_url": fake_llm.url + "/v1", "llm_api_key": SecretStr(KEY),
                                    "llm_max_retries": 0, "llm_timeout_s": 5.0})
    wb = Workbench(s)
    try:
        rm = Remember(wb)
        first = rm.run(UiRememberParams(thought="my dog likes the beach", chain_id="c"), instance=instance)
        fake_llm.fail(401)  # the provider refuses the key: the note must not quote it
        second = rm.run(UiRememberParams(thought="thanks! and the cat?", chain_id="c"), instance=instance)
        assert any("API key was refused" in n for n in second.notes)
        assert fake_llm.chat_requests[0]["headers"]["authorization"] == f"Bearer {KEY}"  # the key is in use
        # What the product keeps and exports.
        stored = [json.dumps(t.model_dump(mode="json")) for t in wb.thoughts.chain_thoughts(instance, "c")]
        dumps = [first.model_dump_json(), second.model_dump_json(), export_chain(wb, instance, "c"),
                 to_csv(load_feedback(wb.thoughts, instance, sweep=False)).decode(), *stored,
                 json.dumps(s.public_view()), repr(s), str(s)]
        for i, text in enumerate(dumps):
            assert_clean(text, f"stored or exported text #{i}")
    finally:
        wb.close()

    # Unreachable services whose URLs carry passwords: statuses and error messages.
    broken = settings.model_copy(update={
        "redis_url": f"redis://:{REDIS_PW}@127.0.0.1:{closed_port()}/0",
        "database_url": f"postgresql://app:{PG_PW}@127.0.0.1:{closed_port()}/app"})
    wb = Workbench(broken)
    try:
        statuses = wb.services.status()
        assert all(not x.reachable and "***" in x.url for x in statuses)
        assert_clean(json.dumps([x.as_dict() for x in statuses]), "the service status")
        for call in (lambda: wb.redis().ping(), wb.pool):
            with pytest.raises(Exception) as e:
                call()
            assert_clean(describe(e.value).message, "an error message")
    finally:
        wb.close()
    # A rejected setting next to the keys: the message names the setting, never a key's value.
    with pytest.raises(ConfigError) as e:
        load_settings(groq_api_key=GROQ_KEY, llm_api_key=KEY, llm_timeout_s="soon", redis_url="http://x")
    assert_clean(str(e.value), "a settings error")
    assert_clean("\n".join(r.getMessage() + str(r.exc_info or "") for r in caplog.records), "the logs")
    assert_clean(caplog.text, "the logs")


def test_the_cli_output(settings):
    env = {**os.environ, "DATA_DIR": str(settings.data_dir), "GROQ_API_KEY": GROQ_KEY,
           "REDIS_URL": f"redis://:{REDIS_PW}@127.0.0.1:{closed_port()}/0"}
    done = subprocess.run([sys.executable, "-m", "core.cli", "services"], capture_output=True, text=True,
                          env=env, timeout=60, check=False)
    assert done.returncode == 1 and "***" in done.stdout  # Redis is unreachable, and said so
    assert_clean(done.stdout + done.stderr, "the CLI's output")


def element_texts(node) -> list[str]:
    """Every element of an AppTest tree as text (its protobuf, so dataframe cells are included)."""
    out = [str(getattr(node, "proto", ""))]
    for child in getattr(node, "children", {}).values():
        out += element_texts(child)
    return out


def test_no_page_shows_a_secret(settings, workbench, monkeypatch, fake_llm, instance):
    Remember(workbench).run(UiRememberParams(thought="my dog likes the beach", chain_id="c"),
                            instance=instance)
    monkeypatch.setenv("DATA_DIR", str(settings.data_dir))
    monkeypatch.setenv("LLM_BASE_URL", fake_llm.url + "/v1")
    monkeypatch.setenv("LLM_API_KEY", KEY)
    monkeypatch.setenv("GROQ_API_KEY", GROQ_KEY)
    monkeypatch.setenv("EMBEDDER", "wordllama")
    from dashboard.resources import get_workbench

    get_workbench.clear()
    st.cache_data.clear()
    try:
        for page in PAGES:
            at = open_page(page, instance=instance)
            assert not at.exception, (page, at.exception)
            assert_clean("\n".join(element_texts(at._tree)), page)
            if page == "pages/overview.py":  # the settings table says the keys are set, nothing more
                assert "LLM_API_KEY" in "\n".join(element_texts(at._tree))
    finally:
        get_workbench().close()
        get_workbench.clear()
        st.cache_data.clear()
