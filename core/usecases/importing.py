"""Bring your own data: import conversations, memories and past tasks from a file (or a folder), or
restore the workbench's own archive.

Every import validates the whole file first (streamed), then writes; a dry run stops after the
validation. See `core/importing/` for the formats and `core/importing/runner.py` for the passes.
"""

from __future__ import annotations

import functools
import os
import re
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import psycopg
import redis
from pydantic import BaseModel, Field

from core.errors import InvalidInput, ServiceUnavailable, outage
from core.formation.run import unformed
from core.ids import UserId
from core.importing.detect import (
    ARCHIVE,
    IMPORTABLE,
    Detected,
    detect,
    not_importable,
    reader,
    shaped,
    unzip_export,
    zipped_export,
)
from core.importing.records import InvalidRecord, content_id
from core.importing.runner import (
    ImportAdds,
    ImportCounts,
    ImportOutcome,
    ImportPreview,
    Lookup,
    is_report,
    refusal,
    validate,
    write,
)
from core.importing.source import file_hash, file_time
from core.services.embedded_redis import EmbeddedRedis
from core.services.private import private_dir
from core.usecases.archive import RestoreArchive, RestoreResult, is_archive, restore_archive
from core.usecases.base import InstanceRequest, Progress

if TYPE_CHECKING:
    from core.runtime import Workbench

__all__ = ["IMPORT_FORMATS", "ImportAdds", "ImportCounts", "ImportOutcome", "ImportPreview", "InvalidRecord"]

UPLOAD_KEPT_S = 3600.0  # an upload previewed and never imported is removed after this
IMPORT_FORMATS: tuple[str, ...] = ("auto", *IMPORTABLE)


class ImportFile(InstanceRequest):
    """A file (or, for past tasks, a folder) to import into the instance."""

    path: Path
    format: Literal["auto", "openai-jsonl", "chatgpt", "claude", "locomo", "memories-jsonl", "memories-csv",
                    "past-tasks", "workbench-chain", "workbench-archive"] = "auto"
    include_system: bool = Field(False, description="keep system and tool messages (as user thoughts marked "
                                                    "[system] / [tool])")
    user_id: UserId | None = Field(None, description="past tasks: the user a folder's texts were produced for")
    task: str | None = Field(None, description="past tasks: the task type (default 'note')")
    on_error: Literal["stop", "skip"] = Field("stop", description="stop: write nothing when any record is "
                                              "invalid; skip: write the valid ones")
    dry_run: bool = False
    report: Path | None = Field(None, description="where every invalid record is listed (JSON lines)")
    include_deleted: bool = Field(False, description="also import the conversations, messages and memories "
                                  "deleted in this instance since an earlier import (by default left out: "
                                  "deleting holds)")
    stale_report: Path | None = Field(None, description="where an earlier import of this file listed its invalid "
                                      "records (the CLI's FILE.invalid.jsonl): removed, if it is such a report, "
                                      "once an import finds none, so that it no longer lists records the file "
                                      "does not hold")


AGAIN = "run the same import again: it continues where it stopped and writes nothing twice"


class ImportInterrupted(KeyboardInterrupt):
    """Ctrl-C during an import's write pass, with what had been stored by then (the CLI says it)."""


FORM_IMPORTED = ("the imported messages are found as they were said; to form their observations, corrections "
                 "and session summaries, as live turns form them, run `workbench formation run` (or Form "
                 "memories on the Import page)")


class ImportResult(BaseModel):
    instance: str
    preview: ImportPreview
    dry_run: bool
    outcome: ImportOutcome | None = Field(None, description="None for a dry run, or an archive restored")
    restored: RestoreResult | None = Field(None, description="the restore's result, for a workbench archive")
    report: str | None = Field(None, description="the file listing the invalid records, if written")
    next_step: str | None = Field(None, description="what is left to do, if anything: imported conversations "
                                                    "get their observations, corrections and summaries from "
                                                    "`workbench formation run`")
    notes: list[str] = Field([], description="what the import assumed or changed of the file's content, once "
                                             "for the whole file: times assumed, NUL characters replaced, "
                                             "attachments sent alone; and what it left out as deleted")
    adds: str | None = Field(None, description="a dry run: what the import would add to the instance, in words "
                                             "(`ImportPreview.adds_said`; counted in `preview.adds`), unless it "
                                             "would write nothing; for an archive, what it holds (counted in "
                                             "`restored`)")


