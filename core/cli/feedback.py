"""`workbench feedback summary|export|sweep`: the Feedback page's figures from the command line."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from core.cli.context import WorkbenchContext
from core.cli.output import emit, output_file, write_output
from core.errors import InvalidInput

if TYPE_CHECKING:
    from core.usecases import FeedbackReport, FeedbackSummary

DATE_HELP = ("a date or time (2025-03-01, 2025-03-01T14:00Z) or an expression ('7 days ago', 'last monday'); "
             "UTC")
# The column a group's key is in (named as in the answers frame), and the figures shown for each group.
GROUP_KEY_COLUMN = {"day": "day", "model": "model", "profile": "profile", "chain": "chain_id", "tag": "tag",
                    "source": "source", "key": "key"}
GROUP_COLUMNS = ["answers", "scored", "mean_score", "ci_low", "ci_high", "continue_rate", "abandon_rate",
                 "correction_rate", "ttn_p50", "rated", "rated_up_share", "tokens_total", "total_ms_p95"]


def parse_when(text: str | None, option: str) -> datetime | None:
    """A date option as an aware UTC datetime; InvalidInput naming the option when it cannot be read."""
    if text is None:
        return None
    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError:
        import dateparser

        when = dateparser.parse(text, languages=["en"], settings={
            "TIMEZONE": "UTC", "TO_TIMEZONE": "UTC", "RETURN_AS_TIMEZONE_AWARE": True,
            "PREFER_DATES_FROM": "past"})
    if when is None:
        raise InvalidInput(f"{option}: could not read {text!r} as a date; try 2025-03-01, '7 days ago' or "
                           "'last monday'")
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)


def parse_window(since: str | None, until: str | None) -> tuple[datetime | None, datetime | None]:
    start, end = parse_when(since, "--since"), parse_when(until, "--until")
    if start and end and start > end:
        raise InvalidInput("--since must not be after --until")
    return start, end


@click.group("feedback")
def feedback() -> None:
    """Feedback analytics: how users reacted to answers (the Feedback page, in the terminal)."""


@feedback.command("summary")
@click.option("--since", help=f"Only answers from this time on: {DATE_HELP}.")
@click.option("--until", help="Only answers up to this time (default: now).")
@click.option("--by", type=click.Choice(list(GROUP_KEY_COLUMN)),
              help="Also break the figures down by this (source: the front end a turn came through; key: "
                   "the API key's name).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.pass_obj
def summary(ctx: WorkbenchContext, since: str | None, until: str | None, by: str | None,
            as_json: bool) -> None:
    """Mean feedback score (95% CI), continue/abandon/correction rates, time to next, explicit ratings,
    tokens, latency.

    Runs the abandonment sweep first, so answers left 10 minutes without a follow-up count."""
    from core import usecases as uc

    start, end = parse_window(since, until)
    report = uc.feedback_summary(ctx.wb, uc.SummaryRequest(since=start, until=end, by=by))
    if as_json:
        emit(json_summary(report))
        return
    window = f"{start:%Y-%m-%d %H:%M} UTC" if start else "the beginning"
    click.echo(f"feedback for instance {report.instance!r}, from {window} to "
               f"{f'{end:%Y-%m-%d %H:%M} UTC' if end else 'now'}")
    click.echo(render_summary(report.summary))
    if report.by and report.groups is not None:
        click.echo("")
        click.echo(render_groups(report.by, report.groups))


@feedback.command("export")
@click.option("--csv", "out", required=True, type=click.Path(path_type=Path),
              help="File to write (UTF-8 CSV, one row per answer).")
@click.option("--since", help=f"Only answers from this time on: {DATE_HELP}.")
@click.option("--until", help="Only answers up to this time (default: now).")
@click.pass_obj
def export(ctx: WorkbenchContext, out: Path, since: str | None, until: str | None) -> None:
    """Write every answer's feedback, model, profile, tags, tokens and latency to a CSV file."""
    from core import usecases as uc

    start, end = parse_window(since, until)
    output_file(out, "--csv")
    exported = uc.feedback_export(ctx.wb, uc.FeedbackWindow(since=start, until=end))
    write_output(out, exported.csv, "--csv")
    click.echo(f"feedback: wrote {exported.answers} answers to {out}")


@feedback.command("sweep")
@click.pass_obj
def sweep(ctx: WorkbenchContext) -> None:
    """Mark answers with no follow-up for 10 minutes as abandoned (the page and summary do it too).

    This instance only; `workbench sweep` sweeps every instance and also indexes queued thoughts."""
    from core import usecases as uc

    swept = uc.sweep_instance(ctx.wb, uc.InstanceRequest())
    click.echo(f"feedback: {swept.abandoned_marked} answers marked abandoned, {swept.summarised} quiet "
               "conversations summarised" + (f" ({swept.note})" if swept.note else ""))


def json_summary(report: FeedbackReport) -> dict[str, Any]:
    """--json's document: the window as given (ISO 8601), the summary, and the groups when --by was."""
    payload: dict[str, Any] = {"instance": report.instance,
                               "since": report.since and report.since.isoformat(),
                               "until": report.until and report.until.isoformat(),
                               "summary": report.summary.model_dump(mode="json")}
    if report.by:
        payload["by"] = report.by
        payload["groups"] = report.groups
    return payload


def _fmt(v: float | None, spec: str = ".3f", suffix: str = "") -> str:
    return "—" if v is None else f"{v:{spec}}{suffix}"


def render_summary(s: FeedbackSummary) -> str:
    ci = f"95% CI [{_fmt(s.ci_low)}, {_fmt(s.ci_high)}]" if s.ci_low is not None else "95% CI —"
    ttn = "  ".join(f"{k} {_fmt(v, '.1f')}" for k, v in s.time_to_next_s.items())
    lines = [
        (f"answers            {s.answers}  (scored {s.scored}, awaiting follow-up {s.pending}, "
         f"final {s.final})"),
        f"mean score         {_fmt(s.mean_score)}  {ci}  n={s.scored}",
        f"continue rate      {_fmt(_pct(s.continue_rate), '.1f', '%')}  ({s.continued})",
        f"abandon rate       {_fmt(_pct(s.abandon_rate), '.1f', '%')}  ({s.abandoned})",
        f"correction rate    {_fmt(_pct(s.correction_rate), '.1f', '%')}  ({s.corrected})",
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


def render_groups(by: str, groups: list[dict[str, Any]]) -> str:
    """The per-group figures as a text table, one row per group."""
    import pandas as pd

    table = pd.DataFrame(groups, columns=[GROUP_KEY_COLUMN[by], *GROUP_COLUMNS])
    if by == "day" and not table.empty:  # ISO 8601 timestamps of midnight UTC: the date is enough
        table["day"] = table["day"].str[:10]
    table[GROUP_COLUMNS] = table[GROUP_COLUMNS].apply(pd.to_numeric)  # a figure missing in every group: NaN
    return table.to_string(index=False, float_format=lambda v: f"{v:.3f}", na_rep="—")


def _pct(v: float | None) -> float | None:
    return None if v is None else 100 * v
