"""Process-wide resources for the dashboard, built once and shared by every session."""

from __future__ import annotations

import logging
import threading

import streamlit as st

from core import usecases as uc
from core.config import load_settings
from core.runtime import Workbench

log = logging.getLogger("dashboard")


@st.cache_resource(show_spinner="Starting Redis and Postgres…")
def get_workbench() -> Workbench:
    """The runtime shared by all sessions. Settings come from the environment and secrets.toml."""
    wb = Workbench(load_settings())
    try:
        uc.sweep(wb)
    except Exception as e:  # upkeep is best effort: the sidebar shows which service is down
        log.warning("upkeep at start skipped: %s", type(e).__name__)
    threading.Thread(target=_warm_feedback, args=(wb,), name="feedback-warm-up", daemon=True).start()
    return wb


def _warm_feedback(wb: Workbench) -> None:
    """The default instance's recent answers read ahead, so the Feedback page's first opening finds them."""
    try:
        uc.warm_feedback(wb)
    except Exception as e:  # best effort, as upkeep: the page reads them itself and reports what fails
        log.warning("feedback read-ahead skipped: %s", type(e).__name__)


def current_instance() -> str:
    """The instance chosen in the sidebar (default: the INSTANCE setting)."""
    return st.session_state.get("instance") or get_workbench().settings.instance