def import_preview(wb: Workbench, req: ImportFile) -> ImportPreview:
    """The validation pass alone, the file looked up in the instance as it is read: the detected format,
    what the file holds, the first errors, what the import would leave out as deleted and what it would add.
    A workbench archive is checked as it is restored: its preview names the format only."""
    if _restores(req):  # what restoring it would do, as a dry run of the restore says it
        restore = restore_archive(wb, RestoreArchive(path=req.path, instance=req.instance_in(wb), dry_run=True))
        return _archive_preview(req.path, restore)
    look_up = Lookup(wb, req.instance_in(wb))
    preview, _ = _validated(req, upload=_is_upload(wb, req.path), look_up=look_up)
    if look_up.failed is not None:
        raise look_up.failed
    return preview


def import_file(wb: Workbench, req: ImportFile, *, progress: Progress | None = None) -> ImportResult:
    """Validate, then (unless a dry run) write. InvalidInput, writing nothing, when the file cannot be
    read, holds no record, or holds an invalid one with `on_error="stop"`."""
    if _restores(req):
        return _restore(wb, req, req.instance_in(wb), progress)
    checked = _check(wb, req, progress)
    if isinstance(checked, ImportResult):  # a dry run
        return checked
    if checked.preview.refused(req.on_error):
        raise InvalidInput(refusal(checked.preview))
    return _import_checked(wb, checked, progress)


def import_files(wb: Workbench, reqs: list[ImportFile], *, progress: Progress | None = None
                 ) -> Iterator[ImportResult]:
    """Several files, each result as its file is done. Every file is validated before any is written: when
    one cannot be imported as asked, InvalidInput says why of each such file, and nothing is written (one bad
    file among three had stopped the import after the first was written, with "nothing was written"). A dry
    run checks each in turn, as `import_file` does."""
    if len(reqs) == 1 or any(req.dry_run for req in reqs):
        for req in reqs:
            yield import_file(wb, req, progress=progress)
        return
    checked: list[_Checked | ImportFile] = []
    problems: list[str] = []
    for req in reqs:
        try:
            if _restores(req):  # an archive is checked as its restore checks it, writing nothing
                restore_archive(wb, RestoreArchive(path=req.path, instance=req.instance_in(wb), dry_run=True))
                checked.append(req)
                continue
            one = _check(wb, req, progress)
        except InvalidInput as e:
            problems.append(str(e))
            continue
        assert isinstance(one, _Checked)
        if one.preview.refused(req.on_error):
            problems.append(refusal(one.preview))
        checked.append(one)
    if problems:
        raise InvalidInput(f"{'; '.join(p.rstrip('.') for p in problems)}. None of the {len(reqs)} files was "
                           "imported: each is checked before any is written")
    for one in checked:
        if isinstance(one, ImportFile):
            yield _restore(wb, one, one.instance_in(wb), progress)
        else:
            yield _import_checked(wb, one, progress)


@dataclass
class _Checked:
    """A file validated for an import that writes: what the write pass needs of it."""

    req: ImportFile
    instance: str
    upload: bool
    preview: ImportPreview
    read: Callable


