"""`workbench import FILE...`: conversations, memories and past tasks from other systems, or the
workbench's own archive."""

from __future__ import annotations

import os
from pathlib import Path

import click

from core.cli.context import WorkbenchContext, instance_option
from core.cli.output import emit, output_file, private_file, tty_progress
from core.errors import InvalidInput

FORMATS_HELP = ("auto (default: told from the file's start), openai-jsonl, chatgpt, claude, locomo, "
                "memories-jsonl (also mem0's export), memories-csv, past-tasks, workbench-chain (a chain "
                "exported by `workbench chains export`), workbench-archive")


@click.command("import")
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--instance", default=None, callback=instance_option,
              help="Import into this instance (default: INSTANCE setting).")
@click.option("--format", "fmt", default="auto", show_default=True, help=f"One of {FORMATS_HELP}.")
@click.option("--dry-run", is_flag=True, help="Validate and report what the file holds, what the import would "
                                              "add to the instance and what it would leave out as deleted; "
                                              "write nothing.")
@click.option("--on-error", type=click.Choice(["stop", "skip"]), default="stop", show_default=True,
              help="stop: write nothing when any record is invalid; skip: import the valid ones and list "
                   "the invalid ones in the report file.")
@click.option("--report", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Where the invalid records are listed (JSON lines, readable by you alone) [with "
                   "--on-error skip: FILE.invalid.jsonl next to FILE; none for a --dry-run]. A file already "
                   "there is replaced only with --force, and FILE itself never.")
@click.option("--force", is_flag=True, help="Replace the --report file if it exists.")
@click.option("--include-system", is_flag=True, help="Keep system and tool messages of conversations.")
@click.option("--include-deleted", is_flag=True,
              help="Also import the conversations, messages and memories you deleted in this instance (left "
                   "out by default, so that deleting holds when you import your next export).")
@click.option("--user", "user_id", default=None, help="Past tasks in a folder: the user they were made for (an id such as "
              "maria@acme.com).")
@click.option("--task", default=None, help="Past tasks in a folder: their task type [note].")
@click.pass_obj
def import_(ctx: WorkbenchContext, files: tuple[Path, ...], instance: str | None, fmt: str, dry_run: bool,
            on_error: str, report: Path | None, force: bool, include_system: bool, include_deleted: bool,
            user_id: str | None, task: str | None) -> None:
    """Bring chat logs (OpenAI messages, ChatGPT or Claude exports, LoCoMo), memories (JSONL, CSV, mem0)
    or past tasks from FILES (a folder, for past tasks) into the instance, with their original times.

    Each file is validated whole first, every file before any is written. Importing a file again creates nothing new, and an interrupted
    import continues where it stopped; what you deleted in the instance is left out (and counted) unless
    --include-deleted; a --dry-run says what the import would add ("Adds 40 new conversations (1,204
    messages) and 312 messages to 6 conversations you already have; …"). Prints one JSON result per file,
    with the conversations it wrote by title and chain (the first 50, and `chains_total`); what it
    assumed of a file (times it does not give, NUL characters replaced, photos sent without text) and
    what it left out are also said on standard error, with progress when standard error is a terminal.
    """
    from core import usecases as uc
    from core.usecases.importing import import_files

    if report and len(files) > 1:
        raise click.UsageError("--report names one file: import one FILE at a time with it")
    if fmt not in uc.IMPORT_FORMATS:  # said as the option, not as the request's field ("format: Input should be …")
        raise InvalidInput(f"--format: unknown format {fmt!r}: use one of {', '.join(uc.IMPORT_FORMATS)}")
    # Before any file is imported; a link to nothing, a FIFO or a device is said by the import's check.
    if missing := [str(path) for path in files if not os.path.lexists(path)]:
        raise InvalidInput(f"{', '.join(missing)}: no such file or folder; nothing was imported")
    if report:
        if report.exists() and any(_same(report, path) for path in files):
            raise InvalidInput(f"--report: {str(report)!r} is the file being imported: give another path for "
                               "its invalid records")
        output_file(report, "--report", force=force)
    into = ctx.wb.settings.instance if instance is None else instance
    reports = {path: report_file(path, report, on_error, dry_run) for path in files}
    created: list[Path] = []
    refused: list[str] = []  # what the import, as asked, would refuse: a dry run exits 2 after every file
    try:
        for path, listed in reports.items():  # each made before any file is imported
            if listed is not None and listed not in created and _prepare_report(listed, path, bool(report)):
                created.append(listed)
        requests = [uc.ImportFile(path=path, instance=into, format=fmt, dry_run=dry_run, on_error=on_error,
                                  include_system=include_system, include_deleted=include_deleted,
                                  user_id=user_id, task=task, report=reports[path],
                                  stale_report=report_file(path, None, "skip", dry_run=False))
                    for path in files]
        for request, result in zip(requests, import_files(ctx.wb, requests, progress=tty_progress),
                                   strict=False):
            path = request.path
            emit(result)
            if result.adds:  # a dry run: what the import would add, the line a person reads first
                click.echo(f"{path.name}: {result.adds}", err=True)
            for note in result.notes:  # also in the JSON; said where a person at a terminal reads
                click.echo(f"{path.name}: {note}", err=True)
            if (out := result.outcome) is not None and out.chains_total > len(out.chains):
                click.echo(f"{path.name}: {out.chains_total:,} conversations written: \"chains\" lists the "
                           f"first {len(out.chains)}, and {out.chains_total - len(out.chains):,} more (all in "
                           "`workbench chains list`)", err=True)
            if result.report:
                n = result.preview.invalid
                click.echo(f"{path.name}: {n} invalid record{'s' if n != 1 else ''} listed in {result.report}",
                           err=True)
            if dry_run and result.restored is None and (verdict := result.preview.verdict(
                    on_error, report_file(path, report, on_error, dry_run=False))):
                said, refuses = verdict
                if refuses:
                    refused.append(said)
                else:
                    click.echo(said, err=True)
        if refused:
            raise InvalidInput("; ".join(refused))
    finally:
        for made in created:  # no invalid record to list: no file left behind
            if made.is_file() and made.stat().st_size == 0:
                made.unlink()


def _same(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def report_file(path: Path, report: Path | None, on_error: str, dry_run: bool) -> Path | None:
    """Where FILE's invalid records are listed: --report, else (with --on-error skip) FILE.invalid.jsonl
    next to FILE, wherever the command runs from; a dry run writes nothing it was not asked for. The full
    path, so the message naming it is enough to find it."""
    if report is not None:
        return Path(os.path.abspath(report))
    if on_error != "skip" or dry_run:
        return None
    source = Path(os.path.abspath(path))
    return source.parent / f"{source.name}.invalid.jsonl"


def _prepare_report(report: Path, path: Path, given: bool) -> bool:
    """Make the report, empty and 0600, before the import writes into it (`private_file`), so that a folder
    that cannot hold it is said before anything is imported: True if it was made. A file already there (an
    earlier report, or one --force lets replace) is left as it is until there is a record to list in it:
    a clean import had made the user's file 0600 though it wrote nothing there."""
    try:
        if report.is_file():
            if not os.access(report, os.W_OK):
                raise PermissionError(13, "Permission denied")
            return False
        if report.exists() and not report.is_dir():  # a folder: said by the error of opening it
            raise InvalidInput(f"{'--report: ' if given else f'{path.name}: its invalid records: '}{str(report)!r} "
                               "is not a regular file (a device, a FIFO or a socket): give --report PATH")
        return private_file(report)
    except OSError as e:
        if given:
            raise InvalidInput(f"--report: could not write {str(report)!r}: {e.strerror}") from e
        raise InvalidInput(f"{path.name}: its invalid records cannot be listed next to it in {str(report)!r} "
                           f"({e.strerror}): give --report PATH") from e
