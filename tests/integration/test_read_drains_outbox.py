"""A turn stored while Postgres was down is found by the next search once it is back, with no write between.

The turn's messages wait in the outbox; every search of the memory index (chat, `memory search`, MCP
retrieve_memory, the HTTP search endpoints) first indexes what has waited there SEARCH_STALE_S or more
(`sync_before_search`), at most SEARCH_MOST thoughts, under the outbox lock. The writer is a Workbench of its own (another process,
such as the CLI), the reader one that only reads (an MCP or API server). Servers of the test's own.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from datetime import UTC, datetime
from typing import TypeVar

import anyio
import httpx
import httpx2
import psycopg
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from core import usecases as uc
from core.config import load_settings
from core.conversation import indexing
from core.conversation.feedback import feedback_score
from core.conversation.indexing import sync_before_search, sync_index
from core.conversation.thoughts import CATEGORY_ASSISTANT, CATEGORY_USER, Thought, ThoughtStore
from core.errors import ServiceUnavailable, describe
from core.mcp.server import MCP_PATH
from core.runtime import Workbench
from core.services import EmbeddedPostgres, EmbeddedRedis
from tests.support.api import thread_server
from tests.support.embedders import KeywordEmbedder
from tests.support.mcp_client import text

T = TypeVar("T")


@pytest.fixture(autouse=True)
def left_behind_at_once(monkeypatch):
    """Every queued thought counts as one its turn left behind (SEARCH_STALE_S is 2 s; the tests do not
    wait it out), but in the test of a live turn's thoughts."""
    monkeypatch.setattr(indexing, "SEARCH_STALE_S", 0.0)


@pytest.fixture
def writer(fault_dir) -> Iterator[Workbench]:
    """Another process's Workbench on the same servers: the one that stores turns (the CLI, say)."""
    wb = Workbench(load_settings(data_dir=fault_dir, redis_url=EmbeddedRedis(fault_dir).ensure_running(),
                                 database_url=EmbeddedPostgres(fault_dir).ensure_running()),
                   embedder=KeywordEmbedder())
    yield wb
    wb.close()


@pytest.fixture
def reader(fault_wb) -> Workbench:
    """A Workbench that only reads, its outbox empty at the start (other tests share these servers)."""
    sync_index(fault_wb.thoughts, fault_wb.index)
    assert fault_wb.thoughts.outbox_len() == 0
    return fault_wb


@contextmanager
def postgres_down(data_dir) -> Iterator[None]:
    pg = EmbeddedPostgres(data_dir)
    pg.stop()
    try:
        yield
    finally:
        pg.ensure_running()


def remember_while_down(wb: Workbench, instance: str, text: str) -> uc.UiRememberResult:
    result = uc.remember(wb, uc.UiRememberParams(thought=text, instance=instance))
    assert any(n.startswith("indexing deferred") for n in result.notes), result.notes
    return result


def first_answer(call: Callable[[], T]) -> T:
    """The first answer of a read retried as its error says ("Postgres is unavailable ... retry"): right
    after Postgres restarted, a pooled connection to the old server fails the first statement it is given
    (the search's own, whether or not anything was queued). What matters is that no answer misses what
    was queued."""
    for _ in range(2):
        try:
            return call()
        except (ServiceUnavailable, psycopg.OperationalError):
            time.sleep(0.5)
    return call()


def first_http_answer(send: Callable[[], httpx.Response]) -> httpx.Response:
    for _ in range(2):
        if (response := send()).status_code != 503:
            return response
        time.sleep(0.5)
    return send()


