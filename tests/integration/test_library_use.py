"""The README's "Python, in your own program" example, run as written: the core used as a library, so the
docs cannot drift from the code.

The example reads its settings from the environment, as it says; the test points them at the session's
data directory, a fresh instance and the fake LLM, runs the block in a folder of its own (it writes
`memory.zip` there), then checks what it did and that a closed Workbench refuses to be used.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

import pytest

from core import usecases as uc
from core.config import load_settings
from core.errors import WorkbenchError
from core.runtime import Workbench, WorkbenchClosed
from core.services import EmbeddedPostgres, EmbeddedRedis
from tests.support.embedders import KeywordEmbedder

README = Path(__file__).resolve().parents[2] / "README.md"
HEADING = "### Python, in your own program"


def readme_example() -> str:
    """The first Python block under the section's heading."""
    text = README.read_text(encoding="utf-8")
    assert HEADING in text, f"README has no section {HEADING!r}"
    block = re.search(r"```python\n(.*?)```", text.split(HEADING, 1)[1], re.DOTALL)
    assert block, f"no ```python block under {HEADING!r}"
    return block.group(1)


@pytest.fixture
def example_env(monkeypatch, tmp_path, data_dir, instance, fake_llm):
    monkeypatch.setenv("DATA_DIR", str(data_dir))
    monkeypatch.setenv("INSTANCE", instance)
    monkeypatch.setenv("EMBEDDER", "wordllama")
    monkeypatch.setenv("LLM_BASE_URL", fake_llm.url + "/v1")
    monkeypatch.setenv("LLM_API_KEY", "test")
    monkeypatch.chdir(tmp_path)
    fake_llm.answer_with(lambda body: "You parked on level 3, next to the lift.")
    return tmp_path


def test_the_readme_example_runs_as_written(example_env, instance, capsys):
    names: dict = {}
    exec(compile(readme_example(), "README.md (Python, in your own program)", "exec"), names)  # noqa: S102

    turn, found, gone, archive = names["turn"], names["found"], names["gone"], names["archive"]
    assert turn.instance == instance and turn.synthesis == "llm", turn.notes
    assert any("level 3" in item.content for item in turn.context)
    assert any("level 3" in m.memory.content for m in found.memories)
    assert all(isinstance(m, uc.ScopeMemory) for m in found.memories)
    assert "give thought2_id" in capsys.readouterr().out  # the NotFound message, as the example prints it
    out = example_env / "memory.zip"
    assert Path(archive.path).resolve() == out and out.stat().st_mode & 0o777 == 0o600
    assert archive.counts["chains"] == 1 and archive.counts["memories"] >= 1
    assert gone.removed_anything and gone.thoughts == 6

    wb = names["wb"]  # its `with` block has ended
    with pytest.raises(WorkbenchClosed, match="make a new Workbench"):
        uc.remember(wb, uc.UiRememberParams(thought="still there?"))
    with pytest.raises(WorkbenchError):
        uc.add_memory(wb, uc.AddMemory(content="after close"))

    with Workbench(load_settings(instance=instance, embedder="wordllama")) as again:  # what is left
        left = uc.retrieve_memory(again, uc.RetrieveRequest(query="Where is the car parked?"))
        assert [m.memory.content for m in left.memories if "level 3" in m.memory.content] == []
        assert uc.chains(again, uc.ChainList(instance=instance)).total == 0


def test_a_closed_workbench_leaves_no_connection_open(settings, instance):
    """A call on a closed Workbench is refused before it reconnects: the stores made before `close` are
    dropped, not left holding closed pools (PoolClosed) or a Redis client that quietly reconnects."""
    wb = Workbench(settings)
    uc.add_memory(wb, uc.AddMemory(instance=instance, content="one memory"))
    wb.close()
    for _ in range(2):
        with pytest.raises(WorkbenchClosed):
            uc.retrieve_memory(wb, uc.RetrieveRequest(instance=instance, query="memory"))
    assert wb.services._pools == {} and wb.services._redis is None and wb.services._redis_glance is None


@pytest.fixture
def own_data_dir():
    """A data directory of this test's own (short: Unix socket paths are limited), since it stops the
    embedded servers, which the session's other tests use."""
    path = Path(tempfile.mkdtemp(prefix="wb-lib-"))
    yield path
    EmbeddedRedis(path).stop()
    EmbeddedPostgres(path).stop()
    shutil.rmtree(path, ignore_errors=True)


def test_stop_services_closes_the_workbench_and_a_closed_one_gives_its_lease_up(own_data_dir, instance):
    """After `uc.stop_services(wb)` the same Workbench failed with the driver's error (psycopg_pool's
    PoolClosed) and a turn restarted Redis and went on without its memory; it now raises WorkbenchClosed.
    A closed Workbench's lease (`DATA_DIR/leases/<pid>`) stayed while the program ran, keeping up servers
    a command started; it goes with the last Workbench of the process, and a turn of a program (no
    `origin`) counts under the source "python"."""
    settings = load_settings(data_dir=own_data_dir, instance=instance)
    lease = own_data_dir / "leases" / str(os.getpid())
    first, second = Workbench(settings, embedder=KeywordEmbedder()), Workbench(settings, embedder=KeywordEmbedder())
    uc.remember(first, uc.UiRememberParams(thought="I parked on level 3.", chain_id="car"))
    uc.add_memory(second, uc.AddMemory(content="My car is a blue Skoda."))
    first.close()
    assert lease.exists()  # the second still uses the servers
    second.close()
    assert not lease.exists()

    wb = Workbench(settings, embedder=KeywordEmbedder())
    uc.remember(wb, uc.UiRememberParams(thought="Where did I park?", chain_id="car"))
    report = uc.feedback_summary(wb, uc.SummaryRequest(by="source"))
    assert [(g["source"], g["answers"]) for g in report.groups] == [("python", 2)]
    stopped = uc.stop_services(wb)
    assert [s.name for s in stopped.stopped] == ["Redis", "Postgres"] and stopped.still_used_by == []
    for call in (lambda: uc.remember(wb, uc.UiRememberParams(thought="still there?", chain_id="car")),
                 lambda: uc.retrieve_memory(wb, uc.RetrieveRequest(query="car")),
                 lambda: uc.add_memory(wb, uc.AddMemory(content="after the stop"))):
        with pytest.raises(WorkbenchClosed, match="stop_services was called.*make a new Workbench"):
            call()
    assert EmbeddedRedis(own_data_dir).pid() is None and not lease.exists()  # nothing started them again

    with Workbench(settings, embedder=KeywordEmbedder()) as again:  # a new one starts them again
        assert len(uc.chain(again, uc.ChainRef(chain_id="car")).thoughts) == 6  # the data kept
    assert not lease.exists()
