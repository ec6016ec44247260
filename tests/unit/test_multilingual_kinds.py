"""A Portuguese or German question typed without "?" is a question, by the wh-word that opens it
(`core.formation.kinds._OTHER_WH`), and so tells nothing to remember; a statement that opens with a word
that also asks in other sentences ("Quando…", "Como…", "Wie immer…") stays a statement."""

from __future__ import annotations

import pytest

from core.formation.kinds import classify, told_statements


@pytest.mark.parametrize("text", [
    "Quem é a pediatra da Inês",
    "quem e a pediatra da ines",  # typed without accents
    "Qual é o meu grupo sanguíneo",
    "Onde fica o ginásio",
    "O que é que a Inês come ao lanche",
    "E onde fica o hotel do Jonas",
    "Wann ist der TÜV fällig",
    "Wer macht unsere Steuererklärung",
    "Wo sind die Winterreifen",
    "Welche Farbe hat das Auto",
    "Wie viele Urlaubstage habe ich noch",
    "Und wann kommt Anja zurück",
])
def test_a_question_without_a_question_mark_is_a_question_and_tells_nothing(text):
    assert classify(text) == "question"
    assert told_statements(text) == []


@pytest.mark.parametrize("text", [
    "Eu moro em Lisboa.",
    "Quando o Jonas vem a Lisboa fica no hotel da Avenida da Liberdade.",
    "Como peixe ao fim de semana.",
    "Quanto a mim, prefiro o comboio.",
    "Porque chovia, ficámos em casa.",
    "O queijo está no frigorífico.",
    "Ondas grandes hoje na Caparica.",
    "Qualquer dia vou ao Porto.",
    "Ich wohne in München.",
    "Wie immer fahre ich mit dem Rad zur Arbeit.",
    "Wolfgang ist mein Chef.",
    "Werner kommt morgen aus Berlin.",
    "Wohnung in München gefunden.",
])
def test_a_statement_that_opens_like_a_question_word_stays_a_statement(text):
    assert classify(text) == "statement"
    assert told_statements(text) == [text]
