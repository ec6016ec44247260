"""TurnMetrics: one model for a turn's metrics thought, and its two conversions (the Redis hash fields and
back). Metrics stored by earlier versions must still read: `STORED` is, byte for byte, the hash the turn
wrote before this model existed (`_metrics_fields` + `Thought.to_hash`, captured from that code)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from core.conversation.metrics import ContextItem, StageLatency, TurnMetrics
from core.conversation.thoughts import CATEGORY_METRICS, Thought
from core.conversation.turn import UiRememberResult
from core.llm import Message

# A metrics thought as stored before TurnMetrics: the thought's own fields, then the metrics fields.
STORED = {
    "id": "x-1", "instance": "demo", "chain_id": "trip",
    "thought": "model=llama3-8b-8192 tokens=40 context=1 embed=3.5ms search=4.2ms synthesis=700.0ms",
    "timestamp": "2025-05-01T12:00:20Z", "category": "ui_remember:metrics", "thought_number": "1",
    "total_thoughts": "1", "next_thought_needed": "1", "importance": "0.5", "tags": '["travel"]', "seq": "6",
    "model": "llama3-8b-8192", "model_selected": "llama3-8b-8192", "synthesis": "llm",
    "profile": "fast-chat", "tokens": "40", "context_items": "1", "answer_id": "a-1",
    "latency": '{"embed_ms": 3.5, "search_ms": 4.25, "synthesis_ms": 700.0, "store_ms": 2.0, '
               '"index_ms": 12.5, "total_ms": 722.25}',
    "context": '[{"id": "m-1", "kind": "fact", "chain_id": null, "content": "Caf\\u00e9 \\u201cOrsay\\u201d '
               'is closed on Mondays", "created_at": "2025-04-30T09:15:00Z", "age_s": 96300.0, '
               '"semantic": 0.8125, "text": 0.5, "recency": 0.25, "combined": 0.6875, "tokens": 9}]',
    "prompt": '[{"role": "system", "content": "Answer."}, {"role": "user", "content": "Which museum?"}]',
    "notes": '["retrieval restricted to x"]',
}
# What this version writes beside them: whether memories were found, and each context item's relevance
# (the score the relevance floor reads) and text coverage (what relevance weighs of the text leg); None for
# the item above, made before they were recorded.
WRITTEN = {**STORED, "memory": "found",
           "context": STORED["context"].replace('"tokens": 9}', '"tokens": 9, "relevance": null, "coverage": null, "speaker": 0.0, "chain": 0.0}')}
THOUGHT_FIELDS = ("id", "instance", "chain_id", "thought", "timestamp", "category", "thought_number",
                  "total_thoughts", "next_thought_needed", "importance", "seq")
CONTEXT = ContextItem(id="m-1", kind="fact", chain_id=None, content="Café “Orsay” is closed on Mondays",
                      created_at=datetime(2025, 4, 30, 9, 15, tzinfo=UTC), age_s=96300.0, semantic=0.8125,
                      text=0.5, recency=0.25, combined=0.6875, tokens=9)
LATENCY = StageLatency(embed_ms=3.5, search_ms=4.25, synthesis_ms=700.0, store_ms=2.0, index_ms=12.5,
                       total_ms=722.25)
PROMPT = [Message(role="system", content="Answer."), Message(role="user", content="Which museum?")]
EXPECTED = TurnMetrics(model="llama3-8b-8192", model_selected="llama3-8b-8192", synthesis="llm",
                       profile="fast-chat", tags=["travel"], tokens=40, context_items=1, answer_id="a-1",
                       latency=LATENCY, context=[CONTEXT], prompt=PROMPT, notes=["retrieval restricted to x"])


def result(**changes) -> UiRememberResult:
    """The turn's result the STORED hash was captured from."""
    r = UiRememberResult(thought1_id="u-1", thought2_id="a-1", thought3_id="x-1",
                         model_used="llama3-8b-8192", usage_total_tokens=40, model_selected="llama3-8b-8192",
                         instance="demo", chain_id="trip", answer="The Orsay museum.", synthesis="llm",
                         profile="fast-chat", context=[CONTEXT], prompt=PROMPT, latency=LATENCY,
                         tags=["travel"], notes=["retrieval restricted to x"])
    return r.model_copy(update=changes)


def metrics_fields(h: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in h.items() if k in TurnMetrics.model_fields}