def queue_turn(store: ThoughtStore, instance: str, chain: str, text: str) -> Thought:
    """A turn's store write alone (its user thought queued for the index, as `append_turn` queues it),
    with no sync after it: a backlog without stopping Postgres."""
    now, common = datetime.now(UTC), {"instance": instance, "chain_id": chain, "total_thoughts": 1}
    user = Thought(id=str(uuid.uuid4()), thought=text, timestamp=now, category=CATEGORY_USER, **common)
    answer = Thought(id=str(uuid.uuid4()), thought="noted", timestamp=now, category=CATEGORY_ASSISTANT, **common)
    store.append_turn(user, answer, request_id=f"r-{user.id}", result_json="{}", index_answer=False,
                      score=lambda elapsed: feedback_score(elapsed, text))
    return user


def test_the_use_cases_find_a_turn_stored_while_postgres_was_down(reader, writer, fault_dir, instance):
    search = uc.ExplorerSearch(query="locker code", instance=instance)
    retrieve = uc.RetrieveReportRequest(query="what is my gym locker code?", instance=instance)
    with postgres_down(fault_dir):
        # A search while Postgres is down fails as it would with nothing queued: the same message.
        with pytest.raises(Exception) as empty:
            uc.memory_search(writer, search)
        remember_while_down(writer, instance, "my gym locker code is 4417")
        assert writer.thoughts.outbox_len() == 1
        with pytest.raises(Exception) as queued:
            uc.memory_search(writer, search)
        assert describe(queued.value).message == describe(empty.value).message
        assert describe(queued.value).code == "service_unavailable"
        assert writer.thoughts.outbox_len() == 1  # still queued, for later
    # Back: the reader's next search finds it, though nothing was written since.
    hits = first_answer(lambda: uc.memory_search(reader, search)).hits
    assert "my gym locker code is 4417" in [h.content for h in hits]
    assert reader.thoughts.outbox_len() == 0
    report = uc.retrieval_report(reader, retrieve)
    assert any("4417" in m["content"] for m in report.memories), report.memories

    # Chat's retrieval too: a turn after the outage retrieves what was said during it.
    with postgres_down(fault_dir):
        remember_while_down(writer, instance, "the spare house key is under the blue flowerpot")
    ask = uc.UiRememberParams(thought="where is the spare house key?", instance=instance, search_type="text")
    turn = uc.remember(reader, ask)
    if turn.memory == "unavailable":  # its retrieval met a connection to the old server: as a user, again
        turn = uc.remember(reader, ask)
    assert any("blue flowerpot" in c.content for c in turn.context), turn.notes


async def call_tool(url: str, tool: str, arguments: dict) -> dict:
    try:
        async with mcp_session(url) as s:
            result = await s.call_tool(tool, arguments)
    except* MCPError as refused:  # the request's 503 problem, before the MCP server saw it
        raise ServiceUnavailable("Postgres", str(refused.exceptions[0])) from None
    if result.is_error and "Postgres is unavailable" in text(result):
        raise ServiceUnavailable("Postgres", text(result))
    assert not result.is_error, text(result)
    return result.structured_content


@asynccontextmanager
async def mcp_session(url: str) -> AsyncIterator[ClientSession]:
    async with (httpx2.AsyncClient(timeout=httpx2.Timeout(60.0)) as client,
                streamable_http_client(url, http_client=client) as (read, write),
                ClientSession(read, write) as session):
        await session.initialize()
        yield session


def test_the_mcp_client_and_the_http_api_find_a_turn_stored_while_postgres_was_down(reader, writer, fault_dir,
                                                                                     instance):
    with thread_server(reader) as base:
        with postgres_down(fault_dir):
            remember_while_down(writer, instance, "my passport expires in March 2031")
        recalled = first_answer(lambda: anyio.run(call_tool, base + MCP_PATH, "retrieve_memory",
                                                  {"query": "when does my passport expire?", "instance": instance}))
        assert any("March 2031" in m["content"] for m in recalled["memories"]), recalled

        with postgres_down(fault_dir):
            remember_while_down(writer, instance, "the wifi password at the cabin is pinecone77")
        found = first_http_answer(lambda: httpx.post(f"{base}/v1/instances/{instance}/memories/search",
                                                     json={"query": "cabin wifi password"}, timeout=60))
        assert found.status_code == 200, found.text
        assert "the wifi password at the cabin is pinecone77" in [h["content"] for h in found.json()["hits"]]
    assert reader.thoughts.outbox_len() == 0


