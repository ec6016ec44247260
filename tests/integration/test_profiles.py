"""Fusion profiles from every front end's use cases: activations are recorded and the last one undone,
saved profiles deleted (presets and a profile in use refused with what to do), and `workbench profiles
delete|undo|list` on the command line."""

from __future__ import annotations

import json
import uuid

import pytest

from core import usecases as uc
from core.errors import InvalidInput, NotFound
from tests.support.cli import in_process_cli


def saved(wb, name: str, w_sem: float = 0.5) -> uc.FusionProfile:
    return uc.save_profile(wb, uc.SaveProfile(profile=uc.FusionProfile(
        name=name, w_sem=w_sem, w_text=round(1 - w_sem, 2), w_rec=0.0)))


@pytest.fixture
def name() -> str:
    return f"p-{uuid.uuid4().hex[:8]}"


def test_activation_is_recorded_and_undone_one_step_at_a_time(workbench, instance, name):
    wb = workbench
    saved(wb, name)
    first = uc.list_profiles(wb, uc.InstanceRequest(instance=instance))
    assert first.active == "balanced-default" and first.last_activation is None
    assert "balanced-default" in first.presets and name not in first.presets

    uc.activate_profile(wb, uc.ActivateProfile(instance=instance, name="deep-research"))
    uc.activate_profile(wb, uc.ActivateProfile(instance=instance, name=name))
    uc.activate_profile(wb, uc.ActivateProfile(instance=instance, name=name))  # no change: not recorded
    listing = uc.list_profiles(wb, uc.InstanceRequest(instance=instance))
    last = listing.last_activation
    assert listing.active == name and (last.name, last.previous) == (name, "deep-research")

    undone = uc.undo_activation(wb, uc.InstanceRequest(instance=instance))
    assert (undone.name, undone.previous) == (name, "deep-research")
    assert uc.get_profile(wb, uc.ProfileRef(instance=instance)).name == "deep-research"
    uc.undo_activation(wb, uc.InstanceRequest(instance=instance))
    assert uc.list_profiles(wb, uc.InstanceRequest(instance=instance)).active == "balanced-default"
    with pytest.raises(NotFound, match="nothing to undo"):
        uc.undo_activation(wb, uc.InstanceRequest(instance=instance))
    other = f"{instance}-b"  # another instance's history is its own
    assert uc.list_profiles(wb, uc.InstanceRequest(instance=other)).last_activation is None


def test_delete_a_saved_profile_but_never_a_preset_or_one_in_use(workbench, instance, name):
    wb = workbench
    saved(wb, name)
    with pytest.raises(InvalidInput, match="shipped preset and cannot be deleted"):
        uc.delete_profile(wb, uc.DeleteProfile(name="balanced-default"))
    uc.activate_profile(wb, uc.ActivateProfile(instance=instance, name=name))
    with pytest.raises(InvalidInput, match=f"active profile of {instance}: activate another profile there"):
        uc.delete_profile(wb, uc.DeleteProfile(name=name))
    uc.activate_profile(wb, uc.ActivateProfile(instance=instance, name="balanced-default"))
    assert uc.delete_profile(wb, uc.DeleteProfile(name=name)).name == name
    assert name not in {p.name for p in uc.list_profiles(wb, uc.InstanceRequest(instance=instance)).profiles}
    with pytest.raises(NotFound, match=f"no fusion profile named '{name}'"):
        uc.delete_profile(wb, uc.DeleteProfile(name=name))
    # Undoing would bring back the deleted profile: refused, and the active one stays.
    with pytest.raises(NotFound, match=f"no fusion profile named '{name}'"):
        uc.undo_activation(wb, uc.InstanceRequest(instance=instance))
    assert uc.list_profiles(wb, uc.InstanceRequest(instance=instance)).active == "balanced-default"


def test_profiles_on_the_command_line(settings, workbench, instance, name, monkeypatch):
    run = in_process_cli(settings, workbench, monkeypatch)
    code, out, err = run("--instance", instance, "profiles", "save", name, "--w-sem", "0.6", "--w-text", "0.4",
                         "--w-rec", "0", "--activate")
    assert code == 0, err
    code, out, _ = run("--instance", instance, "profiles", "list")
    listing = json.loads(out)
    assert listing["active"] == name and listing["last_activation"]["previous"] == "balanced-default"
    code, out, err = run("--instance", instance, "profiles", "delete", name, "--yes")
    assert code == 2 and "Traceback" not in err and "activate another profile there first" in err
    assert len(err.strip().splitlines()) == 1
    code, out, err = run("--instance", instance, "profiles", "undo")
    assert code == 0 and json.loads(out)["previous"] == "balanced-default", err
    # Deleting is for good: with no terminal to ask on, refused unless --yes.
    code, out, err = run("--instance", instance, "profiles", "delete", name, stdin="y\n")
    assert code == 2 and out == "" and err.strip().splitlines() == [(
        "error: standard input is not a terminal, so nobody could be asked “Delete this profile?”: pass --yes "
        "to confirm (nothing was deleted)")]
    assert name in {p["name"] for p in json.loads(run("profiles", "list")[1])["profiles"]}
    code, out, err = run("--instance", instance, "profiles", "delete", name, "--yes")
    assert code == 0 and json.loads(out) == {"deleted": name}, err
    assert name not in {p["name"] for p in json.loads(run("profiles", "list")[1])["profiles"]}
    code, out, err = run("profiles", "delete", "balanced-default", "--yes")
    assert code == 2 and "shipped preset and cannot be deleted" in err
    code, out, err = run("--instance", instance, "profiles", "undo")
    assert code == 2 and "nothing to undo" in err
