"""`workbench chains list|export|delete`: conversation chains."""

from __future__ import annotations

from pathlib import Path

import click

from core.cli.confirm import confirmation_option
from core.cli.context import WorkbenchContext
from core.cli.output import emit, output_file, write_output


@click.group("chains")
def chains() -> None:
    """Conversation chains: list, export as JSON, delete."""


@chains.command("list")
@click.option("--page", type=int, default=1, show_default=True)
@click.option("--page-size", type=int, default=20, show_default=True)
@click.option("--order", type=click.Choice(["newest", "oldest"]), default="newest", show_default=True)
@click.option("--title", default=None, help="Only chains whose title contains this (case-insensitive).")
@click.pass_obj
def list_chains(ctx: WorkbenchContext, page: int, page_size: int, order: str, title: str | None) -> None:
    """One page of chains, by last activity (with --title, of the chains whose title contains it)."""
    from core import usecases as uc

    emit(uc.chains(ctx.wb, uc.ChainList(page=page, page_size=page_size, order=order, title=title)))


@chains.command("export")
@click.argument("chain_id")
@click.option("-o", "--output", type=click.Path(path_type=Path), default=None,
              help="Write to this file instead of standard output.")
@click.pass_obj
def export(ctx: WorkbenchContext, chain_id: str, output: Path | None) -> None:
    """A chain's thoughts and feedback as JSON."""
    from core import usecases as uc

    if output:
        output_file(output, "--output")
    exported = uc.chain_export(ctx.wb, uc.ChainRef(chain_id=chain_id))
    if output:
        write_output(output, exported.document, "--output")
        click.echo(f"wrote {output}")
    else:
        click.echo(exported.document)


@chains.command("delete")
@click.argument("chain_id")
@confirmation_option("Delete this chain from every store?")
@click.pass_obj
def delete(ctx: WorkbenchContext, chain_id: str) -> None:
    """Delete a chain: thoughts, feedback, queued index writes and index rows."""
    from core import usecases as uc

    emit(uc.chain_delete(ctx.wb, uc.ChainRef(chain_id=chain_id)))
