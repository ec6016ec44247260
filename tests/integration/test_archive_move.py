"""An instance moved whole through an archive keeps what the round trip of a year of use found lost on the
way (`/tmp/roundtrip` in the report of 2026-12-07): the time its active profile was chosen, and the
provenance marker that spares the restored instance's first deletion a scan of every key."""

from __future__ import annotations

import json
import zipfile

from core import usecases as uc
from core.conversation import provenance
from core.conversation.keys import (
    chain_feedback_key,
    chain_retrieved_key,
    chains_key,
    provenance_key,
    retrieved_by_key,
)


def _active(wb, instance: str) -> tuple:
    with wb.pool().connection() as conn:
        return conn.execute("SELECT name, updated_at FROM active_profile WHERE instance = %s",
                            (instance,)).fetchone()


def test_the_active_profile_keeps_the_time_it_was_chosen(workbench, instance, tmp_path):
    wb = workbench
    uc.add_memory(wb, uc.AddMemory(instance=instance, content="The ferry leaves at nine."))
    uc.save_profile(wb, uc.SaveProfile(profile=uc.FusionProfile(name="moved-profile", w_sem=0.5, w_text=0.3,
                                                                w_rec=0.2)))
    uc.activate_profile(wb, uc.ActivateProfile(instance=instance, name="moved-profile"))
    out = tmp_path / "p.zip"
    uc.export_archive(wb, uc.ExportArchive(instance=instance, out=out))
    uc.restore_archive(wb, uc.RestoreArchive(instance=instance + "-copy", path=out))
    assert _active(wb, instance + "-copy") == _active(wb, instance)

    # An archive written before the time travelled restores as before: the choice, made at the restore.
    older = tmp_path / "older.zip"
    with zipfile.ZipFile(out) as src, zipfile.ZipFile(older, "w") as z:
        for item in src.infolist():
            body = src.read(item)
            if item.filename == "manifest.json":
                manifest = json.loads(body)
                del manifest["active_since"]
                body = json.dumps(manifest).encode()
            z.writestr(item, body)
    uc.restore_archive(wb, uc.RestoreArchive(instance=instance + "-old", path=older))
    name, since = _active(wb, instance + "-old")
    assert name == "moved-profile" and since > _active(wb, instance)[1]


def _sets(r, instance: str) -> dict:
    """Every provenance set of the instance, by key."""
    out = {}
    for chain_id in r.zrange(chains_key(instance), 0, -1):
        for key in (chain_retrieved_key(instance, chain_id), chain_feedback_key(instance, chain_id)):
            out[key] = r.smembers(key)
            for memory_id in (out[key] if key.startswith("retrieved:") else ()):
                by = retrieved_by_key(instance, memory_id)
                out[by] = r.smembers(by)
    return out


def test_a_restore_into_an_empty_instance_marks_its_provenance_complete(workbench, instance, tmp_path):
    """The marker says the sets are complete; a restore notes them for every thought it writes, so they
    must equal what the first deletion's scan would build without it."""
    wb, dst = workbench, instance + "-copy"
    uc.remember(wb, uc.UiRememberParams(thought="Our orchard has forty quince trees.", chain_id="orchard",
                                        instance=instance))
    uc.remember(wb, uc.UiRememberParams(thought="How many quince trees are in the orchard?", chain_id="ask",
                                        instance=instance))
    out = tmp_path / "m.zip"
    uc.export_archive(wb, uc.ExportArchive(instance=instance, out=out))
    assert not wb.redis().exists(provenance_key(dst))
    uc.restore_archive(wb, uc.RestoreArchive(instance=dst, path=out))

    r = wb.redis()
    assert r.exists(provenance_key(dst))
    noted = _sets(r, dst)
    assert any(noted[k] for k in noted if k.startswith("retrieved:"))  # the question retrieved the statement
    r.delete(provenance_key(dst), *noted)
    provenance.ensure(wb.thoughts, dst)  # the scan the marker spares
    assert _sets(r, dst) == noted
