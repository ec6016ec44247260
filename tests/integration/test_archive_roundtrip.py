"""Export a whole instance to one archive and restore it into another: everything comes back (every
Redis hash field, every index row, banks, past tasks, profiles), a second restore creates nothing, and
`--with-vectors` keeps the vectors byte for byte.

Ids that change by design in another instance (see `core.archive.ids`): thought ids (the feedback key
`voice:feedback:<answer id>` is shared by every instance), tool-execution ids, and serial keys (past
tasks' pks, bank entries' `seq`, bank events' `id`). The comparison matches them up from the data
(thoughts by chain and sequence number, past tasks by user and time) and compares all the rest.
"""

from __future__ import annotations

import json
import os
import zipfile
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from core import usecases as uc
from core.conversation.keys import (chain_key, chain_meta_key, chains_key, feedback_index_key, feedback_key,
                                    feedback_pending_key, thought_key)
from core.errors import InvalidInput, NotFound
from core.runtime import Workbench
from tests.support.cli import in_process_cli


@pytest.fixture(scope="module")
def llm_wb(request):
    """Answers come from the fake LLM server, so they are indexed and carry the LLM's fields."""
    settings = request.getfixturevalue("settings")
    from tests.support.fake_llm import FakeLLMServer
    with FakeLLMServer() as srv:
        wb = Workbench(settings.model_copy(update={"llm_base_url": srv.url + "/v1", "llm_max_retries": 2,
                                                   "llm_timeout_s": 5.0}))
        yield wb
        wb.close()


def fill(wb: Workbench, instance: str) -> None:
    """An instance with something of every kind, made through the product's own flows."""
    first = uc.remember(wb, uc.UiRememberParams(thought="Our orchard has forty quince trees.",
                                                chain_id="orchard", instance=instance, tags=["farm"]),
                        origin=uc.Origin(source="cli"))
    uc.remember(wb, uc.UiRememberParams(thought="Thanks! How many are pears?", chain_id="orchard",
                                        instance=instance), origin=uc.Origin(source="cli"))
    uc.remember(wb, uc.UiRememberParams(thought="The bike needs new brake pads.", instance=instance,
                                        request_id="bike-1"), origin=uc.Origin(source="mcp", key="k1"))
    uc.rate_answer(wb, uc.RateAnswer(instance=instance, answer_id=first.thought2_id, rating="up",
                                     comment="spot on"))
    moved = uc.add_memory(wb, uc.AddMemory(instance=instance, content="I moved to Lisbon in March 2023.",
                                           tags=["move"], metadata={"source": "test"},
                                           event_time=datetime(2023, 3, 4, 10, tzinfo=UTC)))
    # Relevance marks on a plain memory and on a thought's row (whose id is renamed with the thought).
    uc.mark_relevance(wb, uc.MarkRelevance(instance=instance, query="Where do I live?", memory_id=moved.id,
                                           relevant=True))
    uc.mark_relevance(wb, uc.MarkRelevance(instance=instance, query="Where do I live?",
                                           memory_id=first.thought1_id, relevant=False))
    for i in range(7):  # past the threshold: a summary, compressed entries and an event
        uc.bank_add(wb, uc.BankAdd(instance=instance, bank="deploy", entry=uc.MemoryEntry(
            command=f"docker compose up -d svc{i}", result="started", tags=["docker"],
            timestamp=datetime(2024, 1, 1, tzinfo=UTC) + timedelta(minutes=i))))
    t0 = datetime(2024, 5, 1, 9, tzinfo=UTC)
    uc.ingest_texts(wb, uc.IngestTexts(items=[
        uc.ProducedTextInput(instance=instance, user_id="ana", task="meeting minutes", title="Q2 planning",
                             production="We agreed to ship the importer in June.", created_at=t0,
                             source_key="q2.md"),
        uc.ProducedTextInput(instance=instance, user_id="ana", task="meeting minutes", title="Q2 planning v2",
                             production="We agreed to ship the importer and the exporter in June.",
                             created_at=t0 + timedelta(days=1), source_key="q2.md"),
        uc.ProducedTextInput(instance=instance, user_id="bo", task="email", title="Hello",
                             production="A short email about the garden.", created_at=t0)]))
    uc.internal_memory(wb, uc.PastTaskQuery(instance=instance, user_id="ana", query="importer June",
                                            max_distance=1.5))
    uc.save_profile(wb, uc.SaveProfile(profile=uc.FusionProfile(name="archive-test", w_sem=0.5, w_text=0.3,
                                                                w_rec=0.2)))
    uc.activate_profile(wb, uc.ActivateProfile(instance=instance, name="archive-test"))


