"""The dashboard listens on localhost unless told otherwise: exposing it needs a login in front
(docs/RELIABILITY.md, "Before exposing the dashboard")."""

import tomllib
from pathlib import Path

from core.cli import cli

ROOT = Path(__file__).resolve().parents[2]


def test_streamlit_config_binds_to_localhost():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["server"]["address"] in ("127.0.0.1", "localhost")


def test_workbench_serve_defaults_to_localhost():
    (address,) = [p for p in cli.commands["serve"].params if p.name == "address"]
    assert address.default == "127.0.0.1"
