"""Where a turn came from (its Origin, recorded by each front end), the user's explicit ratings beside the
behavioural feedback, and ui_remember's caller-given intermediate steps and history switch, on the real
servers."""

from __future__ import annotations

import json
import sys
import pandas as pd
import pytest
from click.testing import CliRunner

from core import usecases as uc
from core.analytics import FeedbackFilter, apply_filter, load_feedback, summarize, summarize_by
from core.analytics.export import read_csv
from core.cli import cli, main
from core.conversation.keys import thought_key
from core.conversation.metrics import TurnMetrics
from core.conversation.thoughts import CATEGORY_ASSISTANT, CATEGORY_METRICS
from core.conversation.turn import MAX_STEPS, Remember, UiRememberParams
from core.runtime import Workbench


def metrics_of(wb: Workbench, instance: str, chain_id: str) -> list[TurnMetrics]:
    return [TurnMetrics.from_fields(t.to_hash()) for t in wb.thoughts.chain_thoughts(instance, chain_id)
            if t.category == CATEGORY_METRICS]


def answer_of(wb: Workbench, instance: str, chain_id: str):
    return next(t for t in wb.thoughts.chain_thoughts(instance, chain_id) if t.category == CATEGORY_ASSISTANT)


@pytest.fixture
def served(workbench, instance):
    """Four turns through the use case, as the front ends make them: two chains, three sources, two keys."""
    def turn(text: str, chain: str, origin: uc.Origin | None, **kw) -> uc.UiRememberResult:
        return uc.remember(workbench, UiRememberParams(thought=text, chain_id=chain, instance=instance, **kw),
                           origin=origin)

    return [turn("The boat leaves at nine.", "harbour", uc.Origin(source="mcp", key="claude-desktop")),
            turn("Thanks. And the ferry back?", "harbour", uc.Origin(source="mcp", key="claude-desktop")),
            turn("Remind me of the boat time", "office", uc.Origin(source="http", key="ci-bot")),
            turn("What did I say about boats?", "office", None, next_thought_needed=False)]


def test_the_turn_records_its_origin_on_the_metrics_and_the_answer(workbench, instance, served):
    assert [(m.source, m.key) for m in metrics_of(workbench, instance, "harbour")] == \
        [("mcp", "claude-desktop")] * 2
    answer = answer_of(workbench, instance, "office")
    assert (answer.extra["source"], answer.extra["key"]) == ("http", "ci-bot")
    frame = load_feedback(workbench.thoughts, instance, sweep=False)
    assert list(frame["source"]) == ["mcp", "mcp", "http", "python"]  # no origin: a program's own
    assert list(frame["key"]) == ["claude-desktop", "claude-desktop", "ci-bot", ""]
    assert list(apply_filter(frame, FeedbackFilter(keys=["ci-bot"]))["answer_id"]) == [served[2].thought2_id]
    assert list(apply_filter(frame, FeedbackFilter(sources=["mcp"]))["chain_id"]) == ["harbour"] * 2
    by_source = summarize_by(frame, "source").set_index("source")
    assert dict(by_source["answers"]) == {"http": 1, "mcp": 2, "python": 1}


def test_turns_stored_before_origins_were_recorded_read_as_unknown(workbench, instance, served):
    r = served[2]
    r_ = workbench.redis()
    for thought_id in (r.thought2_id, r.thought3_id):  # as an earlier version wrote them: no such fields
        r_.hdel(thought_key(instance, "office", thought_id), "source", "key")
    frame = load_feedback(workbench.thoughts, instance, sweep=False).set_index("answer_id")
    assert (frame.loc[r.thought2_id, "source"], frame.loc[r.thought2_id, "key"]) == ("unknown", "")
    assert metrics_of(workbench, instance, "office")[0].source is None