def snapshot(wb: Workbench, instance: str) -> dict:
    """Everything the instance holds, as the stores hold it, less the serial keys."""
    r = wb.redis()
    chains = {}
    for chain_id, last_at in r.zrange(chains_key(instance), 0, -1, withscores=True):
        scored = r.zrange(chain_key(instance, chain_id), 0, -1, withscores=True)
        # A turn's answer and metrics share a time: ordered by their seq, not by their ids as Redis does.
        thoughts = sorted(((s, r.hgetall(thought_key(instance, chain_id, t))) for t, s in scored),
                          key=lambda pair: (pair[0], int(pair[1]["seq"])))
        feedback = {t: (r.hgetall(feedback_key(t)), r.zscore(feedback_index_key(instance), t),
                        r.zscore(feedback_pending_key(instance), t))
                    for t, _ in scored if r.exists(feedback_key(t))}
        chains[chain_id] = {"last_at": last_at, "meta": r.hgetall(chain_meta_key(instance, chain_id)),
                            "thoughts": thoughts, "feedback": feedback}
    with wb.pool().connection() as conn:
        def rows(query: str) -> list:
            return [row[0] for row in conn.execute(query, {"i": instance})]

        memories = rows("SELECT to_jsonb(m) - 'tsv' - 'embedding' FROM memory m WHERE instance = %(i)s "
                        "ORDER BY created_at, id")
        banks = [rows("SELECT to_jsonb(x) FROM bank x WHERE instance = %(i)s ORDER BY name"),
                 rows("SELECT to_jsonb(x) FROM bank_summary x WHERE instance = %(i)s ORDER BY ts, id"),
                 rows("SELECT to_jsonb(x) - 'seq' FROM bank_entry x WHERE instance = %(i)s ORDER BY seq"),
                 rows("SELECT to_jsonb(x) - 'id' FROM bank_event x WHERE instance = %(i)s ORDER BY id")]
        tasks = rows("""SELECT jsonb_build_object('e', to_jsonb(e) - 'pk' - 'task_type_pk', 'type', to_jsonb(tt) - 'pk',
                               'text', to_jsonb(pt) - 'pk' - 'execution_pk', 'pks', jsonb_build_array(e.pk, pt.pk),
                               'versions', (SELECT jsonb_agg(to_jsonb(v) - 'embedding' - 'produced_text_pk'
                                            ORDER BY v.created_at) FROM past_task_text_version v
                                            WHERE v.produced_text_pk = pt.pk))
                        FROM past_task_execution e JOIN past_task_type tt ON tt.pk = e.task_type_pk
                        JOIN past_task_produced_text pt ON pt.execution_pk = e.pk
                        WHERE e.instance = %(i)s ORDER BY e.user_id, e.created_at""")
        tools = rows("SELECT to_jsonb(x) - 'pk' FROM past_task_tool_execution x WHERE instance = %(i)s "
                     "ORDER BY created_at")
        active = rows("SELECT name FROM active_profile WHERE instance = %(i)s")
        marks = rows("SELECT jsonb_build_object('query', query, 'id', memory_id, 'relevant', relevant, "
                     "'at', marked_at) FROM relevance_mark WHERE instance = %(i)s ORDER BY query, relevant")
        activations = rows("SELECT jsonb_build_object('name', name, 'previous', previous, 'at', at) "
                           "FROM profile_activation WHERE instance = %(i)s ORDER BY id")
    return {"chains": chains, "memories": memories, "banks": banks, "tasks": tasks, "tools": tools,
            "active": active, "marks": marks, "activations": activations}


