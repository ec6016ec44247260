"""The sidebar: each service's state with what to do when it is down, the models, the instance."""

from __future__ import annotations

import time

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from core import usecases as uc
from dashboard.resources import get_workbench
from dashboard.ui import SERVICE_FAILED, attempt

NEXT_INSTANCE = "instance_next"  # the instance a page switched to (`switch_instance`), for the next run
SERVICES_SHOWN = "sidebar_services"  # this run's services block and the statuses it shows (`service_failed`)
STATUS_TTL_S = 5  # how long a status in which every service answers is kept for every session


@st.cache_data(ttl=STATUS_TTL_S, show_spinner=False)
def _statuses() -> tuple[float, list[uc.ServiceStatus]]:
    """When they were probed, and the statuses: probed at most every 5 s for every session while the
    services answer, since every page and rerun draws the sidebar."""
    return time.monotonic(), uc.service_statuses(get_workbench())


def _current_statuses() -> list[uc.ServiceStatus]:
    """The cached statuses, unless they show a service down and were probed before this call: then probed
    again, so the sidebar turns green in the first run after the service answers again, not up to 5 s
    later (a service down costs a probe per run, as it cost one per 5 s)."""
    asked = time.monotonic()
    probed_at, statuses = _statuses()
    if probed_at >= asked or all(s.reachable for s in statuses):
        return statuses
    _statuses.clear()
    return _statuses()[1]


def service_failed(service: str) -> None:
    """A call of this run failed because `service` is down (the page showed the error): when the sidebar,
    drawn before the page from the cache, shows it up, probe again and show what is found now, in this
    run. It used to stay green for up to 5 s beside the page's "Postgres is unavailable". `service` may be
    one the sidebar does not list ("the embedded servers"): then any shown up is checked again."""
    shown = st.session_state.get(SERVICES_SHOWN)
    if shown is None:  # the sidebar is not drawn (a page run on its own)
        return
    slot, statuses = shown
    named = [s for s in statuses if s.name == service] or statuses
    if not any(s.reachable for s in named):
        return  # already shown down (a second failure of the same run)
    _statuses.clear()
    _show_services(slot, _statuses()[1])


SERVICE_FAILED.append(service_failed)


def _show_services(slot: DeltaGenerator, statuses: list[uc.ServiceStatus]) -> None:
    """Each service's state with what to do when it is down, in `slot` (drawn anew each time)."""
    st.session_state[SERVICES_SHOWN] = (slot, statuses)
    with slot.container():
        for s in statuses:
            if s.reachable:
                extra = f" · {s.detail}" if s.detail else ""
                st.markdown(f":green[●] **{s.name}** {s.version} — {s.mode}{extra}")
            else:
                st.markdown(f":red[●] **{s.name}** unavailable — {s.mode}")
                st.caption(" ".join(part.rstrip(".") + "." for part in (s.detail, s.hint) if part))
            if s.recovery:  # an embedded server that died, being started again or just restarted
                st.caption(f"{s.name} {s.recovery}")


@st.cache_data(ttl=30, show_spinner=False)
def _instances(default: str) -> list[str]:
    """The instances a user works on: not those an evaluation made (the explorer lists those)."""
    names = {n for n in uc.instance_names(get_workbench()) if not uc.is_evaluation_instance(n)}
    return sorted({*names, default})


def switch_instance(name: str) -> None:
    """Work on instance `name` from the next run on (this run's picker is drawn already, and a widget's
    value cannot change once drawn), and read the list of instances again, so that a new one is offered
    at once rather than when the cached list expires."""
    st.session_state[NEXT_INSTANCE] = name
    _instances.clear()


def render_sidebar() -> None:
    wb = get_workbench()
    with st.sidebar:
        st.caption("SERVICES")
        _show_services(st.empty(), _current_statuses())
        llm = wb.settings.llm_provider
        st.caption("MODELS")
        st.markdown(f"Embedder: `{attempt('load the embedder', lambda: uc.embedder_name(wb)) or '—'}`")
        if llm == "none":
            st.markdown("LLM: none — LLM steps are skipped; answers are extractive")
        else:
            st.markdown(f"LLM: {llm} (`{wb.settings.model_fast}` / `{wb.settings.model_deep}`)")
        st.caption("INSTANCE")
        current = st.session_state.pop(NEXT_INSTANCE, None) or st.session_state.get("instance") or wb.settings.instance
        known = attempt("list instances", lambda: _instances(wb.settings.instance)) or []
        instances = sorted({*known, current, wb.settings.instance})  # the cached list may lag behind
        st.session_state["instance"] = current
        st.selectbox("Instance", instances, key="instance", label_visibility="collapsed")
