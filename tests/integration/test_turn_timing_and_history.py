"""When an answer is abandoned or ended (issue 17, point 1) and how much chat history a turn reads
(issue 17, point 5), on the real servers, with time controlled by the turn's clock (never a sleep).

An answer whose next turn came 600 s or more later is marked abandoned (and continued) by that turn,
whatever ran before; an answer given with `next_thought_needed = false` is "ended", never abandoned, and
the Feedback page gives the rates with and without ended answers. The history read for the prompt is cut
by its token budget alone, and every message it leaves out is counted.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from core.analytics import load_feedback, summarize
from core.conversation.feedback import ABANDON_AFTER_S, feedback_score
from core.conversation.thoughts import CATEGORY_ASSISTANT, CATEGORY_METRICS, CATEGORY_USER, Thought
from core.conversation.turn import Remember, UiRememberParams
from core.runtime import Workbench
from tests.app.conftest import open_page
from tests.support.clock import Clock


@pytest.fixture
def clock() -> Clock:
    return Clock(datetime.now(UTC) - timedelta(hours=2))


def test_a_follow_up_600_s_later_marks_the_answer_abandoned_and_continued(workbench, instance, clock):
    rm = Remember(workbench, clock=clock)
    first = rm.run(UiRememberParams(thought="Which train goes to Lyon?", chain_id="late"), instance=instance)
    clock.advance(ABANDON_AFTER_S)  # no sweep runs in between
    second = rm.run(UiRememberParams(thought="I'm back: and to Nice?", chain_id="late"), instance=instance)
    fb = second.previous_feedback
    assert fb.answer_id == first.thought2_id
    assert (fb.abandoned, fb.continued, fb.time_to_next) == (1, 1, pytest.approx(ABANDON_AFTER_S, abs=0.01))
    assert fb.feedback_score == feedback_score(ABANDON_AFTER_S, "I'm back: and to Nice?").feedback_score


def test_a_follow_up_just_under_600_s_is_not_abandonment(workbench, instance, clock):
    rm = Remember(workbench, clock=clock)
    rm.run(UiRememberParams(thought="Which train goes to Lyon?", chain_id="soon"), instance=instance)
    clock.advance(ABANDON_AFTER_S - 1)
    fb = rm.run(UiRememberParams(thought="and to Nice?", chain_id="soon"), instance=instance).previous_feedback
    assert (fb.abandoned, fb.continued) == (0, 1)


def test_an_ended_answer_is_never_abandoned(workbench, instance, clock):
    rm = Remember(workbench, clock=clock)
    rm.run(UiRememberParams(thought="Goodbye!", chain_id="ended", next_thought_needed=False), instance=instance)
    clock.advance(2 * ABANDON_AFTER_S)
    fb = rm.run(UiRememberParams(thought="One more thing", chain_id="ended"), instance=instance).previous_feedback
    assert (fb.final, fb.abandoned, fb.continued) == (True, 0, 1)


@pytest.fixture
def ended_and_abandoned(workbench, instance, clock):
    """Three answers: one ended, one whose follow-up came 700 s later, and that follow-up's answer, left
    without a follow-up (the sweep marks it when the figures are read)."""
    rm = Remember(workbench, clock=clock)
    rm.run(UiRememberParams(thought="That is all, thanks.", chain_id="bye", next_thought_needed=False),
           instance=instance)
    rm.run(UiRememberParams(thought="Remind me of the dentist", chain_id="gone"), instance=instance)
    clock.advance(700)
    rm.run(UiRememberParams(thought="Sorry, I was away: when was it?", chain_id="gone"), instance=instance)
    return instance


def test_rates_with_and_without_ended_answers(workbench, ended_and_abandoned):
    s = summarize(load_feedback(workbench.thoughts, ended_and_abandoned))  # the sweep runs: it is now later
    assert (s.answers, s.final, s.abandoned, s.continued) == (3, 1, 2, 1)
    assert (s.abandon_rate, s.abandon_rate_excl_ended) == (pytest.approx(2 / 3), pytest.approx(2 / 2))
    assert (s.continue_rate, s.continue_rate_excl_ended) == (pytest.approx(1 / 3), pytest.approx(1 / 2))
    assert (s.correction_rate, s.correction_rate_excl_ended) == (0, 0)


def test_the_feedback_page_says_which_rates_leave_ended_answers_out(settings, ended_and_abandoned, monkeypatch):
    monkeypatch.setenv("DATA_DIR", str(settings.data_dir))  # the dashboard's Workbench: the session's servers
    at = open_page("pages/feedback.py", instance=ended_and_abandoned)
    assert not at.exception
    caption = next(c.value for c in at.caption if "ended" in c.value and "Without" in c.value)
    assert "over all 3 answers, 1 of them ended" in caption
    assert "Without the ended answers: continue 50.0%, abandon 100.0%, correction 0.0%" in caption


# -- the chat history a turn reads ------------------------------------------------------------------

def store_turns(wb: Workbench, instance: str, chain: str, n: int) -> None:
    """n turns written straight through the thought store (with their metrics thoughts, which the history
    skips), a minute apart, far enough in the past that the turn under test comes after them."""
    start = datetime.now(UTC) - timedelta(days=1)
    for k in range(n):
        at = start + timedelta(minutes=k)
        common = {"instance": instance, "chain_id": chain}
        user = Thought(id=str(uuid.uuid4()), thought=f"message {k} about the garden", timestamp=at,
                       category=CATEGORY_USER, **common)
        answer = Thought(id=str(uuid.uuid4()), thought=f"answer {k}", timestamp=at, category=CATEGORY_ASSISTANT,
                         **common)
        written = wb.thoughts.append_turn(user, answer, request_id=f"r-{user.id}", result_json="{}",
                                          score=lambda elapsed: feedback_score(elapsed, ""), index_answer=False)
        wb.thoughts.append(Thought(id=str(uuid.uuid4()), thought="metrics", timestamp=at,
                                   category=CATEGORY_METRICS, seq=written.seq + 2, **common))


@pytest.mark.parametrize("budget", [100_000, 120])
def test_history_of_100_turns_is_cut_by_the_budget_alone_and_every_cut_counted(workbench, instance, budget):
    store_turns(workbench, instance, "long", 100)
    wb = Workbench(workbench.settings.model_copy(update={"chat_history_token_budget": budget}))
    try:
        r = Remember(wb).run(UiRememberParams(thought="and now?", chain_id="long"), instance=instance)
    finally:
        wb.close()
    sent = r.prompt[-1].content
    humans, ais = sent.count("Human: message "), sent.count("AI: answer ")
    assert ais - humans in (0, 1)  # the newest messages, back to a question or an answer
    kept_messages = humans + ais
    assert r.history_turns_dropped == 200 - kept_messages
    if budget == 100_000:  # everything fits: the oldest message is in the prompt, nothing dropped
        assert "Human: message 0 about the garden" in sent and r.history_turns_dropped == 0
        assert not any("chat history cut" in n for n in r.notes)
    else:
        assert 0 < kept_messages < 20 and "AI: answer 99" in sent
        assert any(f"({r.history_turns_dropped} older ones dropped to fit {budget} tokens)" in n for n in r.notes)