def _check(wb: Workbench, req: ImportFile, progress: Progress | None) -> _Checked | ImportResult:
    """The validation pass: for a dry run, its result; else what the write pass needs."""
    instance = req.instance_in(wb)
    _report_apart(req)
    upload = _is_upload(wb, req.path)
    step = "checking the file" if upload else f"checking {req.path.name}"
    # The whole file is read once before anything is written: a large export takes seconds, counted.
    counted = (lambda n: progress(n, 0, step)) if progress else None
    # A dry run looks the file up in the instance as it is read: what the import would leave out as deleted,
    # as its outcome would count it, and what it would add.
    look_up = Lookup(wb, instance) if req.dry_run else None
    preview, read = _validated(req, upload=upload, counted=counted, look_up=look_up)
    if progress:
        progress(preview.records, preview.records, step)
    if look_up is None:
        return _Checked(req, instance, upload, preview, read)
    report = _report_of(req, preview)
    if (e := look_up.failed) is not None:  # the file is checked all the same
        service = look_up.unreached
        return ImportResult(instance=instance, preview=preview, dry_run=True, report=report,
                            notes=[*preview.notes(), (f"What is new here and what you deleted were not looked "
                                   f"up ({outage(e, service)}); an import, which needs {service} too, leaves "
                                   "out what you deleted.")])
    return ImportResult(instance=instance, preview=preview, dry_run=True, report=report,
                        notes=preview.notes(include_deleted=req.include_deleted),
                        adds=preview.adds_said(req.on_error, include_deleted=req.include_deleted))


def _report_of(req: ImportFile, preview: ImportPreview) -> str | None:
    return str(req.report) if req.report and preview.invalid else None


def _report_apart(req: ImportFile) -> None:
    """The report never replaces the file it lists the records of (`--report FILE` did, the data lost)."""
    if req.report is None:
        return
    try:
        same = req.report.exists() and os.path.samefile(req.report, req.path)
    except OSError:
        same = False
    if same:
        raise InvalidInput(f"--report: {str(req.report)!r} is {req.path.name}, the file being imported: give "
                           "another path for its invalid records")


def _import_checked(wb: Workbench, checked: _Checked, progress: Progress | None) -> ImportResult:
    """The write pass of a file validated (`_check`) and not refused."""
    req, instance, preview = checked.req, checked.instance, checked.preview
    outcome = _written(wb, instance, checked.read, preview, progress, include_deleted=req.include_deleted)
    discard_upload(wb, req.path)
    notes = []
    if not preview.invalid and req.stale_report is not None and is_report(req.stale_report):
        req.stale_report.unlink(missing_ok=True)
        notes.append(f"Removed {req.stale_report}, where an earlier import listed invalid records: this file "
                     "has none now.")
    # Imported chains are indexed in bulk, without the formation a live turn gets (it would take the import
    # several times as long): said, not left for the user to find out; after a re-import that added nothing
    # too, while the conversations it holds are not formed yet.
    unformed_chats = outcome.created.messages or (preview.counts.messages and unformed(wb, instance))
    formation = FORM_IMPORTED if unformed_chats else None
    return ImportResult(instance=instance, preview=preview, dry_run=False, outcome=outcome,
                        report=_report_of(req, preview), next_step=formation,
                        notes=preview.notes(dating=bool(outcome.created.messages)) + outcome.notes()
                        + _continued(outcome) + notes)


def _continued(outcome: ImportOutcome) -> list[str]:
    """Said when the import continued one that was interrupted: else a run that stored nothing new but indexed
    every message the interrupted one had stored said only "created 0"."""
    n = outcome.resumed_after
    if not n:
        return []
    return [(f"continued an interrupted import of this file: the {n:,} records it had stored were kept, and "
             "their messages indexed where they were not yet")]


