"""A goal said in words (`core.formation.updates`, `_GOAL_IN_WORDS`): "My goal now is to run a full marathon next
spring." replaces "My goal is to run a half marathon next year.", another goal of the same activity. Before, a
goal's values were its numbers only ("2:05", "30 books"), and a year of use kept the old goal first for "What is
my running goal?" (/tmp/yearlong/REPORT.md, 1f). The labelled cases are in tests/data/supersessions.jsonl
(batch "goals in words"), read by tests/unit/test_updates.py and `python -m benchmarks.corrections`."""

from __future__ import annotations

import pytest

from core.formation.updates import read, replaces

HALF = "My goal is to run a half marathon next year."


@pytest.mark.parametrize("update, fact", [
    ("My goal now is to run a full marathon next spring.", HALF),
    ("My new goal is to run a half marathon in the autumn.", "My goal is to run a 10K this spring."),
    ("My goal now is to learn Italian instead.", "My goal this year is to learn Spanish."),
])
def test_a_goal_in_words_replaces_one_of_its_activity(update, fact):
    assert replaces(read(update), read(fact))


@pytest.mark.parametrize("update, fact", [
    ("My sister's goal now is to run a full marathon.", HALF),               # someone else's
    ("My goal now is to eat more vegetables.", HALF),                         # another activity
    ("My goal is also to run a 10K in the summer.", HALF),                    # a second goal
    ("If my knee heals, my goal will be a full marathon.", HALF),             # a condition
    ("I ran my first half marathon in 1 hour 52 minutes!", HALF),             # reached, no new goal
    ("My goal now is to run a marathon in under 4 hours.", "My goal is to run a marathon."),  # numbers, words
    ("My goal is to run a full marathon.", HALF),                             # no change said
])
def test_what_replaces_no_goal(update, fact):
    assert not replaces(read(update), read(fact))


def test_a_goal_s_own_time_is_no_plan_still_to_come():
    """"next year" in a goal says when it is to be reached: the goal is a current state, which a later goal
    can replace (a plan, "We'll move next year", claims nothing)."""
    claims = read(HALF).claims
    assert [(c.attribute, c.values, c.worded) for c in claims] == [("goal", {"run", "half", "marathon"}, True)]


def test_a_goal_in_numbers_is_read_as_before():
    assert replaces(read("I'm now aiming for 1:55."), read("My goal is 2:05."))
    assert not replaces(read("My goal for the Boulder 10K is 50 minutes now."),
                        read("My goal is 2:05 for the Denver Half."))
