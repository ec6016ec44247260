"""`workbench export OUT`: a whole instance as one archive file (`workbench import OUT` restores it)."""

from __future__ import annotations

from pathlib import Path

import click

from core.cli.context import WorkbenchContext, instance_option
from core.cli.output import emit, tty_progress
from core.errors import InvalidInput


@click.command("export")
@click.argument("out", type=click.Path(path_type=Path))
@click.option("--instance", default=None, callback=instance_option,
              help="The instance to export (default: INSTANCE setting).")
@click.option("--with-vectors", is_flag=True,
              help="Keep the embeddings (restored as they are when the same model is active; otherwise "
                   "memories are embedded again on restore).")
@click.option("--force", is_flag=True, help="Replace OUT if it exists.")
@click.pass_obj
def export(ctx: WorkbenchContext, out: Path, instance: str | None, with_vectors: bool, force: bool) -> None:
    """Write the whole instance to the archive OUT: chains with thoughts and feedback, memories, memory
    banks, past tasks, fusion profiles and the Tune page's relevance marks. Prints what it holds."""
    from core import usecases as uc

    # A folder, a device or a FIFO: the use case says to give a file's path (never replaced, even with --force).
    if out.is_file() and not force:
        raise InvalidInput(f"{out} exists: choose another name, or pass --force to replace it")
    request = uc.ExportArchive(out=out, instance=instance, with_vectors=with_vectors)
    emit(uc.export_archive(ctx.wb, request, progress=tty_progress))
