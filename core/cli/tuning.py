"""`workbench eval --data PATH`: labelled evaluation of a fusion profile, optionally with the weight
optimiser."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from core.cli.context import WorkbenchContext, instance_option
from core.cli.output import output_file, tty_progress, write_output

if TYPE_CHECKING:
    from core.usecases import EvalReport, TuneReport
    from core.usecases.tuning import MetricsTable


class _MeasuresHelp(click.Command):
    """`eval --help` says what its figures measure, in the core's words (`core.tuning.measures`), read only
    when the help is shown: the use cases take 0.4 s to import, which no other command's help waits for."""

    def format_help_text(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        super().format_help_text(ctx, formatter)
        from core.usecases.tuning import help_paragraphs

        for paragraph in help_paragraphs():
            formatter.write_paragraph()
            with formatter.indentation():
                formatter.write_text(paragraph)


@click.command("eval", cls=_MeasuresHelp)
@click.option("--data", "data_path", required=True, type=click.Path(path_type=Path),
              help="LoCoMo JSON or JSONL query set ({query, relevant, category?} per line).")
@click.option("--instance", "instance_opt", default=None, callback=instance_option,
              help="Instance a JSONL set is evaluated against (default: INSTANCE).")
@click.option("--profile", default=None, help="Profile to evaluate (default: the active one).")
@click.option("--k", "ks", default="1,5,10,25", show_default=True, help="Cut-offs, comma-separated.")
@click.option("--pool-size", default=None, type=click.IntRange(1, 2000),
              help="Candidates taken from each leg (also the optimiser's). Default: a chat turn's for the "
                   "deepest cut-off, max(10, 2 × k): 50 at the default cut-offs, as the Tune page opens.")
@click.option("--legs", is_flag=True, help="Also each leg alone beside the profile: the text leg (BM25) and the "
                                          "dense leg (cosine), as the Tune page shows them.")
@click.option("--memoryscope", is_flag=True,
              help="Also score retrieve_memory's output with the profile: MemoryScope after fuse_rerank, what an "
                   "agent gets from MCP retrieve_memory, HTTP /retrieve and `workbench retrieve`.")
@click.option("--param", "params", multiple=True, metavar="NAME=VALUE",
              help="With --memoryscope: an op parameter retrieve_memory runs with, as `workbench retrieve "
                   "--param` takes it, e.g. op.retrieve_memory_op.params.top_k=25 (its pool_size, not "
                   "--pool-size, sets its candidates). Repeatable.")
@click.option("--sample", "samples", multiple=True, help="Only these LoCoMo sample ids (repeatable).")
@click.option("--optimise", is_flag=True, help="Also search the weight grid for the best profile.")
@click.option("--metric", default="recall@10", show_default=True,
              help="What the optimiser maximises: recall@k, ndcg@k, mrr@k, or mrr (not cut).")
@click.option("--save-as", default=None, help="Save the optimiser's best profile under this name, when it is "
                                              "recommended (else exit 1: nothing is saved).")
@click.option("--activate", is_flag=True, help="With --save-as: make it the instance's active profile.")
@click.option("--json", "json_out", default=None, type=click.Path(path_type=Path),
              help="Write the full report here.")
@click.pass_obj
def evaluate(ctx: WorkbenchContext, data_path: Path, instance_opt: str | None, profile: str | None, ks: str,
             pool_size: int | None, legs: bool, memoryscope: bool, params: tuple[str, ...], samples: tuple[str, ...],
             optimise: bool, metric: str, save_as: str | None, activate: bool, json_out: Path | None) -> None:
    """Evaluate a fusion profile on labelled queries: Recall@k, nDCG@k, MRR per category.

    Exit status 1 when --save-as saved nothing (the best profile was not recommended)."""
    from core import usecases as uc
    from core.cli.retrieve import parse_params
    from core.usecases.tuning import counted, side_by_side_summary

    cutoffs = parse_cutoffs(ks)
    if json_out:
        output_file(json_out, "--json")
    if activate and not save_as:
        raise click.BadParameter("--activate needs --save-as NAME", param_hint="--activate")
    if save_as and not optimise:
        raise click.BadParameter("it saves the optimiser's best profile: add --optimise, or leave it out",
                                 param_hint="--save-as")
    if params and not memoryscope:
        raise click.BadParameter("op parameters are for retrieve_memory's output: add --memoryscope, or leave "
                                 "them out", param_hint="--param")
    request = uc.TuneRequest(source=data_path, instance=instance_opt, samples=list(samples) or None,
                             profile=profile, ks=cutoffs, pool_size=pool_size, legs=legs, memoryscope=memoryscope,
                             scope_params=uc.ScopeParams.from_flat(parse_params(params)), optimise=optimise,
                             metric=metric, save_as=save_as, activate=activate)
    report = uc.tune(ctx.wb, request, progress=tty_progress)
    shown = [report.evaluation, *report.legs, *([report.memoryscope] if report.memoryscope else [])]
    for i, evaluated in enumerate(shown):
        if i:
            click.echo()
        print_table(evaluated)
    if len(shown) > 1:
        click.echo("\n" + side_by_side_summary(shown))
    for note in [uc.unknown_ids_note(report.unknown_ids), *report.set_notes]:
        if note:
            click.echo(note)
    if report.optimiser:
        opt, b = report.optimiser, report.optimiser.best
        click.echo(f"\noptimiser: {len(opt.surface)} profiles scored on {counted(opt.queries, 'queries')}, "
                   f"{opt.pool_size} candidates per leg, in {opt.seconds:.1f} s; best {uc.describe_profile(b)}")
        click.echo(opt.verdict)
    if report.saved:
        click.echo(f"saved profile {report.saved.name!r}"
                   + (f", active for {report.instance}" if activate else ""))
        if report.replaced:
            click.echo(f"note: {report.replaced.note}")
    click.echo(f"\ntotal {report.seconds:.1f} s")
    if json_out:
        write_output(json_out, json.dumps(json_report(report), indent=2, default=str), "--json")
        click.echo(f"report written to {json_out}")
    if save_as and not report.saved:  # a script asked for a profile that does not exist
        click.echo(f"not saved as {save_as!r}: only a recommended profile is saved", err=True)
        sys.exit(1)


def parse_cutoffs(ks: str) -> list[int]:
    """"1,5,10" as sorted distinct whole numbers, each at least 1."""
    try:
        cutoffs = sorted({int(k) for k in ks.split(",") if k.strip()})
    except ValueError:
        raise click.BadParameter(f"{ks!r}: give whole numbers like 1,5,10", param_hint="--k") from None
    if not cutoffs or min(cutoffs) < 1:
        raise click.BadParameter("cut-offs must be ≥ 1", param_hint="--k")
    from core.usecases.tuning import MAX_K

    if cutoffs[-1] > MAX_K:
        raise click.BadParameter(f"{cutoffs[-1]} is more than {MAX_K:,}, the most memories a search returns: "
                                 f"give cut-offs from 1 to {MAX_K:,}", param_hint="--k")
    return cutoffs


def json_report(report: TuneReport) -> dict[str, object]:
    """What --json writes: the evaluation without its per-query rankings (with what its figures score and
    each metric's definition), what the set held that is not scored as written (the relevant ids the
    instance does not hold and the queries left out, named beside the evaluation's `skipped` counts), and
    the optimiser's report."""
    from core.usecases.tuning import metric_definition

    evaluation = report.evaluation
    out: dict[str, object] = {"evaluation": evaluation.model_dump(mode="json", exclude={"rankings"}),
                              "definitions": {m: metric_definition(m) for m in evaluation.table.metrics},
                              "unknown_ids": report.unknown_ids, "left_out_queries": report.left_out_queries,
                              "set_notes": report.set_notes}
    if report.legs:
        out["legs"] = [leg.model_dump(mode="json", exclude={"rankings"}) for leg in report.legs]
    if report.memoryscope:
        out["memoryscope"] = report.memoryscope.model_dump(mode="json", exclude={"rankings"})
    if report.optimiser:
        out["optimiser"] = report.optimiser.model_dump(mode="json")
    return out


def print_table(report: EvalReport) -> None:
    from core import usecases as uc
    from core.usecases.tuning import counted, left_out

    metrics = [m for m in report.table.metrics if m.startswith("recall@")] + \
              [m for m in report.table.metrics if not m.startswith("recall@")]
    what = (f"profile {report.profile.name} ({uc.describe_profile(report.profile)})"
            if report.search_type in ("hybrid", "memoryscope") else report.label)
    click.echo(f"{report.dataset} ({report.kind}), {what}: "
               f"{counted(report.queries, 'queries')}, load {report.load.seconds:.1f} s ({len(report.load.loaded)} loaded, "
               f"{len(report.load.reused)} reused), search p50 {report.search_ms_p50:.1f} ms, "
               f"{report.seconds:.1f} s")
    click.echo(f"scored on {report.ranking}")
    click.echo(f"from {report.pool_label}")
    if report.scope_params is not None:
        click.echo(f"op parameters: {_changed_params(report.scope_params)}")
    if report.skipped:
        click.echo(f"left out: {left_out(report.skipped)}")
    _print_rows(report.table, metrics)
    if report.handed is not None:
        click.echo(f"{report.handed_label} (RELEVANCE_FLOOR): recall of what a chat turn asking for k "
                   "memories hands over, the memories under the floor left out")
        width = _print_rows(report.handed, report.handed.metrics, prefix="handed ")
        counts = " ".join(f"{report.handed_counts.get(k, 0.0):>{width}.1f}" for k in report.ks)
        click.echo(f"{'memories, mean':>16} {counts}")
    if report.depth_note:
        click.echo(f"note: {report.depth_note}")


def _print_rows(table: MetricsTable, metrics: list[str], prefix: str = "") -> int:
    """The table's rows under a header of `prefix` + each metric; returns the width of a cell."""
    width = max(9, *(len(prefix + m) for m in metrics))
    click.echo(f"{'category':>10} {'n':>5} " + " ".join(f"{prefix + m:>{width}}" for m in metrics))
    for row in table.rows:
        cells = " ".join(f"{row.values[m]:>{width}.3f}" for m in metrics)
        click.echo(f"{row.category:>10} {row.queries:>5} {cells}")
    return width


def _changed_params(flat: dict[str, object]) -> str:
    """The op parameters that differ from the defaults, "NAME=VALUE, …", or "the defaults"."""
    from core import usecases as uc

    defaults = uc.ScopeParams().flat()
    changed = [f"{name}={json.dumps(value)}" for name, value in flat.items() if defaults.get(name) != value]
    return ", ".join(changed) or "the defaults (what an agent gets without params)"
