"""Redis crashes and comes back during conversations (on servers of the test's own).

Writers keep talking while redis-server is killed with SIGKILL (a crash: only the append-only file,
fsynced on every write, survives) and started again. Afterwards every acknowledged turn and every
acknowledged feedback update is there, no turn is half stored, the same clients carry on by themselves,
and a turn that failed said "Redis is unavailable". No turn waits for the index's outbox lock of a sync
whose release failed while Redis was down. The dashboard says so too while it is down.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
import time
from collections import Counter
from urllib.parse import urlsplit

import pytest
import redis

from core.errors import describe
from core.conversation.turn import Remember, UiRememberParams, UiRememberResult
from core.services import EmbeddedRedis
from core.conversation.indexing import sync_index
from core.conversation.keys import OUTBOX_LOCK
from core.conversation.thoughts import CATEGORY_ASSISTANT, CATEGORY_USER, ThoughtStore
from core.services.bounded import redis_client
from tests.integration.conftest import kill_redis

WRITERS = 4
TURNS = 15  # acknowledged turns per writer
CRASHES = 2


def test_no_acknowledged_turn_or_feedback_is_lost_when_redis_crashes(fault_wb, instance, caplog):
    caplog.set_level(logging.WARNING, logger="core.conversation.indexing")
    wb = fault_wb
    acked: list[UiRememberResult] = []
    failures: Counter[str] = Counter()
    messages: set[str] = set()
    lock = threading.Lock()

    def writer(k: int) -> None:
        rm, done = Remember(wb), 0
        while done < TURNS:
            try:
                r = rm.run(UiRememberParams(thought=f"writer {k} turn {done} about redis", chain_id=f"w{k}"),
                           instance=instance)
            except Exception as e:  # what a failed turn tells the user is checked below
                with lock:
                    failures[type(e).__name__] += 1
                    messages.add(describe(e).message)
                time.sleep(0.05)
                continue
            with lock:
                acked.append(r)
            done += 1

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(WRITERS)]
    for t in threads:
        t.start()
    redis_server = EmbeddedRedis(wb.settings.data_dir)
    for crash in range(CRASHES):
        while len(acked) < (crash + 1) * WRITERS * TURNS // (CRASHES + 1):
            time.sleep(0.01)
        failed_before = failures.total()
        kill_redis(wb.settings.data_dir)
        # Down until a turn has failed (the client's retries span 0.7 s: a restart within them went
        # unnoticed once on a loaded machine), then started again.
        deadline = time.monotonic() + 20
        while failures.total() == failed_before and time.monotonic() < deadline:
            time.sleep(0.05)
        redis_server.ensure_running()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads)

    # Every failure said that Redis was unavailable and what to do.
    assert failures, "the crashes went unnoticed: the test did not test anything"
    assert all("Redis" in m and ("retry" in m or "running" in m) for m in messages), messages

    # A sync whose lock could not be released while Redis was down had it released by the next sync of
    # this process: no later turn waited for it (10 s each, before).
    assert not [r for r in caplog.records if "held too long" in r.getMessage()]

    # Every acknowledged turn is there, with its text.
    store = wb.thoughts
    for r in acked:
        user, answer = store.get_many(instance, r.chain_id, [r.thought1_id, r.thought2_id])
        assert user.category == CATEGORY_USER and answer.thought == r.answer
    # Every acknowledged feedback update is there.
    followed = [r.previous_feedback for r in acked if r.previous_feedback and r.previous_feedback.continued]
    stored = store.feedback([f.answer_id for f in followed])
    assert all(stored[f.answer_id].continued == 1 and stored[f.answer_id].feedback_score == f.feedback_score
               for f in followed)
    # No half turn: every user thought has its answer, and the chain's turn count agrees.
    for k in range(WRITERS):
        thoughts = store.chain_thoughts(instance, f"w{k}")
        users = [t for t in thoughts if t.category == CATEGORY_USER]
        answers = [t for t in thoughts if t.category == CATEGORY_ASSISTANT]
        assert len(users) == len(answers) >= TURNS
        assert {t.seq + 1 for t in users} == {t.seq for t in answers}
        assert int(store.chain_meta(instance, f"w{k}")["turns"]) == len(users)
    print(f"\n{len(acked)} acknowledged turns, {CRASHES} crashes, failed attempts: {dict(failures)}")


def test_the_page_says_redis_is_unavailable_while_it_is(fault_dir, fault_wb, monkeypatch):
    import streamlit as st

    from dashboard.resources import get_workbench
    from tests.app.conftest import open_page

    Remember(fault_wb).run(UiRememberParams(thought="the dog likes music", chain_id="p"), instance="page")
    monkeypatch.setenv("DATA_DIR", str(fault_dir))
    monkeypatch.setenv("REDIS_URL", fault_wb.settings.redis_url)  # as an external server: stays down
    get_workbench.clear()
    st.cache_data.clear()
    redis_server = EmbeddedRedis(fault_dir)
    try:
        at = open_page("pages/chat.py", instance="page")
        assert not at.exception and not at.error
        redis_server.stop()  # a clean shutdown this time
        st.cache_data.clear()  # the sidebar caches the services' state for 5 s
        at.run()
        assert not at.exception
        errors = "\n".join(e.value for e in at.error)
        assert "Redis is unavailable" in errors and "retry" in errors, errors
        assert any("**Redis** unavailable" in m.value for m in at.markdown)
        redis_server.ensure_running()
        st.cache_data.clear()
        at.run()
        assert not at.exception and not at.error  # the same clients reconnected by themselves
        assert any("**Redis**" in m.value and "unavailable" not in m.value for m in at.markdown)
    finally:
        redis_server.ensure_running()
        get_workbench().close()
        get_workbench.clear()
        st.cache_data.clear()


class _ReplyDropper:
    """A TCP proxy in front of the test's Redis that passes the outbox lock's SET on, lets Redis answer it,
    and then cuts the connection and stops listening: the write happened, its reply never came."""

    def __init__(self, unix_path: str) -> None:
        self.unix_path = unix_path
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        with contextlib.suppress(OSError):
            while True:
                client, _ = self.listener.accept()
                threading.Thread(target=self._pipe, args=(client,), daemon=True).start()

    def _pipe(self, client: socket.socket) -> None:
        server = socket.socket(socket.AF_UNIX)
        server.connect(self.unix_path)
        with client, server, contextlib.suppress(OSError):
            while data := client.recv(65536):
                server.sendall(data)
                reply = server.recv(65536)
                if OUTBOX_LOCK.encode() in data and b"SET" in data.upper():
                    self.listener.close()
                    return
                client.sendall(reply)


def test_a_lock_taken_as_redis_went_away_does_not_hold_up_later_turns(fault_wb, instance, caplog):
    """Redis stored the lock of a sync but its reply was lost (the connection dropped in between): the sync
    failed without knowing it held the lock. The process's next sync releases it rather than wait for it."""
    caplog.set_level(logging.WARNING, logger="core.conversation.indexing")
    url = urlsplit(fault_wb.settings.redis_url)
    proxy = _ReplyDropper(url.path)
    cut = ThoughtStore(redis_client(f"redis://:{url.password}@127.0.0.1:{proxy.port}", timeout_s=2))
    with pytest.raises(redis.exceptions.ConnectionError):
        sync_index(cut, fault_wb.index)
    assert fault_wb.thoughts.r.get(OUTBOX_LOCK)  # held by the sync that failed

    Remember(fault_wb).run(UiRememberParams(thought="the lock is free again", chain_id="after"), instance=instance)
    started = time.monotonic()
    synced = sync_index(fault_wb.thoughts, fault_wb.index)
    assert time.monotonic() - started < 2 and synced.error is None
    assert not [r for r in caplog.records if "held too long" in r.getMessage()]
    assert fault_wb.thoughts.r.get(OUTBOX_LOCK) is None
