"""The memory ids a stored turn names: what a deletion's provenance sets are written from."""

from __future__ import annotations

import json

from core.conversation.provenance import names


def test_the_ids_of_json_objects_once_each_in_order():
    served = json.dumps({"thought1_id": "u-1", "context": [{"id": "m-2", "kind": "user"}, {"id": "m-1"},
                                                           {"id": "m-2"}],
                         "prompt": [{"role": "user", "content": 'he wrote "id": "quoted"'}]})
    assert names(served) == ["m-2", "m-1"]  # a quote inside a text is escaped: no id
    assert names('[{"id":"m-3"}]') == ["m-3"]  # compact JSON too


def test_what_is_no_id_is_left_out():
    assert names('[{"id": "two words"}, {"id": ""}, {"id": "ok-1"}]') == ["ok-1"]
    assert names(None) == [] and names("") == []
