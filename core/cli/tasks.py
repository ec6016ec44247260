"""`workbench tasks ingest|search|list|delete|history|embed`: the past tasks of the internal memory tool."""

from __future__ import annotations

from pathlib import Path

import click

from core.errors import InvalidInput


def register(cli: click.Group) -> None:
    @cli.group()
    def tasks() -> None:
        """Past tasks: the texts produced for each user, and the internal memory tool's search."""

    @tasks.command("ingest")
    @click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
    @click.option("--user", "user_id", required=True, help="The user the texts were produced for.")
    @click.option("--task", required=True, help="Task type, e.g. 'meeting minutes', 'email', 'note', 'plan'.")
    @click.option("--icon", default=None, help="Icon of the task type (default: one chosen for the type).")
    @click.pass_obj
    def ingest(ctx, files: tuple[Path, ...], user_id: str, task: str, icon: str | None) -> None:
        """Store Markdown or text FILES, one produced text each.

        The first line is the title when it is short. A file of the same name ingested again for the
        same user becomes a new version of the same task execution (as an upload on the page does).
        """
        from core.cli import emit
        from core.past_tasks.store import PastTaskStore

        items = [_read(path, ctx, user_id, task, icon) for path in files]
        wb = ctx.wb
        store = PastTaskStore(wb.pool(), wb.embedder)
        with click.progressbar(length=len(items), label="embedding and storing", show_pos=True,
                               file=click.get_text_stream("stderr")) as bar:
            last = [0]

            def step(done: int, total: int) -> None:
                bar.update(done - last[0])
                last[0] = done

            stored = store.ingest(items, progress=step)
        emit([{"file": str(p), **s.model_dump()} for p, s in zip(files, stored, strict=True)])

    @tasks.command("search")
    @click.argument("query")
    @click.option("--user", "user_id", required=True)
    @click.option("--max-distance", type=float, default=None, help="Cosine distance, strictly below [0.2].")
    @click.option("--n-max", type=int, default=None, help="At most this many past tasks [10].")
    @click.option("--execution-id", default=None, help="Tool execution id; each may make one query.")
    @click.pass_obj
    def search(ctx, query: str, user_id: str, max_distance: float | None, n_max: int | None,
               execution_id: str | None) -> None:
        """Print the internal memory tool's result for QUERY: the seed's list, plus distance and date."""
        from core.cli import emit
        from core.past_tasks.search import run_internal_memory

        q = _query(ctx, query, user_id, max_distance, n_max)
        result = run_internal_memory(ctx.wb, q, execution_id=execution_id)
        emit([r.model_dump(mode="json") for r in result.references])
        for line in _notes(result):
            click.echo(line, err=True)

    @tasks.command("list")
    @click.option("--user", "user_id", required=True)
    @click.option("--limit", type=click.IntRange(1, 10_000), default=100, show_default=True)
    @click.pass_obj
    def list_(ctx, user_id: str, limit: int) -> None:
        """The user's produced texts, newest first (latest version; deleted ones marked)."""
        from core.cli import emit
        from core.past_tasks.store import PastTaskStore

        wb = ctx.wb
        texts = PastTaskStore(wb.pool(), wb.embedder).list_texts(_instance(ctx), _user(user_id), limit=limit)
        emit([t.model_dump(mode="json", exclude={"production"}) for t in texts])

    @tasks.command("delete")
    @click.argument("execution_pk", type=int)
    @click.option("--user", "user_id", required=True)
    @click.option("--restore", is_flag=True, help="Undo: make the text searchable again.")
    @click.pass_obj
    def delete(ctx, execution_pk: int, user_id: str, restore: bool) -> None:
        """Mark the produced text of a task execution deleted by its user (never searched again)."""
        from core.past_tasks.store import PastTaskStore

        wb = ctx.wb
        PastTaskStore(wb.pool(), wb.embedder).mark_deleted(_instance(ctx), _user(user_id), execution_pk,
                                                          deleted=not restore)
        click.echo(f"past task {execution_pk}: {'restored' if restore else 'deleted'}")

    @tasks.command("history")
    @click.option("--user", "user_id", required=True)
    @click.option("--limit", type=click.IntRange(1, 1000), default=20, show_default=True)
    @click.pass_obj
    def history_(ctx, user_id: str, limit: int) -> None:
        """The user's past internal memory queries and their results, newest first."""
        from core.cli import emit
        from core.past_tasks.search import history

        emit([{"execution_id": h.execution_id, "query": h.query, "status": h.status,
               "created_at": h.created_at.isoformat(), "error": h.error,
               **({"max_distance": h.result.query.max_distance, "n_max": h.result.query.n_max,
                   "nothing_within": h.result.nothing_within(),
                   "results": [r.model_dump(mode="json") for r in h.result.references]} if h.result else {})}
              for h in history(ctx.wb, _instance(ctx), _user(user_id), limit)])

    @tasks.command("embed")
    @click.pass_obj
    def embed(ctx) -> None:
        """Embed every version lacking a vector of the active embedding model (after a model change)."""
        from core.past_tasks.store import PastTaskStore

        wb = ctx.wb
        done = PastTaskStore(wb.pool(), wb.embedder).embed_pending(
            _instance(ctx), progress=lambda n: click.echo(f"embedded {n}", err=True))
        click.echo(f"past tasks: {done} versions embedded with {wb.embedder.name}")