def _written(wb: Workbench, instance: str, read: Callable, preview: ImportPreview, progress: Progress | None, *,
             include_deleted: bool) -> ImportOutcome:
    """The write pass. Stopped midway (Ctrl-C, a server lost, a full disk), it says how far it got and that
    the same import continues from there: a bare "aborted", or "Redis is unavailable, check that it runs"
    while it ran and the disk was full, left the user guessing what was stored and what to do."""
    reached = [0]

    def step(done: int, total: int, what: str) -> None:
        if what == "importing" and total:
            reached[0] = done
        if progress:
            progress(done, total, what)

    redis_log = EmbeddedRedis(wb.settings.data_dir) if wb.settings.redis_embedded else None
    since = redis_log.log_size() if redis_log else 0
    try:
        return write(wb, instance, read, preview, progress=step, include_deleted=include_deleted)
    except KeyboardInterrupt as e:
        raise ImportInterrupted(f"{_how_far(preview, reached[0])}; {AGAIN}") from e
    except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, psycopg.OperationalError,
            ServiceUnavailable) as e:
        service = (e.service if isinstance(e, ServiceUnavailable)
                   else "Postgres" if isinstance(e, psycopg.Error) else "Redis")
        full = (isinstance(e, psycopg.errors.DiskFull) or isinstance(e.__cause__, psycopg.errors.DiskFull)
                or (service == "Redis" and redis_log is not None and redis_log.stopped_writing(since)))
        cause = (f"the disk holding {wb.settings.data_dir} is full: {service} could not write there"
                 if full else outage(e, service))
        then = "free space there, then " if full else f"once {service} runs again, "
        raise ServiceUnavailable(service, f"{_how_far(preview, reached[0])} ({cause}); {then}{AGAIN}") from e


def _how_far(preview: ImportPreview, done: int) -> str:
    """"the import of big.jsonl stopped after 400 of 2,998 conversations were stored, …": conversations are
    stored (in Redis) batch by batch as the checkpoint counts them; memories only reach the index, which keeps
    a new instance's rows once the whole load completes, so no count of them is said."""
    counts, total = preview.counts, preview.records - preview.invalid
    kind = ("conversation" if counts.conversations else "memory" if counts.memories else "past task")
    kind = kind if total == 1 else {"memory": "memories"}.get(kind, f"{kind}s")
    name = Path(preview.file).name
    if counts.conversations and done:
        return (f"the import of {name} stopped after {done:,} of {total:,} conversations were stored, not all "
                "of them searchable yet")
    return f"the import of {name} stopped part-way through its {total:,} {kind}"


def keep_upload(wb: Workbench, name: str, data: bytes | memoryview, key: str) -> Path:
    """An uploaded file kept under the data directory, the owner's alone (0600 in a 0700 folder), so the
    import can stream it and an interrupted one can continue; `import_file` removes it once imported, and
    an upload left unimported goes after `UPLOAD_KEPT_S` (`prune_uploads`). `key` tells two uploads apart
    (the page's upload id); the name is kept, as the format is told partly from it."""
    folder = private_dir(Path(wb.settings.data_dir) / "uploads")
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", Path(name).name)[-100:] or "upload"
    path = folder / f"{re.sub(r'[^A-Za-z0-9-]+', '_', key)[:64]}-{safe}"
    prune_uploads(wb, keep=path)
    if path.exists():
        os.utime(path)  # still on a page: kept as long as it is shown
    else:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(data)
    return path


def prune_uploads(wb: Workbench, *, keep: Path | None = None, older_than_s: float = UPLOAD_KEPT_S) -> int:
    """Remove the uploads not changed for `older_than_s` (previewed, never imported: a closed tab leaves
    its file behind), but `keep`; returns how many. An interrupted import continues from its checkpoint
    with the file uploaded again (the checkpoint is the file's hash, not its copy)."""
    folder = Path(wb.settings.data_dir) / "uploads"
    cutoff = time.time() - older_than_s
    removed = 0
    for path in folder.glob("*") if folder.is_dir() else ():
        try:
            if path != keep and path.is_file() and path.stat().st_mtime < cutoff:
                path.unlink()
                removed += 1
        except FileNotFoundError:  # another process pruned it meanwhile
            continue
    return removed


def discard_upload(wb: Workbench, path: Path) -> None:
    """An upload's copy goes once its import is complete (deleting what was imported must leave no copy),
    or when the page no longer shows it (its file taken off the page, or replaced by another)."""
    if _is_upload(wb, path):
        path.unlink(missing_ok=True)


