"""AppTest of the explorer as a curator uses it: an empty search box lists every memory the filters keep,
by time, a page at a time with the true count; a search that stopped at its size says so and offers more;
a 10,000-character memory is shown by its start, the whole behind "Show all"."""

from __future__ import annotations

from core import usecases as uc
from tests.app.test_explorer_page import button, open_explorer, texts

LONG = ("I keep a garden journal. " + " ".join(f"Day {d}: watered the quinces." for d in range(400)))[:10_000]


def add(wb, instance, n: int) -> None:
    for i in range(n):
        uc.add_memory(wb, uc.AddMemory(instance=instance, content=f"Quince note number {i}."))


def test_an_empty_search_lists_by_time_with_a_true_count(app_env, workbench, instance):
    add(workbench, instance, 25)
    at = open_explorer(instance)
    button(at, "Search").click()
    at.run()
    assert not at.exception and not at.error
    assert any(c.value.startswith("25 memories · 1–20 shown, page 1 of 2, newest first") for c in at.caption)
    assert texts(at).splitlines()[0] == "Quince note number 24."
    at.number_input(key="xp_list_page").set_value(2).run()
    assert any(c.value.startswith("25 memories · 21–25 shown, page 2 of 2") for c in at.caption)
    at.number_input(key="xp_list_page").set_value(3).run()
    assert any("Page 3 is past the last page (2) of 25 memories" in i.value for i in at.info)
    at.radio(key="xp_list_order").set_value("oldest").run()  # back to the first page, oldest first
    assert texts(at).splitlines()[0] == "Quince note number 0."
    button(at, "Prepare a download of all 25 memories listed (JSON lines)").click()
    at.run()
    assert not at.exception


def test_a_search_that_stopped_at_its_size_says_so_and_offers_more(app_env, workbench, instance):
    add(workbench, instance, 25)
    at = open_explorer(instance)
    at.text_input(key="xp_q").input("quince")
    at.radio(key="xp_mode").set_value("Full-text")
    button(at, "Search").click()
    at.run()
    assert any(c.value.startswith("the best 20 hits for “quince” · ")
               and c.value.endswith(" · the search stopped at 20: more may match") for c in at.caption)
    button(at, "Show the best 40 hits").click()
    at.run()
    assert any(c.value.startswith("25 hits for “quince” · ") for c in at.caption)
    assert not [b for b in at.button if b.label.startswith("Show the best")]


def test_a_long_memory_is_shown_by_its_start(app_env, workbench, instance):
    uc.add_memory(workbench, uc.AddMemory(instance=instance, content=LONG))
    uc.add_memory(workbench, uc.AddMemory(instance=instance, content="A short quince note."))
    at = open_explorer(instance)
    at.text_input(key="xp_q").input("quince")
    at.radio(key="xp_mode").set_value("Full-text")
    button(at, "Search").click()
    at.run()
    shown = [t.value for t in at.text]
    assert LONG in shown  # whole, inside the expander
    assert any(v.endswith(" …") and len(v) < 1_600 and LONG.startswith(v[:-2]) for v in shown)
    assert any(e.label == "Show all 10,000 characters" for e in at.expander)
