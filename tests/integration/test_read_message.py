"""Seed 001's read_message over a stored chain: a thought is `memorized` once the memory index holds it;
read_message gives the chain's recent messages that are not, from the use case and the CLI."""

from __future__ import annotations

import json
import socket

import pytest
from click.testing import CliRunner

from core import usecases as uc
from core.conversation.indexing import sync_index
from core.conversation.turn import Remember, UiRememberParams
from core.runtime import Workbench


def turn(wb: Workbench, instance: str, text: str, chain: str = "c"):
    return Remember(wb).run(UiRememberParams(thought=text, chain_id=chain), instance=instance)


def unmemorized(wb: Workbench, instance: str, chain: str = "c", **params) -> list[tuple[str, str]]:
    result = uc.read_message(wb, uc.ReadMessageRequest(instance=instance, chain_id=chain,
                                                       params=uc.ReadMessageParams(**params)))
    assert result.trace.op == "read_message_op" and result.trace.output_size == len(result.messages)
    return [(m.role, m.content) for m in result.messages]


@pytest.fixture
def postgres_down(settings):
    """A workbench whose Postgres cannot be reached: turns are stored, their indexing deferred."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    wb = Workbench(settings.model_copy(update={"database_url": f"postgresql://nobody@127.0.0.1:{port}/none",
                                               "postgres_connect_timeout_s": 2}))
    yield wb
    wb.close()


def test_indexed_thoughts_are_memorized_and_the_rest_is_read(workbench, postgres_down, instance):
    first = turn(workbench, instance, "My dog Rex likes the beach")
    deferred = turn(postgres_down, instance, "Rex also likes the snow")
    assert any(n.startswith("indexing deferred") for n in deferred.notes)
    # Offline answers are extractive (never indexed); the second question waits in the outbox.
    assert unmemorized(workbench, instance) == [("assistant", first.answer), ("user", "Rex also likes the snow"),
                                                ("assistant", deferred.answer)]
    assert unmemorized(workbench, instance, contextual_msg_max_count=1) == [("assistant", deferred.answer)]
    sync_index(workbench.thoughts, workbench.index)
    assert unmemorized(workbench, instance) == [("assistant", first.answer), ("assistant", deferred.answer)]
    user = workbench.thoughts.chain_thoughts(instance, "c")[0]
    assert user.extra["memorized"] == 1  # stored on the thought's hash


def test_llm_answers_are_memorized_too(llm_settings, fake_llm, instance):
    wb = Workbench(llm_settings)
    try:
        fake_llm.reply("Rex is your dog.")
        turn(wb, instance, "Who is Rex?")
        assert unmemorized(wb, instance) == []
    finally:
        wb.close()


def test_the_cli_reads_a_chain_and_refuses_an_unknown_one(workbench, settings, instance, monkeypatch):
    from core.cli import cli

    monkeypatch.setenv("DATA_DIR", str(settings.data_dir))
    first = turn(workbench, instance, "The budget meeting is on Monday")
    runner = CliRunner()
    out = runner.invoke(cli, ["--instance", instance, "memory", "read-message", "c", "--max", "5"])
    assert out.exit_code == 0, out.output
    printed = json.loads(out.stdout)
    assert [(m["role"], m["content"], m["memorized"]) for m in printed["messages"]] == \
        [("assistant", first.answer, False)]
    assert printed["trace"]["params"]["contextual_msg_max_count"] == 5 and "output" not in printed["trace"]
    missing = runner.invoke(cli, ["--instance", instance, "memory", "read-message", "nope"])
    assert missing.exit_code != 0 and "chain 'nope' not found" in str(missing.exception)


@pytest.mark.parametrize("args, named", [(["memory", "read-message", "c", "--max", "-1"], "contextual_msg_max_count"),
                                         (["memory", "read-message", "bad chain!"], "chain_id"),
                                         (["reembed", "--instance", "bad id!"], "instance")])
def test_bad_input_exits_2_with_one_line_naming_it(args, named, monkeypatch, capsys):
    from core.cli import main

    monkeypatch.setattr("sys.argv", ["workbench", *args])
    with pytest.raises(SystemExit) as e:
        main()
    err = capsys.readouterr().err.strip().splitlines()
    assert e.value.code == 2 and len(err) == 1 and err[0].startswith("error:") and named in err[0], err


def test_a_thought_deleted_before_its_flag_is_not_brought_back(workbench, instance):
    from datetime import UTC, datetime

    from core.conversation.indexing import mark_memorized
    from core.conversation.keys import thought_key
    from core.models import MemoryRecord

    gone = MemoryRecord(instance=instance, id="gone", kind="user", content="x", created_at=datetime.now(UTC),
                        chain_id="c")
    mark_memorized(workbench.thoughts, [gone])
    assert not workbench.redis().exists(thought_key(instance, "c", "gone"))
