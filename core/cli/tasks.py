"""`workbench tasks ingest|search|list|delete|history|embed`: the past tasks of the internal memory tool."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from core.cli.context import WorkbenchContext
from core.cli.output import ProgressBar, emit
from core.errors import InvalidInput

if TYPE_CHECKING:
    from core.usecases import InternalMemoryResult, PastToolExecution

USER_HELP = "The user whose past tasks these are: an id such as maria@acme.com or maria-k."
# The filter the search and the listing share: by task type and by the date a text was produced (its latest
# version's), the bounds read as `workbench feedback summary --since/--until` reads them.
DATE_HELP = ("a day (2025-11-01), a month (2025-11), a year, 'today', 'last week', '7 days ago' or an ISO "
             "time; UTC")


def filter_options(command):
    """--type (repeatable), --since and --until, as `tasks search` and `tasks list` both take them."""
    command = click.option("--until", help="Only texts produced up to this time; a day or period counts "
                           "whole (--until 2025-11-30 includes the 30th).")(command)
    command = click.option("--since", help=f"Only texts produced from this time on: {DATE_HELP}.")(command)
    return click.option("--type", "task_types", multiple=True, help="Only texts of this task type, as "
                        "stored ('email', 'meeting minutes'); repeatable. An unknown type is refused, "
                        "naming the types there are.")(command)


def read_filter(task_types: tuple[str, ...], since: str | None, until: str | None) -> dict[str, Any]:
    """The filter's request fields; a bound that cannot be read is refused naming its option."""
    from core import usecases as uc

    start, end = uc.read_window(since, until, ("--since", "--until"))
    return {"task_types": list(task_types), "date_from": start, "date_to": end}


@click.group("tasks")
def tasks() -> None:
    """Past tasks: the texts produced for each user, and the internal memory tool's search."""


@tasks.command("ingest")
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--user", "user_id", required=True, help="The user the texts were produced for: an id such as "
              "maria@acme.com or maria-k.")
@click.option("--task", required=True, help="Task type, e.g. 'meeting minutes', 'email', 'note', 'plan'.")
@click.option("--icon", default=None, help="Icon of the task type (default: one chosen for the type).")
@click.pass_obj
def ingest(ctx: WorkbenchContext, files: tuple[Path, ...], user_id: str, task: str, icon: str | None) -> None:
    """Store Markdown or text FILES, one produced text each.

    The first line is the title when it is short. A file of the same name ingested again for the
    same user becomes a new version of the same task execution (as an upload on the page does).
    """
    from core import usecases as uc

    if folders := [path for path in files if path.is_dir()]:  # click said only "… is a directory"
        raise InvalidInput(f"{folders[0]}: a folder; `tasks ingest` takes files: to bring in a folder of past "
                           f"tasks, run `workbench import {shlex.quote(str(folders[0]))} --user "
                           f"{shlex.quote(user_id)} --task {shlex.quote(task)}`")
    request = uc.IngestFiles(files=[uc.TextFile(path=path) for path in files], user_id=user_id, task=task,
                             icon=icon)
    # Every file is read and checked before anything is stored: a bad one fails with one line.
    with ProgressBar("embedding and storing", terminal_only=True) as step:
        stored = uc.ingest_files(ctx.wb, request, progress=step)
    emit([{"file": s.file, **s.model_dump(exclude={"file"})} for s in stored])


@tasks.command("search")
@click.argument("query")
@click.option("--user", "user_id", required=True, help=USER_HELP)
@click.option("--max-distance", type=float, default=None, help="Cosine distance, strictly below [the embedder's default: "
              "0.2 for OpenAI models, 0.65 for WordLlama].")
@click.option("--n-max", type=int, default=None, help="At most this many past tasks [10].")
@click.option("--execution-id", default=None, help="Tool execution id; each may make one query.")
@filter_options
@click.pass_obj
def search(ctx: WorkbenchContext, query: str, user_id: str, max_distance: float | None, n_max: int | None,
           execution_id: str | None, task_types: tuple[str, ...], since: str | None, until: str | None) -> None:
    """Print the internal memory tool's result for QUERY: the key points of each past task found, with
    its distance and date. --type, --since and --until narrow the search to some task types and dates."""
    from core import usecases as uc

    limits = {k: v for k, v in {"max_distance": max_distance, "n_max": n_max}.items() if v is not None}
    request = uc.PastTaskQuery(instance=ctx.wb.settings.instance, user_id=user_id, query=query, **limits,
                               **read_filter(task_types, since, until))
    result = uc.internal_memory(ctx.wb, request, execution_id=execution_id)
    emit(result.references)
    for line in notes(result):
        click.echo(line, err=True)


