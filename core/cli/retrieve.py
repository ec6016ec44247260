"""`workbench retrieve QUERY`: personal memory retrieval with the MemoryScope flow."""

from __future__ import annotations

import json

import click

from core.cli.context import WorkbenchContext, instance_option
from core.cli.output import emit


@click.command("retrieve")
@click.argument("query")
@click.option("--instance", "instance_opt", default=None, callback=instance_option,
              help="Instance to search (default: INSTANCE).")
@click.option("--profile", default=None, help="Fusion profile (default: the instance's active one).")
@click.option("--trace", is_flag=True, help="Include every op's input size, output, parameters and time.")
@click.option("--param", "params", multiple=True, metavar="NAME=VALUE",
              help="An op parameter by its full name, e.g. op.retrieve_memory_op.params.top_k=10 "
                   "(value read as JSON, else as text). Repeatable.")
@click.pass_obj
def retrieve(ctx: WorkbenchContext, query: str, instance_opt: str | None, profile: str | None, trace: bool,
             params: tuple[str, ...]) -> None:
    """Retrieve personal memories for QUERY with the MemoryScope flow."""
    from core import usecases as uc

    request = uc.RetrieveReportRequest(query=query, instance=instance_opt or None, profile=profile,
                                       params=uc.ScopeParams.from_flat(parse_params(params)), trace=trace)
    report = uc.retrieval_report(ctx.wb, request)
    emit(report.model_dump(mode="json", exclude=None if trace else {"trace"}))


def parse_params(items: tuple[str, ...]) -> dict[str, object]:
    """NAME=VALUE options as a dict, each value read as JSON when it is JSON, else kept as text."""
    values: dict[str, object] = {}
    for item in items:
        name, sep, raw = item.partition("=")
        if not sep:
            raise click.BadParameter(f"{item!r} is not NAME=VALUE", param_hint="--param")
        try:
            values[name.strip()] = json.loads(raw)
        except ValueError:
            values[name.strip()] = raw
    return values