def translated(source: dict, target: dict, src: str, dst: str) -> dict:
    """The source snapshot with the ids that change by design replaced by the target's, matched up from
    the data: thoughts by chain and sequence number, past-task pks by user and time, tool executions by
    time. Everything else must then be equal."""
    text = json.dumps(source, sort_keys=True, default=str)
    # What the first turn was told stays as it was told: "instance '<src>' is new" (a note, kept verbatim).
    told = f"instance '{src}' is new"
    text = text.replace(told, "\0told\0")
    renames = {src: dst}
    for chain_id, chain in source["chains"].items():
        theirs = {h["seq"]: h["id"] for _, h in target["chains"][chain_id]["thoughts"]}
        renames.update({h["id"]: theirs[h["seq"]] for _, h in chain["thoughts"]})
    for mine, theirs in zip(source["tools"], target["tools"], strict=True):
        renames[mine["execution_id"]] = theirs["execution_id"]
    for old, new in renames.items():  # unique strings (an instance name, uuids), also inside JSON texts
        text = text.replace(old, new)
    out = json.loads(text.replace("\0told\0", told))
    pks = {}
    for mine, theirs in zip(out["tasks"], target["tasks"], strict=True):
        pks.update(zip(mine["pks"], theirs["pks"], strict=True))
        mine["pks"] = theirs["pks"]
        for v_mine, v_theirs in zip(mine["versions"], theirs["versions"], strict=True):
            pks[v_mine.pop("pk")] = v_theirs["pk"]
            v_mine["pk"] = v_theirs["pk"]

    def renumber(value):
        if isinstance(value, dict):
            return {k: (renumber_pk(v) if k.endswith(("_pk", "_pks")) or k == "dropped" else renumber(v))
                    for k, v in value.items()}
        return [renumber(v) for v in value] if isinstance(value, list) else value

    def renumber_pk(v):
        return [pks.get(x, x) for x in v] if isinstance(v, list) else pks.get(v, v)

    out["tools"] = [renumber(t) for t in out["tools"]]
    return out


def plain(snap: dict) -> dict:
    return json.loads(json.dumps(snap, sort_keys=True, default=str))


def test_export_then_restore_into_another_instance_is_exact_and_idempotent(llm_wb, tmp_path):
    wb, src, dst = llm_wb, "t-arch-src-" + os.urandom(4).hex(), "t-arch-dst-" + os.urandom(4).hex()
    fill(wb, src)
    out = tmp_path / "whole.zip"
    exported = uc.export_archive(wb, uc.ExportArchive(instance=src, out=out))
    assert uc.is_archive(out) and not out.with_name(f".{out.name}.partial").exists()
    assert oct(out.stat().st_mode & 0o777) == "0o600"
    counts = dict(exported.counts)
    assert counts.pop("profiles") >= 1 and counts.pop("memories") >= 7
    assert counts == {"banks": 1, "bank_summaries": 1, "bank_entries": 7, "bank_events": 1, "past_tasks": 2,
                      "text_versions": 3, "tool_executions": 1, "chains": 2, "thoughts": 9, "feedback": 3,
                      "relevance_marks": 2, "profile_activations": 1, "deleted": 0}
    with zipfile.ZipFile(out) as z:
        manifest = json.loads(z.read("manifest.json"))
        assert manifest["format"] == "memory-workbench-archive" and manifest["version"] == 1
        assert manifest["embedder"] == wb.embedder.name and manifest["active_profile"] == "archive-test"

    steps = []
    restored = uc.restore_archive(wb, uc.RestoreArchive(instance=dst, path=out),
                                  progress=lambda d, t, w: steps.append((d, t, w)))
    assert restored.created == exported.counts | {"profiles": 0}  # the profile was there already
    assert steps and steps[-1][0] == steps[-1][1]
    before, after = snapshot(wb, src), snapshot(wb, dst)
    assert after["chains"] and after["memories"] and after["tools"] and len(after["marks"]) == 2
    assert translated(before, after, src, dst) == plain(after)

    again = uc.restore_archive(wb, uc.RestoreArchive(instance=dst, path=out))
    assert again.again and not any(again.created.values())
    assert plain(snapshot(wb, dst)) == plain(after)

    # The restored instance works like any other: a follow-up scores the restored last answer, and the
    # profile's activation can be undone there as in the source.
    uc.remember(wb, uc.UiRememberParams(thought="And the pears?", chain_id="orchard", instance=dst))
    assert snapshot(wb, src) == before
    undone = uc.undo_activation(wb, uc.InstanceRequest(instance=dst))
    assert (undone.name, undone.previous) == ("archive-test", "balanced-default")

    with pytest.raises(InvalidInput, match="already holds data"):
        uc.restore_archive(wb, uc.RestoreArchive(instance=src, path=out))
    other = tmp_path / "other.zip"
    uc.export_archive(wb, uc.ExportArchive(instance=dst, out=other))
    with pytest.raises(InvalidInput, match="already holds data"):  # not the archive restored there
        uc.restore_archive(wb, uc.RestoreArchive(instance=src, path=other))


