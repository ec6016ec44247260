"""AppTest set-up: the dashboard's get_workbench() connects to the session's test servers."""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

APP = Path(__file__).resolve().parents[2] / "dashboard" / "app.py"


@pytest.fixture
def app_env(settings, workbench, monkeypatch):
    monkeypatch.setenv("DATA_DIR", str(settings.data_dir))
    return settings


def open_page(page: str | None = None, *, instance: str | None = None, timeout: float = 60,
              tab: str | None = None) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=timeout)
    if instance:
        at.session_state["instance"] = instance
    at.run()
    if page:
        at.switch_page(str(APP.parents[1] / page))
        at.run()
    return open_tab(at, tab) if tab else at


def open_tab(at: AppTest, tab: str, key: str = "tune_tab") -> AppTest:
    """`at` with the tab `tab` of the tabs `key` open, as a click on it does: the Tune page's tabs run
    lazily, so only the open one's content is there."""
    at.session_state[key] = tab
    return at.run()
