"""Feedback aggregates on a hand-made set of records: the expected values are written out by hand."""

from __future__ import annotations

import codecs
import csv
import io
import math
import random
from datetime import UTC, datetime, timedelta

import pandas as pd
import pytest
from pydantic import ValidationError
from scipy import stats

from core.analytics import (FeedbackFilter, apply_filter, build_frame, latency_table, lowest_scored,
                            previous_window, summarize, summarize_by, summarize_split)
from core.analytics.export import read_csv, to_csv
from core.analytics.load import EXTRACTIVE, FRAME_COLUMNS, IMPORTED, in_window
from core.demo import feedback as demo
from core.conversation.feedback import is_acknowledgement, is_correction

DAY1 = datetime(2025, 3, 1, 10, 0, tzinfo=UTC)
DAY2 = DAY1 + timedelta(days=1)
FAST, DEEP = "llama3-8b-8192", "llama3-70b-8192"


def rec(i: int, at: datetime, *, score=None, ttn=None, continued=0, abandoned=0, corrected="", final=False,
        model=FAST, profile="balanced-default", tags=(), tokens=None, total_ms=None, chain="c1",
        source=None, key=None, rating=None, rating_comment=None):
    return {"answer_id": f"a{i}", "chain_id": chain, "answered_at": at, "feedback_score": score,
            "source": source, "key": key, "rating": rating, "rating_comment": rating_comment,
            "synthesis_quality": score, "continued": continued, "abandoned": abandoned, "corrected": corrected,
            "time_to_next": ttn, "final": final, "model_selected": model,
            "model_used": model if tokens is not None else "extractive",
            "synthesis": "llm" if tokens is not None else "extractive", "profile": profile, "tags": list(tags),
            "tokens": tokens,
            "latency": {} if total_ms is None else {"embed_ms": total_ms / 10, "total_ms": total_ms}}


@pytest.fixture
def frame() -> pd.DataFrame:
    return build_frame([
        rec(1, DAY1, score=1.0, ttn=10, continued=1, model=DEEP, tags=["travel"], tokens=100, total_ms=100,
            chain="c1", source="dashboard", rating=1),
        rec(2, DAY1 + timedelta(minutes=1), score=0.7, ttn=40, continued=1, model=DEEP,
            tags=["travel", "work"], tokens=300, total_ms=200, chain="c1", source="dashboard"),
        rec(3, DAY1 + timedelta(minutes=3), score=0.4, ttn=200, continued=1, corrected="Actually, no.",
            tags=["work"], tokens=50, total_ms=300, chain="c1", source="mcp", key="claude-desktop",
            rating="-1", rating_comment="Wrong budget, again"),
        rec(4, DAY2, abandoned=1, profile="fast-chat", total_ms=400, chain="c2", source="http", key="ci-bot",
            rating=-1),
        rec(5, DAY2 + timedelta(minutes=5), score=0.5, ttn=900, continued=1, abandoned=1, profile="fast-chat",
            total_ms=500, chain="c2", source="http", key="ci-bot", rating="1"),
        rec(6, DAY2 + timedelta(minutes=30), final=True, profile="fast-chat", chain="c2"),
    ])


def test_headline_figures_written_out(frame):
    s = summarize(frame)
    assert (s.answers, s.scored, s.continued, s.abandoned, s.corrected, s.final, s.pending) == (6, 4, 4, 2, 1, 1, 0)
    assert s.mean_score == pytest.approx((1.0 + 0.7 + 0.4 + 0.5) / 4)
    assert s.continue_rate == pytest.approx(4 / 6)
    assert s.abandon_rate == pytest.approx(2 / 6)
    assert s.correction_rate == pytest.approx(1 / 6)
    # time_to_next sorted: 10, 40, 200, 900 → linear interpolation between order statistics
    assert s.time_to_next_s["p50"] == pytest.approx(40 + 0.5 * (200 - 40))
    assert s.time_to_next_s["p75"] == pytest.approx(200 + 0.25 * (900 - 200))
    assert s.time_to_next_s["p90"] == pytest.approx(200 + 0.70 * (900 - 200))
    assert s.llm_answers == 3 and s.tokens_total == 450 and s.tokens_per_answer == pytest.approx(150)
    # total_ms 100..500 (5 values): p50 = 300, p95 = 400 + 0.8*100, p99 = 400 + 0.96*100
    assert s.latency_ms["total"] == {"p50": 300, "p95": pytest.approx(480), "p99": pytest.approx(496)}
    assert s.latency_ms["synthesis"] == {"p50": None, "p95": None, "p99": None}


