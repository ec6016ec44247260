"""`workbench demo load|reset`."""

from __future__ import annotations

import click


def register(cli: click.Group) -> None:
    @cli.group()
    def demo() -> None:
        """Load or remove the demo data."""

    @demo.command("load")
    @click.option("--first-run", is_flag=True,
                  help="Only if this is a fresh embedded install that never had the demo (used by make run).")
    @click.pass_obj
    def load(ctx, first_run: bool) -> None:
        """Fill the instance with realistic demo data through the product's own flows."""
        from core import demo as demo_data

        wb = ctx.wb
        if first_run:
            if not (wb.settings.redis_embedded and wb.settings.postgres_embedded):
                click.echo("demo: external services configured; not loading demo data "
                           "(run 'workbench demo load' to load it there)")
                return
            if demo_data.is_loaded(wb):
                return
        demo_data.load(wb, click.echo)
        click.echo("demo: done")

    @demo.command("reset")
    @click.confirmation_option(prompt="Remove all demo data?")
    @click.pass_obj
    def reset(ctx) -> None:
        """Remove the demo data."""
        from core import demo as demo_data

        demo_data.reset(ctx.wb, click.echo)
        click.echo("demo: removed")