def test_with_vectors_keeps_them_byte_exact(workbench, instance, tmp_path):
    wb, dst = workbench, instance + "-copy"
    for text in ("Tea with lemon in the morning.", "The ferry leaves at nine.", "Rosemary grows by the door."):
        uc.add_memory(wb, uc.AddMemory(instance=instance, content=text))
    uc.ingest_texts(wb, uc.IngestTexts(items=[uc.ProducedTextInput(
        instance=instance, user_id="ana", task="note", title="Ferry", production="Nine o'clock, pier 2.")]))
    out = tmp_path / "v.zip"
    uc.export_archive(wb, uc.ExportArchive(instance=instance, out=out, with_vectors=True))
    result = uc.restore_archive(wb, uc.RestoreArchive(instance=dst, path=out))
    assert not result.notes

    def vectors(name: str) -> dict:
        with wb.pool().connection() as conn:
            rows = conn.execute("SELECT content, embedding, embedding_model FROM memory WHERE instance = %s "
                                "UNION ALL SELECT v.title, v.embedding, v.embedding_model FROM "
                                "past_task_text_version v JOIN past_task_produced_text pt ON pt.pk = "
                                "v.produced_text_pk JOIN past_task_execution e ON e.pk = pt.execution_pk "
                                "WHERE e.instance = %s", (name, name)).fetchall()
        return {c: (np.asarray(v.to_numpy(), dtype="<f4").tobytes(), m) for c, v, m in rows}

    assert vectors(dst) == vectors(instance) and len(vectors(dst)) == 4


def test_vectors_of_another_model_are_made_again_with_the_active_one(workbench, keyword_workbench, instance,
                                                                     tmp_path):
    uc.add_memory(workbench, uc.AddMemory(instance=instance, content="The ferry leaves at nine."))
    out = tmp_path / "w.zip"
    uc.export_archive(workbench, uc.ExportArchive(instance=instance, out=out, with_vectors=True))
    result = uc.restore_archive(keyword_workbench, uc.RestoreArchive(instance=instance + "-kw", path=out))
    assert result.created["memories"] == 1
    assert any(keyword_workbench.embedder.name in note for note in result.notes)
    assert keyword_workbench.index.count(instance + "-kw", model=keyword_workbench.embedder.name) == 1


def test_a_restored_important_copy_is_not_made_twice(workbench, instance, tmp_path):
    """An important copy's id is derived from its message's; the message got a new id in the copy and the
    copy's did not, so the next summary of the chain wrote a second one beside it."""
    from core.formation.summaries import summarise_chain

    wb, dst = workbench, instance + "-copy"
    uc.remember(wb, uc.UiRememberParams(thought="The alarm code is 4711.", chain_id="codes", tags=["important"],
                                        instance=instance))
    out = tmp_path / "i.zip"
    uc.export_archive(wb, uc.ExportArchive(instance=instance, out=out))
    uc.restore_archive(wb, uc.RestoreArchive(instance=dst, path=out))

    def important(name: str) -> list[tuple[str, str]]:
        with wb.pool().connection() as conn:
            return conn.execute("SELECT id, metadata->>'source_thought' FROM memory WHERE instance = %s AND "
                                "kind = 'important'", (name,)).fetchall()

    summarise_chain(wb, dst, "codes", reason="quiet")
    [(copy_id, source)] = important(dst)
    [(original_id, _)] = important(instance)
    assert copy_id != original_id and copy_id == f"important-{source}"
    assert wb.thoughts.get_many(dst, "codes", [source])  # the restored message it names


def test_an_instance_with_nothing_stored_is_not_exported(workbench, instance, tmp_path):
    with pytest.raises(NotFound, match="holds nothing to export"):
        uc.export_archive(workbench, uc.ExportArchive(instance=instance, out=tmp_path / "e.zip"))
    assert not list(tmp_path.iterdir())


def test_dry_run_writes_nothing(workbench, instance, tmp_path):
    uc.add_memory(workbench, uc.AddMemory(instance=instance, content="Dry runs write nothing."))
    out = tmp_path / "d.zip"
    uc.export_archive(workbench, uc.ExportArchive(instance=instance, out=out))
    result = uc.restore_archive(workbench, uc.RestoreArchive(instance=instance + "-dry", path=out, dry_run=True))
    # What it would write into the empty instance (it said 0 of everything), and nothing written.
    assert result.dry_run and result.counts["memories"] == result.created["memories"] == 1
    assert workbench.index.count(instance + "-dry") == 0


