"""`workbench demo load|reset`."""

from __future__ import annotations

import click

from core.cli.confirm import confirmation_option
from core.cli.context import WorkbenchContext


@click.group("demo")
def demo() -> None:
    """Load or remove the demo data."""


@demo.command("load")
@click.option("--first-run", is_flag=True,
              help="Only if this is a fresh embedded install that never had the demo (used by make run).")
@click.pass_obj
def load(ctx: WorkbenchContext, first_run: bool) -> None:
    """Fill the instance with realistic demo data through the product's own flows."""
    from core import usecases as uc

    outcome = uc.demo_load(ctx.wb, uc.DemoLoad(first_run=first_run), say=click.echo)
    if outcome.loaded:
        click.echo("demo: done")
    elif outcome.skipped == "external_services":
        click.echo(f"demo: {outcome.reason}")


@demo.command("reset")
@confirmation_option("Remove all demo data?", "nothing was removed")
@click.pass_obj
def reset(ctx: WorkbenchContext) -> None:
    """Remove the demo data."""
    from core import usecases as uc

    uc.demo_reset(ctx.wb, say=click.echo)
    click.echo("demo: removed")
