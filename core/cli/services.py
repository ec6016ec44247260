"""`workbench services` and `workbench serve`."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import click

from core.cli.context import WorkbenchContext
from core.cli.output import emit


@click.command("services")
@click.pass_obj
def services(ctx: WorkbenchContext) -> None:
    """Print the status of Redis and Postgres (starting the embedded ones if needed) as JSON."""
    from core import usecases as uc

    report = uc.services(ctx.wb)
    emit(report)
    if not all(s.reachable for s in report.services):
        sys.exit(1)


@click.command("serve")
@click.option("--port", default=8501, show_default=True, type=click.IntRange(1, 65535))
@click.option("--address", default="127.0.0.1", show_default=True,
              help="Listen address. Keep it on localhost unless the dashboard is behind a login.")
def serve(port: int, address: str) -> None:
    """Run the dashboard."""
    # Found, not imported: the core never imports a front end (the dashboard imports the core).
    spec = importlib.util.find_spec("dashboard")
    if spec is None or not spec.submodule_search_locations:
        raise click.ClickException("the dashboard package is not installed beside the core")
    app = Path(spec.submodule_search_locations[0]) / "app.py"
    cmd = [sys.executable, "-m", "streamlit", "run", str(app), "--server.port", str(port),
           "--server.address", address]
    sys.exit(subprocess.call(cmd))