def test_a_hash_in_the_stored_layout_reads_back_into_the_same_values():
    assert TurnMetrics.from_fields(STORED) == EXPECTED
    # Through the thought store's own reading (which decodes JSON-looking values) too.
    assert TurnMetrics.from_fields(Thought.from_hash(STORED).to_hash()) == EXPECTED


def test_the_turn_writes_the_stored_layout_byte_for_byte():
    r = result()
    metrics = r.metrics()
    assert metrics == EXPECTED.model_copy(update={"memory": "found"})
    thought = Thought(id="x-1", instance="demo", chain_id="trip", thought=metrics.thought_text(),
                      timestamp=datetime(2025, 5, 1, 12, 0, 20, tzinfo=UTC), category=CATEGORY_METRICS,
                      seq=6, tags=["travel"], extra=metrics.to_fields())
    assert thought.to_hash() == WRITTEN
    # The answer thought carries the fields that describe the turn, as it did.
    assert metrics.to_fields(TurnMetrics.ANSWER_FIELDS) == {"model": "llama3-8b-8192",
                                                            "model_selected": "llama3-8b-8192",
                                                            "synthesis": "llm", "profile": "fast-chat"}


def test_the_origin_is_recorded_on_the_metrics_and_the_answer():
    from core.conversation.metrics import Origin

    metrics = result().metrics(Origin(source="mcp", key="claude-desktop"))
    assert (metrics.source, metrics.key) == ("mcp", "claude-desktop")
    fields = metrics.to_fields()
    assert (fields["source"], fields["key"]) == ("mcp", "claude-desktop")
    on_answer = metrics.to_fields(TurnMetrics.ANSWER_FIELDS)
    assert (on_answer["source"], on_answer["key"]) == ("mcp", "claude-desktop")
    assert TurnMetrics.from_fields(fields) == metrics
    # A key named like a number comes back as the text it is, through the thought store's reading too.
    numeric = result().metrics(Origin(source="http", key="42"))
    stored = Thought(id="x", instance="i", chain_id="c", thought="t",
                     timestamp=datetime(2025, 1, 1, tzinfo=UTC), category=CATEGORY_METRICS,
                     extra=numeric.to_fields()).to_hash()
    assert TurnMetrics.from_fields(Thought.from_hash(stored).to_hash()).key == "42"
    # No key: nothing stored for it, as for any field that is None.
    assert "key" not in result().metrics(Origin(source="cli")).to_fields()


def test_metrics_stored_before_origins_read_as_no_source():
    m = TurnMetrics.from_fields(STORED)
    assert m.source is None and m.key is None
    columns = TurnMetrics.decode_fields(TurnMetrics.summary_fields(), [[STORED.get(n) for n in
                                                                        TurnMetrics.summary_fields()]])
    assert columns["source"] == [None] and columns["key"] == [None]


def test_an_extractive_turn_stores_no_token_count_as_an_empty_field():
    metrics = result(model_used=None, usage_total_tokens=None, synthesis="extractive", context=[],
                     notes=[], tags=[]).metrics()
    fields = metrics.to_fields()
    assert [fields[k] for k in ("model", "tokens", "context_items", "context", "tags")] == \
        ["extractive", "", "0", "[]", "[]"]
    assert metrics.thought_text() == ("model=extractive tokens=None context=0 embed=3.5ms search=4.2ms "
                                      "synthesis=700.0ms")
    back = TurnMetrics.from_fields(fields)
    assert back == metrics and back.tokens is None and back.context_items == 0


@pytest.mark.parametrize("metrics", [
    EXPECTED,
    TurnMetrics(),
    TurnMetrics(model="m", tokens=0, context_items=0, latency=StageLatency(), profile="7",
                tags=["a,b", "c|d"]),
    TurnMetrics(answer_id="a", latency=StageLatency(embed_ms=1.0, index_ms=None)),
])
def test_round_trip_through_the_hash_fields(metrics):
    fields = metrics.to_fields()
    assert all(isinstance(v, str) for v in fields.values())
    assert TurnMetrics.from_fields(fields) == metrics
    stored = Thought(id="x", instance="i", chain_id="c", thought="t",
                     timestamp=datetime(2025, 1, 1, tzinfo=UTC), category=CATEGORY_METRICS,
                     tags=metrics.tags, extra=fields).to_hash()
    assert TurnMetrics.from_fields(Thought.from_hash(stored).to_hash()) == metrics  # "7" stays a text


