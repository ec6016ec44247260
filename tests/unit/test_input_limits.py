"""One set of input limits (core/limits.py), enforced by every use-case model that takes the input, and
settings without a value shown one way ("unset")."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from core import usecases as uc
from core.config import Settings
from core.limits import MESSAGE_MAX_CHARS, QUERY_MAX_CHARS


@pytest.mark.parametrize(("build", "limit"), [
    (lambda text: uc.UiRememberParams(thought=text), MESSAGE_MAX_CHARS),
    (lambda text: uc.ExplorerSearch(query=text, instance="default"), QUERY_MAX_CHARS),
    (lambda text: uc.PastTaskQuery(query=text, instance="default", user_id="u1"), QUERY_MAX_CHARS),
])
def test_each_input_takes_its_limit_and_refuses_one_more(build, limit):
    build("x" * limit)
    with pytest.raises(ValidationError, match=f"at most {limit} characters"):
        build("x" * (limit + 1))


def test_the_limit_is_stated_in_words():
    assert uc.limit_caption("Messages", uc.MESSAGE_MAX_CHARS) == "Messages up to 20,000 characters."


def test_settings_without_a_value_read_unset(tmp_path):
    shown = Settings(data_dir=tmp_path).public_view()
    assert shown["LLM_BASE_URL"] == shown["REDIS_URL"] == shown["GROQ_API_KEY"] == "unset"
    assert None not in shown.values()
