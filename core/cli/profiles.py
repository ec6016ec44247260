"""`workbench profiles list|show|save|activate|undo|delete`: fusion profiles."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from core.cli.confirm import confirmation_option
from core.cli.context import WorkbenchContext
from core.cli.output import emit

if TYPE_CHECKING:
    from core.usecases import FusionProfile


def shown(profile: FusionProfile) -> dict[str, Any]:
    """A profile as the commands print it: its fields, and `described`, how every front end reads it
    ("semantic 0.60 / text 0.25 / recency 0.15, linear, half-life 16.6 h (τ 1 d)")."""
    from core import usecases as uc

    return {**profile.model_dump(mode="json"), "described": uc.describe_profile(profile)}


@click.group("profiles")
def profiles() -> None:
    """List, show, save, activate and delete fusion profiles; undo the last activation."""


@profiles.command("list")
@click.pass_obj
def list_profiles(ctx: WorkbenchContext) -> None:
    """The shipped presets and saved profiles, the instance's active one and its last activation."""
    from core import usecases as uc

    listing = uc.list_profiles(ctx.wb, uc.InstanceRequest())
    out = listing.model_dump(mode="json", include={"active", "profiles", "presets", "last_activation"})
    out["profiles"] = [shown(p) for p in listing.profiles]
    emit(out)


@profiles.command("show")
@click.argument("name")
@click.pass_obj
def show_profile(ctx: WorkbenchContext, name: str) -> None:
    """One profile: its fields, how it reads, whether it is a shipped preset and the instance's active one."""
    from core import usecases as uc

    profile = uc.get_profile(ctx.wb, uc.ProfileRef(name=name))
    listing = uc.list_profiles(ctx.wb, uc.InstanceRequest())
    emit({**shown(profile), "preset": profile.name in listing.presets, "active": profile.name == listing.active})


@profiles.command("save")
@click.argument("name")
@click.option("--method", default="linear", show_default=True, help="linear | rrf")
@click.option("--w-sem", type=float, required=True)
@click.option("--w-text", type=float, required=True)
@click.option("--w-rec", type=float, required=True)
@click.option("--tau", "tau_s", type=float, default=86400.0, show_default=True,
              help="Recency τ in seconds (half-life = τ · ln 2: 86400 is a half-life of 16.6 h).")
@click.option("--rrf-k", type=int, default=60, show_default=True)
@click.option("--activate", is_flag=True)
@click.pass_obj
def save_profile(ctx: WorkbenchContext, name: str, method: str, w_sem: float, w_text: float, w_rec: float,
                 tau_s: float, rrf_k: int, activate: bool) -> None:
    """Save a custom profile (weights must sum to 1); the last write wins. Saving over a saved profile says
    what it replaced and where it is active (on standard error, beside the JSON)."""
    from core import usecases as uc
    from core.usecases.retrieval import profile_replacement

    profile = uc.FusionProfile(name=name, method=method, w_sem=w_sem, w_text=w_text, w_rec=w_rec,
                               tau_s=tau_s, rrf_k=rrf_k)
    replaced = profile_replacement(ctx.wb, uc.ProfileRef(name=profile.name))
    emit(shown(uc.save_profile(ctx.wb, uc.SaveProfile(profile=profile, activate=activate))))
    if replaced is not None:
        click.echo(f"note: {replaced.note}", err=True)


@profiles.command("activate")
@click.argument("name")
@click.pass_obj
def activate_profile(ctx: WorkbenchContext, name: str) -> None:
    """Make NAME the profile every ui_remember call of the instance uses."""
    from core import usecases as uc

    emit(shown(uc.activate_profile(ctx.wb, uc.ActivateProfile(name=name))))


@profiles.command("undo")
@click.pass_obj
def undo_activation(ctx: WorkbenchContext) -> None:
    """Give the instance back the profile it used before its last activation."""
    from core import usecases as uc

    emit(uc.undo_activation(ctx.wb, uc.InstanceRequest()))


@profiles.command("delete")
@click.argument("name")
@confirmation_option("Delete this profile?")
@click.pass_obj
def delete_profile(ctx: WorkbenchContext, name: str) -> None:
    """Delete the saved profile NAME (presets cannot be deleted, nor a profile an instance uses)."""
    from core import usecases as uc

    emit({"deleted": uc.delete_profile(ctx.wb, uc.DeleteProfile(name=name)).name})
