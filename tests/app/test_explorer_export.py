"""AppTest of the Memory explorer's export buttons: the whole instance as an archive (prepared, then
offered for download) that restores into another instance, and an open chain as JSON."""

from __future__ import annotations

import json
import re
from pathlib import Path

import streamlit as st

from core import usecases as uc
from core.conversation.turn import Remember, UiRememberParams
from tests.app.conftest import open_page


def open_explorer(instance: str):
    st.cache_data.clear()  # the sidebar's instance list must include this test's instance
    at = open_page("pages/explorer.py", instance=instance)
    assert not at.exception, at.exception
    return at


def test_export_the_instance_and_a_chain(app_env, workbench, instance):
    Remember(workbench).run(UiRememberParams(thought="The quince orchard has forty trees.", chain_id="orchard"),
                            instance=instance)
    uc.add_memory(workbench, uc.AddMemory(instance=instance, content="Quinces ripen in October."))
    at = open_explorer(instance)
    assert not [b for b in at.get("download_button") if b.label == "Download the archive"]  # not before asked

    at.button(key="xp_archive_prepare").click()
    at.run()
    assert not at.exception, at.exception
    assert [b for b in at.get("download_button") if b.label == "Download the archive"]
    prepared = at.session_state["xp_archive"]
    archive = Path(prepared.path)
    assert uc.is_archive(archive) and archive.name.startswith(instance) and archive.name.endswith(".zip")
    assert prepared.counts["chains"] == 1 and prepared.counts["memories"] >= 2
    held = next(c.value for c in at.caption if " MB" in c.value)  # "1 profile, 3 memories, 1 chain, …"
    # Singular for one ("1 chain"); the profiles counted may be many, others' tests saved too ("11 profiles").
    assert "1 chain," in held and not re.search(r"(?<!\d)1 (?:chains|profiles)\b", held)
    restored = uc.restore_archive(workbench, uc.RestoreArchive(instance=instance + "-x", path=archive))
    assert restored.created["thoughts"] == 3 and restored.created["memories"] == prepared.counts["memories"]

    at.button(key="xp_archive_prepare").click()  # a new archive replaces the previous file
    at.run()
    assert not archive.exists() and Path(at.session_state["xp_archive"].path).exists()

    at.radio(key="xp_view").set_value("Chains")
    at.run()
    at.selectbox(key="xp_chain_pick").set_value("orchard")
    at.run()
    assert not at.exception, at.exception
    assert [b for b in at.get("download_button") if b.label == "Export JSON"]  # serves uc.chain_export's
    document = uc.chain_export(workbench, uc.ChainRef(instance=instance, chain_id="orchard")).document
    assert "forty trees" in json.dumps(json.loads(document))

