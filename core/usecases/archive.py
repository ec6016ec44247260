"""Export a whole instance to one archive file; restore such an archive into an instance."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from core.archive.format import is_archive
from core.archive.instance import ExportResult, RestoreResult, export_instance, restore_instance
from core.errors import InvalidInput, WorkbenchError
from core.usecases.base import InstanceRequest, Progress

if TYPE_CHECKING:
    from core.runtime import Workbench

__all__ = ["ExportArchive", "ExportResult", "RestoreArchive", "RestoreResult", "export_archive", "is_archive",
           "restore_archive"]


class ExportArchive(InstanceRequest):
    out: Path
    with_vectors: bool = False


class RestoreArchive(InstanceRequest):
    path: Path
    dry_run: bool = False


def writable_output(out: Path) -> Path:
    """The archive's path when it can be written there; InvalidInput naming what to change, before any
    work is done, otherwise."""
    folder = out.parent if str(out.parent) else Path(".")
    if out.is_dir():
        raise InvalidInput(f"output: {out} is a folder; give a file name, e.g. {out / 'instance.zip'}")
    if not folder.is_dir():
        raise InvalidInput(f"output: folder {folder} does not exist; create it or choose another path")
    if out.exists() and not out.is_file():  # `--force` renamed the archive over /dev/full
        raise InvalidInput(f"output: {out} is not a regular file (a device, a FIFO or a socket): it is never "
                           "replaced; choose the path of a file")
    if not os.access(folder, os.W_OK | os.X_OK) or (out.exists() and not os.access(out, os.W_OK)):
        raise InvalidInput(f"output: {out} cannot be written (permission denied); choose another path")
    return out


def export_archive(wb: Workbench, req: ExportArchive, *, progress: Progress | None = None) -> ExportResult:
    """The whole instance (chains with thoughts and feedback, memories, memory banks, past tasks, fusion
    profiles; vectors only when asked) as one versioned archive at `req.out`, readable by its owner alone
    (0600). A file already there is replaced: the CLI asks for `--force` first, a caller checks itself."""
    out = writable_output(req.out)
    try:
        return export_instance(wb, req.instance_in(wb), out, with_vectors=req.with_vectors, progress=progress)
    except OSError as e:  # the disk full, a file size limit, the folder gone: the partial file is gone too
        # The readers cut off (their cursors) are let go now, while the servers run: held by this traceback,
        # they were closed at the interpreter's exit, after the command had stopped the servers, and printed
        # a traceback of the closed connection under the one line.
        seen: BaseException | None = e
        while seen is not None:
            seen.__traceback__, seen = None, seen.__context__
        raise WorkbenchError(f"could not write {out}: {e.strerror or type(e).__name__}; nothing was "
                             "written") from e


def restore_archive(wb: Workbench, req: RestoreArchive, *, progress: Progress | None = None) -> RestoreResult:
    """Restore an archive into an empty instance (or again into the one it was restored into: only what
    is missing is written). `dry_run` checks the archive and the instance and writes nothing."""
    return restore_instance(wb, req.path, req.instance_in(wb), dry_run=req.dry_run, progress=progress)