def test_a_search_indexes_a_bounded_batch_and_leaves_the_rest(reader, instance, monkeypatch):
    monkeypatch.setattr(indexing, "SEARCH_MOST", 3)
    queued = [queue_turn(reader.thoughts, instance, "c", f"note number {n} about the garden") for n in range(5)]
    first = sync_before_search(reader)
    assert (first.indexed, first.pending, first.error) == (3, 2, None)
    assert {m.id for m in reader.index.get(instance, [t.id for t in queued])} == {t.id for t in queued[:3]}
    second = sync_before_search(reader)
    assert (second.indexed, second.pending) == (2, 0)
    assert sync_before_search(reader) is None  # nothing queued: nothing done


def test_a_live_turns_thoughts_are_left_to_its_own_sync(reader, instance, monkeypatch):
    """Thoughts queued a moment ago are a turn's being written, whose sync follows: a search under
    concurrent turns does not index them for it (nor waits for its drain). Left behind, they are."""
    monkeypatch.setattr(indexing, "SEARCH_STALE_S", 0.5)
    queued = queue_turn(reader.thoughts, instance, "c", "the spare key is under the blue flowerpot")
    assert sync_before_search(reader) is None and reader.thoughts.outbox_len() == 1
    time.sleep(0.6)
    assert sync_before_search(reader).indexed == 1
    assert [m.id for m in reader.index.get(instance, [queued.id])] == [queued.id]


def test_an_empty_outbox_costs_one_redis_round_trip(reader):
    """Two commands in one pipeline: the outbox's head, and the notes of imports killed before their index
    committed (`core.conversation.indexing.UnindexedImport`)."""
    def commands() -> dict[str, int]:
        stats = reader.redis().info("commandstats")
        return {k: v["calls"] for k, v in stats.items() if k != "cmdstat_info"}

    sync_before_search(reader)  # connects the client the check reads through (its handshake is not the check)
    before = commands()
    assert sync_before_search(reader) is None
    after = commands()
    assert {k: n - before.get(k, 0) for k, n in after.items() if n != before.get(k, 0)} == {
        "cmdstat_lrange": 1, "cmdstat_hgetall": 1}


def test_two_searches_at_once_index_each_thought_once(reader, instance, monkeypatch):
    queued = [queue_turn(reader.thoughts, instance, f"c{n % 4}", f"fact {n} about the boat") for n in range(40)]
    added: Counter[str] = Counter()
    add = reader.index.add

    def counting_add(records, **kwargs):  # the real write, counted
        added.update(r.id for r in records if r.kind == "user")
        return add(records, **kwargs)

    monkeypatch.setattr(reader.index, "add", counting_add)
    start, results = threading.Barrier(2), []

    def search() -> None:
        start.wait()
        results.append(sync_before_search(reader))

    threads = [threading.Thread(target=search) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert added == Counter({t.id: 1 for t in queued})
    assert sorted(r.indexed if r else 0 for r in results) == [0, 40]
    assert reader.thoughts.outbox_len() == 0


def test_a_search_with_redis_down_still_answers(reader, writer, fault_dir, instance):
    """Redis down while Postgres is up: the outbox cannot be read, and the search goes on without it."""
    uc.add_memory(writer, uc.AddMemory(content="the dentist is on Rua Augusta", instance=instance))
    redis = EmbeddedRedis(fault_dir)
    redis.stop()
    try:
        hits = uc.memory_search(reader, uc.ExplorerSearch(query="dentist", instance=instance)).hits
    finally:
        redis.ensure_running()
    assert "the dentist is on Rua Augusta" in [h.content for h in hits]