def test_a_rating_shows_beside_the_behavioural_feedback(workbench, instance, served, settings, monkeypatch,
                                                        tmp_path):
    up, down = served[0].thought2_id, served[2].thought2_id
    score = workbench.thoughts.feedback([down])[down].feedback_score
    uc.rate_answer(workbench, uc.RateAnswer(instance=instance, answer_id=up, rating="up"))
    uc.rate_answer(workbench, uc.RateAnswer(instance=instance, answer_id=down, rating="down",
                                            comment="Wrong time: it is ten, not nine"))
    record = workbench.thoughts.feedback([down])[down]
    assert (record.rating, record.rating_comment) == ("down", "Wrong time: it is ten, not nine")
    assert record.rated_at is not None and record.feedback_score == score  # the score leaves it out
    frame = load_feedback(workbench.thoughts, instance, sweep=False).set_index("answer_id")
    assert frame.loc[up, "rating"] == 1 and frame.loc[down, "rating"] == -1
    assert frame.loc[down, "rating_comment"] == "Wrong time: it is ten, not nine"
    s = summarize(frame)
    assert (s.rated_up, s.rated_down, s.rated, s.rated_up_share) == (1, 1, 2, 0.5)
    # Rating again replaces the earlier rating.
    uc.rate_answer(workbench, uc.RateAnswer(instance=instance, answer_id=down, rating="up"))
    assert summarize(load_feedback(workbench.thoughts, instance, sweep=False)).rated_up == 2

    monkeypatch.setenv("DATA_DIR", str(settings.data_dir))
    runner = CliRunner()
    out = runner.invoke(cli, ["--instance", instance, "feedback", "summary"])
    assert out.exit_code == 0, out.output
    assert "rated up           100.0%  (2 up, 0 down, n=2)" in out.output
    out = runner.invoke(cli, ["--instance", instance, "feedback", "summary", "--json", "--by", "key"])
    assert out.exit_code == 0, out.output
    groups = {g["key"]: g for g in json.loads(out.output)["groups"]}
    assert groups["claude-desktop"]["rated_up"] == 1 and groups["(no key)"]["rated"] == 0
    out = runner.invoke(cli, ["--instance", instance, "feedback", "summary", "--by", "source"])
    assert out.exit_code == 0 and "rated_up_share" in out.output and "mcp" in out.output, out.output
    path = tmp_path / "fb.csv"
    out = runner.invoke(cli, ["--instance", instance, "feedback", "export", "--csv", str(path)])
    assert out.exit_code == 0, out.output
    back = read_csv(path.read_bytes())
    assert set(back.columns) >= {"rating", "rating_comment", "source", "key"}
    assert sorted(back["rating"].dropna()) == [1, 1] and list(back["source"])[:3] == ["mcp", "mcp", "http"]
    pd.testing.assert_frame_equal(back, load_feedback(workbench.thoughts, instance, sweep=False))


def test_the_cli_records_its_origin_and_passes_steps_and_no_history(workbench, instance, settings,
                                                                      monkeypatch, capsys):
    monkeypatch.setenv("DATA_DIR", str(settings.data_dir))
    runner = CliRunner()
    first = runner.invoke(cli, ["--instance", instance, "remember", "My sister Ana lives in Porto.",
                                "--chain", "cli-chain"])
    assert first.exit_code == 0, first.output
    out = runner.invoke(cli, ["--instance", instance, "remember", "Where does she live?", "--chain",
                              "cli-chain",
                              "--step", "calendar=Trip to Porto on 3 May", "--step", "weather=Sunny, 24 °C",
                              "--no-history"])
    assert out.exit_code == 0, out.output
    result = json.loads(out.output)
    prompt = result["prompt"][1]["content"]
    assert "[calendar]\n    Trip to Porto on 3 May\n[weather]\n    Sunny, 24 °C\n[memory_retrieval]" in prompt
    assert prompt.startswith("Chat history:\n(none)\n") and "Human: My sister" not in prompt
    assert any("chat history left out" in n for n in result["notes"])
    assert [m.source for m in metrics_of(workbench, instance, "cli-chain")] == ["cli", "cli"]

    # Refused in one line with status 2, before any turn runs.
    for bad in (["--step", "no equals sign"], ["--step", "a=1", "--step", "a=2"], ["--step", "[x]=y"]):
        monkeypatch.setattr(sys, "argv", ["workbench", "--instance", instance, "remember", "x", *bad])
        with pytest.raises(SystemExit) as e:
            main()
        err = capsys.readouterr().err
        assert e.value.code == 2 and "step" in err.lower(), (bad, err)
    assert len(metrics_of(workbench, instance, "cli-chain")) == 2


