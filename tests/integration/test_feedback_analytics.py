"""Feedback analytics over real Redis, with turns produced by ui_remember and an LLM served by the fake
OpenAI-compatible server (so tokens are real usage numbers from a response)."""

from __future__ import annotations

import json
import math
import sys
import uuid
from datetime import UTC, datetime, timedelta

import httpx
import pandas as pd
import pytest
from click.testing import CliRunner

from core import usecases as uc
from core.analytics import load_feedback, questions_for, summarize, turn_transcript
from core.analytics.export import read_csv
from core.cli import cli, main
from core.conversation.turn import Remember, UiRememberParams
from core.runtime import Workbench
from core.conversation.keys import feedback_key, thought_key
from tests.support.api import thread_server
from tests.support.cli import mode, usual_umask
from tests.support.embedders import KeywordEmbedder

T0 = datetime(2025, 5, 1, 12, 0, tzinfo=UTC)
FAST, DEEP = "llama3-8b-8192", "llama3-70b-8192"


@pytest.fixture
def conversation(llm_settings, fake_llm, instance):
    """Three turns at T0, T0+20 s and T0+220 s: an acknowledged deep answer, a corrected fast answer,
    and a last answer left without a follow-up."""
    wb = Workbench(llm_settings, embedder=KeywordEmbedder())
    now = [T0]
    remember = Remember(wb, clock=lambda: now[0])

    def turn(text: str, at: datetime, reply: str, tokens: int, **kw):
        now[0] = at
        fake_llm.reply(reply, total_tokens=tokens)
        return remember.run(UiRememberParams(thought=text, chain_id="trip", **kw), instance=instance)

    r1 = turn("Plan a museum day in Paris", T0, "Start at the Louvre.", 120, style="deep", tags=["travel"])
    r2 = turn("Thanks, that works. Which museum after lunch?", T0 + timedelta(seconds=20),
              "The Orsay museum.", 40, tags=["travel"], profile="fast-chat")
    r3 = turn("Actually, the Orsay is closed on Mondays.", T0 + timedelta(seconds=220),
              "Then the Orangerie.", 60, tags=["work"])
    yield wb, [r1, r2, r3]
    wb.close()


def test_frame_has_each_answer_with_its_model_tokens_latency_and_feedback(conversation, instance):
    wb, (r1, r2, r3) = conversation
    frame = load_feedback(wb.thoughts, instance, now=(T0 + timedelta(seconds=300)).timestamp())
    assert list(frame["answer_id"]) == [r1.thought2_id, r2.thought2_id, r3.thought2_id]
    assert list(frame["model"]) == [DEEP, FAST, FAST]
    assert list(frame["synthesis"]) == ["llm"] * 3
    assert list(frame["tokens"]) == [120, 40, 60]
    assert list(frame["profile"]) == ["balanced-default", "fast-chat", "balanced-default"]
    assert [list(t) for t in frame["tags"]] == [["travel"], ["travel"], ["work"]]
    # 20 s with "thanks" → 0.9 + 0.1; 200 s with "actually" → 0.5 − 0.1; the last has no follow-up yet.
    assert frame["feedback_score"].iloc[:2].tolist() == [1.0, 0.4]
    assert math.isnan(frame["feedback_score"].iloc[2])
    assert frame["time_to_next"].iloc[:2].tolist() == [20.0, 200.0]
    assert frame["correction"].iloc[1] == "Actually, the Orsay is closed on Mondays."
    assert frame["pending"].tolist() == [False, False, True]
    assert frame["total_ms"].notna().all() and (frame["total_ms"] >= frame["synthesis_ms"]).all()

    s = summarize(frame)
    assert (s.answers, s.scored, s.corrected, s.llm_answers, s.tokens_total) == (3, 2, 1, 3, 220)


def test_the_sweep_runs_before_aggregation(conversation, instance):
    wb, (_, _, r3) = conversation
    store = wb.thoughts
    early = load_feedback(store, instance, now=(T0 + timedelta(seconds=300)).timestamp())
    assert early["abandoned"].sum() == 0
    assert load_feedback(store, instance, sweep=False)["abandoned"].sum() == 0
    late = load_feedback(store, instance, now=(T0 + timedelta(seconds=220 + 600)).timestamp())
    assert late.set_index("answer_id").loc[r3.thought2_id, "abandoned"] == 1
    assert summarize(late).abandon_rate == pytest.approx(1 / 3)


