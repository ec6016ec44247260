"""Read an instance's feedback, with each answer's model, profile, tags, tokens and latency, as a frame.

The time-ordered `feedback:index:<instance>` gives the answer ids of a window (no SCAN); then pipelined
reads fetch every feedback hash, and every turn's metrics thought by the key the feedback hash names.
Hashes written before they named their metrics thought fall back to the answer thought and to the
chain's sorted set (the metrics thought shares the answer's time). 10,000 answers take three round trips.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pandas as pd
from pydantic import BaseModel, Field

from core.conversation.keys import feedback_index_key
from core.conversation.metrics import TurnMetrics
from core.conversation.thoughts import (CATEGORY_ASSISTANT, CATEGORY_METRICS, CATEGORY_USER, FeedbackRecord,
                                        Thought, ThoughtStore)
from core.ids import validate_id

STAGES = ("embed_ms", "search_ms", "synthesis_ms", "store_ms", "total_ms")
# The fields of each turn's metrics a row reads: the model's small ones (not the context or prompt).
METRICS_FIELDS = TurnMetrics.summary_fields()
# chain_id first: every feedback hash has one, so a None there means the hash is gone.
# origin: "imported" for an answer imported from another system (no feedback of its own), else absent.
FEEDBACK_FIELDS = ("chain_id", "at", "synthesis_quality", "feedback_score", "continued", "abandoned",
                   "corrected", "time_to_next", "final", "user_id", "metrics_id", "rating", "rating_comment",
                   "origin")
IMPORTED = "imported"
# The `model` of an answer quoted from the memories (`synthesis` "extractive": no LLM call), whatever model
# the turn was routed to: grouped by model, such answers are their own kind, not the routed model's.
EXTRACTIVE = "extractive (no model)"

# rating: the user's explicit rating, +1 (up), -1 (down) or NaN (none); source: the front end the turn came
# through ("unknown" for turns stored before it was recorded); key: the API key's name ("" for none).
FRAME_COLUMNS = ["answer_id", "chain_id", "answered_at", "day", "feedback_score", "synthesis_quality",
                 "continued", "abandoned", "corrected", "correction", "time_to_next", "final", "pending",
                 "rating", "rating_comment", "model", "model_used", "synthesis", "profile", "source", "key",
                 "tags", "tokens", "context_items", *STAGES, "user_id", "metrics_id"]
UNKNOWN_SOURCE = "unknown"


def load_feedback(store: ThoughtStore, instance: str, since: datetime | None = None,
                  until: datetime | None = None, *, sweep: bool = True, now: float | None = None,
                  include_imported: bool = False) -> pd.DataFrame:
    """The instance's answers in [since, until] (answer time), oldest first, one row each.

    Answers imported from another system (`workbench import`) carry no feedback, so they are left out
    of the rates unless `include_imported`; then they count with their source "imported".

    The abandonment sweep runs first (unless `sweep=False`), so answers left without a follow-up for
    10 minutes count as abandoned in the figures, not only once the user comes back. A process that
    loads again and again keeps the rows instead (`core.analytics.frames.FeedbackFrames`)."""
    validate_id(instance, "instance")
    if sweep:
        store.sweep_abandoned(instance, now)
    lo = since.timestamp() if since else float("-inf")
    hi = until.timestamp() if until else float("inf")
    ids = store.feedback_ids(instance, lo, hi)
    return in_window(read_answers(store, instance, ids, include_imported=include_imported), since, until,
                     include_imported)


def answer_span(store: ThoughtStore, instance: str) -> tuple[int, datetime | None, datetime | None]:
    """How many answers the instance's feedback index holds (imported ones too), and when the first and the
    last were given (None, None: none): the two ends of the time-ordered index, in one round trip, so a view
    that found no answer in its period can say where the answers are."""
    key = feedback_index_key(validate_id(instance, "instance"))
    p = store.r.pipeline(transaction=False)
    p.zcard(key)
    p.zrange(key, 0, 0, withscores=True)
    p.zrange(key, -1, -1, withscores=True)
    count, first, last = p.execute()

    def at(ends: list) -> datetime | None:
        return datetime.fromtimestamp(ends[0][1], UTC) if ends else None

    return int(count), at(first), at(last)


def read_answers(store: ThoughtStore, instance: str, ids: Sequence[str], *, include_imported: bool = True
                 ) -> pd.DataFrame:
    """The rows of those `ids` whose feedback hash is there, oldest first, marked in an IMPORTED column
    (`in_window` drops it); imported answers' metrics are not read unless `include_imported`."""
    fb = pd.DataFrame(store.feedback_fields(ids, FEEDBACK_FIELDS), columns=list(FEEDBACK_FIELDS),
                      dtype=object)
    fb.insert(0, "answer_id", list(ids))
    keep = fb["chain_id"].notna()  # else a hash deleted since the index was read
    if not include_imported:
        keep &= fb["origin"] != IMPORTED
    fb = fb[keep].reset_index(drop=True)

    named = fb["metrics_id"].notna().to_numpy()
    metrics: list[list[str | None] | None] = [None] * len(fb)
    refs = list(zip(fb["chain_id"][named], fb["metrics_id"][named], strict=True))
    found = store.thought_fields(instance, refs, METRICS_FIELDS)
    for row, values in zip(named.nonzero()[0].tolist(), found, strict=True):
        if any(values):  # else the metrics thought is gone, or was never written (a thought has its tags)
            metrics[row] = values
    missing = [row for row, values in enumerate(metrics) if values is None]
    if missing:
        for row, values in zip(missing, _describe_legacy(store, instance, fb.iloc[missing]), strict=True):
            metrics[row] = values
    empty = [None] * len(METRICS_FIELDS)
    return _frame(fb, TurnMetrics.decode_fields(METRICS_FIELDS, [v or empty for v in metrics]))


