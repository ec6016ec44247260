"""`workbench formation run`: form an instance's conversations again (kinds, observations, corrections,
summaries), after an import or once an LLM is configured."""

from __future__ import annotations

import click

from core.cli.context import WorkbenchContext, instance_option
from core.cli.output import ProgressBar, emit


@click.group("formation")
def formation() -> None:
    """Memory formation: what conversations leave behind as memory."""


@formation.command("run")
@click.option("--instance", default=None, callback=instance_option,
              help="The instance to form (default: the INSTANCE setting).")
@click.pass_obj
def run(ctx: WorkbenchContext, instance: str | None) -> None:
    """Classify every user message again, rewrite the observations its statements left, apply its
    corrections and summarise the chains that ended or went quiet: by the LLM when one is configured,
    else by the rules. Idempotent: running it again changes nothing."""
    from core import usecases as uc

    request = uc.FormationRun(instance=instance)  # a bad instance id fails before any service starts
    with ProgressBar("forming chains") as chains, ProgressBar("summarising chains") as summaries:
        bars = {"chains": chains, "summaries": summaries}
        result = uc.formation_run(ctx.wb, request, progress=lambda done, total, what: bars[what](done, total))
    emit(result)