def test_explicit_ratings_are_their_own_signal(frame):
    assert list(frame["rating"].fillna(0)) == [1, 0, -1, -1, 1, 0]
    assert frame.loc[2, "rating_comment"] == "Wrong budget, again" and frame.loc[0, "rating_comment"] == ""
    s = summarize(frame)
    assert (s.rated, s.rated_up, s.rated_down) == (4, 2, 2) and s.rated_up_share == pytest.approx(0.5)
    assert s.mean_score == pytest.approx((1.0 + 0.7 + 0.4 + 0.5) / 4)  # the score leaves ratings out
    none = summarize(frame[frame["rating"].isna()])
    assert (none.rated, none.rated_up_share) == (0, None)
    by_day = summarize_by(frame, "day")
    assert list(by_day["rated_up"]) == [1, 1] and list(by_day["rated_down"]) == [1, 1]
    assert list(by_day["rated_up_share"]) == [0.5, 0.5]
    # Rated down: scored ones by score first, then the unscored, newest first.
    assert list(lowest_scored(frame, 10, rated_down_only=True)["answer_id"]) == ["a3", "a4"]
    assert list(lowest_scored(frame, 10, rated_down_only=True, corrected_only=True)["answer_id"]) == ["a3"]


def test_source_and_key_filter_and_group(frame):
    assert list(frame["source"]) == ["dashboard", "dashboard", "mcp", "http", "http", "unknown"]
    assert list(frame["key"]) == ["", "", "claude-desktop", "ci-bot", "ci-bot", ""]
    assert list(apply_filter(frame, FeedbackFilter(sources=["http", "mcp"]))["answer_id"]) == \
        ["a3", "a4", "a5"]
    assert list(apply_filter(frame, FeedbackFilter(keys=["ci-bot"]))["answer_id"]) == ["a4", "a5"]
    assert list(apply_filter(frame, FeedbackFilter(keys=[""], sources=["unknown"]))["answer_id"]) == ["a6"]
    by_source = summarize_by(frame, "source").set_index("source")
    assert by_source.loc["http", "answers"] == 2 and by_source.loc["unknown", "answers"] == 1
    assert by_source.loc["http", "rated_up_share"] == pytest.approx(0.5)
    by_key = summarize_by(frame, "key").set_index("key")
    assert dict(by_key["answers"]) == {"(no key)": 3, "ci-bot": 2, "claude-desktop": 1}


def test_confidence_interval_is_students_t(frame):
    s = summarize(frame)
    scores = [1.0, 0.7, 0.4, 0.5]
    mean = sum(scores) / 4
    sd = math.sqrt(sum((x - mean) ** 2 for x in scores) / 3)
    half = stats.t.ppf(0.975, 3) * sd / math.sqrt(4)
    assert s.ci_low == pytest.approx(max(0.0, mean - half))
    assert s.ci_high == pytest.approx(min(1.0, mean + half))


def test_one_score_has_no_interval_and_empty_has_no_figures(frame):
    one = summarize(frame[frame["answer_id"] == "a1"])
    assert one.mean_score == 1.0 and one.ci_low is None and one.ci_high is None
    empty = summarize(frame.iloc[0:0])
    assert empty.answers == 0 and empty.mean_score is None and empty.continue_rate is None


