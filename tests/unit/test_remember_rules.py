import pytest
from pydantic import ValidationError

from core.conversation.turn import UiRememberParams, choose_model


def test_model_selection_heuristic():
    assert choose_model(None, 8, "fast", "deep") == "fast"
    assert choose_model(None, 9, "fast", "deep") == "deep"
    assert choose_model("deep", 0, "fast", "deep") == "deep"
    assert UiRememberParams(thought="x", style="DEEP").style == "deep"


@pytest.mark.parametrize("field, value, words", [
    ("top_k", 0, "greater than or equal to 1"),
    ("top_k", 10**9, "less than or equal"),
    ("style", "fancy", "one of default, deep, chronological"),
    ("chain_id", "a:{b}", "chain_id must be"),
    ("similarity_threshold", float("nan"), "finite"),
    ("thought", "   ", "must contain some text"),
    ("unknown_field", 1, "Extra inputs are not permitted"),
])
def test_bad_params_name_the_field(field, value, words):
    args = {"thought": "hello", field: value}
    with pytest.raises(ValidationError) as e:
        UiRememberParams(**args)
    assert field in str(e.value) and words in str(e.value)
