"""`workbench retrieve QUERY` (the MemoryScope flow) and `workbench eval --data PATH` (labelled evaluation,
optionally with the weight optimiser)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import click


def _profile(wb, name: str | None, instance: str):
    from core.retrieval.profiles import ProfileStore

    store = ProfileStore(wb.pool())
    return store.get(name) if name else store.active(instance)


def _progress(done: int, total: int, what: str) -> None:
    if sys.stderr.isatty():
        click.echo(f"\r{what}: {done}/{total}   ", nl=False, err=True)
        if done == total:
            click.echo("", err=True)


def register(cli: click.Group) -> None:
    from core.cli import emit

    @cli.command("retrieve")
    @click.argument("query")
    @click.option("--instance", "instance_opt", default=None, help="Instance to search (default: INSTANCE).")
    @click.option("--profile", default=None, help="Fusion profile (default: the instance's active one).")
    @click.option("--trace", is_flag=True, help="Include every op's input size, output, parameters and time.")
    @click.option("--param", "params", multiple=True, metavar="NAME=VALUE",
                  help="An op parameter by its seed name, e.g. op.retrieve_memory_op.params.top_k=10 "
                       "(value read as JSON, else as text). Repeatable.")
    @click.pass_obj
    def retrieve(ctx, query: str, instance_opt: str | None, profile: str | None, trace: bool,
                 params: tuple[str, ...]) -> None:
        """Retrieve personal memories for QUERY with the MemoryScope flow."""
        from core.retrieval.memoryscope import ScopeParams, run_memoryscope

        values = {}
        for item in params:
            name, sep, raw = item.partition("=")
            if not sep:
                raise click.BadParameter(f"{item!r} is not NAME=VALUE", param_hint="--param")
            try:
                values[name.strip()] = json.loads(raw)
            except ValueError:
                values[name.strip()] = raw
        scope_params = ScopeParams.from_flat(values)
        wb = ctx.wb
        instance = instance_opt or wb.settings.instance
        result = run_memoryscope(wb, query, instance=instance, profile=_profile(wb, profile, instance),
                                 params=scope_params)
        payload = {
            "query": result.query, "instance": result.instance, "profile": result.profile.name,
            "timestamp": result.timestamp.isoformat(),
            "time": result.time_hint.model_dump(mode="json") if result.time_hint else None,
            "memories": [m.summary() | {"formatted": m.formatted} for m in result.memories],
            "answer": result.answer, "total_ms": round(result.total_ms, 2),
        }
        if trace:
            payload["trace"] = [t.model_dump(mode="json") for t in result.trace]
        emit(payload)

    @cli.command("eval")
    @click.option("--data", "data_path", required=True, type=click.Path(path_type=Path),
                  help="LoCoMo JSON or JSONL query set ({query, relevant, category?} per line).")
    @click.option("--instance", "instance_opt", default=None,
                  help="Instance a JSONL set is evaluated against (default: INSTANCE).")
    @click.option("--profile", default=None, help="Profile to evaluate (default: the active one).")
    @click.option("--k", "ks", default="1,5,10,25", show_default=True, help="Cut-offs, comma-separated.")
    @click.option("--pool-size", default=50, show_default=True, type=click.IntRange(1, 2000),
                  help="Candidates taken from each leg.")
    @click.option("--sample", "samples", multiple=True, help="Only these LoCoMo sample ids (repeatable).")
    @click.option("--optimise", is_flag=True, help="Also search the weight grid for the best profile.")
    @click.option("--metric", default="recall@10", show_default=True, help="What the optimiser maximises.")
    @click.option("--save-as", default=None, help="Save the optimiser's best profile under this name.")
    @click.option("--activate", is_flag=True, help="With --save-as: make it the instance's active profile.")
    @click.option("--json", "json_out", default=None, type=click.Path(path_type=Path),
                  help="Write the full report here.")
    @click.pass_obj
    def eval_cmd(ctx, data_path: Path, instance_opt, profile, ks, pool_size, samples, optimise, metric,
                 save_as, activate, json_out) -> None:
        """Evaluate a fusion profile on labelled queries: Recall@k, nDCG@k, MRR per category."""
        from core.tuning.datasets import load_dataset
        from core.tuning.evaluate import evaluate
        from core.tuning.metrics import parse_metric
        from core.tuning.optimise import fetch_pools, save_best
        from core.tuning.optimise import optimise as run_optimiser

        try:
            cutoffs = tuple(sorted({int(k) for k in ks.split(",") if k.strip()}))
        except ValueError:
            raise click.BadParameter(f"{ks!r}: give whole numbers like 1,5,10", param_hint="--k") from None
        if not cutoffs or min(cutoffs) < 1:
            raise click.BadParameter("cut-offs must be ≥ 1", param_hint="--k")
        if optimise:
            parse_metric(metric)
        if activate and not save_as:
            raise click.BadParameter("--activate needs --save-as NAME", param_hint="--activate")
        wb = ctx.wb
        instance = instance_opt or wb.settings.instance
        t0 = time.perf_counter()
        dataset = load_dataset(data_path, instance=instance, samples=list(samples) or None)
        chosen = _profile(wb, profile, instance)
        report = evaluate(wb, dataset, chosen, cutoffs, pool_size=pool_size, progress=_progress)
        out = {"evaluation": report.model_dump(mode="json", exclude={"rankings"})}
        _print_table(report)
        if optimise:
            pools = fetch_pools(wb, dataset, pool_size, progress=_progress)
            opt = run_optimiser(pools, metric, baseline=chosen, name=save_as or "tuned", pool_size=pool_size,
                                progress=_progress)
            b = opt.best
            click.echo(f"\noptimiser ({len(opt.surface)} profiles, {opt.seconds:.1f} s): best {metric} "
                       f"{opt.best_value:.4f} vs {opt.baseline_value:.4f} for {chosen.name} — {b.method} "
                       f"w_sem={b.w_sem} w_text={b.w_text} w_rec={b.w_rec} tau_s={b.tau_s:g} rrf_k={b.rrf_k}")
            if save_as:
                saved = save_best(wb, opt, save_as, activate_for=instance if activate else None)
                click.echo(f"saved profile {saved.name!r}" + (f", active for {instance}" if activate else ""))
            out["optimiser"] = opt.model_dump(mode="json")
        click.echo(f"\ntotal {time.perf_counter() - t0:.1f} s")
        if json_out:
            json_out.write_text(json.dumps(out, indent=2, default=str))
            click.echo(f"report written to {json_out}")


def _print_table(report) -> None:
    metrics = [m for m in report.table.metrics if m.startswith("recall@")] + \
              [m for m in report.table.metrics if not m.startswith("recall@")]
    click.echo(f"{report.dataset} ({report.kind}), profile {report.profile.name}: {report.queries} queries, "
               f"load {report.load.seconds:.1f} s ({len(report.load.loaded)} loaded, "
               f"{len(report.load.reused)} "
               f"reused), search p50 {report.search_ms_p50:.1f} ms, {report.seconds:.1f} s")
    if report.skipped:
        click.echo("left out: " + "; ".join(f"{v} {k}" for k, v in report.skipped.items()))
    click.echo(f"{'category':>10} {'n':>5} " + " ".join(f"{m:>9}" for m in metrics))
    for row in report.table.rows:
        cells = " ".join(f"{row.values[m]:>9.3f}" for m in metrics)
        click.echo(f"{row.category:>10} {row.queries:>5} {cells}")
