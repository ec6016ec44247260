"""The feedback rows a process keeps between loads (`core.analytics.frames`) stay what a fresh read
gives, whatever changed in between and whichever process changed it: new turns, follow-ups, ratings,
abandonment, deletions with their redaction, imports and restores, and a change the log never held."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta

import pandas as pd
import pytest

from core import usecases as uc
from core.analytics import frames, load_feedback
from core.conversation.keys import feedback_changes_key, feedback_index_key, feedback_key, thought_key
from core.conversation.turn import Remember, UiRememberParams
from core.runtime import Workbench

START = datetime.now(UTC) - timedelta(hours=2)


@pytest.fixture(autouse=True)
def no_overlap(monkeypatch):
    """Every change a test makes comes within seconds of the last look: with the overlap kept, each look
    would read them all again, and a change the log failed to note would go unseen by the test."""
    monkeypatch.setattr(frames, "OVERLAP_S", 0.0)


@pytest.fixture
def other(settings):
    """A second process's runtime on the same servers: its writes reach the first one's rows only through
    the stores."""
    wb = Workbench(settings)
    yield wb
    wb.close()


class Chat:
    """ui_remember turns on a clock that the test moves forward."""

    def __init__(self, wb: Workbench, instance: str, start: datetime = START):
        self.now = [start]
        self.remember, self.instance = Remember(wb, clock=lambda: self.now[0]), instance

    def turn(self, text: str, chain: str, after_s: float = 30, **kw):
        self.now[0] += timedelta(seconds=after_s)
        return self.remember.run(UiRememberParams(thought=text, chain_id=chain, **kw), instance=self.instance)


def kept(wb: Workbench, instance: str, **kw) -> pd.DataFrame:
    return wb.feedback_frames.load(instance, **kw)


def assert_fresh(wb: Workbench, instance: str, since: datetime | None = None, **kw) -> pd.DataFrame:
    """The kept rows are those a fresh read gives, column for column."""
    rows = kept(wb, instance, since=since, **kw)
    pd.testing.assert_frame_equal(rows, load_feedback(wb.thoughts, instance, since, sweep=False, **kw))
    return rows


def test_kept_rows_follow_every_change_made_by_another_process(workbench, other, instance):
    chat = Chat(other, instance)
    first = chat.turn("The budget for the Lisbon trip is 48,000 euros.", "trip")
    assert len(assert_fresh(workbench, instance)) == 1

    # A follow-up scores the first answer; a new chain adds its own.
    second = chat.turn("No, it is 46,500 euros.", "trip")
    chat.turn("Book the museum tickets for Monday.", "museum")
    rows = assert_fresh(workbench, instance)
    assert len(rows) == 3 and rows.loc[rows["answer_id"] == first.thought2_id, "corrected"].item()

    # A rating, from the other process.
    uc.rate_answer(other, uc.RateAnswer(instance=instance, answer_id=second.thought2_id, rating="down",
                                        comment="wrong sum"))
    rows = assert_fresh(workbench, instance)
    assert rows.loc[rows["answer_id"] == second.thought2_id, "rating"].item() == -1

    # Deleting the correcting message: its answer's row goes, and the first answer's correction, which
    # quoted it, is redacted in the kept row as in the store.
    uc.memory_delete(other, uc.MemoryRef(instance=instance, memory_id=second.thought1_id, chain_id="trip"))
    uc.memory_delete(other, uc.MemoryRef(instance=instance, memory_id=second.thought2_id, chain_id="trip"))
    rows = assert_fresh(workbench, instance)
    assert second.thought2_id not in set(rows["answer_id"])
    assert "46,500" not in " ".join(rows["correction"])

    # A whole chain deleted.
    uc.chain_delete(other, uc.ChainRef(instance=instance, chain_id="museum"))
    assert list(assert_fresh(workbench, instance)["answer_id"]) == [first.thought2_id]


def test_abandonment_found_by_the_sweep_shows_in_the_kept_rows(workbench, instance):
    answer = Chat(workbench, instance, start=datetime.now(UTC)).turn("Which hotel did we pick?", "hotel", after_s=0)
    assert kept(workbench, instance)["abandoned"].tolist() == [0]
    later = time.time() + 3600  # the sweep's clock: an hour without a follow-up
    rows = kept(workbench, instance, now=later)
    assert rows["abandoned"].tolist() == [1] and rows["answer_id"].tolist() == [answer.thought2_id]
    assert_fresh(workbench, instance)


def test_imported_and_restored_answers_join_the_kept_rows(workbench, instance, tmp_path):
    Chat(workbench, instance).turn("Remind me of the dentist on Friday.", "live")
    assert len(kept(workbench, instance, include_imported=True)) == 1
    export = tmp_path / "chat.jsonl"
    export.write_text("\n".join(json.dumps({"created_at": START.isoformat(),
                                             "messages": [{"role": "user", "content": q},
                                                          {"role": "assistant", "content": a}]})
                                for q, a in (("Where is the spare key?", "Under the blue pot."),
                                             ("What is the wifi password?", "It is on the fridge."))))
    uc.import_file(workbench, uc.ImportFile(instance=instance, path=export, format="openai-jsonl"))
    rows = assert_fresh(workbench, instance, include_imported=True)
    assert len(rows) == 3 and len(assert_fresh(workbench, instance)) == 1

    # The instance exported and restored into a fresh one that this process has loaded (empty) before.
    restored = f"{instance}-r"
    assert kept(workbench, restored).empty
    uc.export_archive(workbench, uc.ExportArchive(instance=instance, out=tmp_path / "a.zip"))
    uc.restore_archive(workbench, uc.RestoreArchive(instance=restored, path=tmp_path / "a.zip"))
    assert len(assert_fresh(workbench, restored, include_imported=True)) == 3


def test_a_change_stamped_by_a_clock_behind_is_still_read(workbench, instance, monkeypatch):
    monkeypatch.setattr(frames, "OVERLAP_S", 120.0)
    answer = Chat(workbench, instance).turn("Order more coffee beans.", "coffee")
    kept(workbench, instance)
    r = workbench.redis()
    r.hset(feedback_key(answer.thought2_id), "rating", "1")
    r.zadd(feedback_changes_key(instance), {answer.thought2_id: time.time() - 60})  # a minute behind
    assert kept(workbench, instance)["rating"].tolist() == [1.0]


def test_a_metrics_thought_written_after_a_load_is_read(workbench, instance):
    """A turn writes its metrics thought last: a load may come between the answer and it."""
    answer = Chat(workbench, instance).turn("Pack the hiking boots.", "hike")
    store = workbench.thoughts
    (metrics,) = store.get_many(instance, "hike", [answer.thought3_id])
    workbench.redis().delete(thought_key(instance, "hike", answer.thought3_id))
    assert kept(workbench, instance)["total_ms"].isna().all()  # described by the answer alone
    store.append(metrics, about=answer.thought2_id)
    assert assert_fresh(workbench, instance)["total_ms"].notna().all()


def test_a_change_the_log_missed_is_caught_by_the_count(workbench, instance):
    chat = Chat(workbench, instance)
    gone = chat.turn("Water the plants on Sunday.", "plants")
    chat.turn("Call the plumber about the sink.", "sink")
    assert len(kept(workbench, instance)) == 2
    r = workbench.redis()  # removed behind the store's back, and the change log with it
    r.delete(feedback_key(gone.thought2_id), feedback_changes_key(instance))
    r.zrem(feedback_index_key(instance), gone.thought2_id)
    assert gone.thought2_id not in set(assert_fresh(workbench, instance)["answer_id"])


def test_a_longer_period_reads_the_older_answers(workbench, instance):
    chat = Chat(workbench, instance)
    chat.turn("Renew the passport before June.", "papers")
    chat.turn("Pay the car insurance.", "papers", after_s=3600)
    recent = START + timedelta(minutes=30)
    assert len(assert_fresh(workbench, instance, since=recent)) == 1
    assert len(assert_fresh(workbench, instance, since=START)) == 2
    assert len(assert_fresh(workbench, instance, since=recent)) == 1


def test_the_rows_read_ahead_at_start_serve_the_feedback_pages_first_view(workbench, instance):
    """The dashboard reads the last 15 days when it starts (`uc.warm_feedback`), so the Feedback page's
    default view (the last 7 days beside the 7 before) is served from those rows without a whole read."""
    Chat(workbench, instance, start=datetime.now(UTC) - timedelta(days=20)).turn("Renew the passport.", "papers")
    chat = Chat(workbench, instance)
    answer = chat.turn("Water the plants on Sunday.", "plants")
    chat.turn("Call the plumber about the sink.", "sink")
    assert uc.warm_feedback(workbench, instance) == 2  # not the passport's answer, 20 days old

    # Its feedback hash removed behind the store's back (the index and the change log left as they were):
    # a whole read would no longer find the answer, the rows read ahead still hold it.
    workbench.redis().delete(feedback_key(answer.thought2_id))
    view = kept(workbench, instance, since=datetime.now(UTC) - timedelta(days=14))
    assert answer.thought2_id in set(view["answer_id"]) and len(view) == 2
