"""Read an instance's feedback, with each answer's model, profile, tags, tokens and latency, as a frame.

The time-ordered `feedback:index:<instance>` gives the answer ids of a window (no SCAN); then pipelined
reads fetch every feedback hash, and every turn's metrics thought by the key the feedback hash names.
Hashes written before they named their metrics thought fall back to the answer thought and to the
chain's sorted set (the metrics thought shares the answer's time). 10,000 answers take three round trips.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

import pandas as pd
from pydantic import BaseModel

from core.ids import validate_id
from core.conversation.thoughts import (CATEGORY_ASSISTANT, CATEGORY_METRICS, CATEGORY_USER, FeedbackRecord,
                                   Thought, ThoughtStore, chain_key, feedback_key, thought_key)

STAGES = ("embed_ms", "search_ms", "synthesis_ms", "store_ms", "total_ms")
# Fields a metrics thought carries that analytics need; the answer thought has the first five too.
DESCRIBE_FIELDS = ("model", "model_selected", "synthesis", "profile", "tags")
METRICS_FIELDS = (*DESCRIBE_FIELDS, "tokens", "context_items", "latency")
# chain_id first: every feedback hash has one, so a None there means the hash is gone.
FEEDBACK_FIELDS = ("chain_id", "at", "synthesis_quality", "feedback_score", "continued", "abandoned",
                   "corrected", "time_to_next", "final", "user_id", "metrics_id")

FRAME_COLUMNS = ["answer_id", "chain_id", "answered_at", "day", "feedback_score", "synthesis_quality",
                 "continued", "abandoned", "corrected", "correction", "time_to_next", "final", "pending",
                 "model", "model_used", "synthesis", "profile", "tags", "tokens", "context_items", *STAGES,
                 "user_id", "metrics_id"]


def load_feedback(store: ThoughtStore, instance: str, since: datetime | None = None,
                  until: datetime | None = None, *, sweep: bool = True, now: float | None = None
                  ) -> pd.DataFrame:
    """The instance's answers in [since, until] (answer time), oldest first, one row each.

    The abandonment sweep runs first (unless `sweep=False`), so answers left without a follow-up for
    10 minutes count as abandoned in the figures, not only once the user comes back."""
    validate_id(instance, "instance")
    if sweep:
        store.sweep_abandoned(instance, now)
    lo = since.timestamp() if since else float("-inf")
    hi = until.timestamp() if until else float("inf")
    ids = store.feedback_ids(instance, lo, hi)

    fb = pd.DataFrame(hmget_many(store, [feedback_key(a) for a in ids], FEEDBACK_FIELDS),
                      columns=list(FEEDBACK_FIELDS), dtype=object)
    fb.insert(0, "answer_id", ids)
    fb = fb[fb["chain_id"].notna()].reset_index(drop=True)  # a hash deleted since the index was read

    named = fb["metrics_id"].notna()
    keys = [thought_key(instance, c, m) for c, m in zip(fb["chain_id"][named], fb["metrics_id"][named],
                                                         strict=True)]
    described = pd.DataFrame(hmget_many(store, keys, METRICS_FIELDS), columns=list(METRICS_FIELDS),
                             index=fb.index[named], dtype=object)
    described = described.reindex(fb.index)
    missing = described["model"].isna()  # every metrics thought has a model
    if missing.any():
        legacy = _describe_legacy(store, instance, fb[missing])
        described.loc[missing] = legacy.reindex(columns=list(METRICS_FIELDS)).to_numpy()
    return _frame(pd.concat([fb, described.rename(columns={"model": "model_used"})], axis=1))


# HMGET over many keys in one call, the replies packed as one JSON text: with 10,000 keys, redis-py's
# per-command cost and its pure-Python reply parser dominate, not Redis. The keys are declared, so this
# stays correct on a cluster, where keys in different slots go through a pipeline instead.
_HMGET_MANY = """
local out = {}
for i, key in ipairs(KEYS) do out[i] = redis.call('HMGET', key, unpack(ARGV)) end
return cjson.encode(out)
"""
BATCH = 1000


def hmget_many(store: ThoughtStore, keys: Sequence[str], fields: Sequence[str]) -> list[list[str | None]]:
    """`HMGET key *fields` for every key, in order; a missing field (or hash) reads as None."""
    if not keys:
        return []
    if store.cluster:
        p = store.r.pipeline(transaction=False)
        for key in keys:
            p.hmget(key, fields)
        return p.execute()
    script = store.r.register_script(_HMGET_MANY)
    out: list[list[str | None]] = []
    for i in range(0, len(keys), BATCH):
        for values in json.loads(script(keys=keys[i:i + BATCH], args=fields)):
            out.append([None if v is False else v for v in values])  # Lua's nil comes back as false
    return out


def _describe_legacy(store: ThoughtStore, instance: str, fb: pd.DataFrame) -> pd.DataFrame:
    """Turns whose feedback hash does not name the metrics thought (older data, or a failed metrics
    write): the answer thought describes the turn, and the metrics thought is the chain's thought with
    the answer's time whose `answer_id` is this answer."""
    rows = list(fb[["answer_id", "chain_id", "at", "user_id"]].itertuples(index=False))
    p = store.r.pipeline(transaction=False)
    for a, chain, at, _ in rows:
        p.hmget(thought_key(instance, chain, a), DESCRIBE_FIELDS)
        p.zrangebyscore(chain_key(instance, chain), at or 0, at or 0)
    replies = p.execute()
    out: dict[str, dict[str, Any]] = {}
    candidates: list[str] = []
    p = store.r.pipeline(transaction=False)
    for (a, chain, _, user_id), values, same_time in zip(rows, replies[0::2], replies[1::2], strict=True):
        out[a] = dict(zip(DESCRIBE_FIELDS, values, strict=True))
        for other in same_time:
            if other not in (a, user_id):
                candidates.append(a)
                p.hmget(thought_key(instance, chain, other), ("category", "answer_id", *METRICS_FIELDS))
    for a, values in zip(candidates, p.execute(), strict=True):
        if values[0] == CATEGORY_METRICS and values[1] == a:
            out[a] = dict(zip(METRICS_FIELDS, values[2:], strict=True))
    return pd.DataFrame([out[a] for a, *_ in rows], index=fb.index, columns=list(METRICS_FIELDS))


