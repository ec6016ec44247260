"""Past tasks on real Postgres: search semantics (the user's own texts, the latest embedded version of each,
strictly below max_distance, at most n_max, nearest first), versions, deletion, the tool execution record.

The keyword embedder makes every distance a formula: a text's vector counts its vocabulary words.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from click.testing import CliRunner
from pydantic import ValidationError

from core import usecases as uc
from core.errors import InvalidInput, NotFound
from core.past_tasks.models import PastTaskQuery
from core.past_tasks.search import history, run_internal_memory, search_past_tasks
from core.past_tasks.store import PastTaskStore, ProducedTextInput, text_from_file


@pytest.fixture
def store(keyword_workbench) -> PastTaskStore:
    return PastTaskStore(keyword_workbench.pool(), keyword_workbench.embedder)


def text(instance, user, title, production, **kw) -> ProducedTextInput:
    return ProducedTextInput(instance=instance, user_id=user, task=kw.pop("task", "note"), title=title,
                             production=production, **kw)


def search(wb, instance, user, query, **kw):
    q = PastTaskQuery(instance=instance, user_id=user, query=query, **kw)
    return search_past_tasks(wb.pool(), wb.embedder, q)


def test_distance_bound_is_strict(keyword_workbench, store, instance):
    [stored] = store.ingest([text(instance, "ann", "paris", "museum")])
    wide = search(keyword_workbench, instance, "ann", "paris", max_distance=2.0)
    d = wide.hits[0].distance
    assert d == pytest.approx(1 - 1 / math.sqrt(2), abs=1e-6)  # cos((1,1)/√2, (1,0)) = 1/√2
    assert search(keyword_workbench, instance, "ann", "paris", max_distance=d).hits == []
    just_above = float(np.nextafter(d, 2.0))
    hits = search(keyword_workbench, instance, "ann", "paris", max_distance=just_above).hits
    assert [h.user_task_execution_pk for h in hits] == [stored.user_task_execution_pk]


def test_nothing_within_reports_the_nearest_distance(keyword_workbench, store, instance):
    store.ingest([text(instance, "ann", "paris", "museum"), text(instance, "ann", "dog", "cat")])
    found = search(keyword_workbench, instance, "ann", "paris")
    assert found.hits == [] and found.candidates == 2
    assert found.nearest_distance == pytest.approx(1 - 1 / math.sqrt(2), abs=1e-6)
    empty = search(keyword_workbench, instance, "nobody", "paris")
    assert (empty.hits, empty.candidates, empty.nearest_distance) == ([], 0, None)


def test_every_front_end_is_told_why_nothing_was_found(keyword_workbench, store, instance):
    """A mistyped user id and nothing near enough read alike in the hits (none): the result says which."""
    store.ingest([text(instance, "ann", "paris", "museum")])
    wrong_user = run_internal_memory(keyword_workbench, PastTaskQuery(instance=instance, user_id="anne",
                                                                      query="paris")).model_dump(mode="json")
    assert wrong_user["nothing_within"] == (f"User 'anne' has no searchable past tasks in instance {instance!r} "
                                            "(check the user id: past tasks are searched per user).")
    far = run_internal_memory(keyword_workbench, PastTaskQuery(instance=instance, user_id="ann", query="dog"))
    assert far.nothing_within.startswith("Nothing within distance 0.20; the nearest past task is at 1.0")
    near = run_internal_memory(keyword_workbench, PastTaskQuery(instance=instance, user_id="ann", query="paris",
                                                                max_distance=0.5))
    assert near.search.hits and near.model_dump()["nothing_within"] is None


def test_latest_embedded_version_of_each_execution_wins(keyword_workbench, store, instance):
    [v1] = store.ingest([text(instance, "ann", "paris", "paris", source_key="trip.md")])
    [v2] = store.ingest([text(instance, "ann", "dog", "dog", source_key="trip.md")], embed=False)
    assert v2.user_task_execution_pk == v1.user_task_execution_pk
    assert (v2.version_number, v2.new_execution) == (2, False)
    # v2 has no vector yet: the search reads v1, the latest version that has one.
    hits = search(keyword_workbench, instance, "ann", "paris", max_distance=2.0).hits
    assert [(h.version_pk, round(h.distance, 6)) for h in hits] == [(v1.version_pk, 0.0)]
    assert store.embed_pending(instance) == 1
    hits = search(keyword_workbench, instance, "ann", "paris", max_distance=2.0).hits
    # One hit per execution: the newest embedded version.
    assert [(h.version_pk, round(h.distance, 6)) for h in hits] == [(v2.version_pk, 1.0)]


def test_another_users_or_instances_text_is_never_returned(keyword_workbench, store, instance):
    [mine] = store.ingest([text(instance, "ann", "paris museum", "paris")])
    store.ingest([text(instance, "bob", "paris museum", "paris"),
                  text(instance + "x", "ann", "paris", "paris")])
    hits = search(keyword_workbench, instance, "ann", "paris museum", max_distance=2.0, n_max=100).hits
    assert [h.user_task_execution_pk for h in hits] == [mine.user_task_execution_pk]


def test_deleted_text_is_never_returned_until_restored(keyword_workbench, store, instance):
    [a, b] = store.ingest([text(instance, "ann", "paris", "paris"), text(instance, "ann", "paris", "museum")])
    store.mark_deleted(instance, "ann", a.user_task_execution_pk)
    hits = search(keyword_workbench, instance, "ann", "paris", max_distance=2.0).hits
    assert [h.user_task_execution_pk for h in hits] == [b.user_task_execution_pk]
    store.mark_deleted(instance, "ann", a.user_task_execution_pk, deleted=False)
    assert len(search(keyword_workbench, instance, "ann", "paris", max_distance=2.0).hits) == 2
    with pytest.raises(NotFound):
        store.mark_deleted(instance, "bob", a.user_task_execution_pk)  # only its own user may delete it


def test_n_max_keeps_the_nearest_in_distance_order(keyword_workbench, store, instance):
    words = ["paris", "paris museum", "paris museum dog", "paris museum dog cat", "dog"]
    stored = store.ingest([text(instance, "ann", w, w) for w in reversed(words)])
    hits = search(keyword_workbench, instance, "ann", "paris", max_distance=2.0, n_max=3).hits
    assert [h.title for h in hits] == words[:3]
    assert [h.distance for h in hits] == sorted(h.distance for h in hits)
    assert hits[2].distance == pytest.approx(1 - 1 / math.sqrt(3), abs=1e-6)
    assert len(stored) == 5


def test_ingest_new_version_and_listing(store, instance):
    [first] = store.ingest([text(instance, "ann", "Budget", "draft", source_key="budget.md", task="Plan")])
    [second] = store.ingest([text(instance, "ann", "Budget v2", "final", source_key="budget.md",
                                  task="plan")])
    assert second.user_task_execution_pk == first.user_task_execution_pk and second.version_number == 2
    [listed] = store.list_texts(instance, "ann")
    assert (listed.title, listed.production, listed.versions) == ("Budget v2", "final", 2)
    assert listed.task_icon == "🗺️"
    with pytest.raises(InvalidInput, match="ingested as task 'plan'"):
        store.ingest([text(instance, "ann", "Budget", "x", source_key="budget.md", task="email")])
    assert store.users(instance) == ["ann"] and store.count(instance) == 1


def test_inputs_name_the_rejected_field():
    with pytest.raises(ValidationError, match="n_max"):
        PastTaskQuery(instance="i", user_id="u", query="q", n_max=0)
    with pytest.raises(ValidationError, match="extra"):
        PastTaskQuery(instance="i", user_id="u", query="q", top_k=3)
    with pytest.raises(ValidationError, match="user_id"):
        ProducedTextInput(instance="i", user_id="bad user!", task="note", title="t", production="p")


def test_text_from_file_takes_a_short_first_line_as_title():
    assert text_from_file("a.md", "# Minutes\n\nWe met.") == ("Minutes", "We met.")
    assert text_from_file("weekly_notes.txt", "only one line") == ("weekly notes", "only one line")
    # A text without a file name (an imported line, a pasted text): its first words, not a made-up name.
    assert text_from_file(None, "only one line") == ("only one line", "only one line")
    assert text_from_file(None, "word " * 40) == ("word " * 15 + "word…", ("word " * 40).strip())
    assert text_from_file(None, "x" * 100)[0] == "x" * 79 + "…"
    assert text_from_file(None, "#\nWe met at nine.") == ("We met at nine.", "We met at nine.")


def test_tool_execution_records_its_one_query(keyword_workbench, store, instance):
    store.ingest([text(instance, "ann", "paris museum", "The museum in paris opens at nine.")])
    q = PastTaskQuery(instance=instance, user_id="ann", query="paris museum", max_distance=0.5)
    result = run_internal_memory(keyword_workbench, q, execution_id="exec-1")
    assert result.keypoints.mode == "extractive" and len(result.references) == 1
    with pytest.raises(InvalidInput, match="n_total_usages = 1"):
        run_internal_memory(keyword_workbench, q, execution_id="exec-1")
    [execution] = history(keyword_workbench, instance, "ann")
    assert (execution.execution_id, execution.query, execution.status) == ("exec-1", "paris museum", "done")
    recorded = execution.result
    assert [r.model_dump() for r in recorded.references] == [r.model_dump() for r in result.references]
    assert recorded.search.hits[0].production == ""  # the history keeps which version, not the text again


def test_the_history_is_narrowed_to_queries_holding_a_text_in_any_case(keyword_workbench, store, instance):
    store.ingest([text(instance, "ann", "café menu", "The CAFÉ menu changes on Mondays.")])
    for i, query in enumerate(["Café menu", "paris museum", "opening hours of the CAFÉ", "50% off_sale"]):
        run_internal_memory(keyword_workbench, PastTaskQuery(instance=instance, user_id="ann", query=query,
                                                             max_distance=0.5), execution_id=f"q-{i}")

    def queries(contains: str | None) -> list[str]:
        request = uc.HistoryRequest(instance=instance, user_id="ann", contains=contains)
        return [h.query for h in uc.tool_history(keyword_workbench, request)]

    [no_words] = uc.tool_history(keyword_workbench, uc.HistoryRequest(instance=instance, user_id="ann",
                                                                      contains="off_sale"))
    assert no_words.status == "done" and "vector is all zeros" in no_words.result.nothing_within
    assert queries("café") == ["opening hours of the CAFÉ", "Café menu"]  # newest first, whatever the case
    assert queries("% off_") == ["50% off_sale"]  # a LIKE or regex wildcard is a plain character
    assert queries("   ") == queries(None) and len(queries(None)) == 4  # blank: every query
    assert queries("museum x") == []
    assert uc.tool_history(keyword_workbench, uc.HistoryRequest(instance=instance, user_id="bob",
                                                                contains="café")) == []  # another user's


def test_cli_ingest_and_search_agree_with_the_api(workbench, settings, instance, tmp_path, monkeypatch):
    from core.cli import cli

    monkeypatch.setenv("DATA_DIR", str(settings.data_dir))
    (tmp_path / "minutes.md").write_text("# Forklift contract\n\nLiftPro repairs forklifts in 24 hours.\n")
    (tmp_path / "email.txt").write_text("Pallets late\nKartonwerk delivered the pallets two days late.\n")
    runner = CliRunner()
    out = runner.invoke(cli, ["--instance", instance, "tasks", "ingest", str(tmp_path / "minutes.md"),
                              str(tmp_path / "email.txt"), "--user", "tom", "--task", "note"])
    assert out.exit_code == 0, out.output
    out = runner.invoke(cli, ["--instance", instance, "tasks", "search", "forklift repairs", "--user", "tom",
                              "--max-distance", "0.9", "--n-max", "1"])
    assert out.exit_code == 0, out.output
    printed = json.loads(out.stdout)
    q = PastTaskQuery(instance=instance, user_id="tom", query="forklift repairs", max_distance=0.9, n_max=1)
    api = run_internal_memory(workbench, q)
    assert printed == [r.model_dump(mode="json") for r in api.references]
    assert set(printed[0]) == {"user_task_execution_pk", "produced_text_title", "task_icon",
                               "extracted_informations", "distance", "date"}
    assert printed[0]["produced_text_title"] == "Forklift contract"
    bad = runner.invoke(cli, ["--instance", instance, "tasks", "search", "x", "--user", "tom",
                              "--n-max", "0"])
    assert bad.exit_code != 0 and "--n-max" in str(bad.exception)  # the option typed
