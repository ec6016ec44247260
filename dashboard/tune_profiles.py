"""The Tune page's profiles: which one the instance uses (and since when, with one click back), activating
any profile, saving the sliders under a name, and deleting a saved profile."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import pandas as pd
import streamlit as st

from core import usecases as uc
from core.usecases.tuning import PROFILE_NAME_MAX
from dashboard.resources import get_workbench
from dashboard.tune_optimise import refused_name, replacement
from dashboard.ui import as_plain_line, attempt, confirm_in_dialog, humanize_age, show_error

K = "tune_prof_"  # session-state prefix


def _do(where: str, doing: str, action: Callable[[], str]) -> None:
    """Run a button's action (a callback: before the page reads the profiles again) and keep its outcome
    to show `where` the button is ("top" or "panel") on this run."""
    try:
        st.session_state[K + where] = ("ok", action())
    except Exception as e:  # noqa: BLE001  (shown as a message with what to do, never a traceback)
        st.session_state[K + where] = ("error", (e, doing))


def _show_outcome(where: str) -> None:
    kind, payload = st.session_state.pop(K + where, (None, None))
    if kind == "ok":
        st.success(payload, icon=":material/check_circle:")
    elif kind == "error":
        show_error(*payload)


def active_line(instance: str, listing: uc.ProfileList) -> None:
    """The instance's active profile and its last activation, with Undo."""
    last = listing.last_activation
    text = f"Chat turns in **{as_plain_line(instance)}** retrieve with **{as_plain_line(listing.active)}**"
    if last is None:
        st.caption(text + "; no activation to undo.")
        _show_outcome("top")
        return
    age = humanize_age((datetime.now(UTC) - last.at).total_seconds())
    left, right = st.columns([5, 1], vertical_alignment="center")
    left.caption(f"{text}, activated {age} ago ({last.at:%Y-%m-%d %H:%M} UTC) instead of "
                 f"**{as_plain_line(last.previous)}**.")
    right.button("Undo", key=K + "undo", icon=":material/undo:", width="stretch", on_click=_do,
                 args=("top", "undo the activation", lambda: _undo(instance)),
                 help=f"Makes {last.previous} active again; undoing again steps further back.")
    _show_outcome("top")


def _undo(instance: str) -> str:
    undone = uc.undo_activation(get_workbench(), uc.InstanceRequest(instance=instance))
    return f"{undone.previous} is active again for {instance} (instead of {undone.name})."


def _activate(instance: str) -> str:
    name = st.session_state[K + "pick"]
    uc.activate_profile(get_workbench(), uc.ActivateProfile(instance=instance, name=name))
    return f"{name} is now active for {instance}: the next chat turn retrieves with it."


def _save(instance: str, candidate: uc.FusionProfile) -> str:
    name = st.session_state.get(K + "name", "").strip()
    activate = st.session_state.get(K + "save_activate", False)
    profile = uc.FusionProfile.model_validate({**candidate.model_dump(), "name": name})
    replaced = replacement(get_workbench(), profile.name)  # as it was just before this save
    saved = uc.save_profile(get_workbench(), uc.SaveProfile(instance=instance, profile=profile,
                                                            activate=activate))
    st.session_state[K + "pick"] = saved.name
    return (f"Saved the sliders as {saved.name}" + (f", active for {instance}." if activate else ".")
            + (f" It {replaced.note}" if replaced else ""))


def _delete(name: str) -> bool:
    """Delete in the dialog: on failure it stays open with the reason."""
    if attempt(f"delete {name}", lambda: uc.delete_profile(get_workbench(), uc.DeleteProfile(name=name))) is None:
        return False
    st.session_state[K + "panel"] = ("ok", f"Deleted the profile {name}.")
    st.session_state.pop(K + "pick", None)
    return True


def _profile_rows(listing: uc.ProfileList) -> pd.DataFrame:
    return pd.DataFrame([{
        "profile": p.name, "kind": "preset" if p.name in listing.presets else "saved",
        "active": "✓" if p.name == listing.active else "", "method": p.method, "semantic": p.w_sem,
        "text": p.w_text, "recency": p.w_rec,
        "recency decay": uc.recency_label(p.tau_s) if p.method == "linear" else "by age rank (rrf)",
        "rrf k": p.rrf_k} for p in listing.profiles])


def profiles_panel(instance: str, listing: uc.ProfileList, candidate: uc.FusionProfile) -> None:
    """Every profile; activate one, delete a saved one, save the candidate sliders as a new one."""
    _show_outcome("panel")
    st.dataframe(_profile_rows(listing), hide_index=True, width="stretch", column_config={
        "semantic": st.column_config.NumberColumn(format="%.2f"), "text": st.column_config.NumberColumn(
            format="%.2f"), "recency": st.column_config.NumberColumn(format="%.2f")})
    names = [p.name for p in listing.profiles]
    if st.session_state.get(K + "pick") not in names:
        st.session_state[K + "pick"] = listing.active
    left, mid, right = st.columns([3, 1, 1], vertical_alignment="bottom")
    pick = left.selectbox("Profile", names, key=K + "pick", persist_state="page",
                          format_func=lambda n: n + (" (preset)" if n in listing.presets else ""))
    mid.button("Activate", key=K + "activate", width="stretch", disabled=pick == listing.active,
               on_click=_do, args=("panel", f"activate {pick}", lambda: _activate(instance)),
               help="Every later chat turn of this instance retrieves with it; Undo brings the previous back.")
    preset = pick in listing.presets
    if right.button("Delete", key=K + "delete", width="stretch", disabled=preset,
                    help="Shipped presets cannot be deleted." if preset else "Deletes this saved profile."):
        st.session_state[K + "deleting"] = pick
    if preset:
        st.caption(f"{as_plain_line(pick)} is a shipped preset: presets cannot be deleted, only saved profiles.")
    if deleting := st.session_state.get(K + "deleting"):
        confirm_in_dialog("Delete profile?", f"Delete the saved profile **{as_plain_line(deleting)}**? It "
                          "cannot be undone.", yes="Yes, delete", key=K + "confirm",
                          on_yes=lambda: _delete(deleting),
                          on_close=lambda: st.session_state.pop(K + "deleting", None))

    st.markdown("**Save the sliders as a profile**")
    st.caption(f"The candidate: {uc.describe_profile(candidate)}")
    left, mid, right = st.columns([3, 2, 1], vertical_alignment="bottom")
    name = left.text_input("Name", key=K + "name", persist_state="page", max_chars=PROFILE_NAME_MAX,
                           placeholder="e.g. my-recent-first")
    mid.checkbox("and make it active", key=K + "save_activate", persist_state="page")
    right.button("Save", key=K + "save", width="stretch", disabled=not name.strip(), on_click=_do,
                 args=("panel", "save the profile", lambda: _save(instance, candidate)))
    if name.strip() in names and (replacing := replacement(get_workbench(), name)) is not None:
        # Said before the click: saving over a profile in use changes chat at once, and undo cannot help.
        st.warning(as_plain_line(replacing.warning, 600), icon=":material/warning:")
    refused_name(get_workbench(), name)