def build_frame(records: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """The analytics frame from feedback records written as dicts (tests, imports).

    Each record has `answer_id, chain_id, answered_at` (datetime or epoch seconds) and, optionally, the
    feedback fields, `model_selected, model_used, synthesis, profile, tags, tokens, context_items` and
    `latency` ({stage: ms}); missing numbers become NaN."""
    raw = pd.DataFrame([{**r, "at": r["answered_at"]} for r in records],
                       columns=["answer_id", *FEEDBACK_FIELDS, "model_used", *METRICS_FIELDS[1:]], dtype=object)
    return _frame(raw)


def _frame(raw: pd.DataFrame) -> pd.DataFrame:
    """Typed columns from raw field values (Redis strings or Python values), column by column.

    `model` is the model the turn was routed to (`model_selected`); turns stored before that field
    existed fall back to the model that answered, when an LLM did."""
    n = len(raw)
    out = pd.DataFrame(index=raw.index)
    out["answer_id"] = raw["answer_id"].astype(str)
    out["chain_id"] = raw["chain_id"].fillna("").astype(str)
    at = raw["at"]
    out["answered_at"] = (pd.to_datetime(at, utc=True) if n and isinstance(at.iloc[0], datetime)
                          else pd.to_datetime(pd.to_numeric(at, errors="coerce"), unit="s", utc=True)
                          ).astype("datetime64[us, UTC]")  # one unit however the times came in
    out["day"] = out["answered_at"].dt.floor("D")
    for col in ("feedback_score", "synthesis_quality"):
        out[col] = _numeric(raw[col])
    for col in ("continued", "abandoned"):
        out[col] = _numeric(raw[col]).fillna(0).astype("int64")
    correction = raw["corrected"].fillna("").astype(str)
    out["corrected"] = correction.str.len() > 0
    out["correction"] = correction
    out["time_to_next"] = _numeric(raw["time_to_next"])
    out["final"] = raw["final"].map(lambda v: v in ("1", 1, True)).astype(bool)
    out["pending"] = ~((out["continued"] > 0) | (out["abandoned"] > 0) | out["final"])
    used = raw["model_used"].fillna("extractive").replace("", "extractive").astype(str)
    out["model"] = raw["model_selected"].fillna(used.where(used != "extractive", "unknown")).astype(str)
    out["model_used"] = used
    out["synthesis"] = raw["synthesis"].fillna("extractive").astype(str)
    out["profile"] = raw["profile"].fillna("unknown").astype(str)
    out["tags"] = pd.Series([t if isinstance(t, list) else [] for t in _json_column(raw["tags"])],
                            index=raw.index, dtype=object)
    out["tokens"] = _numeric(raw["tokens"])
    out["context_items"] = _numeric(raw["context_items"])
    latency = [d if isinstance(d, dict) else {} for d in _json_column(raw["latency"])]
    for stage in STAGES:
        out[stage] = _numeric(pd.Series([d.get(stage) for d in latency], index=raw.index, dtype=object))
    out["user_id"] = raw["user_id"].fillna("").astype(str)
    out["metrics_id"] = raw["metrics_id"].fillna("").astype(str)
    return out[FRAME_COLUMNS].sort_values("answered_at", kind="stable").reset_index(drop=True)


def _numeric(s: pd.Series) -> pd.Series:
    return pd.to_numeric(s.replace("", None), errors="coerce").astype("float64")


def _json_column(s: pd.Series) -> list[Any]:
    """Parse a column of JSON texts (values already parsed pass through). One `json.loads` over the
    joined texts is several times faster than one call per row; a malformed text falls back per row."""
    values = s.tolist()
    if values and all(isinstance(v, str) and v for v in values):
        try:
            return json.loads("[" + ",".join(values) + "]")
        except ValueError:
            pass
    return [_json(v) for v in values]


# -- the turns behind the rows -------------------------------------------------------------------

class Transcript(BaseModel):
    """One answered turn: the question, the answer, what was retrieved, and what the user said next."""

    question: Thought | None
    answer: Thought
    metrics: Thought | None
    next_turn: Thought | None
    feedback: FeedbackRecord | None


def turn_transcript(store: ThoughtStore, instance: str, chain_id: str, answer_id: str) -> Transcript | None:
    """The turn around `answer_id`, read from a window of its chain's sorted set (not the whole chain)."""
    validate_id(instance, "instance")
    validate_id(chain_id, "chain_id")
    rank = store.r.zrank(chain_key(instance, chain_id), answer_id)
    if rank is None:
        return None
    # Thoughts of one turn may share a time (ties sort by id), so read a few on each side.
    ids = store.r.zrange(chain_key(instance, chain_id), max(0, rank - 4), rank + 6)
    thoughts = store.get_many(instance, chain_id, ids)
    answer = next((t for t in thoughts if t.id == answer_id), None)
    if answer is None or answer.category != CATEGORY_ASSISTANT:
        return None
    before = [t for t in thoughts if t.category == CATEGORY_USER and t.seq < answer.seq]
    after = [t for t in thoughts if t.category == CATEGORY_USER and t.seq > answer.seq]
    metrics = next((t for t in thoughts if t.category == CATEGORY_METRICS
                    and t.extra.get("answer_id") == answer_id), None)
    return Transcript(question=before[-1] if before else None, answer=answer, metrics=metrics,
                      next_turn=after[0] if after else None, feedback=store.feedback([answer_id]).get(answer_id))


def questions_for(store: ThoughtStore, instance: str, frame: pd.DataFrame) -> dict[str, str]:
    """The user text each answer in `frame` replied to (one pipelined read; meant for a page of rows)."""
    p = store.r.pipeline(transaction=False)
    keyed = [(row.answer_id, row.chain_id, row.user_id) for row in frame.itertuples() if row.user_id]
    for _, chain, user_id in keyed:
        p.hget(thought_key(instance, chain, user_id), "thought")
    out = {a: text for (a, _, _), text in zip(keyed, p.execute(), strict=True) if text is not None}
    for row in frame.itertuples():  # older hashes do not name the user thought
        if row.answer_id not in out and (t := turn_transcript(store, instance, row.chain_id, row.answer_id)):
            out[row.answer_id] = t.question.thought if t.question else ""
    return out


def _json(v: Any) -> Any:
    if not isinstance(v, str) or not v:
        return v
    try:
        return json.loads(v)
    except ValueError:
        return None