def _is_upload(wb: Workbench, path: Path) -> bool:
    """Whether `path` is the page's copy of an uploaded file (`keep_upload`)."""
    return path.parent == Path(wb.settings.data_dir) / "uploads"


def _validated(req: ImportFile, *, upload: bool = False, counted: Callable[[int], None] | None = None,
               look_up: Lookup | None = None) -> tuple[ImportPreview, Callable]:
    given = path = req.path.expanduser()
    if (why := not_importable(path)) is not None:
        raise InvalidInput(why)
    # ChatGPT's data export as downloaded, a zip: its conversations.json is read from a copy in a private
    # temporary folder, which goes with the reader (it said "the file holds NUL bytes … save it as UTF-8").
    unzipped = None
    if req.format in ("auto", "chatgpt") and path.is_file() and (inner := zipped_export(path)) is not None:
        unzipped = tempfile.TemporaryDirectory(prefix="workbench-import-")
        path = unzip_export(given, inner, Path(unzipped.name))
    found: Detected = detect(path) if req.format == "auto" else shaped(path, req.format)
    # The time given to conversations without any, fixed once so both passes give the same: the file's
    # last change; an upload's copy has no time of the user's file (a browser sends none), so the import's.
    undated = (datetime.now(UTC), "import") if upload else file_time(path)
    read = reader(path, found, include_system=req.include_system, user_id=req.user_id, task=req.task,
                  undated_at=undated[0])
    if unzipped is not None:
        read = functools.partial(_kept_while_read, read, unzipped)
    sha = file_hash(path) if path.is_file() else _folder_hash(path)
    return validate(read, given, found, sha, errors_to=req.report, undated=undated, counted=counted,
                    look_up=look_up), read


def _kept_while_read(read: Callable, unzipped: tempfile.TemporaryDirectory) -> Iterator:
    """`read()`, with the unzipped copy it reads held as long as the reader is (then removed)."""
    return read()


def _folder_hash(path: Path) -> str:
    """A folder's checkpoint key: its files' names, sizes and modification times."""
    files = sorted(p for p in path.rglob("*") if p.is_file())
    return content_id([[str(p.relative_to(path)), p.stat().st_size, p.stat().st_mtime_ns] for p in files])


def _restores(req: ImportFile) -> bool:
    """Whether the file is the workbench's own archive, restored whole rather than imported."""
    return req.format == ARCHIVE or (req.format == "auto" and req.path.is_file() and is_archive(req.path))


def _archive_preview(path: Path, restore: RestoreResult | None = None) -> ImportPreview:
    return ImportPreview(file=str(path), format=ARCHIVE, shape="archive", sha256="", records=0,
                         counts=ImportCounts(), invalid=0, errors=[], first=[], restore=restore)


def _restore(wb: Workbench, req: ImportFile, instance: str, progress: Progress | None) -> ImportResult:
    restored = restore_archive(wb, RestoreArchive(path=req.path, instance=instance, dry_run=req.dry_run),
                               progress=progress)
    if not req.dry_run:
        discard_upload(wb, req.path)
    return ImportResult(instance=instance, preview=_archive_preview(req.path), dry_run=req.dry_run,
                        restored=restored, adds=_archive_holds(restored, instance) if req.dry_run else None)


def _archive_holds(restored: RestoreResult, instance: str) -> str:
    """A dry run's line for an archive, as `ImportResult.adds` is for other files ("an archive of instance
    'default' (chains 142, memories 631, …): restored, it writes what instance 'x' lacks of it"): its
    preview's counts are a file's records, which an archive has none of, so the CLI said nothing at all."""
    held = ", ".join(f"{kind.replace('_', ' ')} {n:,}" for kind, n in restored.counts.items() if n)
    return (f"an archive of instance {restored.source_instance!r} ({held or 'empty'}): restored, it writes what "
            f"instance {instance!r} lacks of it")
