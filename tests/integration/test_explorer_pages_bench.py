"""The explorer paging benchmark's smoke run (`benchmarks.explorer_pages --small`): it measures every way a
page is reached, and the keyset pages it reads are the pages OFFSET read."""

from __future__ import annotations

import uuid

from benchmarks import explorer_pages


def test_explorer_pages_small_times_each_way_to_a_page(data_dir):
    result = explorer_pages.run(2_200, str(data_dir), 2, prefix=f"xpp-{uuid.uuid4().hex[:6]}")
    assert result["keyset"] and result["newest"]["pages"] == 110
    for order in ("newest", "oldest", "newest_user"):
        figures = result[order]
        assert all(figures[k] > 0 for k in ("first", "page_100", "middle", "last"))
    assert result["newest"]["same_as_offset"] and result["oldest"]["same_as_offset"]