def test_grouping_by_day_model_profile_chain(frame):
    by_day = summarize_by(frame, "day")
    assert list(by_day["answers"]) == [3, 3]
    assert list(by_day["mean_score"]) == pytest.approx([(1.0 + 0.7 + 0.4) / 3, 0.5])
    assert list(by_day["tokens_total"].fillna(0)) == [450, 0]
    by_model = summarize_by(frame, "model").set_index("model")
    assert by_model.loc[DEEP, "mean_score"] == pytest.approx(0.85)
    # a4–a6 were routed to the fast model but answered extractively (no LLM call): a group of their own.
    assert dict(by_model["answers"]) == {DEEP: 2, FAST: 1, EXTRACTIVE: 3}
    assert by_model.loc[FAST, "mean_score"] == pytest.approx(0.4) and by_model.loc[FAST, "abandon_rate"] == 0
    assert by_model.loc[EXTRACTIVE, "mean_score"] == pytest.approx(0.5)
    assert by_model.loc[EXTRACTIVE, "abandon_rate"] == pytest.approx(2 / 3)
    by_profile = summarize_by(frame, "profile").set_index("profile")
    assert by_profile.loc["fast-chat", "answers"] == 3 and by_profile.loc["fast-chat", "final"] == 1
    by_chain = summarize_by(frame, "chain").set_index("chain_id")
    assert by_chain.loc["c1", "correction_rate"] == pytest.approx(1 / 3)


def test_grouping_by_tag_counts_a_turn_under_each_tag(frame):
    by_tag = summarize_by(frame, "tag").set_index("tag")
    assert by_tag.loc["travel", "answers"] == 2 and by_tag.loc["work", "answers"] == 2
    assert by_tag.loc["work", "mean_score"] == pytest.approx((0.7 + 0.4) / 2)
    assert by_tag.loc["(no tag)", "answers"] == 3


def test_unknown_grouping_is_refused(frame):
    with pytest.raises(ValueError, match="by must be one of"):
        summarize_by(frame, "weather")


def test_filters(frame):
    assert list(apply_filter(frame, FeedbackFilter(models=[DEEP]))["answer_id"]) == ["a1", "a2"]
    assert list(apply_filter(frame, FeedbackFilter(tags=["work"]))["answer_id"]) == ["a2", "a3"]
    assert list(apply_filter(frame, FeedbackFilter(since=DAY2))["answer_id"]) == ["a4", "a5", "a6"]
    assert list(apply_filter(frame, FeedbackFilter(until=DAY1 + timedelta(minutes=1)))["answer_id"]) == ["a1", "a2"]
    both = FeedbackFilter(profiles=["fast-chat"], chains=["c2"], since=DAY2 + timedelta(minutes=1))
    assert list(apply_filter(frame, both)["answer_id"]) == ["a5", "a6"]


def test_filter_validation_names_the_field():
    with pytest.raises(ValidationError, match="since must not be after until"):
        FeedbackFilter(since=DAY2, until=DAY1)
    with pytest.raises(ValidationError, match="colour"):
        FeedbackFilter(colour="red")


def test_a_split_summarises_each_side_as_summarize_does(frame):
    """The Feedback page's tiles: the period and the one before it, from one pass over both."""
    for at in (DAY1 - timedelta(days=1), DAY1 + timedelta(minutes=1), DAY2, DAY2 + timedelta(days=1)):
        before, after = summarize_split(frame, at)
        assert before == summarize(apply_filter(frame, FeedbackFilter(until=at - timedelta(microseconds=1))))
        assert after == summarize(apply_filter(frame, FeedbackFilter(since=at)))
    assert summarize_split(frame.iloc[:0], DAY2) == (summarize(frame.iloc[:0]), summarize(frame.iloc[:0]))
    # Imported answers (no feedback of their own) are counted, so an earlier period of only those is
    # read as one without data.
    imported = frame.assign(source=["imported"] * 3 + ["http"] * 3)
    before, after = summarize_split(imported, DAY2)
    assert (before.answers, before.imported, after.imported) == (3, 3, 0)
    assert summarize(imported).imported == 3


def test_previous_window_has_the_same_length_and_ends_before_the_period_starts():
    week_end = DAY2 + timedelta(days=7, microseconds=-1)  # seven whole days, closed to the microsecond
    assert previous_window(DAY2, week_end) == (DAY2 - timedelta(days=7), DAY2 - timedelta(microseconds=1))


def test_lowest_scored_and_corrected_only(frame):
    assert list(lowest_scored(frame, 3)["answer_id"]) == ["a3", "a5", "a2"]
    assert list(lowest_scored(frame, 10, corrected_only=True)["answer_id"]) == ["a3"]


