"""The benchmarks' own helpers: synthetic records as the product would make them, the turns file they are
read from while a load is timed, and the CPU meter that says what a load's work costs."""

import time

from benchmarks import synth
from benchmarks.common import CpuMeter
from core.index.text import with_conversation_context
from core.models import MemoryContext


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
