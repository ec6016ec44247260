"""`workbench feedback summary|export|sweep`: the Feedback page's figures from the command line."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from core.cli.context import WorkbenchContext
from core.cli.output import emit, output_file, write_output

if TYPE_CHECKING:
    from core.usecases import FeedbackReport, FeedbackSummary

IMPORTED_HELP = ("Also count answers imported with `workbench import` (they carry no feedback of their own, "
                 "so they are left out by default).")
DATE_HELP = ("a date or time (2025-03-01, 2025-03-01T14:00Z), a period from its start ('today', 2025-03, "
             "'March 2025', 'last week') or an expression ('7 days ago', 'last monday'); UTC")
RATINGS = ("up", "down", "none")
MODEL_HELP = ("Only answers of this model, as `--by model` names it (\"extractive (no model)\" for answers quoted "
              "from the memories); repeat for several.")
RATING_HELP = "Only answers the user rated so (none: not rated); repeat for several."
# The column a group's key is in (named as in the answers frame), and the figures shown for each group.
GROUP_KEY_COLUMN = {"day": "day", "week": "week", "model": "model", "profile": "profile", "chain": "chain_id", "tag": "tag",
                    "source": "source", "key": "key"}
GROUP_COLUMNS = ["answers", "scored", "mean_score", "ci_low", "ci_high", "continue_rate", "abandon_rate",
                 "correction_rate", "ttn_p50", "rated", "rated_down", "rated_up_share", "tokens_total",
                 "total_ms_p95"]
# Counted, not measured: printed as whole numbers in the groups' table (12675, not 12675.000).
GROUP_COUNTS = ("answers", "scored", "rated", "rated_down", "tokens_total")


def parse_window(since: str | None, until: str | None) -> tuple[datetime | None, datetime | None]:
    """--since and --until as written; a window that starts in the future is refused (no answer is there)."""
    from core import usecases as uc

    return uc.read_answer_window(since, until, ("--since", "--until"))


@click.group("feedback")
def feedback() -> None:
    """Feedback analytics: how users reacted to answers (the Feedback page, in the terminal)."""


@feedback.command("summary")
@click.option("--since", help=f"Only answers from this time on: {DATE_HELP}.")
@click.option("--until", help="Only answers up to this time (a period: to its end; default: now).")
@click.option("--by", type=click.Choice(list(GROUP_KEY_COLUMN)),
              help="Also break the figures down by this (day, week: every one of the period, one without "
                   "answers as a row of 0 answers; week: the UTC week from Monday, keyed by its Monday; "
                   "model: the model that answered, answers quoted from "
                   "the memories with no LLM call as \"extractive (no model)\"; source: the front end a turn came "
                   "through; key: the API key's name).")
@click.option("--include-imported", is_flag=True, help=IMPORTED_HELP)
@click.option("--model", "models", multiple=True, help=MODEL_HELP)
@click.option("--rating", "ratings", multiple=True, type=click.Choice(RATINGS), help=RATING_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.pass_obj
def summary(ctx: WorkbenchContext, since: str | None, until: str | None, by: str | None,
            include_imported: bool, models: tuple[str, ...], ratings: tuple[str, ...], as_json: bool) -> None:
    """Mean feedback score (95% CI), continue/abandon/correction rates, time to next, explicit ratings,
    tokens, latency.

    Runs the abandonment sweep first, so answers left 10 minutes without a follow-up count."""
    from core import usecases as uc

    start, end = parse_window(since, until)
    request = uc.SummaryRequest(since=start, until=end, by=by, include_imported=include_imported,
                                models=list(models), ratings=list(ratings))
    report = uc.feedback_summary(ctx.wb, request)
    if as_json:
        emit(json_summary(report))
        return
    window = f"{start:%Y-%m-%d %H:%M} UTC" if start else "the beginning"
    click.echo(f"feedback for instance {report.instance!r}, from {window} to "
               f"{f'{end:%Y-%m-%d %H:%M} UTC' if end else 'now'}{filters_said(report.models, report.ratings)}")
    if report.summary.answers == 0:
        # A table of dashes read as if something had been measured: say there was nothing to measure.
        left_out = report.imported_left_out
        click.echo("no answers in this period" + (f" ({left_out} imported answer{'s' if left_out != 1 else ''} "
                                                  "left out: --include-imported counts them)" if left_out else ""))
        return
    click.echo(render_summary(report.summary))
    if n := report.imported_left_out:
        click.echo(f"{n} imported answer{'s' if n != 1 else ''} left out (--include-imported counts them)")
    if report.by and report.groups is not None:
        click.echo("")
        click.echo(render_groups(report.by, report.groups))


@feedback.command("export")
@click.option("--csv", "out", required=True, type=click.Path(path_type=Path),
              help="File to write (UTF-8 CSV, one row per answer).")
@click.option("--since", help=f"Only answers from this time on: {DATE_HELP}.")
@click.option("--until", help="Only answers up to this time (a period: to its end; default: now).")
@click.option("--include-imported", is_flag=True, help=IMPORTED_HELP)
@click.option("--model", "models", multiple=True, help=MODEL_HELP)
@click.option("--rating", "ratings", multiple=True, type=click.Choice(RATINGS), help=RATING_HELP)
@click.option("--force", is_flag=True, help="Replace the --csv file if it exists.")
@click.pass_obj
def export(ctx: WorkbenchContext, out: Path, since: str | None, until: str | None,
           include_imported: bool, models: tuple[str, ...], ratings: tuple[str, ...], force: bool) -> None:
    """Write every answer's feedback, model, profile, tags, tokens and latency to a CSV file (readable by
    you alone: it holds the rating comments)."""
    from core import usecases as uc

    start, end = parse_window(since, until)
    output_file(out, "--csv", force=force)
    exported = uc.feedback_export(ctx.wb, uc.FeedbackWindow(since=start, until=end, include_imported=include_imported,
                                                            models=list(models), ratings=list(ratings)))
    write_output(out, exported.csv, "--csv")
    click.echo(f"feedback: wrote {exported.answers} answers{filters_said(list(models), list(ratings))} to {out} "
               "(times in UTC)")


@feedback.command("sweep")
@click.pass_obj
def sweep(ctx: WorkbenchContext) -> None:
    """Mark answers with no follow-up for 10 minutes as abandoned (the page and summary do it too).

    This instance only; `workbench sweep` sweeps every instance and also indexes queued thoughts."""
    from core import usecases as uc

    swept = uc.sweep_instance(ctx.wb, uc.InstanceRequest())
    click.echo(f"feedback: {swept.abandoned_marked} answers marked abandoned, {swept.summarised} quiet "
               "conversations summarised" + (f" ({swept.note})" if swept.note else ""))


def filters_said(models: list[str], ratings: list[str]) -> str:
    """The filters a figure was counted under, for the line that says what it counts ("" for none)."""
    said = [f"model {' or '.join(models)}"] if models else []
    if ratings:
        said.append("rated " + " or ".join("not at all" if r == "none" else r for r in ratings))
    return f" ({'; '.join(said)})" if said else ""


def json_summary(report: FeedbackReport) -> dict[str, Any]:
    """--json's document: the window as given (ISO 8601), the summary, and the groups when --by was."""
    payload: dict[str, Any] = {"instance": report.instance,
                               "since": report.since and report.since.isoformat(),
                               "until": report.until and report.until.isoformat(),
                               "summary": report.summary.model_dump(mode="json"),
                               "imported_left_out": report.imported_left_out}
    if report.models or report.ratings:
        payload.update(models=report.models, ratings=report.ratings)
    if report.by:
        payload["by"] = report.by
        payload["groups"] = report.groups
    return payload


