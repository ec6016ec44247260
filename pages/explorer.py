"""Memory explorer: browse instances, chains and their thoughts; search everything stored; see and
fill the memory banks; delete (with a confirmation step) and export."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core import usecases as uc
from dashboard.explorer_bank import render_bank
from dashboard.explorer_export import render_instance_export
from dashboard.explorer_views import VIEW_KEY, open_chain, render_chains, render_confirmation, render_search
from dashboard.resources import current_instance, get_workbench
from dashboard.ui import as_plain_line, attempt

VIEWS = ["Search", "Chains", "Memory bank"]

st.title("Memory explorer")
instance = current_instance()
st.caption(f"Instance **{as_plain_line(instance)}** (choose another in the sidebar). Search what is stored, "
           "open the chain a memory came from, inspect memory banks, and delete what should be forgotten.")

# Read and drawn only while open (`on_change="rerun"`): the list counts every instance's memories, which
# took most of a run of this page at 1,000,000 memories (243 -> 66 ms without it, median of 8).
instances_box = st.expander("Instances", key="xp_instances_open", on_change="rerun")
if instances_box.open:
    with instances_box:
        rows = attempt("list instances", lambda: uc.instances(get_workbench()))
        if rows:
            st.dataframe(pd.DataFrame([r.model_dump() for r in rows]), hide_index=True, width="stretch",
                         column_config={"chains": "chains (Redis)", "indexed": "indexed memories (Postgres)",
                                        "banks": "memory banks",
                                        "evaluation": st.column_config.CheckboxColumn(
                                            "evaluation", help="Made by an evaluation on the Tune page; not "
                                                               "offered in the sidebar's instance picker")})

with st.expander("Export this instance"):
    render_instance_export(instance)

if chain_id := st.query_params.pop("chain", None):  # a link to a chain (from the Import page)
    open_chain(chain_id)
render_confirmation(instance)
view = st.radio("View", VIEWS, horizontal=True, key=VIEW_KEY, label_visibility="collapsed")
if view == "Chains":
    render_chains(instance)
elif view == "Memory bank":
    render_bank(instance)
else:
    render_search(instance)
