"""AppTest of the Tune page's profiles: activate any profile and undo it, save the sliders under a name
(untouched controls keep the loaded profile's exact values), delete a saved profile in a dialog, and presets
that say they cannot be deleted."""

from __future__ import annotations

import math

import pytest

from core import usecases as uc
from core.demo.tune import records
from core.index.memory_index import MemoryIndex
from tests.app.conftest import open_page, open_tab


@pytest.fixture
def app(app_env, workbench, instance):
    MemoryIndex(workbench.pool(), workbench.embedder).add(records(instance))
    at = open_page("pages/tune.py", instance=instance, tab="Profiles")
    assert not at.exception, at.exception
    return at


def texts(elements) -> str:
    return "\n".join(e.value for e in elements)


def active_of(wb, instance) -> str:
    return uc.list_profiles(wb, uc.InstanceRequest(instance=instance)).active


def test_activate_a_preset_then_undo_it(app, workbench, instance):
    at = app
    assert "retrieve with **balanced\\-default**; no activation to undo." in texts(at.caption)
    assert not [b for b in at.button if b.key == "tune_prof_undo"]
    at.selectbox(key="tune_prof_pick").set_value("recall-recent").run()
    at.button(key="tune_prof_activate").click().run()
    assert not at.exception and not at.error, (at.exception, texts(at.error))
    assert active_of(workbench, instance) == "recall-recent"
    assert "recall-recent is now active" in texts(at.success)
    assert "instead of **balanced\\-default**" in texts(at.caption)
    assert at.button(key="tune_prof_undo").help == "Makes balanced-default active again; undoing again steps further back."
    rankings = open_tab(at, "Rankings").markdown
    assert any(m.value.startswith("**Active: recall-recent**") for m in rankings)  # the rankings follow

    at.button(key="tune_prof_undo").click().run()
    assert not at.exception and not at.error, (at.exception, texts(at.error))
    assert active_of(workbench, instance) == "balanced-default"
    assert "balanced-default is active again" in texts(at.success)


def test_save_the_sliders_then_delete_the_profile_but_not_a_preset(app, workbench, instance):
    at = app
    name = f"mine-{instance}"[:40]
    at.text_input(key="tune_prof_name").set_value("my profile!").run()
    at.button(key="tune_prof_save").click().run()
    assert "Could not save the profile" in texts(at.error) and "profile name" in texts(at.error)
    at.text_input(key="tune_prof_name").set_value("balanced-default").run()
    at.button(key="tune_prof_save").click().run()
    assert "shipped preset; save your profile under another name" in texts(at.error)
    at.slider(key="tune_w_sem").set_value(0.3).run()
    at.text_input(key="tune_prof_name").set_value(name).run()
    at.checkbox(key="tune_prof_save_activate").check().run()
    at.button(key="tune_prof_save").click().run()
    assert not at.exception and not at.error, (at.exception, texts(at.error))
    assert f"Saved the sliders as {name}, active for {instance}." in texts(at.success)
    saved = uc.get_profile(workbench, uc.ProfileRef(instance=instance))
    assert saved.name == name and saved.w_sem == 0.3

    # In use: the dialog says why it cannot go, and stays open.
    at.selectbox(key="tune_prof_pick").set_value(name).run()
    at.button(key="tune_prof_delete").click().run()
    at.button(key="tune_prof_confirm_yes").click().run()
    assert "activate another profile there first" in texts(at.error)
    at.button(key="tune_prof_confirm_no").click().run()
    at.button(key="tune_prof_undo").click().run()  # back to the default, so it can go
    at.selectbox(key="tune_prof_pick").set_value(name).run()
    at.button(key="tune_prof_delete").click().run()
    at.button(key="tune_prof_confirm_yes").click().run()
    assert not at.exception and not at.error, (at.exception, texts(at.error))
    assert f"Deleted the profile {name}." in texts(at.success)
    assert name not in {p.name for p in uc.list_profiles(workbench, uc.InstanceRequest(instance=instance)).profiles}

    at.selectbox(key="tune_prof_pick").set_value("fast-chat").run()
    assert at.button(key="tune_prof_delete").disabled
    assert "fast\\-chat is a shipped preset: presets cannot be deleted" in texts(at.caption)


