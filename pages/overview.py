"""Overview: what is stored, per service, for the current instance."""

from __future__ import annotations

import streamlit as st

from core import usecases as uc
from dashboard.resources import current_instance, get_workbench
from dashboard.ui import attempt

st.title("Memory Workbench")
st.caption("Conversational and agent memory: what is stored, how it is retrieved, and how users react.")

instance = current_instance()
stats = attempt("read what is stored",
                lambda: uc.stored_counts(get_workbench(), uc.InstanceRequest(instance=instance)))
if stats:
    cols = st.columns(len(stats.tiles))
    for col, (label, value) in zip(cols, stats.tiles.items(), strict=True):
        col.metric(label, f"{value:,}")
    st.subheader("Settings in use")
    st.dataframe(
        [{"setting": k, "value": str(v)} for k, v in get_workbench().settings.public_view().items()],
        hide_index=True, width="stretch")
