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
@click.option("--all", "every_chain", is_flag=True,
              help="Form every chain again, not only those with messages not formed yet (after an upgrade "
                   "whose rules read messages differently).")
@click.pass_obj
def run(ctx: WorkbenchContext, instance: str | None, every_chain: bool) -> None:
    """Form the chains with messages not formed yet (imported since the last run; once an LLM is
    configured, those the rules formed): classify their user messages, write the observations their
    statements leave, apply their corrections, and summarise the chains that ended or went quiet and
    changed since their summary: by the LLM when one is configured, else by the rules. Chains formed
    before and unchanged since are left as they are (`unchanged`); --all forms every chain again.
    Idempotent: running it again changes nothing."""
    from core import usecases as uc

    # a bad instance id fails before any service starts
    request = uc.FormationRun(instance=instance, every_chain=every_chain)
    with ProgressBar("forming chains") as chains, ProgressBar("summarising chains") as summaries:
        bars = {"chains": chains, "summaries": summaries}
        result = uc.formation_run(ctx.wb, request, progress=lambda done, total, what: bars[what](done, total))
    emit(result)
