"""AppTest of the explorer's listing as it pages: the page shown is carried to the next run (its edge rows),
so the next, the previous and the same page again are read from it, not past every memory before them; the
page number typed in (the last page) still works, a prepared download stays while paging, and another order
starts from the first page again."""

from __future__ import annotations

from core import usecases as uc
from tests.app.test_explorer_page import button, open_explorer, texts


def test_next_previous_and_last_pages_are_read_from_the_page_shown(app_env, workbench, instance):
    for i in range(45):
        uc.add_memory(workbench, uc.AddMemory(instance=instance, content=f"Quince note number {i}."))
    at = open_explorer(instance)
    button(at, "Search").click()
    at.run()
    assert texts(at).splitlines()[0] == "Quince note number 44."
    mark = at.session_state["xp_list_mark"]
    assert mark.page == 1 and mark.first.id != mark.last.id

    button(at, "Prepare a download of all 45 memories listed (JSON lines)").click()
    at.run()
    at.number_input(key="xp_list_page").increment().run()  # "+": the next page, after page 1's last row
    assert [b.label for b in at.get("download_button")] == ["Download 45 memories"]  # still prepared
    assert any(c.value.startswith("45 memories · 21–40 shown, page 2 of 3") for c in at.caption)
    assert texts(at).splitlines()[0] == "Quince note number 24."
    assert at.session_state["xp_list_mark"].page == 2

    at.number_input(key="xp_list_page").set_value(3).run()  # the last page, typed in
    assert any(c.value.startswith("45 memories · 41–45 shown, page 3 of 3") for c in at.caption)
    assert [b.label for b in at.get("download_button")] == ["Download 45 memories"]
    assert texts(at).splitlines() == [f"Quince note number {i}." for i in range(4, -1, -1)]

    at.number_input(key="xp_list_page").decrement().run()  # "−": the previous page, before page 3's first row
    assert texts(at).splitlines()[0] == "Quince note number 24."
    at.run()  # the same page again (any rerun)
    assert texts(at).splitlines()[0] == "Quince note number 24." and not at.exception

    at.radio(key="xp_list_order").set_value("oldest").run()  # another listing: the mark is not used
    assert texts(at).splitlines()[0] == "Quince note number 0."
    at.number_input(key="xp_list_page").increment().run()
    assert texts(at).splitlines()[0] == "Quince note number 20."
