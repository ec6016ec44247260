"""Seed 004's integration with task execution: an agent loop of five steps through `TaskMemory`; each
executed step reaches the bank, and each step is handed the bank's memories relevant to it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from core import usecases as uc
from core.bank import SUMMARY_SKILL, MemoryBank, MemoryEntry
from core.bank.agent import keywords_of

T0 = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)
# (task, command, result, tags): a small deployment, whose fifth step needs what the fourth found.
PLAN = [("Install the python requirements", "pip install -r requirements.txt",
         "ERROR: no wheel for psycopg2==2.8.6", ["python", "error"]),
        ("Pin psycopg2-binary in requirements", "sed -i s/psycopg2/psycopg2-binary/ requirements.txt",
         "requirements.txt updated", ["python", "fix"]),
        ("Run the test suite", "pytest -q", "38 passed", ["tests"]),
        ("Build the docker image", "docker build -t shop-api .", "Successfully tagged shop-api", ["docker"]),
        ("Reinstall the python requirements in the docker image", "docker run shop-api pip check",
         "No broken requirements found", ["docker", "python"])]


def test_a_five_step_loop_records_each_step_and_hands_on_relevant_memories(workbench, instance):
    memory = uc.TaskMemory(MemoryBank(workbench, instance, "deploy", max_entries=4, compression_threshold=4))
    handed: list[uc.StepContext] = []

    def run(i: int, command: str, result: str, tags: list[str]):
        def execute(context: uc.StepContext) -> MemoryEntry:
            handed.append(context)  # a real skill would choose its command from context.prompt()
            return MemoryEntry(skill_name="CommandSkill", thinking=context.task, command=command, result=result,
                               tags=tags, timestamp=T0 + timedelta(minutes=i), importance=0.5 + i / 10)
        return execute

    outcomes = [memory.step(task, run(i, command, result, tags))
                for i, (task, command, result, tags) in enumerate(PLAN)]

    # Every executed step reached the bank, numbered in order; the fourth filled it and was compressed.
    assert [o.added.entry.step_number for o in outcomes] == [1, 2, 3, 4, 5]
    assert [o.added.compression is not None for o in outcomes] == [False, False, False, True, False]
    assert [e.command for e in memory.bank.get_all_memories()] == [c for _, c, _, _ in PLAN]
    # The first step is handed nothing; each later one its predecessors (recent, at most 3).
    assert handed[0].prompt() == "" and handed[0].relevant == handed[0].recent == []
    assert [e.step_number for e in handed[2].recent] == [1, 2]
    # Step 5 is about the python requirements: the summary of the compressed steps 1–2 holds them.
    last = handed[4]
    assert last.keywords == ["reinstall", "python", "requirements", "docker", "image"]
    assert [e.step_number for e in last.recent] == [3, 4]
    assert [e.skill_name for e in last.relevant] == [SUMMARY_SKILL]
    assert "psycopg2" in last.relevant[0].result
    assert last.prompt().splitlines()[0] == "Relevant memories:" and "Recent steps:" in last.prompt()
    assert outcomes[4].context == last


def test_keywords_leave_out_short_and_filler_words():
    assert keywords_of("Check that the disk is not full, then clean /var/log with journalctl") == \
        ["disk", "full", "clean", "journalctl"]
    assert keywords_of("Pin psycopg2-binary in requirements.txt") == ["psycopg2-binary", "requirements.txt"]


def test_the_demo_banks_are_made_by_the_loop(settings, instance):
    from core.demo import bank as demo_bank
    from core.runtime import Workbench

    wb = Workbench(settings.model_copy(update={"instance": instance}))
    said: list[str] = []
    try:
        demo_bank.load(wb, said.append)
        assert [line.split(":")[1] for line in said] == [f" bank {name}" for name in demo_bank.TASKS]
        handed = [int(line.split(", ")[-1].split()[0]) for line in said]
        print("\n" + "\n".join(said))
        assert all(n > 0 for n in handed)
    finally:
        demo_bank.reset(wb)
        wb.close()
