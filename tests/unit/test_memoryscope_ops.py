"""MemoryScope ops against their specified rules (see "The specification" in docs/ARCHITECTURE.md):
parameters, dedupe, threshold, type ratios, wildcard time match, output count and format, print_memory,
read_message filtering and limits, LLM reply parsing."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import get_args

import pytest

from core.errors import InvalidInput
from core.models import EventTime, MemoryKind, MemoryRow, ScoreParts
from core.retrieval.memoryscope.llm_ops import parse_rank_reply, parse_time_reply, rank_by_model
from core.retrieval.memoryscope.ops import (
    format_memory_line,
    fuse_rerank,
    memory_time,
    print_memories,
    read_messages,
    time_matches,
    type_ratios_note,
)
from core.retrieval.memoryscope.params import (
    DEFAULT_FUSE_RATIOS,
    SEED_TYPE_OF_KIND,
    FuseRerankParams,
    ReadMessageParams,
    ScopeParams,
    memory_type_of,
)
from core.retrieval.memoryscope.types import ChatMessage, ScopeMemory

T0 = datetime(2024, 5, 13, 9, 30, 5, tzinfo=UTC)  # a Monday
UNKNOWN = EventTime()


def mem(id_: str, score: float, kind: str = "observation", content: str | None = None,
        ev: EventTime = UNKNOWN, at: datetime = T0, **meta) -> ScopeMemory:
    row = MemoryRow(instance="i", id=id_, kind=kind, content=content or f"memory {id_}", created_at=at,
                    event_time=ev, metadata=meta)
    parts = ScoreParts(semantic=score, text=0.0, recency=0.0, combined=score, similarity=score, relevance=score)
    return ScopeMemory(memory=row, retrieval=parts)


# -- parameters ---------------------------------------------------------------------------------

def test_seed_defaults_under_seed_names():
    flat = ScopeParams().flat()
    assert flat["op.retrieve_memory_op.params.top_k"] == 3
    assert flat["op.retrieve_memory_op.params.recall_key"] == "query"
    assert flat["op.retrieve_memory_op.params.threshold_score"] is None
    assert flat["op.semantic_rank_op.params.enable_ranker"] is True
    assert flat["op.semantic_rank_op.params.output_memory_max_count"] == 10
    assert flat["op.fuse_rerank_op.params.fuse_score_threshold"] == 0.1
    assert flat["op.fuse_rerank_op.params.fuse_ratio_dict"] == {"conversation": 0.5, "observation": 1.0,
                                                                 "obs_customized": 1.2, "insight": 2.0}
    assert flat["op.fuse_rerank_op.params.fuse_time_ratio"] == 2.0
    assert flat["op.fuse_rerank_op.params.output_memory_max_count"] == 5
    assert flat["op.fuse_rerank_op.params.unknown_type_ratio"] == 0.1
    assert flat["op.read_message_op.params.contextual_msg_max_count"] == 10
    assert flat["op.extract_time_op.params.language"] == "en"
    assert flat["op.set_query_op.params.timestamp"] is None


def test_params_from_flat_and_errors_name_the_field():
    p = ScopeParams.from_flat({"op.retrieve_memory_op.params.top_k": 7,
                               "op.fuse_rerank_op.params.fuse_time_ratio": 3})
    assert p.retrieve_memory_op.top_k == 7 and p.fuse_rerank_op.fuse_time_ratio == 3
    with pytest.raises(InvalidInput, match="op.<op_name>.params.<name>"):
        ScopeParams.from_flat({"op.nope_op.params.x": 1})
    with pytest.raises(InvalidInput, match="retrieve_memory_op.top_k"):
        ScopeParams.from_flat({"op.retrieve_memory_op.params.top_k": 0})
    with pytest.raises(InvalidInput, match="retrieve_memory_op.bogus"):
        ScopeParams.from_flat({"op.retrieve_memory_op.params.bogus": 1})
    with pytest.raises(InvalidInput, match="language"):
        ScopeParams.from_flat({"op.extract_time_op.params.language": "fr"})


# -- retrieve_memory / fuse_rerank maths --------------------------------------------------------

def test_time_match_uses_minus_one_as_wildcard():
    ev = EventTime(year=2024, month=5, day=13, hour=-1, weekday=0)
    assert time_matches({"year": 2024, "month": 5}, ev)
    assert time_matches({"hour": 15}, ev)  # unknown hour matches anything
    assert time_matches({"weekday": 0, "day": 13}, ev)
    assert not time_matches({"day": 14}, ev)
    assert time_matches({"week": 20}, ev)  # ISO week of 13 May 2024
    assert not time_matches({"week": 19}, ev)
    assert time_matches({"week": 19}, EventTime(year=2024, month=5))  # day unknown: week unknown
    assert time_matches({"year": 1999}, EventTime())
    assert not time_matches({}, ev)  # nothing extracted: no boost


def test_fuse_rerank_threshold_type_and_time_ratios():
    ev_match = EventTime(year=2024, month=5, day=13)
    ms = [mem("obs", 0.5, "observation", ev=ev_match), mem("ins", 0.3, "insight"),
          mem("conv", 0.4, "conversation", ev=EventTime(year=2023)), mem("cus", 0.2, "obs_customized",
                                                                        ev=EventTime(year=2023)),
          mem("odd", 0.9, "bank_entry", ev=EventTime(year=2023)), mem("low", 0.09, "insight")]
    kept, below = fuse_rerank(ms, {"year": 2024, "month": 5}, FuseRerankParams())
    got = {m.memory.id: m for m in kept}
    assert below == 1 and "low" not in got  # 0.09 < fuse_score_threshold 0.1
    assert got["obs"].fused_score == pytest.approx(0.5 * 1.0 * 2.0) and got["obs"].time_matched
    assert got["ins"].fused_score == pytest.approx(0.3 * 2.0 * 2.0)  # unknown event time matches
    assert got["conv"].fused_score == pytest.approx(0.4 * 0.5 * 1.0) and not got["conv"].time_matched
    assert got["cus"].fused_score == pytest.approx(0.2 * 1.2)
    assert got["odd"].fused_score == pytest.approx(0.9 * 0.1)  # unknown type: 0.1
    assert [m.memory.id for m in kept] == ["ins", "obs", "cus", "conv", "odd"]


def test_fuse_rerank_unknown_ratio_configurable_and_output_count():
    p = FuseRerankParams(unknown_type_ratio=3.0, output_memory_max_count=2, fuse_score_threshold=0.0)
    ms = [mem("a", 0.2, "federation"), mem("b", 0.5, "observation"), mem("c", 0.1, "federation")]
    kept, _ = fuse_rerank(ms, {}, p)
    assert [(m.memory.id, round(m.fused_score, 3)) for m in kept] == [("a", 0.6), ("b", 0.5)]


def test_output_format():
    assert format_memory_line(T0, "ate sushi") == "[2024-05-13 09:30:05 Monday] ate sushi"
    kept, _ = fuse_rerank([mem("a", 0.5, content="ate sushi")], {}, FuseRerankParams())
    assert kept[0].formatted == "[2024-05-13 09:30:05 Monday] ate sushi"


def test_output_format_adds_an_event_date_that_tells_more_than_the_stored_time():
    # The seed's timestamp is when the memory was stored; the event's date follows the content, as
    # ui_remember's answers write it. A message's event time is its own moment: nothing is added.
    bicycle = EventTime(year=2024, month=6, day=3, weekday=0)
    assert format_memory_line(T0, "Ivan bought a red bicycle.", bicycle) == \
        "[2024-05-13 09:30:05 Monday] Ivan bought a red bicycle. (event 2024-06-03)"
    month = EventTime(year=2023, month=4)
    assert format_memory_line(T0, "a month", month).endswith("a month (event 2023-04)")
    said = EventTime(year=2024, month=5, day=13, hour=9, weekday=0)
    assert format_memory_line(T0, "said now", said) == "[2024-05-13 09:30:05 Monday] said now"
    kept, _ = fuse_rerank([mem("a", 0.5, content="Ivan bought a red bicycle.", ev=bicycle)], {},
                          FuseRerankParams())
    assert kept[0].formatted.endswith("bicycle. (event 2024-06-03)")
    assert print_memories(kept).startswith("Memory 1 (observation): [2024-05-13 09:30:05 Monday] Ivan "
                                           "bought a red bicycle. (event 2024-06-03)")


# -- memory types of the index's kinds -------------------------------------------------------------

def test_messages_are_conversation_memories():
    p = FuseRerankParams(output_memory_max_count=10)
    ms = [mem("u", 0.8, "user"), mem("a", 0.6, "assistant"), mem("t", 0.4, "turn"),
          mem("i", 0.4, "important"), mem("s", 0.4, "session_summary"), mem("b", 0.4, "bank_entry")]
    got = {m.memory.id: m for m in fuse_rerank(ms, {}, p)[0]}
    assert got["u"].fused_score == pytest.approx(0.8 * 0.5) and got["u"].memory_type == "conversation"
    assert got["a"].fused_score == pytest.approx(0.6 * 0.5) and got["a"].ratio_from == "conversation"
    assert got["t"].type_ratio == got["i"].type_ratio == 0.5
    assert got["s"].type_ratio == 1.0 and got["s"].memory_type == "observation"
    assert got["b"].type_ratio == 0.1 and got["b"].ratio_from is None and got["b"].memory_type == "bank_entry"
    row = got["u"].summary()
    assert (row["kind"], row["type"], row["type_ratio"], row["ratio_from"]) == ("user", "conversation", 0.5,
                                                                               "conversation")
    assert got["b"].summary()["ratio_from"] == "unknown_type_ratio"
    assert type_ratios_note([got[i] for i in "uatisb"]) == (
        "type ratios: conversation ×0.5 for user, assistant, turn, important; observation ×1 for "
        "session_summary; unknown_type_ratio ×0.1 for bank_entry")
    assert print_memories([got["u"]]).startswith("Memory 1 (conversation, user): [2024-05-13 09:30:05 ")


def test_a_ratio_named_for_the_kind_itself_wins_over_its_type():
    p = FuseRerankParams(fuse_ratio_dict=DEFAULT_FUSE_RATIOS | {"user": 1.5, "bank_entry": 0.7})
    assert p.ratio_for("user") == ("user", 1.5)
    assert p.ratio_for("assistant") == ("conversation", 0.5)
    assert p.ratio_for("bank_entry") == ("bank_entry", 0.7)
    assert FuseRerankParams(fuse_ratio_dict={"observation": 1.0}).ratio_for("user") == (None, 0.1)


def test_every_kind_of_the_index_is_given_a_type_or_left_unknown_on_purpose():
    """A new kind of memory needs a decision: a seed type (`SEED_TYPE_OF_KIND`) or unknown, said here."""
    unknown_on_purpose = {"bank_entry", "bank_summary", "federation"}
    for kind in get_args(MemoryKind):
        typed = memory_type_of(kind) in DEFAULT_FUSE_RATIOS
        assert typed != (kind in unknown_on_purpose), kind
    assert set(SEED_TYPE_OF_KIND.values()) <= set(DEFAULT_FUSE_RATIOS)


def test_the_kinds_messages_are_indexed_with_are_conversation():
    from core.conversation.indexing import KIND_OF

    assert {memory_type_of(kind) for kind in KIND_OF.values()} == {"conversation"}


def test_print_memory_numbers_with_when_to_use_and_metadata():
    """The index's bookkeeping (formation's labels, a source message's id) is no metadata for the model."""
    kept, _ = fuse_rerank([mem("a", 0.9, "insight", content="likes sushi", when_to_use="food talk",
                               source="x", formed_by="rules", source_thought="6dde7d78-0f1e"),
                           mem("b", 0.5, content="walks the dog")], {}, FuseRerankParams())
    text = print_memories(kept)
    assert text.splitlines() == [
        "Memory 1 (insight): [2024-05-13 09:30:05 Monday] likes sushi",
        "  when to use: food talk",
        "  metadata: source=x",
        "Memory 2 (observation): [2024-05-13 09:30:05 Monday] walks the dog"]


