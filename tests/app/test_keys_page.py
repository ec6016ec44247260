"""AppTest of the API keys page: create a key (its secret shown once, then never again), see it listed,
a refused name keeps the form's input, revoke with a confirmation step."""

from __future__ import annotations

import uuid

import pytest
from streamlit.testing.v1 import AppTest

from core import usecases as uc
from core.errors import Unauthenticated
from tests.app.conftest import open_page


def widget(elements, label: str):
    return next(e for e in elements if e.label == label)


def listed(at: AppTest) -> list[dict]:
    return at.dataframe[0].value.to_dict("records") if at.dataframe else []


def create(at: AppTest, name: str, *, extra_instance: str | None = None, read_only: bool = False) -> AppTest:
    widget(at.text_input, "Name").input(name)
    if extra_instance:
        widget(at.multiselect, "Instances").select(extra_instance)
    if read_only:
        widget(at.checkbox, "Read-only").check()
    return widget(at.button, "Create key").click().run()


def test_create_see_the_secret_once_then_revoke(app_env, workbench, instance):
    name = f"page-{uuid.uuid4().hex[:8]}"
    at = open_page("pages/keys.py", instance=instance)
    assert not at.exception and at.title[0].value == "API keys"
    assert widget(at.multiselect, "Instances").value == [instance]  # the sidebar's instance by default

    at = create(at, name, extra_instance="typed-in", read_only=True)
    assert not at.exception and not at.error
    [code] = at.code
    secret = code.value
    assert secret.startswith("wb_")
    assert any("will not be shown again" in w.value for w in at.warning)
    principal = uc.authenticate(workbench, secret)
    assert (principal.name, principal.instances, principal.read_only) == (name, [instance, "typed-in"], True)
    row = next(r for r in listed(at) if r["name"] == name)
    assert row["prefix"] == secret[:10] + "…" and row["instances"] == f"{instance}, typed-in"
    assert row["read-only"] and row["revoked"] == "" and row["created"].endswith("UTC")
    assert widget(at.text_input, "Name").value == ""  # a fresh form for the next key

    at.run()  # any later run: the secret is gone from the page for good
    assert not at.code and "keys_created" not in at.session_state and secret not in str(at.session_state)

    at.selectbox(key="keys_revoke_target").set_value(name).run()
    widget(at.button, "Revoke…").click().run()
    shown = name.replace("-", "\\-")  # as Markdown, escaped
    assert any(f"Revoke the API key **{shown}**" in w.value for w in at.warning)
    assert uc.authenticate(workbench, secret)  # nothing happens before the confirmation
    widget(at.button, "Cancel").click().run()
    assert not any("Revoke the API key" in w.value for w in at.warning)

    widget(at.button, "Revoke…").click().run()
    widget(at.button, "Yes, revoke").click().run()
    assert not at.exception
    assert any(f"API key **{shown}** revoked" in s.value for s in at.success)
    assert next(r for r in listed(at) if r["name"] == name)["revoked"].endswith("UTC")
    assert all(name not in s.options for s in at.selectbox if s.key == "keys_revoke_target")
    with pytest.raises(Unauthenticated):
        uc.authenticate(workbench, secret)


def test_a_refused_name_says_why_and_keeps_the_input(app_env, workbench, instance):
    name = f"page-{uuid.uuid4().hex[:8]}"
    uc.create_key(workbench, uc.CreateKey(name=name, instances=[instance]))
    at = open_page("pages/keys.py", instance=instance)
    at = create(at, name)
    assert not at.exception and not at.code
    assert "pick another name" in at.error[0].value
    assert widget(at.text_input, "Name").value == name

    widget(at.text_input, "Name").input("no spaces allowed")
    widget(at.button, "Create key").click().run()
    assert "name must be" in at.error[0].value and not at.code
