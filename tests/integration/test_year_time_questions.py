"""A year of use asked about by time, part two: what was true then, and what happened then.

A small dated history (OpenAI chat JSONL with its original times) is imported and formed, then asked about on
Monday 7 December 2026 through the turn's `temporal` hint, as `workbench remember --temporal` and the Chat page's
"Time hint" pass it (/tmp/yearlong/REPORT.md, 1c-1f):
- a weekly plan said on a Monday of March is dated to March, not to 2026, so it stays out of August's windows;
- "Where did I live?" with the time hint "in February" finds the old address superseded in March, marked so
  with its end;
- "What did I do last weekend?" hands the weekend's memories in time order, where no memory reached the floor;
- "My goal now is to run a full marathon" replaces the half-marathon goal.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from core import usecases as uc

ASKED_AT = datetime(2026, 12, 7, 9, 0, tzinfo=UTC)  # a Monday
SAID = [
    (datetime(2025, 12, 1, 8), "I live in a flat on Elm Street in Brighton."),
    (datetime(2025, 12, 1, 9), "My goal is to run a half marathon next year."),
    (datetime(2026, 2, 9, 8), "The kitchen tap is leaking again."),
    (datetime(2026, 3, 2, 8), "My running plan for this week is 25 km in total."),
    (datetime(2026, 3, 14, 10), "We just moved to a house on Harbor Road in Bristol."),
    (datetime(2026, 8, 2, 8), "I ran 6.3 km along the harbourside this morning."),
    (datetime(2026, 8, 5, 8), "I ran 11.6 km along the harbourside this morning."),
    (datetime(2026, 8, 10, 8), "My running plan for this week is 42 km in total."),
    (datetime(2026, 9, 20, 14), "My goal now is to run a full marathon next spring."),
    (datetime(2026, 12, 5, 17), "This Saturday I went hiking in the Mendip Hills with Biscuit."),
    (datetime(2026, 12, 6, 18), "On Sunday I baked cinnamon buns and watched the football."),
]


def conversation(i: int, at: datetime, text: str) -> dict:
    at = at.replace(tzinfo=UTC)
    return {"id": f"year-{i}", "title": text[:40], "messages": [
        {"role": "user", "content": text, "timestamp": at.isoformat()},
        {"role": "assistant", "content": "Noted.", "timestamp": (at + timedelta(seconds=5)).isoformat()}]}


@pytest.fixture
def year(workbench, instance, tmp_path):
    path = tmp_path / "year.jsonl"
    path.write_text("".join(json.dumps(conversation(i, at, text)) + "\n" for i, (at, text) in enumerate(SAID)))
    uc.import_file(workbench, uc.ImportFile(path=path, instance=instance))
    uc.formation_run(workbench, uc.FormationRun(instance=instance))
    return instance


def ask(wb, instance: str, question: str, temporal: str | None = None, top_k: int = 5) -> uc.UiRememberResult:
    return uc.remember(wb, uc.UiRememberParams(thought=question, instance=instance, temporal=temporal, top_k=top_k),
                       clock=lambda: ASKED_AT)


def handed(result: uc.UiRememberResult) -> list[str]:
    return [c.content for c in result.context]


def test_a_week_said_in_march_is_out_of_august_s_windows(workbench, year):
    """Dated 2026 (its year), the March plan matched "the first week of August" and outranked the runs."""
    result = ask(workbench, year, "How many km did I run?", "the first week of August", top_k=10)
    said = handed(result)
    assert "My running plan for this week is 25 km in total." not in said
    assert {"I ran 6.3 km along the harbourside this morning.",
            "I ran 11.6 km along the harbourside this morning."} <= set(said), said


def test_a_superseded_fact_is_found_as_of_a_time_it_held(workbench, year):
    result = ask(workbench, year, "Where did I live?", "in February")  # the Chat page's "Time hint"
    assert "I live in a flat on Elm Street in Brighton." in handed(result), result.notes
    memories = result.prompt[-1].content
    assert "superseded 2026-03-14) I live in a flat on Elm Street in Brighton." in memories, memories


def test_a_superseded_fact_stays_out_after_it_ended_and_without_a_window(workbench, year):
    assert "I live in a flat on Elm Street in Brighton." not in handed(
        ask(workbench, year, "Where did I live?", "in April"))
    now = ask(workbench, year, "Where do I live?")
    assert "I live in a flat on Elm Street in Brighton." not in handed(now)
    assert "We just moved to a house on Harbor Road in Bristol." in handed(now)


def test_a_question_about_its_time_alone_gets_that_time_s_memories(workbench, year):
    result = ask(workbench, year, "What did I do last weekend?", "last weekend")
    assert result.memory == "found", result.notes
    observed = [c for c in result.context if c.kind == "observation"]
    assert [c.content for c in observed] == ["This Saturday I went hiking in the Mendip Hills with Biscuit.",
                                             "On Sunday I baked cinnamon buns and watched the football."]
    assert [c.created_at for c in result.context] == sorted(c.created_at for c in result.context)
    assert any("asks about its time alone" in n for n in result.notes), result.notes


def test_a_question_about_something_else_still_abstains_within_a_window(workbench, year):
    result = ask(workbench, year, "What is the capital of Peru?", "last weekend")
    assert result.memory == "none_matched" and not result.context


def test_a_goal_in_words_replaces_the_goal_before_it(workbench, year):
    now = handed(ask(workbench, year, "What is my running goal?"))
    assert "My goal now is to run a full marathon next spring." in now
    assert "My goal is to run a half marathon next year." not in now
    then = ask(workbench, year, "What was my running goal?", "in spring")
    assert "My goal is to run a half marathon next year." in handed(then)
    assert "superseded 2026-09-20)" in then.prompt[-1].content


def test_a_question_s_own_time_ranks_its_memories_higher_without_restricting(workbench, year):
    """No `temporal`: the question's "in the first week of August" is a boost (`fusion.TIME_BOOST`), not a
    window. The week's runs, under the September goal when the question names no time, rank above it; memories
    of other times still come (the March plan), and the note says so."""
    goal, runs = "My goal now is to run a full marathon next spring.", {
        "I ran 11.6 km along the harbourside this morning.", "I ran 6.3 km along the harbourside this morning."}
    plain = handed(ask(workbench, year, "How many km did I run?"))
    assert goal in plain and min(plain.index(r) for r in runs if r in plain) > plain.index(goal), plain
    result = ask(workbench, year, "How many km did I run in the first week of August?")
    assert any("the question's time 'the first week of August'" in n and "none is left out" in n
               for n in result.notes), result.notes
    said = handed(result)
    assert runs <= set(said) and (goal not in said or max(said.index(r) for r in runs) < said.index(goal)), said
    assert "My running plan for this week is 25 km in total." in said  # said in March: boosted past, not left out


def test_every_front_end_s_search_boosts_the_time_its_query_names(workbench, year):
    """The boost lives in `hybrid_search`, so retrieval's other callers (MemoryScope's retrieve, as `workbench
    retrieve` and the HTTP and MCP retrieve run it; the explorer; the evaluation) rank as the turn does, the
    time read relative to the moment they give; a window, or `time_boost` off, leaves the fusion's order."""
    from core.retrieval.hybrid import SearchRequest, hybrid_search
    from core.retrieval.memoryscope import ScopeParams, run_memoryscope

    goal, runs = "My goal now is to run a full marathon next spring.", {
        "I ran 11.6 km along the harbourside this morning.", "I ran 6.3 km along the harbourside this morning."}
    question = "How many km did I run in the first week of August?"

    def search(query: str = question, **fields) -> tuple[list[str], str | None]:
        found = hybrid_search(workbench.search_pool(), workbench.embedder,
                              SearchRequest(query=query, instance=year, **fields), now=ASKED_AT)
        return [m.memory.content for m in found.results], found.time_note()

    plain, none = search("How many km did I run?")  # no time named: the goal first, as in the turn
    assert none is None and goal in plain and min(plain.index(r) for r in runs if r in plain) > plain.index(goal)
    boosted, note = search()
    assert runs <= set(boosted) and (goal not in boosted or max(boosted.index(r) for r in runs) < boosted.index(goal))
    assert note is not None and note.startswith("the query's time 'the first week of August' (2026-08-01 00:00 – "
                                                "2026-08-08 00:00) ranks the memories of then higher"), note
    assert "of the 5 found" in note and note.endswith("none is left out for it")
    assert search(time_boost=False)[1] is None
    assert search(since=datetime(2026, 8, 1, tzinfo=UTC), until=datetime(2026, 8, 8, tzinfo=UTC))[1] is None
    # Asked at another moment, "last week" is another week: the time is read relative to the search's `now`.
    last_week = hybrid_search(workbench.search_pool(), workbench.embedder,
                              SearchRequest(query="How far did I run last week?", instance=year),
                              now=datetime(2026, 8, 12, 9, tzinfo=UTC))
    assert last_week.time is not None and last_week.time.start.date().isoformat() == "2026-08-03"

    scope = run_memoryscope(workbench, question, instance=year, profile=workbench.profiles.active(year), params=ScopeParams.from_flat({"op.set_query_op.params.timestamp": int(ASKED_AT.timestamp())}))
    retrieve = next(t for t in scope.trace if t.op == "retrieve_memory_op")
    assert "the query's time 'the first week of August'" in retrieve.note, retrieve.note