def test_time_window_reads_only_that_part_of_the_index(conversation, instance):
    wb, (_, r2, r3) = conversation
    frame = load_feedback(wb.thoughts, instance, T0 + timedelta(seconds=10), T0 + timedelta(seconds=230),
                          sweep=False)
    assert list(frame["answer_id"]) == [r2.thought2_id, r3.thought2_id]


def test_older_feedback_hashes_without_thought_ids_still_load(conversation, instance):
    wb, (_, r2, _) = conversation
    wb.redis().hdel(feedback_key(r2.thought2_id), "metrics_id", "user_id")
    frame = load_feedback(wb.thoughts, instance, sweep=False).set_index("answer_id")
    assert frame.loc[r2.thought2_id, "tokens"] == 40 and frame.loc[r2.thought2_id, "model"] == FAST
    assert questions_for(wb.thoughts, instance, frame.reset_index())[r2.thought2_id] == \
        "Thanks, that works. Which museum after lunch?"


def test_transcript_of_a_corrected_turn(conversation, instance):
    wb, (_, r2, _) = conversation
    t = turn_transcript(wb.thoughts, instance, "trip", r2.thought2_id)
    assert t.question.thought == "Thanks, that works. Which museum after lunch?"
    assert t.answer.thought == "The Orsay museum."
    assert t.next_turn.thought == "Actually, the Orsay is closed on Mondays."
    assert t.metrics.answer_id == r2.thought2_id and t.metrics.tokens == 40
    assert t.metrics == r2.metrics() and t.described() == t.metrics  # what the turn wrote, read back whole
    assert t.feedback.corrected == "Actually, the Orsay is closed on Mondays."
    assert turn_transcript(wb.thoughts, instance, "trip", "no-such-answer") is None


def test_transcript_without_its_metrics_thought_is_described_by_its_answer(conversation, instance):
    wb, (_, r2, _) = conversation
    wb.redis().delete(thought_key(instance, "trip", r2.thought3_id))
    t = turn_transcript(wb.thoughts, instance, "trip", r2.thought2_id)
    assert t.metrics is None
    described = t.described()
    assert (described.model, described.model_selected, described.synthesis, described.profile,
            described.tags) == (FAST, FAST, "llm", "fast-chat", ["travel"])
    assert described.tokens is None and described.latency is None and described.context == []


def test_cli_summary_json_and_export_round_trip(conversation, instance, settings, monkeypatch, tmp_path):
    wb, _ = conversation
    monkeypatch.setenv("DATA_DIR", str(settings.data_dir))
    runner = CliRunner()
    out = runner.invoke(cli, ["--instance", instance, "feedback", "summary", "--json", "--by", "model"])
    assert out.exit_code == 0, out.output
    payload = json.loads(out.output)
    # The CLI swept with the real clock: the last answer (May 2025) is abandoned by now.
    expected = summarize(load_feedback(wb.thoughts, instance))
    assert payload["summary"] == json.loads(expected.model_dump_json())
    assert {g["model"]: g["answers"] for g in payload["groups"]} == {DEEP: 1, FAST: 2}

    path = tmp_path / "feedback.csv"
    with usual_umask():  # the file holds the rating comments: its owner's alone, a replaced one too
        out = runner.invoke(cli, ["--instance", instance, "feedback", "export", "--csv", str(path)])
        assert out.exit_code == 0 and "wrote 3 answers" in out.output and mode(path) == "0o600"
        path.chmod(0o644)
        again = runner.invoke(cli, ["--instance", instance, "feedback", "export", "--csv", str(path)])
        assert again.exit_code != 0 and "exists" in str(again.exception)  # replaced only with --force
        again = runner.invoke(cli, ["--instance", instance, "feedback", "export", "--csv", str(path), "--force"])
        assert again.exit_code == 0, again.output
    assert mode(path) == "0o600"
    pd.testing.assert_frame_equal(read_csv(path.read_bytes()), load_feedback(wb.thoughts, instance))


def test_cli_summary_human_output_and_since(conversation, instance, settings, monkeypatch):
    monkeypatch.setenv("DATA_DIR", str(settings.data_dir))
    out = CliRunner().invoke(cli, ["--instance", instance, "feedback", "summary", "--since",
                                   "2025-05-01T12:00:10Z"])
    assert out.exit_code == 0, out.output
    assert "answers            2 " in out.output and "correction rate    50.0%" in out.output


