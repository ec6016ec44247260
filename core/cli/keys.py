"""`workbench keys create|list|revoke`: API keys for the served front ends (HTTP API, MCP)."""

from __future__ import annotations

import click

from core.cli.confirm import confirm
from core.cli.context import WorkbenchContext
from core.cli.output import emit
from core.errors import NotFound


@click.group("keys")
def keys() -> None:
    """API keys: create (the key is printed once), list, revoke."""


@keys.command("create")
@click.argument("name")
@click.option("--instance", "instances", multiple=True, required=True,
              help="An instance the key may read and write (repeat for more).")
@click.option("--read-only", is_flag=True, help="The key may read its instances but not write them.")
@click.pass_obj
def create(ctx: WorkbenchContext, name: str, instances: tuple[str, ...], read_only: bool) -> None:
    """Create a key; it is printed once, on the first line, and stored only as a hash."""
    from core import usecases as uc

    created = uc.create_key(ctx.wb, uc.CreateKey(name=name, instances=list(instances), read_only=read_only))
    click.echo(f"API key {name!r} — copy it now, it will not be shown again:", err=True)
    click.echo(created.secret)
    emit(created.key)


@keys.command("list")
@click.pass_obj
def list_keys(ctx: WorkbenchContext) -> None:
    """Every key, revoked ones too (never the key itself)."""
    from core import usecases as uc

    emit(uc.list_keys(ctx.wb))


@keys.command("revoke")
@click.argument("name")
@click.option("--yes", is_flag=True, help="Confirm the action without prompting.")
@click.pass_obj
def revoke(ctx: WorkbenchContext, name: str, yes: bool) -> None:
    """Revoke a key at once, in every process; its name stays taken."""
    from core import usecases as uc

    ref = uc.KeyRef(name=name)
    if not yes:  # asked only about a key that exists
        if all(key.name != name for key in uc.list_keys(ctx.wb)):
            raise NotFound(f"no API key named {name!r}; `workbench keys list` shows the keys")
        confirm("Revoke this API key? Every client using it is refused from now on.", "the key was not revoked")
    emit(uc.revoke_key(ctx.wb, ref))