def _fmt(v: float | None, spec: str = ".3f", suffix: str = "") -> str:
    return "—" if v is None else f"{v:{spec}}{suffix}"


def render_summary(s: FeedbackSummary) -> str:
    ci = f"95% CI [{_fmt(s.ci_low)}, {_fmt(s.ci_high)}]" if s.ci_low is not None else "95% CI —"
    ttn = "  ".join(f"{k} {_fmt(v, '.1f')}" for k, v in s.time_to_next_s.items())
    imported = f", imported {s.imported}: in no rate" if s.imported else ""
    lines = [
        (f"answers            {s.answers}  (scored {s.scored}, awaiting follow-up {s.pending}, "
         f"ended {s.final}{imported})"),
        f"mean score         {_fmt(s.mean_score)}  {ci}  n={s.scored}",
        _rate_line("continue rate", s.continue_rate, s.continued, s.continue_rate_excl_ended, s),
        _rate_line("abandon rate", s.abandon_rate, s.abandoned, s.abandon_rate_excl_ended, s),
        _rate_line("correction rate", s.correction_rate, s.corrected, s.correction_rate_excl_ended, s),
        *_overlap_note(s),
        f"time to next (s)   {ttn}",
        (f"rated up           {_fmt(_pct(s.rated_up_share), '.1f', '%')}  "
         f"({s.rated_up} up, {s.rated_down} down, n={s.rated})"),
        (f"tokens             total {_fmt(s.tokens_total, ',.0f')}  per LLM answer "
         f"{_fmt(s.tokens_per_answer, ',.1f')}  ({s.llm_answers} LLM answers)"),
        "latency (ms)       stage       p50      p95      p99",
    ]
    for stage, q in s.latency_ms.items():
        lines.append(f"                   {stage:<9} {_fmt(q['p50'], '8.1f')} {_fmt(q['p95'], '8.1f')} "
                     f"{_fmt(q['p99'], '8.1f')}")
    return "\n".join(lines)


