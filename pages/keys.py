"""API keys (admin): the keys the HTTP API and the MCP server accept. Create one (its secret is shown once,
right after), see every key with its scope, revoke one after a confirmation step."""

from __future__ import annotations

from datetime import UTC, datetime

import streamlit as st

from core import usecases as uc
from dashboard.resources import current_instance, get_workbench
from dashboard.ui import as_plain_line, attempt, confirm

st.title("API keys")
st.caption("Keys for the HTTP API and the MCP server, sent as `Authorization: Bearer <key>`. Each key may "
           "read and write only the instances it names (or only read them). Only a hash of a key is stored, "
           "so a key is shown once, when it is created.")

wb = get_workbench()
instance = current_instance()


def when(moment: datetime | None) -> str:
    return f"{moment.astimezone(UTC):%Y-%m-%d %H:%M} UTC" if moment else ""


# The new key, in the one run right after its creation: popped, so any later rerun no longer shows it.
if created := st.session_state.pop("keys_created", None):
    name, secret = created
    with st.container(border=True):
        st.success(f"API key **{as_plain_line(name)}** created.", icon=":material/key:")
        st.warning("Copy the key now: it will not be shown again. Only its hash is stored; if it is lost, "
                   "revoke it and create another.", icon=":material/warning:")
        st.code(secret, language=None)
if done := st.session_state.pop("keys_done", None):
    st.success(done, icon=":material/check_circle:")

keys = attempt("list the API keys", lambda: uc.list_keys(wb))
if keys is None:
    st.stop()

st.subheader("Keys")
if keys:
    st.dataframe([{"name": k.name, "prefix": k.prefix + "…", "instances": ", ".join(k.instances),
                   "read-only": k.read_only, "created": when(k.created_at), "revoked": when(k.revoked_at)}
                  for k in keys], hide_index=True, width="stretch")
else:
    st.info("No API keys yet. Create one below (or with `workbench keys create`).")

active = [k.name for k in keys if k.revoked_at is None]
if active:
    left, right = st.columns([3, 1], vertical_alignment="bottom")
    target = left.selectbox("Key to revoke", active, index=None, key="keys_revoke_target",
                            placeholder="Choose an active key")
    if right.button("Revoke…", key="keys_revoke", disabled=target is None):
        st.session_state["keys_confirm"] = target
        st.rerun()
if pending := st.session_state.get("keys_confirm"):
    answer = confirm(f"Revoke the API key **{as_plain_line(pending, 80)}**? Every client using it is refused "
                     "from then on, by every server. It cannot be undone, and its name stays taken.",
                     yes="Yes, revoke", key="keys_confirm", icon=":material/key_off:")
    if answer is not None:
        st.session_state.pop("keys_confirm", None)
    if answer:
        revoked = attempt("revoke the key", lambda: uc.revoke_key(wb, uc.KeyRef(name=pending)))
        if revoked is not None:
            st.session_state["keys_done"] = f"API key **{as_plain_line(revoked.name)}** revoked."
            st.rerun()
    elif answer is False:
        st.rerun()

st.subheader("Create a key")
known = attempt("list the instances", lambda: uc.instance_names(wb))
options = sorted({*(known or []), instance})
# The form's widgets are keyed by a version, bumped after a key is made: a fresh, empty form then, while a
# refused attempt keeps what was typed.
version = st.session_state.get("keys_form_version", 0)
with st.form("keys_create"):
    name = st.text_input("Name", key=f"keys_name_{version}", placeholder="e.g. ci-bot",
                         help="Letters, digits, '.', '_' or '-'; it names the key in lists and logs. "
                              "A name stays taken after its key is revoked.")
    chosen = st.multiselect("Instances", options, default=[instance], key=f"keys_instances_{version}",
                            accept_new_options=True,
                            help="The instances the key may read and write; type a name to add one "
                                 "not listed.")
    read_only = st.checkbox("Read-only", key=f"keys_read_only_{version}",
                            help="The key may read its instances but not write to them.")
    submitted = st.form_submit_button("Create key", type="primary")
if submitted and not chosen:  # the request's own refusal named a field and a list length, not the picker
    st.error("**Could not create the key.** Choose at least one instance under **Instances**: a key may use "
             "only the instances chosen there.", icon="⚠️")
elif submitted:
    made = attempt("create the key", lambda: uc.create_key(
        wb, uc.CreateKey(name=name.strip(), instances=chosen, read_only=read_only)))
    if made is not None:
        st.session_state["keys_created"] = (made.key.name, made.secret)
        st.session_state["keys_form_version"] = version + 1
        st.rerun()
