"""The sidebar: each service's state with what to do when it is down, the models, the instance."""

from __future__ import annotations

import streamlit as st

from core import usecases as uc
from dashboard.resources import get_workbench
from dashboard.ui import attempt

NEXT_INSTANCE = "instance_next"  # the instance a page switched to (`switch_instance`), for the next run


@st.cache_data(ttl=5, show_spinner=False)
def _statuses() -> list[uc.ServiceStatus]:
    return uc.service_statuses(get_workbench())


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
        for s in _statuses():
            if s.reachable:
                extra = f" · {s.detail}" if s.detail else ""
                st.markdown(f":green[●] **{s.name}** {s.version} — {s.mode}{extra}")
            else:
                st.markdown(f":red[●] **{s.name}** unavailable — {s.mode}")
                st.caption(" ".join(part.rstrip(".") + "." for part in (s.detail, s.hint) if part))
            if s.recovery:  # an embedded server that died, being started again or just restarted
                st.caption(f"{s.name} {s.recovery}")
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