def test_latency_table_is_long_form(frame):
    table = latency_table(frame, "model")
    deep_total = table[(table["model"] == DEEP) & (table["stage"] == "total")].iloc[0]
    assert deep_total["p50"] == pytest.approx(150)  # 100 and 200


def test_model_falls_back_to_the_answering_model_for_older_turns():
    old = build_frame([{**rec(1, DAY1, tokens=10), "model_selected": None, "model_used": "groq-model"},
                       {**rec(2, DAY1), "model_selected": None},
                       {**rec(3, DAY1), "model_selected": None, "model_used": None, "synthesis": None}])
    assert list(old["model"]) == ["groq-model", EXTRACTIVE, "unknown"]  # the last recorded nothing


def test_extractive_answers_are_their_own_model_whatever_they_were_routed_to():
    """An answer quoted from the memories (no LLM call: none configured, or the call failed) was counted
    under the model the router picked, mixing its scores with that model's."""
    frame = build_frame([rec(1, DAY1, score=0.9, model=DEEP, tokens=80),
                         rec(2, DAY1, score=0.5, model=DEEP),  # routed deep, answered extractively
                         rec(3, DAY1, score=0.7, model=FAST),
                         {**rec(4, DAY1, score=0.3, model=FAST, tokens=20), "model_used": "llama3-8b-8192-v2"}])
    assert list(frame["model"]) == [DEEP, EXTRACTIVE, EXTRACTIVE, FAST]
    assert list(frame["synthesis"]) == ["llm", "extractive", "extractive", "llm"]
    by_model = summarize_by(frame, "model").set_index("model")
    assert dict(by_model["answers"]) == {DEEP: 1, FAST: 1, EXTRACTIVE: 2}
    assert by_model.loc[EXTRACTIVE, "mean_score"] == pytest.approx((0.5 + 0.7) / 2)
    assert by_model.loc[EXTRACTIVE, "llm_answers"] == 0 and by_model.loc[DEEP, "llm_answers"] == 1
    assert list(apply_filter(frame, FeedbackFilter(models=[EXTRACTIVE]))["answer_id"]) == ["a2", "a3"]
    assert list(apply_filter(frame, FeedbackFilter(models=[DEEP]))["answer_id"]) == ["a1"]
    assert set(latency_table(frame, "model")["model"]) == {DEEP, FAST, EXTRACTIVE}


def test_csv_round_trip_keeps_every_value(frame):
    frame.loc[2, "correction"] = 'No, "quoted", with a comma\nand a new line'
    frame.at[1, "tags"] = ["a,b", "c|d"]
    frame.loc[4, "rating_comment"] = 'Good, "mostly",\nthanks'
    frame.loc[1, "key"] = "0123"  # a key name that looks like a number stays a text
    back = read_csv(to_csv(frame))
    pd.testing.assert_frame_equal(back, frame)
    assert list(back["rating"].fillna(0)) == [1, 0, -1, -1, 1, 0] and back.loc[1, "key"] == "0123"



def test_csv_cells_a_spreadsheet_would_run_are_inert_and_read_back_as_written(frame):
    """A user's text starting with "=" was written as it was: Excel, LibreOffice and Google Sheets run
    such a cell as a formula when the engineer opens the export."""
    texts = ['=HYPERLINK("http://example.invalid","click")', "+1 555 0100", "-2 was wrong", "@SUM(A1)",
             "'quoted' already", "\tindented"]
    frame.loc[: len(texts) - 1, "correction"] = texts
    frame.loc[0, "rating_comment"] = "=1+1"
    data = to_csv(frame)
    cells = pd.read_csv(io.BytesIO(data), dtype=str, keep_default_na=False)
    assert list(cells["correction"][: len(texts)]) == ["'" + t for t in texts]
    assert cells.loc[0, "rating_comment"] == "'=1+1" and cells.loc[0, "answer_id"] == frame.loc[0, "answer_id"]
    pd.testing.assert_frame_equal(read_csv(data), frame)

