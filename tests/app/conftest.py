"""AppTest set-up: the dashboard's get_workbench() connects to the session's test servers."""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

APP = Path(__file__).resolve().parents[2] / "dashboard" / "app.py"


@pytest.fixture
def app_env(settings, workbench, monkeypatch):
    monkeypatch.setenv("DATA_DIR", str(settings.data_dir))
    return settings


def open_page(page: str | None = None, *, instance: str | None = None, timeout: float = 60) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=timeout)
    if instance:
        at.session_state["instance"] = instance
    at.run()
    if page:
        at.switch_page(str(APP.parents[1] / page))
        at.run()
    return at