@tasks.command("list")
@click.option("--user", "user_id", required=True, help=USER_HELP)
@click.option("--limit", type=click.IntRange(1, 10_000), default=100, show_default=True)
@filter_options
@click.pass_obj
def list_texts(ctx: WorkbenchContext, user_id: str, limit: int, task_types: tuple[str, ...], since: str | None,
               until: str | None) -> None:
    """The user's produced texts, newest first (latest version; deleted ones marked); --type, --since and
    --until keep those of some task types, produced in a period."""
    from core import usecases as uc

    request = uc.ListTexts(user_id=user_id, limit=limit, with_text=False, **read_filter(task_types, since, until))
    texts = uc.list_texts(ctx.wb, request)
    emit([t.model_dump(mode="json", exclude={"production"}) for t in texts])
    if label := request.label():
        click.echo(f"{len(texts)} produced text{'' if len(texts) == 1 else 's'} ({label})", err=True)


@tasks.command("delete")
@click.argument("execution_pk", type=int)
@click.option("--user", "user_id", required=True, help=USER_HELP)
@click.option("--restore", is_flag=True, help="Undo: make the text searchable again.")
@click.pass_obj
def delete(ctx: WorkbenchContext, execution_pk: int, user_id: str, restore: bool) -> None:
    """Mark the produced text of a task execution deleted by its user (never searched again)."""
    from core import usecases as uc

    uc.mark_deleted(ctx.wb, uc.MarkDeleted(user_id=user_id, execution_pk=execution_pk,
                                           deleted=not restore))
    click.echo(f"past task {execution_pk}: {'restored' if restore else 'deleted'}")


@tasks.command("history")
@click.option("--user", "user_id", required=True, help=USER_HELP)
@click.option("--limit", type=click.IntRange(1, 1000), default=20, show_default=True)
@click.option("--contains", help="Only the queries holding this text, in any letter case.")
@click.pass_obj
def history(ctx: WorkbenchContext, user_id: str, limit: int, contains: str | None) -> None:
    """The user's past internal memory queries and their results, newest first."""
    from core import usecases as uc

    request = uc.HistoryRequest(user_id=user_id, limit=limit, contains=contains)
    emit([history_row(h) for h in uc.tool_history(ctx.wb, request)])


@tasks.command("embed")
@click.pass_obj
def embed(ctx: WorkbenchContext) -> None:
    """Embed every version lacking a vector of the active embedding model (after a model change)."""
    from core import usecases as uc

    result = uc.embed_pending(ctx.wb, uc.EmbedPending(),
                              progress=lambda n: click.echo(f"embedded {n}", err=True))
    click.echo(f"past tasks: {result.embedded} versions embedded with {result.model}")


def history_row(h: PastToolExecution) -> dict[str, Any]:
    row: dict[str, Any] = {"execution_id": h.execution_id, "query": h.query, "status": h.status,
                           "created_at": h.created_at.isoformat(), "error": h.error}
    if h.result:
        row |= {"max_distance": h.result.query.max_distance, "n_max": h.result.query.n_max,
                "filter": h.result.query.label(),
                "nothing_within": h.result.nothing_within,
                "results": [r.model_dump(mode="json") for r in h.result.references]}
    return row


def notes(result: InternalMemoryResult) -> list[str]:
    """What the JSON list does not say: nothing within the distance, key points that failed or were
    dropped (printed on standard error)."""
    out = []
    if msg := result.nothing_within:
        out.append(msg)
    elif label := result.query.label():
        out.append(f"{len(result.search.hits)} of the {result.search.candidates} past tasks searched ({label}) "
                   f"within distance {result.query.max_distance:.2f}")
    kp = result.keypoints
    if kp.note:
        out.append(kp.note)
    for failed in kp.failed_batches:
        out.append(f"key points failed for past tasks {failed.user_task_execution_pks}: {failed.reason}")
    if kp.dropped:
        out.append(f"judged irrelevant by the LLM: past tasks {kp.dropped}")
    return out
