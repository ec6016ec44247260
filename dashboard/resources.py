"""Process-wide resources for the dashboard, built once and shared by every session."""

from __future__ import annotations

import gc
import importlib
import logging
import pkgutil
import threading

import streamlit as st

from core import usecases as uc
from core.config import load_settings
from core.runtime import Workbench

log = logging.getLogger("dashboard")


@st.cache_resource(show_spinner="Starting Redis and Postgres…")
def get_workbench() -> Workbench:
    """The runtime shared by all sessions. Settings come from the environment and secrets.toml."""
    wb = Workbench(load_settings())
    try:
        # The quick part of upkeep only: summarising every instance's quiet chains asks the LLM once a
        # summary, and the first page waited for all of them (the warm-up thread does them next).
        uc.sweep(wb, summarise=False)
    except Exception as e:  # upkeep is best effort: the sidebar shows which service is down
        log.warning("upkeep at start skipped: %s", type(e).__name__)
    threading.Thread(target=_warm_up, args=(wb,), name="dashboard-warm-up", daemon=True).start()
    uc.warm_up_in_background()  # the first turn that names a date waited for dateparser
    return wb


def import_page_modules() -> list[str]:
    """Every module of the `dashboard` package but the app's script, imported: the pages import them, and the
    first opening of a page in a process otherwise paid for its charting library (altair: 0.29 s for the
    Feedback page, plotly 0.1 s for Tune retrieval). Returns their names."""
    import dashboard

    names = [f"dashboard.{m.name}" for m in pkgutil.iter_modules(dashboard.__path__) if m.name != "app"]
    for name in names:
        importlib.import_module(name)
    return names


def _warm_up(wb: Workbench) -> None:
    """The default instance's recent answers read ahead (first: the Feedback page waits for them), the pages'
    modules imported and the Feedback page's chart specs built, so the first opening of a page finds them;
    then what the process holds from its start is set aside from garbage collection; last, every instance's
    quiet chains summarised (upkeep's slow part, which no page waits for)."""
    try:
        uc.warm_feedback(wb)
    except Exception as e:  # best effort, as upkeep: the page reads them itself and reports what fails
        log.warning("feedback read-ahead skipped: %s", type(e).__name__)
    try:
        import_page_modules()
        from dashboard.feedback_charts import build_daily_specs

        build_daily_specs()
    except Exception as e:  # best effort: the page imports and builds what it needs and shows what fails
        log.warning("pages not prepared ahead: %s", type(e).__name__)
    # The modules, the workbench and the rows read ahead live as long as the process, yet every full
    # collection walked them all again: at 1,000,000 memories, one such pause of 130-370 ms in nearly every
    # opening of the Feedback page (16-55 ms with them frozen). Collected first, so no garbage is frozen;
    # once per process (a workbench built again, as tests do, is not frozen again).
    if gc.get_freeze_count() == 0:
        gc.collect()
        gc.freeze()
    try:
        instances = wb.thoughts.instances()
    except Exception as e:  # best effort, as upkeep: each Chat page summarises its own instance too
        log.warning("summaries at start skipped: %s", type(e).__name__)
        return
    for instance in instances:
        _summarise_quiet(wb, instance)


_SUMMARISING: set[str] = set()  # instances whose quiet chains a thread is summarising
_SUMMARISING_LOCK = threading.Lock()


def summarise_in_background(wb: Workbench, instance: str) -> None:
    """The chains of `instance` that went quiet, summarised by a thread of their own, at most one at a time
    an instance: no page waits for it. Each summary is an embedding and a write (and with an LLM, a call),
    and after a long quiet spell or an import there are many (at 1,000,000 memories, ten of them took a run
    of the Chat page 0.42 s). Failures are left to the next sweep, as the sweep leaves them."""
    with _SUMMARISING_LOCK:
        if instance in _SUMMARISING:
            return
    threading.Thread(target=_summarise_quiet, args=(wb, instance), name=f"summaries-{instance}",
                     daemon=True).start()


def _summarise_quiet(wb: Workbench, instance: str) -> None:
    """Summarise the quiet chains of `instance` unless another thread of the process is at it."""
    with _SUMMARISING_LOCK:
        if instance in _SUMMARISING:
            return
        _SUMMARISING.add(instance)
    try:
        result = uc.summarise_quiet_chains(wb, uc.InstanceRequest(instance=instance))
        if result.note:
            log.warning("%s: %s", instance, result.note)
    except Exception as e:  # best effort, as upkeep: the next sweep tries again
        log.warning("summaries of %s's quiet chains skipped: %s", instance, type(e).__name__)
    finally:
        with _SUMMARISING_LOCK:
            _SUMMARISING.discard(instance)


def current_instance() -> str:
    """The instance chosen in the sidebar (default: the INSTANCE setting)."""
    return st.session_state.get("instance") or get_workbench().settings.instance