def _overlap_note(s: FeedbackSummary) -> list[str]:
    """Why continue and abandon rates add up past 100%, when they do (the page says it under its tiles):
    read alone, 63% continued and 37% abandoned looked like two shares of the same answers."""
    if s.continued + s.abandoned <= s.answers - s.imported:
        return []
    return ["                   (an answer followed up 10 minutes or more later is both continued and abandoned)"]


def _rate_line(label: str, rate: float | None, count: int, excl_ended: float | None,
               s: FeedbackSummary) -> str:
    """A rate with the ended answers and, as DESIGN has it, without them (given with next_thought_needed =
    false: no follow-up was expected); the second only when some ended, else it is the same figure."""
    ended = f"the {s.final} ended answers" if s.final != 1 else "the ended answer"
    without = f"; {_fmt(_pct(excl_ended), '.1f', '%')} without {ended}" if s.final else ""
    return f"{label:<19}{_fmt(_pct(rate), '.1f', '%')}  ({count} answer{'s' if count != 1 else ''}{without})"


def render_groups(by: str, groups: list[dict[str, Any]]) -> str:
    """The per-group figures as a text table, one row per group."""
    import pandas as pd

    table = pd.DataFrame(groups, columns=[GROUP_KEY_COLUMN[by], *GROUP_COLUMNS])
    if by in ("day", "week") and not table.empty:  # ISO 8601 timestamps of midnight UTC: the date is enough
        table[by] = table[by].str[:10]
    table[GROUP_COLUMNS] = table[GROUP_COLUMNS].apply(pd.to_numeric)  # a figure missing in every group: NaN
    for column in GROUP_COUNTS:  # whole numbers; a count never made (no tokens): — (Int64 printed "<NA>")
        table[column] = table[column].map(lambda v: "—" if pd.isna(v) else f"{v:.0f}")
    return table.to_string(index=False, float_format=lambda v: f"{v:.3f}", na_rep="—")


def _pct(v: float | None) -> float | None:
    return None if v is None else 100 * v
