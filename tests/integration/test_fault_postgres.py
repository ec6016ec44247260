"""Postgres stops in the middle of a conversation (on servers of the test's own).

While it is down a turn still stores its thoughts in Redis and answers, saying that retrieval is
degraded, and it does so quickly; the thoughts wait in the outbox and reach the memory index once
Postgres is back — none skipped.
"""

from __future__ import annotations

import time

from core.conversation.indexing import sync_index
from core.conversation.thoughts import CATEGORY_USER
from core.conversation.turn import MEMORY_NOT_SEARCHED, NO_MEMORY_MATCHES, Remember, UiRememberParams
from core.services import EmbeddedPostgres

DOWN_TURNS = ["the museum in paris opens at nine", "my dog hates the weather in paris",
              "python and redis for the memory service"]


def test_turns_go_on_while_postgres_is_down_and_are_indexed_after(fault_wb, instance):
    wb, rm = fault_wb, Remember(fault_wb)
    rm.run(UiRememberParams(thought="the budget meeting is in paris", chain_id="c"), instance=instance)
    pg = EmbeddedPostgres(wb.settings.data_dir)
    pg.stop()
    seconds = []
    try:
        for text in DOWN_TURNS:
            t0 = time.monotonic()
            r = rm.run(UiRememberParams(thought=text, chain_id="c"), instance=instance)
            seconds.append(time.monotonic() - t0)
            assert r.status == "ok" and r.context == []
            assert any(n.startswith("retrieval degraded: Postgres is unavailable") for n in r.notes), r.notes
            assert any(n.startswith("indexing deferred") for n in r.notes), r.notes
        users = [t for t in wb.thoughts.chain_thoughts(instance, "c") if t.category == CATEGORY_USER]
        assert [t.thought for t in users][1:] == DOWN_TURNS  # stored while Postgres was down
        assert wb.thoughts.outbox_len() >= len(DOWN_TURNS)
        # A degraded turn answers within seconds (it waited 3 × 10 s for the pool before).
        assert max(seconds) < 5, seconds
        # A question asked meanwhile is told memory could not be searched, never that nothing matches: that is
        # unknown, and an LLM given "no memory matches" would say it remembers nothing of the budget meeting.
        asked = rm.run(UiRememberParams(thought="Where is the budget meeting?", chain_id="c"), instance=instance)
        assert asked.memory == "unavailable"
        for said in (asked.answer, asked.prompt[-1].content):
            assert MEMORY_NOT_SEARCHED in said and NO_MEMORY_MATCHES not in said, said
    finally:
        pg.ensure_running()

    # Back: the next sync (run by the next turn, or `workbench sweep`) indexes everything queued.
    r = rm.run(UiRememberParams(thought="what is in paris", chain_id="c"), instance=instance)
    assert not any("degraded" in n or "deferred" in n for n in r.notes), r.notes
    assert sync_index(wb.thoughts, wb.index).pending == 0
    users = [t for t in wb.thoughts.chain_thoughts(instance, "c") if t.category == CATEGORY_USER]
    indexed = {m.id for m in wb.index.get(instance, [t.id for t in users])}
    assert indexed == {t.id for t in users}
    # ...and retrieval finds what was said while Postgres was down.
    again = rm.run(UiRememberParams(thought="the museum in paris", chain_id="d"), instance=instance)
    assert "the museum in paris opens at nine" in {c.content for c in again.context}
    print(f"degraded turns took {', '.join(f'{s:.2f}' for s in seconds)} s")
