"""The Memory explorer's export of a whole instance: an archive prepared on request, then downloaded.

The archive is written to a temporary file first (by the same use case as `workbench export`), so a
failed service shows its message here instead of breaking the download, and the file is read only when
the download is clicked.
"""

from __future__ import annotations

import shutil
import tempfile
from datetime import UTC, datetime
from pathlib import Path

import streamlit as st

from core import usecases as uc
from dashboard.resources import get_workbench
from dashboard.ui import as_plain_line, attempt, plural

ARCHIVE_KEY = "xp_archive"


def _prepare(instance: str, with_vectors: bool) -> None:
    _discard()
    folder = Path(tempfile.mkdtemp(prefix="wb-export-"))
    name = f"{instance}-{datetime.now(UTC):%Y%m%d-%H%M}.workbench.zip"
    result = attempt("export the instance", lambda: uc.export_archive(
        get_workbench(), uc.ExportArchive(instance=instance, out=folder / name, with_vectors=with_vectors)))
    if result is None:
        shutil.rmtree(folder, ignore_errors=True)
        return
    st.session_state[ARCHIVE_KEY] = result


def _discard() -> None:
    if (previous := st.session_state.pop(ARCHIVE_KEY, None)) is not None:
        shutil.rmtree(Path(previous.path).parent, ignore_errors=True)


def render_instance_export(instance: str) -> None:
    st.caption("One archive of everything the instance holds: chains with their thoughts and feedback, "
               "memories, memory banks, past tasks and fusion profiles. Restore it with "
               "`workbench import FILE --instance NAME` or on the Import page.")
    left, right = st.columns([2, 1])
    with_vectors = left.checkbox("Include the vectors", key="xp_archive_vectors",
                                 help="Larger; restored as they are when the same embedding model is active.")
    if right.button("Prepare the archive", key="xp_archive_prepare"):
        _prepare(instance, with_vectors)
    prepared = st.session_state.get(ARCHIVE_KEY)
    if prepared is None or prepared.instance != instance:
        return
    held = ", ".join(_count(n, kind) for kind, n in prepared.counts.items() if n)
    st.caption(f"{as_plain_line(held or 'nothing stored yet')} · {prepared.bytes / 1e6:.2f} MB")
    path = Path(prepared.path)
    st.download_button("Download the archive", data=path.read_bytes if path.exists() else b"",
                       file_name=path.name, mime="application/zip", key="xp_archive_download")


def _count(n: int, kind: str) -> str:
    """"1 profile", "36,442 memories", "2 bank entries": an archive's count of one kind (`archive.KINDS`)."""
    many = kind.replace("_", " ")
    one = many[:-3] + "y" if many.endswith("ies") else many.removesuffix("s")
    return plural(n, one, many)
