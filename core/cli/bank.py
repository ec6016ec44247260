"""`workbench bank list|add|query|stats|show|clear|delete`: memory banks."""

from __future__ import annotations

import click

from core.cli.confirm import confirmation_option
from core.cli.context import WorkbenchContext
from core.cli.output import emit

BANK_OPTION = click.option("--bank", "name", default="default", show_default=True, help="Memory bank name.")


@click.group("bank")
def bank() -> None:
    """Memory banks: an agent's step-by-step task memory, compressed into summaries."""


@bank.command("list")
@click.pass_obj
def list_banks(ctx: WorkbenchContext) -> None:
    """The instance's banks with their entry and summary counts."""
    from core import usecases as uc

    emit(uc.bank_list(ctx.wb, uc.InstanceRequest()))


@bank.command("add")
@BANK_OPTION
@click.option("--skill", "skill_name", default="", help="The skill that made the step (CommandSkill, …); "
              "optional, as over HTTP and MCP.")
@click.option("--thinking", default="")
@click.option("--command", default="")
@click.option("--result", default="")
@click.option("--summary", default="", help="Left empty, it is made from thinking, command and result.")
@click.option("--importance", type=float, default=0.5, show_default=True)
@click.option("--tag", "tags", multiple=True, help="Repeatable.")
@click.option("--step", "step_number", type=int, default=0, help="Step number (default: the next one).")
@click.option("--timestamp", default=None, help="When the step ran: ISO 8601, UTC unless it names a zone "
              "(default: now), as over HTTP and MCP; an agent's earlier steps keep their times.")
@click.option("--id", "entry_id", default=None, help="The entry's id (default: a new one); an id already used "
              "by another memory is refused.")
@click.option("--max-entries", type=int, default=None,
              help="The bank's size [default: the bank's own; 6 for a new one].")
@click.option("--compression-threshold", type=int, default=None,
              help="Live entries that make it compress its oldest half [default: the bank's own; 6 for a new one].")
@click.pass_obj
def add(ctx: WorkbenchContext, name: str, skill_name: str, thinking: str, command: str, result: str,
        summary: str, importance: float, tags: tuple[str, ...], step_number: int, timestamp: str | None,
        entry_id: str | None, max_entries: int | None, compression_threshold: int | None) -> None:
    """Add an entry; prints it as stored, with the compression it triggered (if any)."""
    from core import usecases as uc

    given = {k: v for k, v in (("timestamp", timestamp), ("id", entry_id)) if v is not None}  # else defaults
    entry = uc.MemoryEntry(skill_name=skill_name, thinking=thinking, command=command, result=result,
                           summary=summary, importance=importance, tags=list(tags), step_number=step_number,
                           **given)
    emit(uc.bank_add(ctx.wb, uc.BankAdd(bank=name, entry=entry, max_entries=max_entries,
                                        compression_threshold=compression_threshold)))


@bank.command("query")
@BANK_OPTION
@click.option("--keyword", "keywords", multiple=True, help="Any of them matches (case-insensitive).")
@click.option("--min-importance", type=float, default=0.0, show_default=True)
@click.option("--max-results", type=int, default=10, show_default=True)
@click.option("--tag", "tags", multiple=True)
# ISO 8601 read by the query itself, as over HTTP and MCP: with a time zone ("2024-05-03T09:00+02:00"), and a
# date alone being the whole day (click's DateTime refused the zone, and made "--date-to 2024-05-03" midnight).
@click.option("--date-from", default=None, help="ISO 8601 date or time (UTC unless it names a zone); a date "
              "alone: from the start of that day.")
@click.option("--date-to", default=None, help="ISO 8601 date or time (UTC unless it names a zone); a date "
              "alone: to the end of that day.")
@click.pass_obj
def query(ctx: WorkbenchContext, name: str, keywords: tuple[str, ...], min_importance: float,
          max_results: int, tags: tuple[str, ...], date_from: str | None, date_to: str | None) -> None:
    """Live entries and summaries matching the query, by importance then time."""
    from core import usecases as uc

    q = uc.MemoryQuery(keywords=list(keywords), min_importance=min_importance, max_results=max_results,
                       tags=list(tags), date_from=date_from, date_to=date_to)
    emit(uc.bank_query(ctx.wb, uc.BankQuery(bank=name, query=q)))


@bank.command("stats")
@BANK_OPTION
@click.pass_obj
def stats(ctx: WorkbenchContext, name: str) -> None:
    """Counts, settings and compression totals of a bank."""
    from core import usecases as uc

    emit(uc.bank_stats(ctx.wb, uc.BankRef(bank=name)))


@bank.command("show")
@BANK_OPTION
@click.pass_obj
def show(ctx: WorkbenchContext, name: str) -> None:
    """Every entry, summary and compression event of a bank."""
    from core import usecases as uc

    emit(uc.bank_snapshot(ctx.wb, uc.BankRef(bank=name)))


@bank.command("clear")
@BANK_OPTION
@confirmation_option("Remove every entry and summary of this bank?", "nothing was removed")
@click.pass_obj
def clear(ctx: WorkbenchContext, name: str) -> None:
    """Remove every entry, summary and compression event from every store (the bank stays)."""
    from core import usecases as uc

    emit(uc.bank_clear(ctx.wb, uc.BankRef(bank=name)))


@bank.command("delete")
@BANK_OPTION
@confirmation_option("Delete this bank and everything in it?")
@click.pass_obj
def delete(ctx: WorkbenchContext, name: str) -> None:
    """Delete the bank with everything in it, from every store."""
    from core import usecases as uc

    emit(uc.bank_delete(ctx.wb, uc.BankRef(bank=name)))
