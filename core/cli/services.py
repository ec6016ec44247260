"""`workbench services` and `workbench serve`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import click


def register(cli: click.Group) -> None:
    @cli.command()
    @click.pass_obj
    def services(ctx) -> None:
        """Print the status of Redis and Postgres (starting the embedded ones if needed) as JSON."""
        from core.cli import emit

        wb = ctx.wb
        statuses = [s.as_dict() for s in wb.services.status()]
        emit({"instance": wb.settings.instance, "services": statuses,
              "embedder": wb.embedder.name, "llm": wb.settings.llm_provider})
        if not all(s["reachable"] for s in statuses):
            sys.exit(1)

    @cli.command()
    @click.option("--port", default=8501, show_default=True, type=click.IntRange(1, 65535))
    @click.option("--address", default="127.0.0.1", show_default=True,
                  help="Listen address. Keep it on localhost unless the dashboard is behind a login.")
    def serve(port: int, address: str) -> None:
        """Run the dashboard."""
        import dashboard

        app = Path(dashboard.__file__).parent / "app.py"
        cmd = [sys.executable, "-m", "streamlit", "run", str(app), "--server.port", str(port),
               "--server.address", address]
        sys.exit(subprocess.call(cmd))
