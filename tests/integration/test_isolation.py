"""Isolation: a user's past tasks and an instance's memory are never returned to another user or
instance — tests that try, through every door: the searches and their filters, listing, reading by
key, deleting, the history, ui_remember's retrieval, MemoryScope, and the Memory explorer page.

Only items put in the shared instance (`SHARED_INSTANCE`) on purpose are visible from every instance.
"""

from __future__ import annotations

import uuid

import pytest
import streamlit as st

from core.errors import InvalidInput, NotFound
from core.ids import SHARED_INSTANCE
from core.admin.explorer import ExplorerSearch, chain_detail, export_chain, search_memory
from core.conversation.turn import Remember, UiRememberParams
from core.retrieval.hybrid import SearchRequest, hybrid_search
from core.retrieval.memoryscope import run_memoryscope
from core.past_tasks.models import PastTaskQuery
from core.past_tasks.search import history, run_internal_memory, search_past_tasks
from core.past_tasks.store import PastTaskStore, ProducedTextInput
from tests.app.conftest import open_page

SECRET_TEXT = "Quarterly salary review: Dana earns 91,000 EUR, bonus pending approval"


@pytest.fixture
def two_instances(workbench):
    a, b = (f"iso-{uuid.uuid4().hex[:8]}" for _ in range(2))
    rm = Remember(workbench)
    turn = rm.run(UiRememberParams(thought=SECRET_TEXT, chain_id="private", tags=["hr"]), instance=a)
    rm.run(UiRememberParams(thought="The office plants need water on Mondays", chain_id="plants"), instance=b)
    return a, b, turn


def test_another_instance_never_sees_the_memory(workbench, two_instances):
    a, b, turn = two_instances
    leaked = {turn.thought1_id, turn.thought2_id}
    # Control: from its own instance the memory is found, so the searches below could find it.
    own = hybrid_search(workbench.pool(), workbench.embedder, SearchRequest(query=SECRET_TEXT, instance=a))
    # The statement is retrieved as the observation made from it (core.formation).
    assert turn.thought1_id in {m.memory.metadata.get("source_thought") for m in own.results}
    leaked |= {m.memory.id for m in own.results}
    for search_type in ("hybrid", "vector", "text"):
        for filters in ({}, {"chain_id": "private"}, {"tags": ["hr"]}, {"kinds": ["user", "assistant"]},
                        {"exclude_ids": []}, {"top_k": 1000, "pool_size": 2000}):
            found = hybrid_search(workbench.pool(), workbench.embedder, SearchRequest(
                query=SECRET_TEXT, instance=b, search_type=search_type, **filters))
            assert not {m.memory.id for m in found.results} & leaked
            assert all(m.memory.instance in (b, SHARED_INSTANCE) for m in found.results)
    # The explorer's search, with the other instance's chain as filter.
    out = search_memory(workbench, ExplorerSearch(query="salary review Dana", instance=b, chain_id="private"))
    assert out.hits == []
    out = search_memory(workbench, ExplorerSearch(query="salary review Dana", instance=b, mode="text"))
    assert all(h.instance != a for h in out.hits)
    # ui_remember and MemoryScope in the other instance.
    r = Remember(workbench).run(UiRememberParams(thought="what does Dana earn? salary", top_k=100),
                                instance=b)
    assert not {c.id for c in r.context} & leaked
    scope = run_memoryscope(workbench, "what does Dana earn? salary review", instance=b)
    assert all(m.memory.instance != a for m in scope.memories)
    # The thought store by key: another instance's chain does not exist from here.
    assert workbench.thoughts.chain_thoughts(b, "private") == []
    with pytest.raises(NotFound):
        chain_detail(workbench, b, "private")
    with pytest.raises(NotFound):
        export_chain(workbench, b, "private")
    # Ids that would reach into another instance's keys or rows are refused before use.
    for bad in (f"{b}:{{private}}", "*", f"{a}'--", "private} ", "{private}"):
        with pytest.raises(InvalidInput):
            workbench.thoughts.chain_thoughts(bad, "private")
        with pytest.raises(InvalidInput):
            workbench.thoughts.chain_thoughts(b, bad)


