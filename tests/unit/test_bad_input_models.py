"""Property tests: every input model of a public entry point accepts only what it can serve, and each
rejection names the field and what is allowed (no other exception escapes).

Entry points: ui_remember (`UiRememberParams`), fusion profiles and weights (`FusionProfile`), past-task
search and ingest (`PastTaskQuery`, `ProducedTextInput`), the explorer's search (`ExplorerSearch`,
`SearchRequest`), memory-bank queries (`MemoryQuery`), ids of chains and instances, and the time hint.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError
from redis.crc import key_slot

from core.bank.types import MemoryQuery
from core.errors import InvalidInput
from core.admin.explorer import ExplorerSearch
from core.ids import ID_PATTERN, USER_ID_PATTERN, validate_id
from core.models import FusionProfile
from core.conversation.turn import STYLES, UiRememberParams
from core.retrieval.hybrid import SearchRequest
from core.past_tasks.models import PastTaskQuery
from core.retrieval.timeparse import parse_time_hint
from core.conversation import keys
from core.past_tasks.store import ProducedTextInput
from tests.support.hostile import FAST, check_rejection, fields, ids, maybe, numbers, texts


def user_ids() -> st.SearchStrategy[str]:
    """Past tasks' user ids: the ids offered everywhere, and e-mail addresses (some valid, some not)."""
    return st.one_of(ids(), st.emails(), st.from_regex(USER_ID_PATTERN, fullmatch=True))


def build(model, data: dict):
    """The model, or None after checking that the rejection explains itself."""
    try:
        return model(**data)
    except (ValidationError, InvalidInput) as e:
        check_rejection(e, model)
        return None


@FAST
@given(fields(UiRememberParams, thought=texts(), thought_number=numbers(), total_thoughts=numbers(),
              chain_id=maybe(ids()), next_thought_needed=st.booleans(),
              search_type=st.sampled_from(["hybrid", "vector", "text", "HYBRID", "", "sql"]),
              top_k=numbers(), similarity_threshold=numbers(), token_cap=maybe(numbers()),
              style=maybe(st.one_of(st.sampled_from(["deep", "DEEP", " Chronological ", "fast", ""]), texts())),
              tags=st.lists(texts(80), max_size=40), temporal=maybe(texts()), profile=maybe(ids()),
              request_id=maybe(ids())))
def test_ui_remember_params(data):
    p = build(UiRememberParams, {"thought": "hello", **data})
    if p is None:
        return
    assert p.thought.strip() and len(p.thought) <= 100_000
    assert 1 <= p.top_k <= 100 and (p.thought_number is None or 1 <= p.thought_number) and 1 <= p.total_thoughts
    assert math.isfinite(p.similarity_threshold) and 0 <= p.similarity_threshold <= 1
    assert p.token_cap is None or 1 <= p.token_cap <= 1_000_000
    assert p.style in (None, *STYLES)
    assert all(1 <= len(t) <= 64 and t.isprintable() for t in p.tags) and len(p.tags) <= 32
    for value in (p.chain_id, p.profile, p.request_id):
        assert value is None or ID_PATTERN.fullmatch(value)


@FAST
@given(fields(FusionProfile, name=ids(), method=st.sampled_from(["linear", "rrf", "LINEAR", "", "max"]),
              w_sem=numbers(), w_text=numbers(), w_rec=numbers(), tau_s=numbers(), rrf_k=numbers()))
def test_fusion_profile_weights(data):
    p = build(FusionProfile, data)
    if p is None:
        return
    weights = (p.w_sem, p.w_text, p.w_rec)
    assert all(math.isfinite(w) and 0 <= w <= 1 for w in weights)
    assert math.isclose(sum(weights), 1.0, abs_tol=1e-6)
    assert math.isfinite(p.tau_s) and p.tau_s > 0 and p.rrf_k >= 1


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf"), -0.1, 1.5])
def test_nan_and_infinite_weights_are_named(bad):
    with pytest.raises(ValidationError) as e:
        FusionProfile(name="p", w_sem=bad, w_text=0.25, w_rec=0.15)
    assert "w_sem" in check_rejection(e.value, FusionProfile)


@FAST
@given(fields(PastTaskQuery, instance=ids(), user_id=user_ids(), query=texts(), max_distance=numbers(),
              n_max=numbers()))
