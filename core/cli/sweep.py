"""`workbench sweep`: the upkeep of every instance."""

from __future__ import annotations

import click

from core.cli.context import WorkbenchContext
from core.cli.output import emit


@click.command("sweep")
@click.pass_obj
def sweep(ctx: WorkbenchContext) -> None:
    """Mark answers with no follow-up for 10 minutes as abandoned; index queued thoughts; summarise the
    chains that went quiet.

    Every instance, then the thoughts still queued for the memory index (e.g. written while Postgres
    was down). `workbench feedback sweep` does the first and last parts for one instance only."""
    from core import usecases as uc

    emit(uc.sweep(ctx.wb))