def test_the_csv_opens_in_a_spreadsheet_as_utf_8_with_every_comment_whole(frame):
    """Read as Excel reads it (the csv module's excel dialect): the byte order mark tells it the file is UTF-8
    (without one it read "Zoë" as "ZoÃ«" and an emoji as four letters of noise), quoted commas, quotes and
    line breaks stay in their cell, a formula is inert text, and every time says its zone."""
    comments = ["Zoë's answer, ça va; 東京 👎", 'It said "Pro", we are on "Team"', "Outdated,\nsee #4411",
                "line1\r\nline2", '=HYPERLINK("http://evil.example","click")', "\tleading tab"]
    for i, comment in enumerate(comments):
        frame.loc[i, "rating_comment"] = comment
    data = to_csv(frame)
    assert data.startswith(codecs.BOM_UTF8) and not data.startswith(codecs.BOM_UTF8 * 2)
    rows = list(csv.DictReader(io.StringIO(data.decode("utf-8-sig"), newline=""), dialect="excel"))
    assert next(iter(rows[0])) == "answer_id" and len(rows) == len(frame)
    assert [r["rating_comment"] for r in rows] == [*comments[:4], "'" + comments[4], "'" + comments[5]]
    assert all(r["answered_at"].endswith("Z") and r["day"].endswith("T00:00:00.000000Z") for r in rows)
    pd.testing.assert_frame_equal(read_csv(data), frame)


def test_the_cli_says_why_continue_and_abandon_rates_add_up_past_100_percent():
    """63% continued beside 37% abandoned read as two shares of the same answers; the page says under its
    tiles that a follow-up 10 minutes later is both, the terminal now does too, when the rates overlap."""
    from core.cli.feedback import render_summary

    late = rec(1, DAY1, score=0.5, ttn=900, continued=1, abandoned=1)
    soon, left = rec(2, DAY1, score=0.9, ttn=10, continued=1), rec(3, DAY1, abandoned=1)
    note = "is both continued and abandoned"
    assert note in render_summary(summarize(build_frame([late, soon])))  # 2 continued + 1 abandoned of 2
    assert note not in render_summary(summarize(build_frame([soon, left])))


def test_demo_texts_read_as_the_reaction_they_simulate():
    for _, facts, questions, corrections in demo.TOPICS:
        for text in [*facts, *questions, demo.LATE]:
            assert not is_acknowledgement(text) and not is_correction(text), text
        for text in corrections:
            assert is_correction(text), text
    for ack in demo.ACKS:
        assert is_acknowledgement(ack) and not is_correction(ack), ack


def test_a_period_is_the_rows_answered_in_it():
    """`in_window` takes the period as one slice of the rows (oldest first, as `read_answers` gives them),
    or row by row when a time is missing: the rows answered in [since, until] either way, ends included,
    the imported ones only when asked for."""
    rng = random.Random(7)
    rows = build_frame([rec(i, DAY1 + timedelta(minutes=30 * rng.randrange(100))) for i in range(300)])
    rows[IMPORTED] = [rng.random() < 0.2 for _ in range(len(rows))]
    times = list(rows["answered_at"])

    def expected(frame, since, until, include_imported):
        at = frame["answered_at"]
        keep = at.notna() if since is not None or until is not None else pd.Series(True, index=frame.index)
        keep &= (at >= since) if since is not None else True
        keep &= (at <= until) if until is not None else True
        keep &= True if include_imported else ~frame[IMPORTED]
        return list(frame.loc[keep, "answer_id"])

    with_gap = rows.copy()
    with_gap.loc[150, "answered_at"] = pd.NaT  # no longer in order: tested row by row
    assert not with_gap["answered_at"].is_monotonic_increasing
    for frame in (rows, with_gap):
        for since, until in ((None, None), (times[40], None), (None, times[200]), (times[40], times[200]),
                             (times[10], times[10]), (DAY2 + timedelta(days=9), None)):
            for include_imported in (True, False):
                got = in_window(frame, since, until, include_imported)
                assert list(got["answer_id"]) == expected(frame, since, until, include_imported)
                assert list(got.columns) == FRAME_COLUMNS and list(got.index) == list(range(len(got)))