# -- read_message -------------------------------------------------------------------------------

def msg(text: str, name: str = "alice", minutes: int | None = 0, memorized: bool = False) -> ChatMessage:
    return ChatMessage(role_name=name, content=text, memorized=memorized,
                       time_created=None if minutes is None else T0 + timedelta(minutes=minutes))


def test_read_message_filters_memorized_and_by_target_sorts_and_limits():
    convs = [
        [msg("a1", minutes=5), msg("b1", "bot", minutes=6)],
        [msg("x", "bob", minutes=1), msg("y", "bot", minutes=2)],           # no message from alice
        [msg("old", minutes=0, memorized=True), msg("a2", minutes=3)],
    ]
    out = read_messages(convs, ReadMessageParams(target_name="alice"))
    assert [m.content for m in out] == ["a2", "a1", "b1"]
    two = read_messages(convs, ReadMessageParams(target_name="alice", contextual_msg_max_count=2))
    assert [m.content for m in two] == ["a1", "b1"]
    assert read_messages(convs, ReadMessageParams(contextual_msg_max_count=0)) == []
    assert len(read_messages(convs, ReadMessageParams())) == 5  # no target: every unmemorized message


def test_read_message_flat_list_and_untimed_last():
    flat = [msg("late", minutes=9), msg("untimed", minutes=None), msg("early", minutes=1)]
    assert [m.content for m in read_messages(flat, ReadMessageParams())] == ["early", "late", "untimed"]


