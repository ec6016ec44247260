"""`workbench mcp`: the MCP server over stdio, for desktop and IDE assistants."""

from __future__ import annotations

import click

from core.cli.context import WorkbenchContext


@click.command("mcp")
@click.pass_obj
def mcp(ctx: WorkbenchContext) -> None:
    """Serve the memory tools to an assistant over MCP on standard input and output.

    An assistant runs this command itself (see "Connect an assistant" in the README). It serves the
    local user on the configured instance (--instance, or the INSTANCE setting) until its input closes.
    Standard output carries the protocol alone; logs go to standard error. Redis and Postgres start on
    the first tool call, not before.
    """
    from core import usecases as uc
    from core.mcp.server import build_mcp_server

    wb = ctx.wb  # nothing connects yet: the Workbench opens its services on first use
    uc.warm_up_in_background()  # the first turn that names a date waited for dateparser
    try:
        build_mcp_server(wb).run("stdio")
    except KeyboardInterrupt:  # stopped from a terminal: not an error
        pass
    finally:
        wb.close()
