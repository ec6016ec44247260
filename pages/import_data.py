"""Import: bring chat logs, memories and past tasks from other systems into the current instance, or into
a new one named here (the dashboard then works on it).

Upload a file (or name a path on the server) → the detected format and a preview of what will be
created → import with a progress bar → links to the new chains in the Memory explorer.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from core import usecases as uc
from dashboard.import_view import (
    as_uploaded,
    file_state,
    render_outcome,
    render_preview,
    saved_upload,
    target_instance,
)
from dashboard.resources import current_instance, get_workbench
from dashboard.sidebar import switch_instance
from dashboard.ui import as_plain_line, attempt

st.title("Import")
st.caption("Chat logs (OpenAI messages, ChatGPT or Claude exports, LoCoMo), memories (JSONL, CSV, mem0's "
           "export) or past tasks keep their original times. Importing a file again creates nothing new, and "
           "what you deleted here stays deleted.")
if made := st.session_state.pop("imp_made", None):  # the last run imported into a new instance
    st.session_state["imp_target"] = "current"  # which it is now: not offered as new again
    st.session_state["imp_new_instance"] = ""
    st.success(f"Made instance **{as_plain_line(made)}**: the dashboard works on it now, and the sidebar's "
               "picker lists it (switch back there).", icon=":material/add_circle:")
instance = target_instance(get_workbench(), current_instance())

where = st.radio("Source", ["Upload a file", "A path on the server"], horizontal=True, key="imp_source")
if where == "Upload a file":
    upload = st.file_uploader("Export file (JSON, JSONL, CSV, or a workbench archive)", key="imp_upload")
    path = saved_upload(get_workbench(), upload)
    shown_name = upload.name if upload is not None else None
else:
    typed = st.text_input("File or folder", key="imp_path",
                          placeholder="/data/exports/conversations.json, or a folder of past tasks")
    path = Path(typed.strip()).expanduser() if typed.strip() else None
    shown_name = None  # a path on the server: named as typed

with st.expander("Options"):
    c1, c2 = st.columns(2)
    fmt = c1.selectbox("Format", uc.IMPORT_FORMATS, key="imp_format",
                       help="auto: told from the start of the file")
    on_error = c2.radio("Invalid records", ["stop", "skip"], horizontal=True, key="imp_on_error",
                        format_func={"stop": "Import nothing", "skip": "Import the valid ones"}.get)
    include_system = c1.checkbox("Keep system and tool messages", key="imp_system")
    include_deleted = c1.checkbox("Import what I deleted", key="imp_include_deleted",
                                  help="Conversations, messages and memories you deleted in this instance are "
                                       "left out of every import, so that deleting holds when you import your "
                                       "next export. Tick to bring them back.")
    user_id = c2.text_input("Past tasks in a folder: user", key="imp_user") or None
    task = c2.text_input("Past tasks in a folder: task type", key="imp_task", placeholder="note") or None

if instance is None:  # a new instance's name, missing or refused: the page said what to change
    st.stop()
if path is None:
    st.info("Choose a file to see what it holds before anything is imported.")
    st.stop()
done = st.session_state.get("imp_result")
if done and done[0] == str(path) and where == "Upload a file":
    # An upload's copy is removed once imported: show what it gave, not a preview of a missing file.
    render_outcome(done[1], Path(__file__).with_name("explorer.py"))
    st.stop()

request = attempt("read the options", lambda: uc.ImportFile(
    path=path, instance=instance, format=fmt, on_error=on_error, include_system=include_system,
    include_deleted=include_deleted, user_id=user_id, task=task))
if request is None:
    st.stop()
# The validation pass reads the whole file: once per file and options, not on every rerun.
checked = (request.model_dump_json(), *file_state(path))
if st.session_state.get("imp_checked", (None,))[0] != checked:
    found = attempt("check the file", as_uploaded(lambda: uc.import_preview(get_workbench(), request), path,
                                                  shown_name))
    if found is None:
        st.stop()
    st.session_state["imp_checked"] = (checked, found)
preview = st.session_state["imp_checked"][1]
preview_notes = render_preview(preview, include_deleted=include_deleted, on_error=on_error)

blocked = preview.records and preview.refused(on_error)
if blocked:
    st.warning("Nothing can be imported while records are invalid: fix them, or choose “Import the valid "
               "ones” under Options.", icon=":material/block:")
if st.button("Import", type="primary", key="imp_go", disabled=bool(blocked)):
    bar = st.progress(0.0, text="importing…")

    def step(done: int, total: int, what: str) -> None:
        bar.progress(done / total if total else 1.0,
                     text=f"{what}: {done:,} of {total:,} records" if total else f"{what}…")

    result = attempt("import", as_uploaded(lambda: uc.import_file(get_workbench(), request, progress=step), path,
                                           shown_name))
    bar.empty()
    if result is not None:
        st.session_state["imp_result"] = (str(path), result)
        st.session_state.pop("imp_formed", None)  # the last import's formation: this one offers its own
        st.session_state.pop("imp_checked", None)  # what it said is new is here now: looked up again
        if instance != current_instance():
            switch_instance(instance)
            st.session_state["imp_made"] = instance
        # Drawn again from the top, as every later run draws it: the outcome then stays in one place, and a
        # run that draws less above it (Form memories) leaves no dimmed copy of this run's below its bar.
        st.rerun()
done = st.session_state.get("imp_result")
if done and done[0] == str(path):  # the outcome of this file, not of one chosen before
    preview_notes.empty()  # the outcome says them: once on the page
    render_outcome(done[1], Path(__file__).with_name("explorer.py"))