def test_cli_rates_without_ended_answers_and_imported_answers_on_request(conversation, fake_llm, instance,
                                                                          settings, monkeypatch, tmp_path):
    """The text shows each rate with and without the ended answers (DESIGN; the JSON has both), and says
    how many imported answers it left out; --include-imported counts them, in the summary and the CSV."""
    wb, _ = conversation
    monkeypatch.setenv("DATA_DIR", str(settings.data_dir))
    fake_llm.reply("Enjoy the Orangerie.", total_tokens=10)
    Remember(wb, clock=lambda: T0 + timedelta(seconds=400)).run(UiRememberParams(
        thought="That is all, thanks.", chain_id="done", next_thought_needed=False), instance=instance)
    chats = tmp_path / "chats.jsonl"
    chats.write_text("\n".join(json.dumps({"created_at": T0.isoformat(), "messages": [
        {"role": "user", "content": q}, {"role": "assistant", "content": a}]})
        for q, a in (("Where is the spare key?", "Under the blue pot."), ("The wifi?", "On the fridge."))))
    uc.import_file(wb, uc.ImportFile(instance=instance, path=chats, format="openai-jsonl"))
    runner = CliRunner()
    out = runner.invoke(cli, ["--instance", instance, "feedback", "summary"])
    assert out.exit_code == 0, out.output
    s = uc.feedback_summary(wb, uc.SummaryRequest(instance=instance)).summary
    assert (s.answers, s.final, s.continue_rate_excl_ended) == (4, 1, s.continued / 3)
    assert (s.continued, s.abandoned) == (2, 1)
    assert (f"continue rate      {100 * s.continue_rate:.1f}%  (2 answers; "
            f"{100 * s.continue_rate_excl_ended:.1f}% without the ended answer)") in out.output
    assert (f"abandon rate       {100 * s.abandon_rate:.1f}%  (1 answer; "
            f"{100 * s.abandon_rate_excl_ended:.1f}% without the ended answer)") in out.output
    assert out.output.rstrip().endswith("2 imported answers left out (--include-imported counts them)")

    out = runner.invoke(cli, ["--instance", instance, "feedback", "summary", "--include-imported"])
    assert "answers            6  " in out.output and "imported 2: in no rate" in out.output
    assert "left out" not in out.output
    out = runner.invoke(cli, ["--instance", instance, "feedback", "summary", "--include-imported", "--json"])
    assert json.loads(out.output)["summary"]["imported"] == 2
    csv = tmp_path / "f.csv"
    for flag, answers in (([], 4), (["--include-imported"], 6)):
        out = runner.invoke(cli, ["--instance", instance, "feedback", "export", "--csv", str(csv), "--force", *flag])
        assert f"wrote {answers} answers" in out.output and len(read_csv(csv.read_bytes())) == answers


@pytest.mark.parametrize("date", ["blorp-xyz", "2026-13-01"])
def test_cli_bad_date_is_one_line_and_status_2(monkeypatch, capsys, date):
    """"2026-13-01" was read as 13 January."""
    monkeypatch.setattr(sys, "argv", ["workbench", "feedback", "summary", "--since", date])
    with pytest.raises(SystemExit) as e:
        main()
    assert e.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "--since" in err and date in err


def test_cli_periods_count_whole(conversation, instance, settings, monkeypatch):
    """"--since today" read as this very moment (no answer ever), "2026-03" as the day of the month today
    is; a period now counts from its start, and --until to its end."""
    monkeypatch.setenv("DATA_DIR", str(settings.data_dir))
    day = T0.date().isoformat()
    out = CliRunner().invoke(cli, ["--instance", instance, "feedback", "summary", "--json",
                                   "--since", day[:7], "--until", day])
    assert out.exit_code == 0, out.output
    window = json.loads(out.output)
    assert (window["since"], window["until"]) == (f"{day[:7]}-01T00:00:00+00:00", f"{day}T23:59:59.999999+00:00")
    assert window["summary"]["answers"] == uc.feedback_summary(conversation[0], uc.SummaryRequest(
        instance=instance)).summary.answers == 3


def test_cli_adjacent_days_share_no_answer(conversation, instance, settings, monkeypatch):
    """An answer given at midnight is the new day's: "--until" a day ended at the next midnight, both ends
    included, so it counted in both days, and two days' answers added up to more than the two days'."""
    wb, _ = conversation
    midnight = datetime.combine(T0.date() + timedelta(days=1), datetime.min.time(), UTC)
    Remember(wb, clock=lambda: midnight).run(UiRememberParams(thought="Is the Louvre open at night?",
                                                              chain_id="night"), instance=instance)
    monkeypatch.setenv("DATA_DIR", str(settings.data_dir))
    first, second = T0.date().isoformat(), midnight.date().isoformat()

    def answers(since: str, until: str) -> int:
        out = CliRunner().invoke(cli, ["--instance", instance, "feedback", "summary", "--json", "--since", since,
                                       "--until", until])
        assert out.exit_code == 0, out.output
        return json.loads(out.output)["summary"]["answers"]

    assert (answers(first, first), answers(second, second), answers(first, second)) == (3, 1, 4)


