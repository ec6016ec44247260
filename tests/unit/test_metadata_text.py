"""Metadata is checked as Postgres will store it: a lone surrogate passes Python's JSON but not Postgres, which
refused the row with "invalid input syntax for type json" and named no field (found through the HTTP API)."""

import pytest
from pydantic import ValidationError

from core import usecases as uc
from core.errors import explain_validation


def test_metadata_holding_a_lone_surrogate_is_refused_naming_the_field():
    with pytest.raises(ValidationError) as refused:
        uc.AddMemory(content="The boiler was serviced.", metadata={"note": "x\ud800y"})
    assert explain_validation(refused.value).startswith("invalid input — metadata: holds a lone surrogate")


def test_metadata_in_any_script_is_kept():
    assert uc.AddMemory(content="Ok.", metadata={"note": "ção 東京 🙂"}).metadata == {"note": "ção 東京 🙂"}