def in_window(rows: pd.DataFrame, since: datetime | None, until: datetime | None,
              include_imported: bool) -> pd.DataFrame:
    """The rows `read_answers` gave that were answered in [since, until], without the imported ones
    unless `include_imported`, as the analytics frame (FRAME_COLUMNS)."""
    rows = answered_between(rows, since, until)
    if not include_imported and (imported := rows[IMPORTED].to_numpy(dtype=bool)).any():
        rows = rows[~imported]
    return rows[FRAME_COLUMNS].reset_index(drop=True)


def answered_between(rows: pd.DataFrame, since: datetime | None, until: datetime | None) -> pd.DataFrame:
    """The rows answered in [since, until] (an open end: no bound).

    Rows oldest first (`sort_answers`) give the period as one slice, found by binary search: picked by a
    mask instead, every column was copied (50 ms for 46,000 rows; a run of the Feedback page at 1,000,000
    memories, 391 -> 363 ms)."""
    times = rows["answered_at"]
    if times.is_monotonic_increasing:
        lo = times.searchsorted(pd.Timestamp(since), side="left") if since is not None else 0
        hi = times.searchsorted(pd.Timestamp(until), side="right") if until is not None else len(rows)
        return rows.iloc[lo:hi]
    keep = np.ones(len(rows), dtype=bool)  # a time is missing (NaT, in no period), or out of order
    if since is not None:
        keep &= (times >= pd.Timestamp(since)).to_numpy()
    if until is not None:
        keep &= (times <= pd.Timestamp(until)).to_numpy()
    return rows[keep]


def _describe_legacy(store: ThoughtStore, instance: str, fb: pd.DataFrame) -> list[list[str | None]]:
    """Turns whose feedback hash does not name the metrics thought (older data, or a failed metrics
    write): the answer thought describes the turn (`TurnMetrics.ANSWER_FIELDS`), and the metrics thought
    is the chain's thought with the answer's time whose `answer_id` is this answer."""
    rows = list(fb[["answer_id", "chain_id", "at", "user_id"]].itertuples(index=False))
    out = store.thought_fields(instance, [(chain, a) for a, chain, _, _ in rows], METRICS_FIELDS)
    same_time = store.thought_ids_at(instance, [(chain, at or 0) for _, chain, at, _ in rows])
    candidates: list[tuple[int, str, str]] = []  # (row, chain, id) of the others stored at the answer's time
    for i, ((a, chain, _, user_id), ids) in enumerate(zip(rows, same_time, strict=True)):
        candidates += [(i, chain, other) for other in ids if other not in (a, user_id)]
    linked = TurnMetrics.summary_fields(linked=True)
    found = store.thought_fields(instance, [(chain, other) for _, chain, other in candidates],
                                 ("category", *linked))
    for (i, _, _), (category, *values) in zip(candidates, found, strict=True):
        metrics = dict(zip(linked, values, strict=True))
        if category == CATEGORY_METRICS and TurnMetrics.from_fields(metrics).answer_id == rows[i].answer_id:
            out[i] = [metrics[name] for name in METRICS_FIELDS]
    return out


