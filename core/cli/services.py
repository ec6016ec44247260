"""`workbench services` and `workbench serve`."""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import click

from core.cli.confirm import confirmation_option
from core.cli.context import WorkbenchContext
from core.cli.output import emit


@click.group("services", invoke_without_command=True)
@click.pass_context
def services(click_ctx: click.Context) -> None:
    """Print the data directory, the settings file and the status of Redis and Postgres as JSON.

    The embedded servers are started for the check if they do not run, and stopped again at exit unless
    another process uses them."""
    if click_ctx.invoked_subcommand is not None:
        return
    from core import usecases as uc

    report = uc.services(click_ctx.obj.wb)
    emit(report)
    if not all(s.reachable for s in report.services):
        sys.exit(1)


@services.command("repair-redis")
@confirmation_option("Back up the embedded Redis's append-only file, then cut it at its first damaged "
                     "command (what follows is lost, the backup keeps it)?", "nothing was changed")
@click.pass_obj
def repair_redis(ctx: WorkbenchContext) -> None:
    """Repair the embedded Redis's damaged append-only file (redis-check-aof --fix, after a backup)."""
    from core import usecases as uc

    emit(uc.repair_redis(ctx.wb))


@services.command("stop")
@click.pass_obj
def stop(ctx: WorkbenchContext) -> None:
    """Stop the data directory's embedded Redis and Postgres (cleanly); say what was stopped."""
    from core import usecases as uc

    emit(uc.stop_services(ctx.wb))


@click.command("serve")
@click.option("--port", default=8501, show_default=True, type=click.IntRange(1, 65535))
@click.option("--address", default="127.0.0.1", show_default=True,
              help="Listen address. Keep it on localhost unless the dashboard is behind a login.")
@click.pass_obj
def serve(ctx: WorkbenchContext, port: int, address: str) -> None:
    """Run the dashboard, on the instance `--instance` names (else the INSTANCE setting) until the sidebar
    switches to another."""
    # Found, not imported: the core never imports a front end (the dashboard imports the core).
    spec = importlib.util.find_spec("dashboard")
    if spec is None or not spec.submodule_search_locations:
        raise click.ClickException("the dashboard package is not installed beside the core")
    app = Path(spec.submodule_search_locations[0]) / "app.py"
    cmd = [sys.executable, "-m", "streamlit", "run", str(app), "--server.port", str(port),
           "--server.address", address]
    from core.api.app import is_loopback

    if not is_loopback(address):
        # Reached by other names now (this machine's, a proxy's): the loopback-only Host list of
        # dashboard/.streamlit/config.toml, there against DNS rebinding, would refuse them.
        cmd += ["--server.allowedHosts", "*"]
    # Started here, so a failure is one line now rather than a spinner in the browser; and held by this
    # process until the dashboard has exited, when they stop unless another process uses them.
    ctx.wb.services.redis_url()
    ctx.wb.services.postgres_url()
    sys.exit(_run_until_done(cmd, _dashboard_env(ctx)))


def _dashboard_env(ctx: WorkbenchContext) -> dict[str, str]:
    """This process's environment with INSTANCE set to the instance the command works on: the dashboard
    reads its settings anew from the environment and the secrets file, so `--instance` was lost on the
    way and the sidebar and every page showed the INSTANCE setting (`default`) instead."""
    return {**os.environ, "INSTANCE": ctx.wb.settings.instance}


PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def _run_until_done(cmd: list[str], env: dict[str, str]) -> int:
    """Run `cmd` in `env` to its end. Stopped ourselves (Ctrl+C, or SIGTERM from a supervisor), we ask it to stop
    too and wait for it, killing it only if it has not stopped within 15 s, so that our own exit (which
    may stop the servers) comes after its."""
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    # Killed with us, not left holding the port; the function only makes one C call in the child.
    proc = subprocess.Popen(cmd, env=env, preexec_fn=_dying_with_parent())  # noqa: PLW1509
    try:
        return proc.wait()
    except KeyboardInterrupt:
        proc.terminate()
        try:
            return proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            return proc.wait()


def _dying_with_parent() -> Callable[[], None] | None:
    """What a child runs between fork and exec (`subprocess.Popen(preexec_fn=...)`) to be sent SIGTERM when
    this process dies, however it dies; None where that cannot be asked (not Linux). `workbench serve`
    SIGKILLed (the OOM killer, `kill -9`) otherwise left its Streamlit running on, holding the port, so the
    next `workbench serve` failed with "Port 8501 is not available". Looked up here, in the parent: the
    child, forked while the connection pools' threads run, only makes the call (no import, no lock)."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def in_child() -> None:
        prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != parent:  # the parent died before the request took effect
            os.kill(os.getpid(), signal.SIGTERM)

    return in_child