def key_headers(wb, instance: str) -> dict[str, str]:
    """A key for the instance: the API asks for one once any test of the worker has made a key."""
    created = uc.create_key(wb, uc.CreateKey(name=f"k-{uuid.uuid4().hex[:10]}", instances=[instance]))
    return {"Authorization": f"Bearer {created.secret}"}


def test_cli_by_week_matches_the_http_api_and_counts_the_down_ratings(conversation, instance, settings,
                                                                      monkeypatch):
    """The Feedback page charts a long period by week and the HTTP API groups `by=week`, but the CLI refused
    `--by week` (exit 2); its table now has the week's Monday, the down ratings, and counts as whole numbers
    (tokens read "220.000")."""
    wb, (_, r2, _) = conversation
    uc.rate_answer(wb, uc.RateAnswer(instance=instance, answer_id=r2.thought2_id, rating="down",
                                     comment="Orsay, again"))
    monkeypatch.setenv("DATA_DIR", str(settings.data_dir))
    runner = CliRunner()
    out = runner.invoke(cli, ["--instance", instance, "feedback", "summary", "--by", "week"])
    assert out.exit_code == 0, out.output
    header, row = out.output.rstrip().splitlines()[-2:]
    cells = dict(zip(header.split(), row.split(), strict=True))
    # Thursday 1 May 2025 is in the week from Monday 28 April (UTC).
    assert (cells["week"], cells["answers"], cells["rated_down"], cells["tokens_total"]) == (
        "2025-04-28", "3", "1", "220")
    as_json = json.loads(runner.invoke(cli, ["--instance", instance, "feedback", "summary", "--by", "week",
                                             "--json"]).output)
    with thread_server(wb) as base:
        api = httpx.get(f"{base}/v1/instances/{instance}/feedback/summary", params={"by": "week"},
                        headers=key_headers(wb, instance)).json()
    assert as_json["groups"] == api["groups"] and as_json["groups"][0]["week"].startswith("2025-04-28")
    assert as_json["groups"][0]["rated_down"] == 1


def test_model_and_rating_filters_keep_the_same_answers_in_the_cli_the_http_api_and_the_export(
        conversation, instance, settings, monkeypatch, tmp_path):
    """The page filters by model and lists the answers rated down; the CLI and the HTTP API could only
    group by model, so a lead's "fast model, rated down" had no figure outside the page."""
    wb, (r1, r2, r3) = conversation
    for answer, rating in ((r1, "up"), (r2, "down"), (r3, "down")):
        uc.rate_answer(wb, uc.RateAnswer(instance=instance, answer_id=answer.thought2_id, rating=rating,
                                         comment='=1+1, "quoted"'))
    monkeypatch.setenv("DATA_DIR", str(settings.data_dir))
    runner = CliRunner()

    def cli_answers(*flags: str) -> int:
        out = runner.invoke(cli, ["--instance", instance, "feedback", "summary", "--json", *flags])
        assert out.exit_code == 0, out.output
        return json.loads(out.output)["summary"]["answers"]

    assert cli_answers("--model", FAST) == 2 and cli_answers("--model", DEEP, "--rating", "down") == 0
    assert cli_answers("--model", FAST, "--rating", "down") == 2 and cli_answers("--rating", "none") == 0
    assert cli_answers("--rating", "up", "--rating", "down") == 3
    with thread_server(wb) as base:
        url = f"{base}/v1/instances/{instance}/feedback/summary"
        headers = key_headers(wb, instance)
        got = httpx.get(url, params={"model": FAST, "rating": "down"}, headers=headers).json()
        assert (got["summary"]["answers"], got["models"], got["ratings"]) == (2, [FAST], ["down"])
        assert httpx.get(url, params={"rating": "sideways"}, headers=headers).status_code == 422
    out = runner.invoke(cli, ["--instance", instance, "feedback", "summary", "--model", FAST, "--rating", "down"])
    assert f"(model {FAST}; rated down)" in out.output.splitlines()[0]
    path = tmp_path / "down.csv"
    out = runner.invoke(cli, ["--instance", instance, "feedback", "export", "--csv", str(path), "--rating", "down"])
    assert out.exit_code == 0 and "wrote 2 answers (rated down)" in out.output and "UTC" in out.output
    assert sorted(read_csv(path.read_bytes())["answer_id"]) == sorted([r2.thought2_id, r3.thought2_id])


