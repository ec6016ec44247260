"""`workbench api`: the HTTP API server (uvicorn)."""

from __future__ import annotations

import errno
import os
import signal
import socket
import sys

import click

from core.cli.context import WorkbenchContext
from core.errors import InvalidInput


@click.command("api")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Listen address. Beyond loopback every request needs an API key "
                   "(`workbench keys create`).")
@click.option("--port", default=8700, show_default=True, type=click.IntRange(1, 65535))
@click.option("--workers", default=1, show_default=True, type=click.IntRange(1, 64),
              help="Server processes; all serve the same chains (the state is in Redis and Postgres).")
@click.pass_obj
def api(ctx: WorkbenchContext, host: str, port: int, workers: int) -> None:
    """Serve the JSON API (its OpenAPI document at /openapi.json) and the MCP server at /mcp."""
    import uvicorn

    from core import usecases as uc
    from core.api.app import HOST_ENV, NO_KEY_BEYOND_LOOPBACK, is_loopback

    if not is_loopback(host) and not uc.keys_exist(ctx.wb):
        click.echo(f"error: {NO_KEY_BEYOND_LOOPBACK}", err=True)
        sys.exit(2)
    check_port(host, port)  # before anything starts or is printed: uvicorn's own failure came after both
    if ctx.instance_override:
        os.environ["INSTANCE"] = ctx.instance_override  # read by the workers' own settings
    os.environ[HOST_ENV] = host
    ctx.wb.services.redis_url()  # start the embedded servers once, before the workers race for them
    ctx.wb.services.postgres_url()
    ctx.wb.close()
    shown = f"[{host}]" if ":" in host else host
    click.echo(f"serving http://{shown}:{port} (OpenAPI document at /openapi.json, MCP at /mcp); Ctrl+C stops",
               err=True)
    # uvicorn stops gracefully on SIGTERM (a supervisor's stop), then sends it again under the handler it
    # found: Python's default one killed the process before this command could stop the servers it
    # started. As Ctrl+C's handler it unwinds like Ctrl+C (`uvicorn.run` returns), and they stop.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    uvicorn.run("core.api.app:app_from_env", factory=True, host=host, port=port, workers=workers,
                log_level="warning", access_log=False, timeout_graceful_shutdown=10)


def check_port(host: str, port: int) -> None:
    """InvalidInput (exit 2, one line) when the server could not listen on `host`:`port`, found by binding
    it as uvicorn will (SO_REUSEADDR, so a port left in TIME_WAIT by a server just stopped counts as free)."""
    bare = host.strip("[]")
    try:
        infos = socket.getaddrinfo(bare, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as e:
        raise InvalidInput(f"--host {host}: not an address of this machine ({e.strerror})") from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as e:
            if e.errno == errno.EADDRINUSE:
                raise InvalidInput(f"port {port} is in use (address already in use on {host}): pick another "
                                   "--port") from None
            raise InvalidInput(f"--host {host} --port {port}: cannot listen there ({e.strerror})") from None
