"""The rule that replaces copies of deleted text: whole words only, inside JSON values as well."""

from __future__ import annotations

import json

from core.admin.redaction import DELETED, _redact_value, redactor


def test_whole_words_only():
    redact = redactor(["ok", "Call me at 555-1234."])
    assert redact("ok, book it") == f"{DELETED}, book it"
    assert redact("He said: Call me at 555-1234. Bye") == f"He said: {DELETED} Bye"
    assert redactor(["  ", ""]) is None


def test_inside_json_values_written_back_as_json():
    redact = redactor(['Say "hi" to Ana\nat 9'])
    stored = json.dumps([{"content": 'Say "hi" to Ana\nat 9', "id": "m-1"}])
    assert json.loads(_redact_value(stored, redact)) == [{"content": DELETED, "id": "m-1"}]
    assert _redact_value("plain text: Say \"hi\" to Ana\nat 9", redact) == f"plain text: {DELETED}"
    assert _redact_value("42", redact) == "42"