def test_untouched_controls_save_the_loaded_profiles_exact_values(app, workbench, instance):
    """The controls show a profile rounded (a half-life of 16.64 h); saved without a change, it keeps its
    τ and weights exactly, and a moved control gives its value as shown."""
    at = app
    name = f"same-{instance}"[:40]
    preset = uc.get_profile(workbench, uc.ProfileRef(instance=instance, name="recall-recent"))
    at.selectbox(key="tune_start").set_value("recall-recent").run()
    assert at.number_input(key="tune_half_life_h").value == 16.64
    at.text_input(key="tune_prof_name").set_value(name).run()
    at.button(key="tune_prof_save").click().run()
    assert not at.exception and not at.error, (at.exception, texts(at.error))
    saved = uc.get_profile(workbench, uc.ProfileRef(instance=instance, name=name))
    assert saved.tau_s == preset.tau_s == 86400
    assert (saved.w_sem, saved.w_text, saved.w_rec) == (preset.w_sem, preset.w_text, preset.w_rec)

    at.number_input(key="tune_half_life_h").set_value(24.0).run()
    at.slider(key="tune_w_sem").set_value(0.5).run()
    at.button(key="tune_prof_save").click().run()
    assert not at.exception and not at.error, (at.exception, texts(at.error))
    saved = uc.get_profile(workbench, uc.ProfileRef(instance=instance, name=name))
    assert saved.tau_s == 24 * 3600 / math.log(2)
    assert (saved.w_sem, saved.w_text, saved.w_rec) == (0.5, 0.15, 0.35)


def test_every_place_on_the_page_reads_recency_one_way(app, workbench, instance):
    """The controls' caption, the candidate under the save form, the profiles table and the rankings'
    headings all read a profile's recency as `recency_label` writes it (τ in seconds, hours and days
    before, each in its own place)."""
    at = app
    day = "half-life 16.6 h (τ 1 d)"
    assert "Recency: " + day in texts(at.caption)
    assert ("The candidate: semantic 0.60 / text 0.25 / recency 0.15 · linear, " + day) in texts(at.caption)
    table = next(d.value for d in at.dataframe if "recency decay" in d.value.columns).set_index("profile")
    assert table.loc["balanced-default", "recency decay"] == day and "half-life (h)" not in table.columns
    at.number_input(key="tune_half_life_h").set_value(3.0).run()
    assert "Recency: half-life 3 h (τ 15,581 s)" in texts(at.caption)
    assert "· linear, half-life 3 h (τ 15,581 s)" in texts(at.caption)  # the candidate follows the control
    headings = texts(open_tab(at, "Rankings").markdown)
    assert "**Active: balanced-default** · semantic 0.60 / text 0.25 / recency 0.15 · linear, " + day in headings
    assert "**Candidate** · semantic 0.60 / text 0.25 / recency 0.15 · linear, half-life 3 h (τ 15,581 s)" in headings


def test_a_name_the_save_would_refuse_is_said_before_the_click_and_the_field_allows_the_rule(app):
    """The tuning report's L6: a preset's name, or one differing from it in letter case only, is warned
    about as soon as it is typed (as "Saving replaces …" is); the field takes the rule's 128 characters."""
    at = app
    assert at.text_input(key="tune_prof_name").max_chars == 128
    at.text_input(key="tune_prof_name").set_value("balanced-default").run()
    assert "'balanced-default' is a shipped preset" in texts(at.warning).replace("\\", "")  # markdown escapes
    at.text_input(key="tune_prof_name").set_value("Balanced-Default").run()
    assert ("'Balanced-Default' differs from the shipped preset 'balanced-default' only in letter case"
            in texts(at.warning).replace("\\", ""))
    at.button(key="tune_prof_save").click().run()
    assert "only in letter case" in texts(at.error)
    at.text_input(key="tune_prof_name").set_value("x" * 128).run()
    assert not at.warning
