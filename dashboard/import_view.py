"""The Import page's views: the instance the import goes into (the current one, or a new one named there),
an upload kept as a file, the preview of what a file holds, the outcome with links to the new conversations
(by title, the chain id beside it). Imported text is user content: it is
drawn with st.dataframe / st.text, and goes through `as_plain_line` wherever it sits inside Markdown."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pandas as pd
import streamlit as st

from core import usecases as uc
from core.errors import InvalidInput
from core.runtime import Workbench
from dashboard.resources import get_workbench
from dashboard.ui import as_plain_line, attempt, plural

LINKED_CHAINS = 20
NEW = "new"  # the choice of a new instance, named on the page
T = TypeVar("T")


def target_instance(wb: Workbench, current: str) -> str | None:
    """The instance the import goes into: the one chosen in the sidebar, or a new one named here, so that
    an export can be kept apart without the CLI's `--instance`. None while the new name is missing or
    refused (the page says what to change)."""
    choice = st.radio("Import into", ["current", NEW], horizontal=True, key="imp_target",
                      format_func={"current": f"This instance, {as_plain_line(current)} (choose another in the "
                                              "sidebar)", NEW: "A new instance"}.get)
    if choice != NEW:
        return current
    name = st.text_input("Name of the new instance", key="imp_new_instance", placeholder="chatgpt-history",
                         help=f"{uc.ID_RULE}. Once imported, the dashboard works on it, and the sidebar lists it.")
    return new_instance_name(wb, name.strip(), current)


def new_instance_name(wb: Workbench, name: str, current: str) -> str | None:
    """`name` if it may name a new instance: not one the sidebar offers (those with data, the default one,
    the current one) nor the shared one; else None, with what to change said on the page."""
    if not name:
        st.info("Name the new instance to see what the file holds.", icon=":material/edit:")
        return None
    try:
        uc.validate_id(name, "The instance name")
    except InvalidInput as e:
        st.error(f"{e}. Change the name.", icon=":material/edit:")
        return None
    known = attempt("list the instances", lambda: uc.instance_names(wb))
    if known is None:
        return None
    if name in {*known, wb.settings.instance, current, uc.SHARED_INSTANCE}:
        st.error(f"An instance named {as_plain_line(name)} exists already: choose it in the sidebar to import "
                 "into it, or name another.", icon=":material/edit:")
        return None
    return name


def saved_upload(wb: Workbench, upload) -> Path | None:
    """The uploaded file kept privately under the data directory: the import streams it from there, and
    removes it once imported (so it is not written again for an upload already imported). The copy of a
    file taken off the page, or replaced by another, goes at once; one left by a closed tab, within the
    hour (`uc.prune_uploads`)."""
    shown = st.session_state.get("imp_upload_kept")
    done = st.session_state.get("imp_result")
    if upload is None:
        path = None
    elif done and done[0].startswith(str(Path(wb.settings.data_dir) / "uploads" / upload.file_id)):
        path = Path(done[0])
    else:
        path = uc.keep_upload(wb, upload.name, upload.getbuffer(), upload.file_id)
    if shown and Path(shown) != path:
        uc.discard_upload(wb, Path(shown))
    st.session_state["imp_upload_kept"] = str(path) if path else None
    if upload is None:
        uc.prune_uploads(wb)
    return path


def as_uploaded(fn: Callable[[], T], path: Path, name: str | None) -> Callable[[], T]:
    """`fn` (a look at, or the import of, the upload's copy at `path`), its refusal naming the file as it was
    uploaded (`name`): the core names the file it reads, here the private copy, which the user never saw
    ("0f3c…-notes.json")."""
    def run() -> T:
        try:
            return fn()
        except InvalidInput as e:
            if name and path.name != name and path.name in str(e):
                raise InvalidInput(str(e).replace(path.name, name)) from e
            raise
    return run


def file_state(path: Path) -> tuple[float, int]:
    """When the file (or folder) last changed and its size: a changed file is checked again."""
    try:
        stat = path.stat()
    except OSError:
        return (0.0, -1)
    return (stat.st_mtime, stat.st_size)


def render_preview(preview: uc.ImportPreview, *, include_deleted: bool = False, on_error: str = "stop"):
    """Draw the preview: what the file holds, then what importing it would add to the instance (next
    month's export told from the same file imported again); returns the place of its notes (what the import
    will assume of the file, and what it would leave out as deleted, or bring back with `include_deleted`),
    for the page to clear once the outcome says them."""
    if preview.format == "workbench-archive":
        return render_archive_preview(preview.restore)
    counts = preview.counts
    st.markdown(f"Detected format: **{as_plain_line(preview.format)}** ({as_plain_line(preview.shape)}) · "
                f"{plural(preview.records, 'record')}")
    tiles = [("Conversations", counts.conversations), ("Messages", counts.messages),
             ("Memories", counts.memories), ("Past tasks", counts.past_tasks), ("Invalid", preview.invalid)]
    for column, (label, value) in zip(st.columns(len(tiles)), tiles, strict=True):
        column.metric(label, f"{value:,}")
    if counts.attachments:
        st.caption(f"{plural(counts.attachments, 'attachment')} {'is' if counts.attachments == 1 else 'are'} "
                   "named in messages; their contents are not imported.")
    if said := preview.adds_said(on_error, include_deleted=include_deleted):
        icon = "check_circle" if preview.adds.nothing() else "add_circle"
        st.markdown(f":material/{icon}: **{as_plain_line(said)}**")
    notes = st.empty()
    with notes.container():
        render_notes(preview.notes(include_deleted=include_deleted))
    if preview.first:
        st.markdown("**First records**")
        st.dataframe(pd.DataFrame(preview.first), hide_index=True, width="stretch")
    if preview.errors:
        st.markdown(f"**First invalid records** ({preview.invalid:,} in all)")
        st.dataframe(pd.DataFrame([e.model_dump() for e in preview.errors]), hide_index=True, width="stretch")
    return notes


# An archive's kinds a person counts (thoughts: messages, answers and their metrics), as the tiles name them.
ARCHIVE_TILES = (("Conversations", "chains"), ("Thoughts", "thoughts"), ("Memories", "memories"),
                 ("Past tasks", "past_tasks"), ("Profiles", "profiles"))


def render_archive_preview(restore: uc.RestoreResult | None):
    """An archive's preview: where it comes from and what it holds, from a dry run of its restore into the
    chosen instance (which refuses an instance holding data before anything is clicked)."""
    if restore is None:
        st.markdown("Detected format: **workbench-archive**. It restores a whole instance.")
        return st.empty()
    made = (f", exported {restore.exported_at:%Y-%m-%d %H:%M} UTC" if restore.exported_at else "") + (
        f" by memory-workbench {restore.made_by}" if restore.made_by else "")
    st.markdown(f"Detected format: **workbench-archive** of instance **{as_plain_line(restore.source_instance)}**"
                f"{as_plain_line(made)}. It restores a whole instance.")
    for column, (label, kind) in zip(st.columns(len(ARCHIVE_TILES)), ARCHIVE_TILES, strict=True):
        column.metric(label, f"{restore.counts.get(kind, 0):,}")
    notes = st.empty()
    with notes.container():
        render_notes(restore.notes)
    return notes


def render_notes(notes: list[str]) -> None:
    """What an import assumes or changes of a file's content (times it does not give, NUL characters),
    one note each for the whole file."""
    for note in notes:
        st.info(as_plain_line(note), icon=":material/info:")


def render_outcome(result: uc.ImportResult, explorer: Path) -> None:
    if (restored := result.restored) is not None:
        made = ", ".join(f"{n:,} {kind}" for kind, n in restored.created.items() if n) or "nothing new"
        st.success(f"Archive of instance {as_plain_line(restored.source_instance)} restored: "
                   f"{as_plain_line(made)}.", icon=":material/check_circle:")
        for note in restored.notes:
            st.caption(as_plain_line(note))
        return
    out = result.outcome
    if out is None:
        return
    made = out.created
    st.success(f"Imported {plural(made.conversations, 'conversation')} ({plural(made.messages, 'message')}), "
               f"{plural(made.memories, 'memory', 'memories')} and {plural(made.past_tasks, 'past task')}; "
               f"{plural(out.already_present, 'message or record', 'messages or records')} already there, "
               f"{out.duplicates:,} repeated in the file, {out.skipped_invalid:,} invalid skipped.",
               icon=":material/check_circle:")
    back = out.brought_back
    if brought := [plural(n, one, many) for n, one, many in (
            (back.conversations, "conversation", "conversations"), (back.messages, "message", "messages"),
            (back.memories, "memory", "memories")) if n]:
        st.caption(f"Brought back what you had deleted, as asked: {', '.join(brought)}. Delete "
                   f"{'it' if brought == ['1 conversation'] else 'them'} again to forget "
                   f"{'it' if brought == ['1 conversation'] else 'them'}.")
    if out.resumed_after:
        st.caption(f"Continued an interrupted import after its first {plural(out.resumed_after, 'record')}.")
    render_notes(result.notes)
    if out.chains:
        st.markdown("**Imported conversations** (open one in the Memory explorer)")
    for chain in out.chains[:LINKED_CHAINS]:
        # The title as the export names it; the chain id, secondary, tells two of the same title apart.
        st.page_link(explorer, label=f"{as_plain_line(chain.title, 100)} :gray[· {as_plain_line(chain.chain_id)}]",
                     icon=":material/travel_explore:", query_params={"chain": chain.chain_id},
                     help=f"Open chain {chain.chain_id} in the Memory explorer")
    if out.chains_total > LINKED_CHAINS:
        st.caption(f"…and {out.chains_total - LINKED_CHAINS:,} more: every imported chain is listed in the Memory "
                   "explorer's Chains view.")
    if result.next_step:
        render_formation(result.instance)


# Who read the messages (`FormationResult.formed_by`), as the outcome says it.
FORMED_BY = {"llm": "the LLM", "rules": "the offline rules", "llm and rules": "the LLM, and the offline rules "
             "where it failed"}


def summaries_said(n: int) -> str:
    """The session summaries a formation run wrote, in words: it summarises every conversation of the
    instance that ended or went quiet without a current summary, not only the imported ones."""
    of = {0: "", 1: " of a conversation in the instance that ended or went quiet, imported here or not"}.get(
        n, " of conversations in the instance that ended or went quiet, imported here or not")
    return plural(n, "session summary", "session summaries") + of


def render_formation(instance: str) -> None:
    """Imported conversations are indexed without the formation a live turn gets: offered here, as
    `workbench formation run` does it (every chain of the instance; forming one again changes nothing)."""
    formed = st.session_state.get("imp_formed")  # this import's: a new import's outcome starts without one
    if formed and formed.instance == instance:
        st.success(f"Formed the memories of {plural(formed.chains, 'chain')}: "
                   f"{plural(formed.observations, 'observation')} from {plural(formed.messages, 'message')}, "
                   f"{plural(formed.superseded, 'fact')} superseded by a correction or an update, and "
                   f"{summaries_said(formed.summaries)} "
                   f"(by {FORMED_BY.get(formed.formed_by, formed.formed_by)}).",
                   icon=":material/psychology:")
        for note in formed.notes:  # e.g. the LLM failed, and the rules read what it did not
            st.info(as_plain_line(note), icon=":material/info:")
        return
    st.info("The imported messages are found as they were said. Their observations, corrections and session "
            "summaries, which a live turn forms as it is said, are formed separately: here, or with "
            "`workbench formation run`. Either forms every conversation of the instance that needs it, "
            "not only this file's.", icon=":material/info:")
    if st.button("Form memories", key="imp_form"):
        bar = st.progress(0.0, text="forming…")

        def step(done: int, total: int, what: str) -> None:
            bar.progress(done / total if total else 1.0, text=f"{what}: {done:,} of {total:,}")

        result = attempt("form the memories", lambda: uc.formation_run(
            get_workbench(), uc.FormationRun(instance=instance), progress=step))
        bar.empty()
        if result is not None:
            st.session_state["imp_formed"] = result
            st.rerun()