def test_the_explorer_page_of_another_instance_finds_nothing(settings, monkeypatch, two_instances):
    a, b, _ = two_instances
    monkeypatch.setenv("DATA_DIR", str(settings.data_dir))
    st.cache_data.clear()
    at = open_page("pages/explorer.py", instance=b)
    at.text_input(key="xp_q").input("salary review Dana")
    at.text_input(key="xp_chain_filter").input("private")
    next(x for x in at.button if x.label == "Search").click()
    at.run()
    assert not at.exception
    shown = "\n".join([t.value for t in at.text] + [m.value for m in at.markdown]
                      + [i.value for i in at.info])
    assert "Dana" not in shown and "Nothing found" in shown


@pytest.fixture
def two_users(workbench):
    instance, other_instance = f"iso-{uuid.uuid4().hex[:8]}", f"iso-{uuid.uuid4().hex[:8]}"
    store = PastTaskStore(workbench.pool(), workbench.embedder)
    def text(inst: str, user: str, title: str, body: str) -> ProducedTextInput:
        return ProducedTextInput(instance=inst, user_id=user, task="note", title=title, production=body)

    mine = store.ingest([text(instance, "alice", "Salary review", SECRET_TEXT)])
    store.ingest([text(other_instance, "bob", "Salary review", SECRET_TEXT)])
    store.ingest([text(instance, "bob", "Plants", "The office plants need water on Mondays.")])
    run_internal_memory(workbench, PastTaskQuery(instance=instance, user_id="alice", query="salary review"))
    return instance, other_instance, store, mine[0].user_task_execution_pk


def test_another_user_never_sees_the_past_tasks(workbench, two_users):
    instance, other_instance, store, alice_pk = two_users
    # Bob searches with Alice's exact text and the widest limits: only his own texts come back.
    q = PastTaskQuery(instance=instance, user_id="bob", query=SECRET_TEXT, max_distance=2.0, n_max=100)
    found = search_past_tasks(workbench.pool(), workbench.embedder, q)
    assert [h.title for h in found.hits] == ["Plants"] and found.candidates == 1
    result = run_internal_memory(workbench, q)
    assert all(r.user_task_execution_pk != alice_pk for r in result.references)
    # The same user id in another instance is another user.
    assert search_past_tasks(workbench.pool(), workbench.embedder, PastTaskQuery(
        instance=other_instance, user_id="alice", query=SECRET_TEXT, max_distance=2.0)).hits == []
    # Listing, reading by key, deleting and restoring Alice's text as Bob: not found.
    assert all(t.user_task_execution_pk != alice_pk for t in store.list_texts(instance, "bob"))
    assert store.list_texts(instance, "bob", execution_pks=[alice_pk]) == []
    with pytest.raises(NotFound):
        store.get_text(instance, "bob", alice_pk)
    with pytest.raises(NotFound):
        store.mark_deleted(instance, "bob", alice_pk)
    assert not store.get_text(instance, "alice", alice_pk).deleted
    # Bob's history holds only his own queries; Alice's is hers.
    assert [r.user_id for r in store.tool_executions(instance, "bob")] == ["bob"]
    assert len(history(workbench, instance, "bob")) == 1
    assert [r.query for r in store.tool_executions(instance, "alice")] == ["salary review"]
    # A user id that is a query fragment is refused before it reaches SQL.
    for bad in ("bob' OR '1'='1", "bob%", "*", "alice;--", ""):
        with pytest.raises(ValueError):
            PastTaskQuery(instance=instance, user_id=bad, query="salary")


def test_the_overview_counts_the_instances_a_user_can_pick(workbench, instance):
    """The shared instance is searched beside every other, not picked: the Overview counted it (5 where the
    picker listed 4)."""
    from core import usecases as uc
    from core.admin.deletion import delete_memory
    from core.admin.overview import overview

    shared = uc.add_memory(workbench, uc.AddMemory(instance=SHARED_INSTANCE, content="Office closes at six"))
    try:
        names = uc.instance_names(workbench)
        assert SHARED_INSTANCE not in names
        assert overview(workbench, instance).tiles["Instances"] == len(names)
    finally:
        delete_memory(workbench, SHARED_INSTANCE, shared.id)
