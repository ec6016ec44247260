"""`workbench reembed`: give memories made by another embedding model a vector of the active one."""

from __future__ import annotations

import click

from core.cli.context import WorkbenchContext, instance_option
from core.cli.output import ProgressBar, emit


@click.command("reembed")
@click.option("--instance", default=None, callback=instance_option,
              help="The instance to re-embed (default: the INSTANCE setting).")
@click.pass_obj
def reembed(ctx: WorkbenchContext, instance: str | None) -> None:
    """Re-embed every memory whose vector another model made (or that has none) with the active embedder.

    Until then such memories are found by the text leg only: vectors of different models never mix.
    """
    from core import usecases as uc

    request = uc.InstanceRequest(instance=instance)  # a bad instance id fails before any service starts
    with ProgressBar("re-embedding") as step:
        result = uc.reembed(ctx.wb, request, progress=lambda done, total, _what: step(done, total))
    emit(result)
