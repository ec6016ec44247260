import pytest

from core.conversation.feedback import feedback_score, is_acknowledgement, is_correction


@pytest.mark.parametrize("seconds, text, expected", [
    (10, "Tell me more", 0.9),
    (29.9, "ok", 0.9),
    (30, "ok", 0.7),
    (119, "ok", 0.7),
    (120, "ok", 0.5),
    (5000, "ok", 0.5),
    (10, "Thanks! Tell me more about Paris.", 1.0),
    (60, "got it, next question", 0.7 + 0.1),
    (200, "perfect", 0.5 + 0.1),
    (10, "Actually, it's Lyon", 0.9 - 0.1),
    (60, "That's wrong", 0.7 - 0.1),
    (500, "incorrect", max(0.5 - 0.1, 0.3)),
    (10, "No, I meant the other one", 0.9 - 0.1),
    (10, "thanks, but that's not right", 0.9 - 0.1),  # a polite "thanks, but" is no acknowledgement
])
def test_feedback_table(seconds, text, expected):
    assert feedback_score(seconds, text).feedback_score == pytest.approx(expected)


def test_words_match_at_boundaries_not_inside_words():
    assert not is_acknowledgement("a greater distance")
    assert not is_acknowledgement("thanksgiving plans")
    assert is_acknowledgement("Great!")
    assert not is_correction("the wrongdoer was caught")
    assert not is_correction("I know nothing about it")
    assert is_correction("no, that is not it")
    assert not is_correction("There is no way to know")


@pytest.mark.parametrize("text, acknowledged", [
    ("Great idea.", True), ("Good idea!", True), ("Fair point, but I'd rather stay home.", True),
    ("Smart move!", True), ("Great job on the summary", True), ("Fair.", True),
    ("Great ideas usually come to me on my morning runs.", False),
    ("Good call centres are hard to find in my town.", False), ("Fair prices here.", False)])
def test_praise_of_what_the_assistant_said_acknowledges(text, acknowledged):
    assert is_acknowledgement(text) is acknowledged


def test_floor_after_a_correction_is_0_3():
    fb = feedback_score(10_000, "wrong, actually")
    assert fb.corrected and fb.feedback_score == pytest.approx(0.4)
    assert feedback_score(10_000, "wrong").feedback_score >= 0.3


@pytest.mark.parametrize("text, acknowledged, corrected", [
    ("Obrigada!", True, False), ("Danke schön!", True, False), ("Perfeito, valeu", True, False),
    ("Ola, obrigado pela ajuda", False, False),  # a greeting first: small talk, no thanks opening the reply
    ("Não, eu moro no Porto.", False, True), ("Nein, ich wohne in Hamburg.", False, True),
    ("Isso está errado.", False, True), ("Das stimmt nicht.", False, True),
    ("Não como carne desde 2018.", False, False),  # "I don't eat meat": a negated verb, no interjection
    ("Não, obrigado.", False, False), ("Boa parte do meu ordenado vai para a renda.", False, False),
    ("Show, don't tell.", False, False), ("Gut feeling says yes", False, False),  # English words, English readings
])
def test_portuguese_and_german_replies_are_read_as_the_english_ones(text, acknowledged, corrected):
    """An answer's next turn in Portuguese or German scores as its English equivalent would: "Obrigada!" was
    read as nothing (0.9 where "Thanks!" gets 1.0), "Não, …" as no correction."""
    assert (is_acknowledgement(text), is_correction(text)) == (acknowledged, corrected)
