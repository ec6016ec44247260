"""The benchmarks' own helpers: synthetic records as the product would make them, the turns file they are
read from while a load is timed, the CPU meter that says what a load's work costs, and the LoCoMo
benchmark's pass that asks every retriever each question in turn."""

import time

import pytest

from benchmarks import synth
from benchmarks.common import CpuMeter
from benchmarks.locomo import asked_in_turn
from core.index.text import with_conversation_context
from core.models import MemoryContext
from core.tuning.datasets import EvalDataset, EvalQuery


def test_records_carry_their_conversation_as_the_import_path_makes_it():
    turns = list(synth.conversations(60, instances=2, prefix="t"))
    both = list(synth.records(iter(turns), context="both"))
    assert [r.model_dump() for r in both] == [
        r.model_dump() for r in with_conversation_context(list(synth.records(iter(turns), context=None)))]
    before = list(synth.records(iter(turns)))
    assert [r.context for r in before] == [MemoryContext(before=r.context.before) for r in both]
    assert all(len(r.context.before) <= 3 for r in before) and any(len(r.context.before) == 3 for r in before)


def test_turns_read_back_from_their_file_are_the_turns_written(tmp_path):
    turns = list(synth.conversations(40, instances=2, prefix="f"))
    path = synth.write_turns(iter(turns), tmp_path / "turns")
    assert list(synth.read_turns(path)) == turns


def test_cpu_meter_counts_this_process_work_and_the_ceiling_it_allows():
    meter = CpuMeter()
    end = time.process_time() + 0.3
    while time.process_time() < end:
        pass
    cpu = meter.read(1000)
    assert 0.25 <= cpu["this_process_cpu_s"] <= cpu["cpu_s"] + 0.05
    assert cpu["per_memory_ms"] == round(1000 * cpu["cpu_s"] / 1000, 3)
    assert cpu["ceiling_per_s"] == round(1000 * cpu["cores"] / cpu["cpu_s"])
    assert 0 < cpu["busy"] <= 1.05


def _questions(n: int) -> EvalDataset:
    return EvalDataset(name="t", kind="jsonl", queries=[
        EvalQuery(qid=f"q{i}", query=f"question {i}", relevant=["a"], category="1", instance="i") for i in range(n)])


def test_each_question_goes_to_every_retriever_in_turn_and_who_goes_first_rotates():
    asked: list[tuple[str, str]] = []

    def retriever(name):
        def search(q):
            asked.append((q.qid, name))
            return [name]
        return search

    ranked, times, failed = asked_in_turn(_questions(3), {n: retriever(n) for n in ("ours", "x", "y")})
    assert asked == [("q0", "ours"), ("q0", "x"), ("q0", "y"), ("q1", "x"), ("q1", "y"), ("q1", "ours"),
                     ("q2", "y"), ("q2", "ours"), ("q2", "x")]
    assert ranked["x"] == {"q0": ["x"], "q1": ["x"], "q2": ["x"]} and failed == {}
    assert all(len(t) == 3 and min(t) >= 0 for t in times.values())


def test_an_optional_retriever_that_fails_leaves_the_pass_with_its_reason_and_another_does_not():
    def broken(q):
        if q.qid == "q1":
            raise RuntimeError("peer down")
        return ["b"]

    ranked, times, failed = asked_in_turn(_questions(4), {"ours": lambda q: ["o"], "peer": broken},
                                          optional=frozenset({"peer"}))
    assert failed == {"peer": "RuntimeError: peer down"}
    assert list(ranked["peer"]) == ["q0"] and len(ranked["ours"]) == 4 and len(times["ours"]) == 4
    with pytest.raises(RuntimeError, match="peer down"):
        asked_in_turn(_questions(4), {"ours": broken})
