"""Overview: what is stored, per service, for the current instance, and which embedding model made the
memories' vectors (with a button to re-embed those of another model)."""

from __future__ import annotations

import streamlit as st

from core import usecases as uc
from dashboard.resources import current_instance, get_workbench
from dashboard.ui import attempt

st.title("Memory Workbench")
st.caption("Conversational and agent memory: what is stored, how it is retrieved, and how users react.")

wb = get_workbench()
instance = current_instance()
if done := st.session_state.pop("overview_reembedded", None):
    st.success(f"Re-embedded {done.reembedded:,} memories of {done.instance} with `{done.model}`: the vector "
               "leg finds them now.")
stats = attempt("read what is stored", lambda: uc.stored_counts(wb, uc.InstanceRequest(instance=instance)))


def _reembed(stats: uc.Overview) -> None:
    """Re-embed the memories of other models, with a progress bar; the page reloads with the new counts."""
    bar = st.progress(0.0, text="Re-embedding…")

    def step(done: int, total: int, _what: str) -> None:
        bar.progress(min(1.0, done / max(1, total)), text=f"Re-embedded {done:,} of {total:,}")

    result = attempt("re-embed the memories", lambda: uc.reembed(
        wb, uc.InstanceRequest(instance=stats.instance), progress=step))
    if result:
        st.session_state["overview_reembedded"] = result
        st.rerun()


if stats:
    cols = st.columns(len(stats.tiles))
    for col, (label, value) in zip(cols, stats.tiles.items(), strict=True):
        col.metric(label, f"{value:,}")
    if stale := stats.not_in_vector_leg:
        st.warning(f"{stale:,} memories of {stats.instance} have no vector of the active embedder "
                   f"`{stats.active_model}`: semantic search (the vector leg) misses them, and only the text "
                   "leg finds them, until they are re-embedded (`workbench reembed` does the same).")
        if st.button(f"Re-embed {stale:,} memories with {stats.active_model}", key="overview_reembed"):
            _reembed(stats)
    if stats.memories_by_model:
        st.subheader("Memories per embedding model")
        st.dataframe([{"model": model, "memories": count, "in the vector leg": model == stats.active_model}
                      for model, count in stats.memories_by_model.items()], hide_index=True, width="stretch")
    st.subheader("Settings in use")
    st.dataframe([{"setting": k, "value": str(v)} for k, v in wb.settings.public_view().items()],
                 hide_index=True, width="stretch")
