"""Memory Workbench dashboard: page config, sidebar and navigation. Run with `workbench serve`."""

from __future__ import annotations

import sys
from pathlib import Path

import streamlit as st

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # `streamlit run dashboard/app.py` from a checkout without an install
    sys.path.insert(0, str(ROOT))

from core.errors import describe
from dashboard.resources import get_workbench
from dashboard.sidebar import render_sidebar
from dashboard.ui import show_error

st.set_page_config(page_title="Memory Workbench", page_icon="🧠", layout="wide")

PAGES = ROOT / "pages"
# Each feature adds its page here.
NAVIGATION = {
    "Memory": [
        st.Page(PAGES / "overview.py", title="Overview", icon=":material/home:", default=True),
        st.Page(PAGES / "chat.py", title="Chat", icon=":material/chat:"),
        st.Page(PAGES / "past_tasks.py", title="Past tasks", icon=":material/history:"),
        st.Page(PAGES / "explorer.py", title="Memory explorer", icon=":material/travel_explore:"),
        st.Page(PAGES / "import_data.py", title="Import", icon=":material/upload_file:"),
        st.Page(PAGES / "tune.py", title="Tune retrieval", icon=":material/tune:"),
        st.Page(PAGES / "feedback.py", title="Feedback", icon=":material/insights:"),
    ],
    "Admin": [
        st.Page(PAGES / "keys.py", title="API keys", icon=":material/key:"),
    ],
}

try:
    get_workbench()
except Exception as e:
    show_error(e, "start the workbench")
    st.info("Fix the setting named above (environment or `.streamlit/secrets.toml`), then reload the page.")
    st.stop()

render_sidebar()
page = st.navigation(NAVIGATION)
try:
    page.run()
except Exception as e:
    # A page's call that failed because a service is down or an input was refused becomes a message
    # with what to do. Anything else is a bug: re-raised, so tests and the server log show it.
    if describe(e).code == "internal":
        raise
    show_error(e, f"show {page.title}")
