"""Process-wide resources for the dashboard, built once and shared by every session."""

from __future__ import annotations

import streamlit as st

from core.config import load_settings
from core.runtime import Workbench


@st.cache_resource(show_spinner="Starting Redis and Postgres…")
def get_workbench() -> Workbench:
    """The runtime shared by all sessions. Settings come from the environment and secrets.toml."""
    return Workbench(load_settings())


def current_instance() -> str:
    """The instance chosen in the sidebar (default: the INSTANCE setting)."""
    return st.session_state.get("instance") or get_workbench().settings.instance