def _instance(ctx) -> str:
    return ctx.wb.settings.instance  # building the Workbench connects to nothing yet


def _user(user_id: str) -> str:
    from core.ids import validate_id

    return validate_id(user_id, "--user")


def _read(path: Path, ctx, user_id: str, task: str, icon: str | None):
    """Validate everything before a server starts: a bad file or option fails fast with one line."""
    from pydantic import ValidationError

    from core.errors import explain_validation
    from core.past_tasks.store import TEXT_SUFFIXES, ProducedTextInput, text_from_file

    if path.suffix.lower() not in TEXT_SUFFIXES:
        raise InvalidInput(f"{path}: only Markdown or text files ({', '.join(TEXT_SUFFIXES)}) "
                           "can be ingested")
    try:
        content = path.read_text(encoding="utf-8")
    except FileNotFoundError as e:
        raise InvalidInput(f"{path}: no such file") from e
    except (UnicodeDecodeError, OSError) as e:
        raise InvalidInput(f"{path}: cannot be read as UTF-8 text ({type(e).__name__})") from e
    if not content.strip():
        raise InvalidInput(f"{path}: the file is empty")
    title, production = text_from_file(path.name, content)
    try:
        return ProducedTextInput(instance=_instance(ctx), user_id=user_id, task=task, task_icon=icon,
                                 title=title, production=production, source_key=path.name)
    except ValidationError as e:
        raise InvalidInput(f"{path}: {explain_validation(e)}") from None


def _query(ctx, query: str, user_id: str, max_distance: float | None, n_max: int | None):
    from pydantic import ValidationError

    from core.errors import explain_validation
    from core.past_tasks.search import PastTaskQuery

    given = {k: v for k, v in {"max_distance": max_distance, "n_max": n_max}.items() if v is not None}
    try:
        return PastTaskQuery(instance=_instance(ctx), user_id=user_id, query=query, **given)
    except ValidationError as e:
        raise InvalidInput(explain_validation(e)) from None


def _notes(result) -> list[str]:
    out = []
    if msg := result.nothing_within():
        out.append(msg)
    kp = result.keypoints
    if kp.note:
        out.append(kp.note)
    for failed in kp.failed_batches:
        out.append(f"key points failed for past tasks {failed.user_task_execution_pks}: {failed.reason}")
    if kp.dropped:
        out.append(f"judged irrelevant by the LLM: past tasks {kp.dropped}")
    return out
