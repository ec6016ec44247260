"""AppTest of the Memory explorer's Chains view and what a search hit leads to: chains found by a part of their
title, a page at a time; a chain opened from a hit shown first, with the way back to the search; a deletion
said once, in words, its storage detail behind "Details"; and every part of a hit's score, adding up."""

from __future__ import annotations

import re

import pytest

import core.admin.compaction
from core.conversation.turn import Remember, UiRememberParams
from tests.app.test_explorer_page import button, open_explorer


@pytest.fixture
def chains(app_env, workbench, instance) -> None:
    """12 chains about Kyoto (k0…k11) and 13 others (n0…n12)."""
    remember = Remember(workbench)
    for i in range(12):
        remember.run(UiRememberParams(thought=f"Our KYOTO hotel, note {i}", chain_id=f"k{i}"), instance=instance)
    for i in range(13):
        remember.run(UiRememberParams(thought=f"Groceries for week {i}", chain_id=f"n{i}"), instance=instance)


def chains_view(instance: str):
    at = open_explorer(instance)
    at.radio(key="xp_view").set_value("Chains")
    return at.run()


def listed(at) -> list[str]:
    return list(at.dataframe[0].value["chain"])


def test_chains_are_found_by_a_part_of_their_title_a_page_at_a_time(chains, instance):
    at = chains_view(instance)
    assert any(c.value == "Page 1 of 2 · 25 chains" for c in at.caption)
    at.selectbox(key="xp_page_size").select(10).run()
    at.number_input(key="xp_page").set_value(2).run()
    at.text_input(key="xp_title_filter").input("kyoto hotel").run()  # case does not matter
    assert not at.exception
    assert at.number_input(key="xp_page").value == 1  # a new filter starts at its first page
    assert any(c.value == "Page 1 of 2 · 12 chains with “kyoto hotel” in the title" for c in at.caption)
    assert listed(at) == [f"k{i}" for i in range(11, 1, -1)]  # newest first
    at.number_input(key="xp_page").set_value(2).run()
    assert listed(at) == ["k1", "k0"]
    at.radio(key="xp_order").set_value("oldest").run()
    assert listed(at) == ["k10", "k11"]

    at.text_input(key="xp_title_filter").input("lisbon").run()
    assert [i.value for i in at.info] == ["No chain has “lisbon” in its title."]
    at.text_input(key="xp_title_filter").input("").run()
    assert any(c.value.startswith("Page 1 of 3 · 25 chains") for c in at.caption)


def test_a_chain_opened_from_a_hit_comes_first_with_the_way_back(chains, instance):
    at = open_explorer(instance)
    at.text_input(key="xp_q").input("note 7")
    at.radio(key="xp_mode").set_value("Full-text")
    button(at, "Search").click()
    at.run()
    at.button(key="xp_hit_open_0").click().run()
    assert not at.exception
    assert at.radio(key="xp_view").value == "Chains"
    # Drawn before the list of chains, in the container the page scrolls into sight.
    assert at.subheader[0].value.startswith("Our KYOTO hotel, note 7")
    order = [e.value for e in at.main if getattr(e, "type", "") in ("subheader", "caption")]
    assert order.index(at.subheader[0].value) < next(i for i, v in enumerate(order) if v.startswith("Page 1 of"))
    assert at.button(key="xp_chain_delete").proto.type != "primary"  # reading is the view's main action

    at.button(key="xp_chain_back").click().run()
    assert at.radio(key="xp_view").value == "Search"
    assert any(" hits for “note 7” · " in c.value for c in at.caption)  # the search, as it was left
    assert not at.subheader  # closed


def test_a_deletion_is_said_once_in_words_with_the_storage_detail_behind_details(chains, instance, workbench,
                                                                                 monkeypatch):
    monkeypatch.setattr(core.admin.compaction, "FULL_VACUUM_MAX_BYTES", -1)  # as for a large table: in place
    at = chains_view(instance)
    at.selectbox(key="xp_chain_pick").select("k9").run()
    at.button(key="xp_chain_delete").click().run()
    at.button(key="xp_confirm_yes").click().run()
    assert not at.exception
    [said] = [s.value for s in at.success]
    assert said.startswith("Deleted the conversation “Our KYOTO hotel, note 9” (chain k9): 1 turn, 1 feedback "
                           "record and 2 indexed memories.")
    assert "MB" not in said and "vacuum" not in said.lower()
    assert not at.toast
    [details] = [e for e in at.expander if e.label.startswith("Details")]
    said = [c.value for c in details.caption]
    assert any("vacuumed in place" in c for c in said)  # the storage detail, there only
    assert any("refused for 10 minutes" in c for c in said)
    assert not workbench.thoughts.chain_meta(instance, "k9")


SCORE = re.compile(r"score ([\d.]+) \(semantic ([\d.]+), text ([\d.]+), recency ([\d.]+)"
                   r"(?:, speaker ([\d.]+), chain ([\d.]+))?\)")


def weights(at) -> tuple[float, float, float]:
    how = next(c.value for c in at.caption if c.value.startswith("How a score adds up"))
    return tuple(map(float, re.search(r"([\d.]+)·semantic \+ ([\d.]+)·text \+ ([\d.]+)·recency", how).groups()))


def test_a_hit_shows_every_part_of_its_score_and_they_add_up(chains, instance):
    at = open_explorer(instance)
    at.text_input(key="xp_q").input("kyoto hotel note")
    button(at, "Search").click()
    at.run()
    w_sem, w_text, w_rec = weights(at)
    hits = [SCORE.search(c.value) for c in at.caption if c.value.startswith("score ")]
    assert len(hits) >= 2 and all(h and h.group(6) is not None for h in hits)
    for h in hits:
        score, sem, text, rec, spk, chain = map(float, h.groups())
        own = w_sem * sem + w_text * text + w_rec * rec + 0.2 * spk
        assert abs((own + 0.3 * chain) / 1.3 - score) < 0.006, h.group(0)

    at.radio(key="xp_mode").set_value("Full-text")
    button(at, "Search").click()
    at.run()
    assert any("one leg searched alone: no speaker or chain part" in c.value for c in at.caption)
    hits = [SCORE.search(c.value) for c in at.caption if c.value.startswith("score ")]
    assert hits and all(h.group(5) is None for h in hits)  # no speaker or chain part shown where none counts
    for h in hits:
        score, sem, text, rec = map(float, h.groups()[:4])
        assert abs(w_sem * sem + w_text * text + w_rec * rec - score) < 0.006, h.group(0)