def test_intermediate_steps_go_into_the_stored_prompt(workbench, instance):
    rm = Remember(workbench)
    rm.run(UiRememberParams(thought="We meet Priya on Friday.", chain_id="steps"), instance=instance)
    r = rm.run(UiRememberParams(thought="When is the meeting?", chain_id="steps",
                                intermediate_steps={"sql_tool": "3 rows: Friday 10:00",
                                                    "Web search": "none"}),
               instance=instance)
    stored = metrics_of(workbench, instance, "steps")[-1]
    text = stored.prompt[1].content
    assert stored.prompt == r.prompt
    head, steps = text.split("Intermediate tool outputs:\n")
    assert "Human: We meet Priya on Friday." in head  # history is in by default
    assert steps.index("[sql_tool]\n    3 rows: Friday 10:00") < steps.index("[Web search]\n    none") \
        < steps.index("[memory_retrieval]") < steps.index("Latest user question:")
    assert not any("history left out" in n for n in r.notes)


def test_include_history_false_leaves_the_history_out_and_says_so(workbench, instance):
    rm = Remember(workbench)
    rm.run(UiRememberParams(thought="The secret word is marmalade.", chain_id="nohist"), instance=instance)
    r = rm.run(UiRememberParams(thought="Anything new?", chain_id="nohist", include_history=False),
               instance=instance)
    prompt = r.prompt[1].content
    assert prompt.startswith("Chat history:\n(none)\nIntermediate tool outputs:")
    assert "Human: The secret word" not in prompt
    assert "chat history left out of the prompt (include_history=false)" in r.notes
    assert r.history_turns_dropped == 0
    assert metrics_of(workbench, instance, "nohist")[-1].notes == r.notes


@pytest.mark.parametrize("steps, words", [
    ({"memory_retrieval": "x"}, "the turn's own step"),
    ({"a\nb": "x"}, "printable"),
    ({"[a]": "x"}, "brackets"),
    ({"": "x"}, "1–100"),
    ({"t": "x" * 20_001}, "20,000"),
    ({f"t{i}": "x" for i in range(MAX_STEPS + 1)}, f"at most {MAX_STEPS} steps"),
    ({f"t{i}": "x" * 19_000 for i in range(4)}, "in all steps together"),
])
def test_bad_steps_name_the_field(steps, words):
    from pydantic import ValidationError

    with pytest.raises(ValidationError) as e:
        UiRememberParams(thought="x", intermediate_steps=steps)
    assert "intermediate_steps" in str(e.value) and words in str(e.value)


def test_a_repeated_request_without_a_chain_is_served_once_and_whole(workbench, instance):
    rm = Remember(workbench)
    rm.run(UiRememberParams(thought="first", chain_id="idem2"), instance=instance)
    p = UiRememberParams(thought="second", chain_id="idem2", request_id="req-whole")
    a, b = rm.run(p, instance=instance), rm.run(p, instance=instance)
    # The repeat gets the complete result: the previous answer's feedback and every stage's time.
    assert a == b and b.previous_feedback is not None and b.latency.total_ms > 0
    fresh = UiRememberParams(thought="a new chain", request_id="req-new-chain")
    c, d = rm.run(fresh, instance=instance), rm.run(fresh, instance=instance)
    assert c.chain_id == d.chain_id and c.thought1_id == d.thought1_id
    assert len(workbench.thoughts.chain_thoughts(instance, c.chain_id)) == 3


def test_the_demo_records_its_turns_as_demo(workbench, instance):
    from core.demo import conversations

    wb = Workbench(workbench.settings.model_copy(update={"instance": instance}), embedder=workbench.embedder)
    wb.services = workbench.services
    conversations.load(wb, lambda _: None)
    frame = load_feedback(wb.thoughts, instance, sweep=False)
    assert len(frame) == sum(len(turns) for *_, turns in conversations.CHAINS)
    assert set(frame["source"]) == {"demo"} and set(frame["key"]) == {""}


def test_the_demo_rates_some_answers():
    import random

    from core.demo import feedback as demo

    rng = random.Random(1)
    drawn = [demo._rating(rng, action) for action in ["ack", "correct", "leave", "late"] * 200]
    ups = [r for r in drawn[0::4] if r]
    downs = [r for r in drawn[1::4] if r]
    assert 0.2 < len(ups) / 200 < 0.5 and all(r[0] == "up" for r in ups)
    assert 0.35 < len(downs) / 200 < 0.65 and all(r[0] == "down" for r in downs)
    assert not any(drawn[2::4]) and not any(drawn[3::4])  # a user who left rates nothing
