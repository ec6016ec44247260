"""A past task's user id (`UserId`): an e-mail address is one, a key-, path- or URL-breaking string is
not; the other ids (`Id`: instances, chains, the import's own ids) keep their narrower rule."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from core.errors import InvalidInput
from core.ids import USER_ID_RULE, validate_id, validate_user_id
from core.importing.records import ImportedPastTask
from core.past_tasks.models import PastTaskQuery
from core.past_tasks.store import ProducedTextInput
from core.usecases import ListTexts, check_user_id

ACCEPTED = ["maria@acme.com", "maria+work@acme.com", "Maria.K@mail.acme.co.uk", "u-1", "a_b",
            "42", "x" * 128, "tom"]
REFUSED = ["", " maria@acme.com x", "maria @acme.com", "@maria", "+maria", ".maria", "-maria", "_maria",
           "maria:acme", "acme/maria", "maria%40acme.com", "maria?x", "maria#1", "maria&bob", "x" * 129,
           "maria\n", "maria\x00", "maría@acme.com", "o'neil", 'a"b', "a;b", "a,b", "a\\b", "a*b", "a b"]


@pytest.mark.parametrize("value", ACCEPTED)
def test_accepted(value):
    assert validate_user_id(value) == value
    assert PastTaskQuery(instance="i", user_id=value, query="q").user_id == value


@pytest.mark.parametrize("value", REFUSED)
def test_refused_with_the_rule(value):
    with pytest.raises(InvalidInput) as e:
        validate_user_id(value, "user")
    assert str(e.value) == f"user must be {USER_ID_RULE}; got {value!r:.60}"


def test_the_message_says_an_e_mail_address_will_do():
    with pytest.raises(InvalidInput, match=r"^user must be 1–128 characters: letters, digits, '\.', '_', '-', "
                                           r"'@' or '\+' \(an e-mail address will do\), starting with a letter "
                                           r"or digit; got 'maria acme'$"):
        check_user_id("maria acme")


@pytest.mark.parametrize("model, data", [
    (PastTaskQuery, {"instance": "i", "query": "q"}),
    (ProducedTextInput, {"instance": "i", "task": "note", "title": "t", "production": "p"}),
    (ImportedPastTask, {"task": "note", "title": "t", "production": "p", "source_key": "k"}),
    (ListTexts, {"instance": "i"}),
])
def test_every_model_taking_a_past_task_user_takes_an_e_mail_and_names_the_field(model, data):
    assert model(**data, user_id="maria+work@acme.com").user_id == "maria+work@acme.com"
    with pytest.raises(ValidationError, match=r"user_id must be 1–128 characters: .*'@' or '\+'"):
        model(**data, user_id="maria/acme")


def test_the_other_ids_keep_their_rule():
    """Instances and chain ids become parts of Redis keys: '@' and '+' stay refused there."""
    for value in ("maria@acme.com", "a+b"):
        with pytest.raises(InvalidInput, match="instance must be 1–128 characters: letters, digits, '.', '_' "
                                               "or '-'"):
            validate_id(value, "instance")
        with pytest.raises(ValidationError, match="instance"):
            PastTaskQuery(instance=value, user_id="maria@acme.com", query="q")