def test_bad_archives_are_refused_with_a_clear_message(workbench, instance, tmp_path):
    uc.add_memory(workbench, uc.AddMemory(instance=instance, content="Something to export."))
    good = tmp_path / "good.zip"
    uc.export_archive(workbench, uc.ExportArchive(instance=instance, out=good))
    data = good.read_bytes()

    truncated = tmp_path / "truncated.zip"
    truncated.write_bytes(data[: len(data) // 2])
    assert uc.is_archive(truncated)
    with pytest.raises(InvalidInput, match="truncated or damaged"):
        uc.restore_archive(workbench, uc.RestoreArchive(instance=instance + "-x", path=truncated))

    damaged = tmp_path / "damaged.zip"
    with zipfile.ZipFile(good) as z:
        info = z.getinfo("memories.jsonl")
    header = data[info.header_offset:info.header_offset + 30]
    start = info.header_offset + 30 + int.from_bytes(header[26:28], "little") + int.from_bytes(header[28:30],
                                                                                                 "little")
    flipped = bytearray(data)
    flipped[start + info.compress_size // 2] ^= 0xFF
    damaged.write_bytes(bytes(flipped))
    with pytest.raises(InvalidInput, match="truncated or damaged"):
        uc.restore_archive(workbench, uc.RestoreArchive(instance=instance + "-x", path=damaged))

    foreign = tmp_path / "foreign.zip"
    with zipfile.ZipFile(foreign, "w") as z:
        z.writestr("manifest.json", json.dumps({"format": "something-else"}))
    assert not uc.is_archive(foreign)
    with pytest.raises(InvalidInput, match="not a Memory Workbench archive"):
        uc.restore_archive(workbench, uc.RestoreArchive(instance=instance + "-x", path=foreign))

    text = tmp_path / "notes.txt"
    text.write_text("hello")
    with pytest.raises(InvalidInput, match="not a Memory Workbench archive"):
        uc.restore_archive(workbench, uc.RestoreArchive(instance=instance + "-x", path=text))

    newer = tmp_path / "newer.zip"
    with zipfile.ZipFile(good) as src, zipfile.ZipFile(newer, "w") as z:
        for item in src.infolist():
            body = src.read(item)
            if item.filename == "manifest.json":
                body = json.dumps({**json.loads(body), "version": 2}).encode()
            z.writestr(item, body)
    with pytest.raises(InvalidInput, match="version 2 is newer than this workbench reads"):
        uc.restore_archive(workbench, uc.RestoreArchive(instance=instance + "-x", path=newer))
    assert workbench.index.count(instance + "-x") == 0


@pytest.fixture
def run(settings, workbench, monkeypatch):
    return in_process_cli(settings, workbench, monkeypatch)


def test_export_command_checks_the_output_path_first(run, tmp_path):
    code, out, err = run("export", "--instance", "anything", str(tmp_path / "no" / "a.zip"))
    assert (code, out) == (2, "") and err.count("\n") == 1 and "folder" in err and "does not exist" in err
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    if os.geteuid() != 0:  # root writes anywhere
        code, _, err = run("export", str(locked / "a.zip"))
        assert code == 2 and "cannot be written" in err
    code, _, err = run("export", str(tmp_path))
    assert code == 2 and "is a folder" in err


def test_export_command_writes_an_archive(run, workbench, instance, tmp_path):
    uc.add_memory(workbench, uc.AddMemory(instance=instance, content="From the command line."))
    out = tmp_path / "cli.zip"
    code, printed, err = run("export", "--instance", instance, str(out))
    assert code == 0, err
    assert json.loads(printed)["counts"]["memories"] == 1 and uc.is_archive(out)
    # A dry run says what the archive holds, as it says what another file would add (it said nothing, and
    # its preview counted 0 of everything: an archive has no records of a file's kind).
    code, printed, err = run("import", str(out), "--instance", instance + "-back", "--dry-run")
    assert code == 0, err
    said = next(line for line in err.splitlines() if line.startswith("cli.zip: an archive of instance"))
    assert f"of instance {instance!r} (" in said and "memories 1" in said  # and the profiles saved, if any
    assert json.loads(printed)["adds"] in err and workbench.index.count(instance + "-back") == 0
    # `workbench import` tells the archive from its first bytes and restores it.
    code, printed, err = run("import", str(out), "--instance", instance + "-back")
    assert code == 0, err
    assert json.loads(printed)["restored"]["created"]["memories"] == 1
    assert workbench.index.count(instance + "-back") == 1