def build_frame(records: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """The analytics frame from feedback records written as dicts (tests, imports).

    Each record has `answer_id, chain_id, answered_at` (datetime or epoch seconds) and, optionally, the
    feedback fields (`rating` as stored: +1 or -1), `model_selected, model_used, synthesis, profile,
    source, key, tags, tokens, context_items` and `latency` ({stage: ms}); missing numbers become NaN."""
    records = list(records)
    fb = pd.DataFrame([{**r, "at": r["answered_at"]} for r in records],
                      columns=["answer_id", *FEEDBACK_FIELDS], dtype=object)
    # A record names the answering model `model_used`, as the frame does; the metrics call it `model`.
    rows = [[r.get("model_used") if name == "model" else r.get(name) for name in METRICS_FIELDS]
            for r in records]
    return _frame(fb, TurnMetrics.decode_fields(METRICS_FIELDS, rows))[FRAME_COLUMNS]


def _frame(fb: pd.DataFrame, metrics: Mapping[str, list[Any]]) -> pd.DataFrame:
    """Typed columns from the feedback hashes' raw values (Redis strings or Python values) and the turns'
    decoded metrics (`TurnMetrics.decode_fields`, a list per field, in the rows' order), column by column.

    `model` is the model the turn was routed to (`model_selected`) when an LLM answered, and EXTRACTIVE
    when the answer was quoted from the memories (`synthesis` "extractive": no model was called, so it is
    counted under none); turns stored before `model_selected` existed fall back to the model that answered,
    and turns that recorded neither are "unknown"."""
    n = len(fb)
    # The columns are made first and the frame built once: inserting 35 columns one by one costs more
    # than making most of them.
    out: dict[str, Any] = {}

    def column(values: list[Any]) -> pd.Series:
        return pd.Series(values, index=fb.index, dtype=object)

    def floats(values: list[Any]) -> pd.Series:
        """Decoded JSON numbers (None: not recorded) straight into a float column; anything else (a
        malformed value) through `_numeric`, which reads what is not a number as NaN."""
        try:
            return pd.Series(np.array(values, dtype="float64"), index=fb.index)
        except (TypeError, ValueError):
            return _numeric(column(values))

    out["answer_id"] = fb["answer_id"].astype(str)
    out["chain_id"] = fb["chain_id"].fillna("").astype(str)
    at = fb["at"]
    out["answered_at"] = (pd.to_datetime(at, utc=True) if n and isinstance(at.iloc[0], datetime)
                          else pd.to_datetime(pd.to_numeric(at, errors="coerce"), unit="s", utc=True)
                          ).astype("datetime64[us, UTC]")  # one unit however the times came in
    out["day"] = out["answered_at"].dt.floor("D")
    for col in ("feedback_score", "synthesis_quality"):
        out[col] = _numeric(fb[col])
    for col in ("continued", "abandoned"):
        out[col] = _numeric(fb[col]).fillna(0).astype("int64")
    correction = fb["corrected"].fillna("").astype(str)
    out["corrected"] = correction.str.len() > 0
    out["correction"] = correction
    out["time_to_next"] = _numeric(fb["time_to_next"])
    out["final"] = fb["final"].isin(("1", 1, True)).astype(bool)
    # An imported answer awaits nothing: its follow-up, if any, came outside the workbench (final is
    # whether the conversation ended there, `core.conversation.imported`).
    out["pending"] = ~((out["continued"] > 0) | (out["abandoned"] > 0) | out["final"] | (fb["origin"] == IMPORTED))
    out["rating"] = _numeric(fb["rating"])
    out["rating_comment"] = fb["rating_comment"].fillna("").astype(str)
    used = column(metrics["model"]).fillna("extractive").replace("", "extractive").astype(str)
    routed = column(metrics["model_selected"])
    quoted = (column(metrics["synthesis"]) == "extractive").to_numpy(dtype=bool)
    model = routed.fillna(used.where(used != "extractive", "unknown")).astype(str)
    out["model"] = model.where(~quoted, EXTRACTIVE)
    out["model_used"] = used
    out["synthesis"] = column(metrics["synthesis"]).fillna("extractive").astype(str)
    out["profile"] = column(metrics["profile"]).fillna("unknown").astype(str)
    out["source"] = column(metrics["source"]).fillna(UNKNOWN_SOURCE).astype(str)
    out["key"] = column(metrics["key"]).fillna("").astype(str)
    out["tags"] = column([t if isinstance(t, list) else [] for t in metrics["tags"]])
    out["tokens"] = floats(metrics["tokens"])
    out["context_items"] = floats(metrics["context_items"])
    latency = [d if isinstance(d, dict) else {} for d in metrics["latency"]]  # a stage not named: not timed
    for stage in STAGES:
        out[stage] = floats([d.get(stage) for d in latency])
    out["user_id"] = fb["user_id"].fillna("").astype(str)
    out["metrics_id"] = fb["metrics_id"].fillna("").astype(str)
    out[IMPORTED] = fb["origin"] == IMPORTED
    frame = pd.DataFrame({name: out[name] for name in [*FRAME_COLUMNS, IMPORTED]}, index=fb.index)
    return sort_answers(frame)


def sort_answers(frame: pd.DataFrame) -> pd.DataFrame:
    """Oldest first; answers of the same time in the order of their ids (as the feedback index holds them)."""
    return frame.sort_values(["answered_at", "answer_id"], kind="stable").reset_index(drop=True)


def _numeric(s: pd.Series) -> pd.Series:
    """Numbers from Redis texts or Python values; "", None and anything not a number read as NaN."""
    return pd.to_numeric(s, errors="coerce").astype("float64")


# -- the turns behind the rows -------------------------------------------------------------------

class Transcript(BaseModel):
    """One answered turn: the question, the answer, what was retrieved, and what the user said next."""

    question: Thought | None
    answer: Thought
    metrics: TurnMetrics | None = Field(description="None: the turn's metrics thought is missing")
    next_turn: Thought | None
    feedback: FeedbackRecord | None

    def described(self) -> TurnMetrics:
        """The turn's metrics or, when its metrics thought is missing, what its answer thought records
        of the turn (`TurnMetrics.ANSWER_FIELDS` and its tags)."""
        return self.metrics or TurnMetrics.from_fields(self.answer.to_hash())


def turn_transcript(store: ThoughtStore, instance: str, chain_id: str, answer_id: str) -> Transcript | None:
    """The turn around `answer_id`, read from a window of its chain's sorted set (not the whole chain)."""
    validate_id(instance, "instance")
    validate_id(chain_id, "chain_id")
    # Thoughts of one turn may share a time (ties sort by id), so read a few on each side.
    thoughts = store.thoughts_around(instance, chain_id, answer_id, before=4, after=6)
    answer = next((t for t in thoughts if t.id == answer_id), None)
    if answer is None or answer.category != CATEGORY_ASSISTANT:
        return None
    before = [t for t in thoughts if t.category == CATEGORY_USER and t.seq < answer.seq]
    after = [t for t in thoughts if t.category == CATEGORY_USER and t.seq > answer.seq]
    metrics = (TurnMetrics.from_fields(t.to_hash()) for t in thoughts if t.category == CATEGORY_METRICS)
    return Transcript(question=before[-1] if before else None, answer=answer,
                      metrics=next((m for m in metrics if m.answer_id == answer_id), None),
                      next_turn=after[0] if after else None,
                      feedback=store.feedback([answer_id]).get(answer_id))


def questions_for(store: ThoughtStore, instance: str, frame: pd.DataFrame) -> dict[str, str]:
    """The user text each answer in `frame` replied to (one read; meant for a page of rows)."""
    keyed = [(row.answer_id, row.chain_id, row.user_id) for row in frame.itertuples() if row.user_id]
    texts = store.thought_fields(instance, [(chain, user_id) for _, chain, user_id in keyed], ("thought",))
    out = {a: text for (a, _, _), (text,) in zip(keyed, texts, strict=True) if text is not None}
    for row in frame.itertuples():  # older hashes do not name the user thought
        if row.answer_id not in out and (t := turn_transcript(store, instance, row.chain_id, row.answer_id)):
            out[row.answer_id] = t.question.thought if t.question else ""
    return out