def test_past_task_query(data):
    q = build(PastTaskQuery, {"instance": "i", "user_id": "u", "query": "q", **data})
    if q is None:
        return
    assert ID_PATTERN.fullmatch(q.instance) and USER_ID_PATTERN.fullmatch(q.user_id)
    assert 1 <= len(q.query) <= 4000 and "\x00" not in q.query
    assert q.max_distance is None or math.isfinite(q.max_distance) and 0 <= q.max_distance <= 2
    assert 1 <= q.n_max <= 100


@FAST
@given(fields(ProducedTextInput, instance=ids(), user_id=user_ids(), task=texts(80), task_icon=maybe(texts(20)),
              title=texts(), production=texts(), source_key=maybe(texts())))
def test_produced_text_input(data):
    item = build(ProducedTextInput, {"instance": "i", "user_id": "u", "task": "note", "title": "t",
                                     "production": "p", **data})
    if item is None:
        return
    assert ID_PATTERN.fullmatch(item.instance) and USER_ID_PATTERN.fullmatch(item.user_id)
    for value in (item.title, item.production, item.task, item.task_icon or "", item.source_key or ""):
        assert "\x00" not in value  # Postgres text cannot hold NUL


@FAST
@given(fields(ExplorerSearch, query=texts(), instance=ids(), mode=st.sampled_from(["hybrid", "vector", "x"]),
              kinds=st.lists(texts(20), max_size=3), chain_id=maybe(ids()), tags=st.lists(texts(20), max_size=3),
              top_k=numbers()))
def test_explorer_search(data):
    req = build(ExplorerSearch, {"query": "q", "instance": "i", **data})
    if req is None:
        return
    assert req.query.strip() and ID_PATTERN.fullmatch(req.instance)
    assert req.chain_id is None or ID_PATTERN.fullmatch(req.chain_id)
    # What reaches SQL: the search request, whose text parameters Postgres can take.
    sr = SearchRequest(query=req.query, instance=req.instance, kinds=req.kinds or None, tags=req.tags or None,
                       chain_id=req.chain_id, top_k=req.top_k)
    assert "\x00" not in sr.query + "".join(sr.tags or []) + "".join(sr.kinds or [])


@FAST
@given(fields(MemoryQuery, keywords=st.lists(texts(250), max_size=70), min_importance=numbers(),
              max_results=numbers(), tags=st.lists(texts(80), max_size=40)))
def test_memory_bank_query(data):
    q = build(MemoryQuery, data)
    if q is None:
        return
    assert 0 <= q.min_importance <= 1 and 1 <= q.max_results <= 1000


@FAST
@given(ids())
def test_ids_and_the_redis_keys_built_from_them(value):
    """A valid chain id keeps every key of its chain in one cluster slot; any other is refused before a
    key exists."""
    try:
        validate_id(value, "chain_id")
    except InvalidInput as e:
        assert "chain_id" in check_rejection(e)
        for build_key in (lambda: keys.chain_key("i", value), lambda: keys.thought_key("i", value, "t"),
                          lambda: keys.thought_key("i", "c", value), lambda: keys.feedback_key(value),
                          lambda: keys.chains_key(value), lambda: keys.request_key("i", "c", value)):
            with pytest.raises(InvalidInput):
                build_key()
        return
    slot = key_slot(value.encode())
    chain_keys = [keys.chain_key("inst", value), keys.chain_meta_key("inst", value),
                  keys.thought_key("inst", value, "t-1"), keys.request_key("inst", value, "r-1")]
    assert {key_slot(k.encode()) for k in chain_keys} == {slot}
    assert all(k.count("{") == 1 and k.count("}") == 1 for k in chain_keys)
    assert "*" not in keys.chain_keys_pattern("inst", value)[1:-1]


@FAST
@given(st.lists(st.sampled_from(
    ["today", "yesterday", "last", "next", "week", "month", "year", "on", "in", "Monday", "March", "May",
     "I", "ago", "two", "999", "days", "9999", "31/12/9999", "0001-01-01", "9999-12-31", "at", "3pm",
     "25:99", "morning", "tonight", "the", "day", "before", "of", "2024", "1st", "December", "31st",
     "since", "this", "evening", "13/13/2020", "-1", "0"]), max_size=6).map(" ".join) | texts(120),
    st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30)))
def test_time_hints_never_crash(text, now):
    hint = parse_time_hint(text, now.replace(tzinfo=UTC))
    assert hint is None or hint.start < hint.end
