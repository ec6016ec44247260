"""The explorer's listing read by keyset gives the pages reading by OFFSET gave: a few hundred memories, most
sharing their time with others (ties broken by id), every order and filter, each page reached every way
the page offers (from the page before, from the page after, typed in, the last page), compared with the
same page read by the old statement (LIMIT/OFFSET over the same order); and the pages next to the one
shown, the first and the last are read without passing over any row."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta

import pytest

from core import usecases as uc
from core.admin.explorer import BROWSE_WHERE, MemoryBrowse, _browse_params
from core.models import MemoryRecord

N = 300
SIZE = 7  # pages of 7: the last is partial (300 = 42·7 + 6)
T0 = datetime(2025, 3, 1, 12, tzinfo=UTC)
# The old statement (before keyset), the reference: every page by OFFSET.
OFFSET_PAGE = {order: f"SELECT id FROM memory WHERE {BROWSE_WHERE} ORDER BY created_at {way}, id {way} "
                      "LIMIT %(limit)s OFFSET %(offset)s" for order, way in (("newest", "DESC"), ("oldest", "ASC"))}
FILTERS = [{}, {"kinds": ["user"]}, {"kinds": ["user", "observation"], "tags": ["red"]}, {"chain_id": "chain-1"},
           {"date_from": date(2025, 3, 2), "date_to": date(2025, 3, 3)}]


@pytest.fixture
def tied(workbench, instance):
    """N memories at 12 distinct times (25 a time: ties everywhere), ids not in time order, over 3 days."""
    kinds = ["user", "assistant", "observation"]
    records = [MemoryRecord(instance=instance, id=f"m{(i * 37) % N:04d}", kind=kinds[i % 3],
                            content=f"Note {i} about quinces.",
                            created_at=T0 + timedelta(hours=6 * (i % 12)), chain_id=f"chain-{i % 4}",
                            tags=["red"] if i % 5 == 0 else []) for i in range(N)]
    workbench.index.add(records)
    return workbench


def offset_ids(wb, req: MemoryBrowse) -> list[str]:
    with wb.pool().connection() as conn:
        rows = conn.execute(OFFSET_PAGE[req.order], {**_browse_params(req), "limit": req.page_size,
                                                      "offset": (req.page - 1) * req.page_size}).fetchall()
    return [r[0] for r in rows]


def ids(page: uc.MemoryPage) -> list[str]:
    return [h.id for h in page.hits]


@pytest.mark.parametrize("order", ["newest", "oldest"])
@pytest.mark.parametrize("filters", FILTERS, ids=["all", "kind", "kinds+tag", "chain", "days"])
def test_every_page_every_way_is_the_offset_page(tied, instance, order, filters):
    req = MemoryBrowse(instance=instance, order=order, page_size=SIZE, **filters)
    first = uc.memory_browse(tied, req)
    assert first.total and first.skipped == 0
    pages = first.pages
    expected = {p: offset_ids(tied, req.model_copy(update={"page": p})) for p in range(1, pages + 1)}
    assert sorted(i for p in expected.values() for i in p) == sorted({i for p in expected.values() for i in p})
    assert sum(map(len, expected.values())) == first.total  # the reference holds each memory once

    shown, forward = first, {1: ids(first)}  # "next" from each page to the last
    for p in range(2, pages + 1):
        shown = uc.memory_browse(tied, req.model_copy(update={"page": p, "shown": shown.mark}))
        assert shown.skipped == 0
        forward[p] = ids(shown)
    assert forward == expected

    last = uc.memory_browse(tied, req.model_copy(update={"page": pages, "shown": first.mark}))  # a jump to the last
    assert ids(last) == expected[pages] and last.skipped == 0
    shown, backward = last, {pages: ids(last)}  # "previous" from the last page to the first
    for p in range(pages - 1, 0, -1):
        shown = uc.memory_browse(tied, req.model_copy(update={"page": p, "shown": shown.mark}))
        assert shown.skipped == 0
        backward[p] = ids(shown)
    assert backward == expected

    for p in range(1, pages + 1):  # typed in with no page shown: from the nearer end
        typed = uc.memory_browse(tied, req.model_copy(update={"page": p}))
        assert ids(typed) == expected[p]
        assert typed.skipped == min((p - 1) * SIZE, max(0, first.total - p * SIZE))
        again = uc.memory_browse(tied, req.model_copy(update={"page": p, "shown": typed.mark}))  # a rerun
        assert ids(again) == expected[p] and again.skipped == 0


def test_a_jump_from_the_page_shown_and_a_mark_of_another_listing(tied, instance):
    req = MemoryBrowse(instance=instance, page_size=SIZE)
    p10 = uc.memory_browse(tied, req.model_copy(update={"page": 10}))
    p13 = uc.memory_browse(tied, req.model_copy(update={"page": 13, "shown": p10.mark}))
    assert ids(p13) == offset_ids(tied, req.model_copy(update={"page": 13})) and p13.skipped == 2 * SIZE
    p8 = uc.memory_browse(tied, req.model_copy(update={"page": 8, "shown": p10.mark}))
    assert ids(p8) == offset_ids(tied, req.model_copy(update={"page": 8})) and p8.skipped == SIZE
    oldest = req.model_copy(update={"order": "oldest", "page": 11, "shown": p10.mark})  # the newest-first mark
    assert ids(uc.memory_browse(tied, oldest)) == offset_ids(tied, oldest)
    users = req.model_copy(update={"kinds": ["user"], "page": 2, "shown": p10.mark})
    assert ids(uc.memory_browse(tied, users)) == offset_ids(tied, users)
    past = uc.memory_browse(tied, req.model_copy(update={"page": 44, "shown": p10.mark}))
    assert past.hits == [] and past.mark is None and past.total == N


def test_a_page_shown_then_changed_under_it_goes_on_from_its_edge(tied, instance):
    """A memory deleted from the page shown: the next page still starts right after the page's last row, and
    the page again starts at its first row (a rerun), so nothing is shown twice or skipped."""
    req = MemoryBrowse(instance=instance, page_size=SIZE)
    p1 = uc.memory_browse(tied, req)
    uc.memory_delete(tied, uc.MemoryRef(instance=instance, memory_id=p1.hits[2].id))
    again = uc.memory_browse(tied, req.model_copy(update={"shown": p1.mark}))
    assert ids(again) == ids(p1)[:2] + ids(p1)[3:] + [ids(again)[-1]] and again.total == N - 1
    p2 = uc.memory_browse(tied, req.model_copy(update={"page": 2, "shown": p1.mark}))
    assert set(ids(p2)).isdisjoint(ids(p1)) and ids(p2)[0] == ids(again)[-1]


def test_the_export_reads_every_page_in_order(tied, instance):
    req = MemoryBrowse(instance=instance, order="oldest", kinds=["user", "assistant"])
    out = uc.memory_export(tied, req)
    every = offset_ids(tied, req.model_copy(update={"page_size": 200})) + offset_ids(
        tied, req.model_copy(update={"page_size": 200, "page": 2}))
    assert out.matched == out.exported == len(every) == 200
    assert [json.loads(line)["id"] for line in out.document.splitlines()] == every