# -- LLM replies --------------------------------------------------------------------------------

@pytest.mark.parametrize(("reply", "parts"), [
    ('{"year": 2024, "month": 8, "day": 19}', {"year": 2024, "month": 8, "day": 19}),
    ('Sure! {"Year": 2024, "Month": 8, "Day of Week": 1,}', {"year": 2024, "month": 8, "weekday": 1}),
    ("{Year: 2024, Month: 8, Day of Week: Monday, Hour: 21,}",
     {"year": 2024, "month": 8, "weekday": 0, "hour": 21}),
    ('{"year": "2024", "week": 33, "day": -1, "hour": null}', {"year": 2024, "week": 33}),
    ('{"month": 13, "day_of_week": 2, "minute": 5}', {"weekday": 2}),
    ("{}", {}),
    ("no time here", None),  # unusable, not "no time": the rules read the query
    ("Sure! Here is what I think: kind=statement, facts: none {oops", None),
])
def test_parse_time_reply(reply, parts):
    assert parse_time_reply(reply) == parts


@pytest.mark.parametrize(("reply", "scores"), [
    ('{"scores": [{"index": 1, "score": 0.9}, {"index": 3, "score": 0.2}]}', {0: 0.9, 2: 0.2}),
    ('```json\n[{"index": 2, "score": 1.4}, {"index": 9, "score": 0.5},]\n```', {1: 1.0}),
    ('{"1": 0.3, "2": "0.7"}', {0: 0.3, 1: 0.7}),
    ("<1> <0.8>\n<2> <0.1>", {0: 0.8, 1: 0.1}),
    ("1: 0.5\n2 - 0.25", {0: 0.5, 1: 0.25}),
])
def test_parse_rank_reply(reply, scores):
    assert parse_rank_reply(reply, 3) == scores


def test_rank_by_model_keeps_model_and_retrieval_scores_apart():
    ms = [mem("a", 0.9), mem("b", 0.8), mem("c", 0.1)]
    ranked = rank_by_model(ms, {2: 0.95, 1: 0.2})
    assert [m.memory.id for m in ranked] == ["c", "b", "a"]  # scored first, then unscored
    assert [m.base_source for m in ranked] == ["llm", "llm", "retrieval"]
    assert ranked[2].llm_score is None and ranked[2].base_score == 0.9


def test_a_memory_without_an_event_time_is_matched_by_when_it_was_stored():
    """Read as unknown, matching anything, fuse_time_ratio boosted every memory added with only its
    stored time, and a time in the query reordered nothing."""
    stored = MemoryRow(instance="i", id="m", kind="observation", content="x",
                       created_at=datetime(2026, 12, 1, 9, tzinfo=UTC), event_time=EventTime())
    assert time_matches({"year": 2026, "month": 12, "day": 1}, memory_time(stored))
    assert not time_matches({"year": 2026, "month": 11}, memory_time(stored))
    dated = stored.model_copy(update={"event_time": EventTime(year=2024, month=6, day=3)})
    assert time_matches({"year": 2024, "month": 6}, memory_time(dated))
