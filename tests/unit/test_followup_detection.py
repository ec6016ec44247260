"""Correction and acknowledgement detection measured on a labelled set of realistic follow-ups
(tests/data/followups.jsonl: corrections, acknowledgements, neutral statements, questions)."""

import json
from pathlib import Path

import pytest

from core.conversation.feedback import Feedback, feedback_score, is_acknowledgement, is_correction

FOLLOWUPS = [json.loads(line) for line in
             (Path(__file__).parents[1] / "data" / "followups.jsonl").read_text(encoding="utf-8").splitlines()]


def precision_recall(detect, kind: str) -> tuple[float, float, list[str]]:
    flagged = {row["text"] for row in FOLLOWUPS if detect(row["text"])}
    actual = {row["text"] for row in FOLLOWUPS if row["kind"] == kind}
    hits = len(flagged & actual)
    return hits / max(1, len(flagged)), hits / max(1, len(actual)), sorted(flagged ^ actual)


def test_the_set_is_large_and_covers_every_kind():
    kinds = [row["kind"] for row in FOLLOWUPS]
    assert len(FOLLOWUPS) >= 200
    assert all(kinds.count(kind) >= 40 for kind in ("correction", "acknowledgement", "neutral", "question"))


@pytest.mark.parametrize("detect, kind", [(is_correction, "correction"), (is_acknowledgement, "acknowledgement")])
def test_precision_and_recall_are_at_least_0_9(detect, kind):
    precision, recall, errors = precision_recall(detect, kind)
    print(f"\n{kind}s: precision {precision:.3f}, recall {recall:.3f} over {len(FOLLOWUPS)} follow-ups; "
          f"wrong on: {errors}")
    assert precision >= 0.9 and recall >= 0.9, errors


@pytest.mark.parametrize("text", ["That’s not what I asked", "Hmm no, it was Lyon",
                                  "Well, no, it was the Tuesday.", "Actually, the race is on 25 May."])
def test_corrections_the_old_rules_missed(text):
    assert is_correction(text) and not is_acknowledgement(text)


@pytest.mark.parametrize("text", ["What should be my next step?", "Is this actually true?",
                                  "Actually, I have another question.", "No problem, we can move it."])
def test_questions_and_asides_are_not_corrections(text):
    assert not is_correction(text)


# Statements that open with the determiner "no": each was read as a correction (and stored as its opposite).
NO_STATEMENTS = ["No dogs are allowed in my building.", "No one in my family eats pork.",
                 "No sugar in my coffee, ever.", "No pets were allowed in my old building, so I moved to a house."]


@pytest.mark.parametrize("text", [*NO_STATEMENTS, "No-one at work knows I play the cello.",
                                  "No more than two coffees a day for me now.", "No. 5 is the bus I take to work.",
                                  "No way I'm going to the party.", "Oh no, I left my umbrella at the office."])
def test_a_no_that_opens_a_noun_phrase_does_not_correct(text):
    assert not is_correction(text)
    assert feedback_score(10, text) == Feedback(feedback_score=0.9, acknowledged=False, corrected=False)


@pytest.mark.parametrize("text", ["No, it was level 4", "No. I said Tuesday.", "No!", "No.", "no",
                                  "no — it was last month's report", "Nope, wrong city.", "Nah it was Lyon",
                                  "No that's wrong", "No it's level 4", "No it was level 4", "No, I said Tuesday",
                                  "No I meant the other Anna", "No no, it's at 7.", "Nooo, it was Lyon.",
                                  "No wait, it was on Saturday.", "No the party is on Saturday.",
                                  "No not that one, the blue one.", "Hmm no, it was Lyon", "Well, no, it was Tuesday."])
def test_the_interjection_no_corrects(text):
    assert is_correction(text)
    assert feedback_score(10, text) == Feedback(feedback_score=0.8, acknowledged=False, corrected=True)