def test_fields_older_versions_did_not_write_read_as_not_recorded():
    # Before model_selected, before index_ms was timed on its own; a metrics thought naming only its answer.
    older = {k: v for k, v in metrics_fields(STORED).items() if k != "model_selected"}
    older["latency"] = '{"embed_ms": 3.5, "search_ms": 4.25, "synthesis_ms": 700.0, "store_ms": 2.0, ' \
                       '"total_ms": 722.25}'
    m = TurnMetrics.from_fields(older)
    assert m.model_selected is None and m.model == "llama3-8b-8192"
    assert m.latency.index_ms is None and m.latency.total_ms == 722.25  # not timed, not 0 ms
    bare = TurnMetrics.from_fields({"answer_id": "a-1", "tokens": "", "latency": "{broken"})
    assert bare == TurnMetrics(answer_id="a-1")
    assert (bare.model, bare.tokens, bare.latency, bare.context, bare.prompt) == (None, None, None, [], [])


def test_many_turns_decode_column_by_column_as_one_turn_does():
    linked = TurnMetrics.summary_fields(linked=True)
    assert set(linked) - set(TurnMetrics.summary_fields()) == {"answer_id"}
    assert not set(TurnMetrics.DETAIL_FIELDS) & set(linked)
    names = (*linked, "category")  # a name that is no metrics field is left out
    hashes = [STORED, metrics_fields(TurnMetrics().to_fields()), {"answer_id": "a", "tokens": ""},
              {"model": "m", "tags": '["x"]', "tokens": "7", "latency": '{"total_ms": 5.0}'}]
    rows = [[h.get(name) for name in names] for h in hashes]
    columns = TurnMetrics.decode_fields(names, rows)
    assert set(columns) == set(linked)
    for i, h in enumerate(hashes):
        one = TurnMetrics.from_fields(h)
        for name, values in columns.items():
            if name == "latency":  # a dict of the stages the turn names
                assert values[i] == (None if one.latency is None else
                                     one.latency.model_dump(exclude_none=True)), h
            elif name == "tags":
                assert (values[i] or []) == one.tags
            else:
                assert values[i] == getattr(one, name), (name, h)
    assert TurnMetrics.decode_fields(names, []) == {name: [] for name in linked}


def test_a_turn_records_the_fusion_it_used_and_older_turns_read_without_it():
    """A turn's "why" read the profile by name, so a profile saved over showed weights the turn never used:
    the turn records the definition itself; a metrics thought from before reads as not recorded."""
    from core.conversation.metrics import FusionUsed
    from core.conversation.turn import fusion_used
    from core.models import FusionProfile

    week = FusionProfile(name="recent-1w", w_sem=0.6, w_text=0.25, w_rec=0.15, tau_s=604800.0)
    used = fusion_used(week, "hybrid")
    assert used == FusionUsed(name="recent-1w", method="linear", w_sem=0.6, w_text=0.25, w_rec=0.15,
                              tau_s=604800.0, rrf_k=60, speaker_weight=0.2, chain_weight=0.3)
    metrics = result(fusion=used).metrics()
    assert metrics.fusion == used
    fields = metrics.to_fields()
    assert json.loads(fields["fusion"])["tau_s"] == 604800.0
    stored = Thought(id="x", instance="i", chain_id="c", thought="t", timestamp=datetime(2025, 1, 1, tzinfo=UTC),
                     category=CATEGORY_METRICS, extra=fields).to_hash()
    assert TurnMetrics.from_fields(Thought.from_hash(stored).to_hash()).fusion == used
    assert used.profile().model_dump(include={"w_sem", "tau_s", "method"}) == \
        {"w_sem": 0.6, "tau_s": 604800.0, "method": "linear"}
    # Not on the answer thought, nor among what analytics read of many turns.
    assert "fusion" not in metrics.to_fields(TurnMetrics.ANSWER_FIELDS)
    assert "fusion" not in TurnMetrics.summary_fields(linked=True)
    # Before it was recorded, or unreadable: not recorded, the rest of the turn intact.
    assert TurnMetrics.from_fields(STORED).fusion is None
    broken = TurnMetrics.from_fields({**metrics_fields(STORED), "fusion": '{"name": "x"}'})
    assert broken.fusion is None and broken.model == "llama3-8b-8192"


def test_tokens_line_gives_the_split_when_the_llm_reported_it():
    assert TurnMetrics(tokens=1234, prompt_tokens=1100, completion_tokens=134).tokens_line() == \
        "1,234 tokens: 1,100 prompt + 134 answer"
    assert TurnMetrics(tokens=40).tokens_line() == "40 tokens"  # recorded before the split was, or not reported
    assert TurnMetrics().tokens_line() is None  # extractive
