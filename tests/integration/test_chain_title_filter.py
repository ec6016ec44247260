"""Chains found by a part of their title (`uc.chains` with `title`), on the session's Redis: ignoring case, in
the order and pages of the unfiltered list, the same through the SORT read and the per-chain read a cluster
uses; and through the HTTP API (`GET …/chains?title=`) and the CLI (`workbench chains list --title`)."""

from __future__ import annotations

import json
import uuid

import httpx
import pytest
from pydantic import ValidationError

from core import usecases as uc
from core.conversation.thoughts import ThoughtStore
from core.conversation.turn import Remember, UiRememberParams
from core.runtime import Workbench
from tests.support.api import thread_server
from tests.support.cli import in_process_cli

TITLES = ["Trip to Kyoto in April", "Groceries", "kyoto hotel booking", "Die Straße nach KYŌTO", "Budget",
          "Where is the KYOTO station?", "New chat"]


@pytest.fixture
def titled(workbench, instance) -> list[str]:
    """One chain per title, c0 (the first title) the oldest."""
    remember = Remember(workbench)
    for i, title in enumerate(TITLES):
        remember.run(UiRememberParams(thought=title, chain_id=f"c{i}"), instance=instance)
    return [f"c{i}" for i in range(len(TITLES))]


def ids(page: uc.ChainPage) -> list[str]:
    return [c.chain_id for c in page.chains]


def test_a_title_filter_ignores_case_and_pages_in_the_lists_order(workbench, instance, titled):
    def listing(**kw) -> uc.ChainPage:
        return uc.chains(workbench, uc.ChainList(instance=instance, **kw))

    page = listing(title="KYOTO")
    assert (ids(page), page.total, page.pages, page.title) == (["c5", "c2", "c0"], 3, 1, "KYOTO")
    assert [c.title for c in page.chains] == ["Where is the KYOTO station?", "kyoto hotel booking",
                                              "Trip to Kyoto in April"]
    assert ids(listing(title="kyoto", order="oldest")) == ["c0", "c2", "c5"]
    first, second = listing(title="kyoto", page_size=2), listing(title="kyoto", page_size=2, page=2)
    assert (ids(first), ids(second), first.total, first.pages) == (["c5", "c2"], ["c0"], 3, 2)
    past = listing(title="kyoto", page_size=2, page=5)
    assert (past.chains, past.total, past.page) == ([], 3, 5)
    assert ids(listing(title="STRASSE")) == ["c3"]  # Unicode case folding: ß is ss
    assert ids(listing(title="  hotel ")) == ["c2"]  # the box's spaces around it do not count
    assert listing(title="lisbon").total == 0 and listing(title="lisbon").pages == 1

    unfiltered = listing(title="   ")  # a cleared box: every chain
    assert unfiltered.title is None and unfiltered.total == len(TITLES)
    with pytest.raises(ValidationError):
        uc.ChainList(instance=instance, title="x" * (uc.TITLE_FILTER_MAX_CHARS + 1))


def test_the_read_a_cluster_uses_gives_the_same_pages(workbench, instance, titled):
    """On a cluster SORT may not read the other slots' titles: a pipeline of HGETs reads them (here on the
    standalone server, which the store is told is a cluster)."""
    per_chain = Workbench(workbench.settings, embedder=workbench.embedder)
    per_chain.services = workbench.services
    per_chain.__dict__["thoughts"] = ThoughtStore(workbench.services.redis(), cluster=True)
    for kw in ({"title": "kyoto"}, {"title": "kyoto", "order": "oldest"}, {"title": "o", "page_size": 2, "page": 2}):
        req = uc.ChainList(instance=instance, **kw)
        assert uc.chains(per_chain, req) == uc.chains(workbench, req), kw


def test_the_http_api_and_the_cli_filter_by_title(workbench, settings, instance, titled, monkeypatch):
    created = uc.create_key(workbench, uc.CreateKey(name=f"k-{uuid.uuid4().hex[:10]}", instances=[instance]))
    with thread_server(workbench) as url:
        page = httpx.get(f"{url}/v1/instances/{instance}/chains", params={"title": "Kyoto", "page_size": 2},
                         headers={"Authorization": f"Bearer {created.secret}"}, timeout=60)
    assert page.status_code == 200, page.text
    body = page.json()
    assert ([c["chain_id"] for c in body["chains"]], body["total"], body["title"]) == (["c5", "c2"], 3, "Kyoto")

    cli = in_process_cli(settings, workbench, monkeypatch)
    code, out, err = cli("chains", "list", "--title", "kyoto", "--order", "oldest", "--instance", instance)
    assert code == 0, err
    listed = json.loads(out)
    assert [c["chain_id"] for c in listed["chains"]] == ["c0", "c2", "c5"] and listed["total"] == 3