@pytest.mark.parametrize("by", [[], ["--by", "model"], ["--by", "week"]])
def test_cli_period_without_answers_says_so(conversation, instance, settings, monkeypatch, by):
    """A week with no answer printed a table of dashes (and with --by, pandas' "Empty DataFrame"), as if
    something had been measured."""
    monkeypatch.setenv("DATA_DIR", str(settings.data_dir))
    out = CliRunner().invoke(cli, ["--instance", instance, "feedback", "summary", "--since", "2025-06-02",
                                   "--until", "2025-06-08", *by])
    assert out.exit_code == 0, out.output
    assert out.output.splitlines() == ["feedback for instance " + repr(instance)
                                       + ", from 2025-06-02 00:00 UTC to 2025-06-08 23:59 UTC",
                                       "no answers in this period"]


def test_extractive_answers_are_their_own_model_in_the_cli_and_the_http_api(conversation, fake_llm, instance,
                                                                           settings, monkeypatch):
    """An answer quoted from the memories (here: the LLM failed, so the turn routed to the fast model was
    answered extractively) is grouped as "extractive (no model)" by `--by model` and `by=model`, not under
    the model the router picked."""
    wb, _ = conversation
    fake_llm.fail(500, times=3)  # every try of the turn's one call (LLM_MAX_RETRIES 2)
    quoted = Remember(wb, clock=lambda: T0 + timedelta(seconds=400)).run(UiRememberParams(
        thought="Which museum was closed on Mondays?", chain_id="late"), instance=instance)
    assert (quoted.synthesis, quoted.model_selected, quoted.model_used) == ("extractive", FAST, None)
    expected = {DEEP: 1, FAST: 2, uc.EXTRACTIVE_MODEL: 1}

    monkeypatch.setenv("DATA_DIR", str(settings.data_dir))
    runner = CliRunner()
    out = runner.invoke(cli, ["--instance", instance, "feedback", "summary", "--json", "--by", "model"])
    assert out.exit_code == 0, out.output
    assert {g["model"]: g["answers"] for g in json.loads(out.output)["groups"]} == expected
    out = runner.invoke(cli, ["--instance", instance, "feedback", "summary", "--by", "model"])
    assert out.exit_code == 0 and "extractive (no model)" in out.output

    created = uc.create_key(wb, uc.CreateKey(name=f"k-{instance}", instances=[instance]))
    with thread_server(wb) as url:
        got = httpx.get(f"{url}/v1/instances/{instance}/feedback/summary", params={"by": "model"},
                        headers={"Authorization": f"Bearer {created.secret}"}, timeout=60)
    assert got.status_code == 200, got.text
    assert {g["model"]: g["answers"] for g in got.json()["groups"]} == expected


def test_the_http_api_reads_a_day_as_the_cli_does(conversation, instance, settings, monkeypatch):
    """`until=2025-05-01` is that whole day over HTTP as `--until 2025-05-01` is in the CLI (it was the
    day's first instant, so the API counted none of the day's answers the CLI counted); a bound neither can
    read is refused naming it."""
    wb, _ = conversation
    monkeypatch.setenv("DATA_DIR", str(settings.data_dir))
    out = CliRunner().invoke(cli, ["--instance", instance, "feedback", "summary", "--json",
                                   "--since", "2025-05-01", "--until", "2025-05-01"])
    assert out.exit_code == 0, out.output
    day = json.loads(out.output)["summary"]["answers"]
    assert day == 3
    created = uc.create_key(wb, uc.CreateKey(name=f"k-{instance}", instances=[instance]))
    headers = {"Authorization": f"Bearer {created.secret}"}
    with thread_server(wb) as url:
        summary = f"{url}/v1/instances/{instance}/feedback/summary"
        got = httpx.get(summary, params={"since": "2025-05-01", "until": "2025-05-01"}, headers=headers, timeout=60)
        bad = httpx.get(summary, params={"until": "the day after"}, headers=headers, timeout=60)
    assert got.status_code == 200, got.text
    assert got.json()["summary"]["answers"] == day
    assert got.json()["until"].startswith("2025-05-01T23:59:59.999999")
    assert bad.status_code == 422 and bad.json()["detail"].startswith("until: could not read 'the day after'")
