"""The dashboard listens on localhost unless told otherwise: exposing it needs a login in front
(docs/RELIABILITY.md, "Before exposing the dashboard")."""

import tomllib
from pathlib import Path

from core.cli import cli

ROOT = Path(__file__).resolve().parents[2]


def test_streamlit_config_binds_to_localhost():
    config = tomllib.loads((ROOT / "dashboard" / ".streamlit" / "config.toml").read_text())
    assert config["server"]["address"] in ("127.0.0.1", "localhost")


def test_workbench_serve_defaults_to_localhost():
    (address,) = [p for p in cli.commands["serve"].params if p.name == "address"]
    assert address.default == "127.0.0.1"


def test_workbench_api_defaults_to_localhost_and_knows_loopback():
    from core.api.app import is_loopback
    from core.api.ratelimit import limits_url

    (host,) = [p for p in cli.commands["api"].params if p.name == "host"]
    assert host.default == "127.0.0.1"
    assert all(is_loopback(h) for h in ("127.0.0.1", "127.8.9.10", "::1", "[::1]", "localhost", "LOCALHOST"))
    assert not any(is_loopback(h) for h in ("0.0.0.0", "::", "10.0.0.5", "192.168.1.2", "example.com"))
    # The rate counts live in the product's Redis, whatever form its URL takes.
    assert limits_url("unix:///tmp/d/redis.sock", cluster=False) == "redis+unix:///tmp/d/redis.sock"
    assert limits_url("redis://:pw@h:6379/0", cluster=False) == "redis://:pw@h:6379/0"
    assert limits_url("redis://h:7000", cluster=True) == "redis+cluster://h:7000"
