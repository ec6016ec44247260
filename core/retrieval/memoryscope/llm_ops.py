"""The MemoryScope ops that use an LLM when one is configured: extract_time and semantic_rank.

Offline, extract_time falls back to the rule-based parser of `core.retrieval.timeparse` and says so;
semantic_rank is skipped with a note. Nothing imitates an LLM.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from core.conversation.prompts import quoted
from core.errors import ProviderError
from core.llm.base import Message
from core.retrieval.memoryscope.ops import Op
from core.retrieval.memoryscope.params import ExtractTimeParams, SemanticRankParams
from core.retrieval.memoryscope.types import WEEKDAY_NAMES, OpTrace, ScopeContext, ScopeMemory
from core.retrieval.timeparse import TIME_PARTS, TimeHint, has_time_keyword, parse_time_hint, range_of_parts

if TYPE_CHECKING:
    from core.runtime import Workbench

EXTRACT_TIME_SYSTEM = (
    "You extract the time a sentence refers to, relative to the sentence's timestamp. Reply with one JSON "
    "object whose integer fields are among year, month, day, week (ISO week number), weekday (Monday = 0) "
    "and hour. Leave out every part the sentence does not pin down. Reply {} when it names no time.")

EXTRACT_TIME_FEW_SHOT = [
    ("I ate pasta for dinner last night.", "2024-08-20 21:00:00 Tuesday",
     '{"year": 2024, "month": 8, "day": 19}'),
    ("What did I do last week?", "2024-08-20 09:30:00 Tuesday", '{"year": 2024, "week": 33}'),
    ("Do you remember what I bought on Monday?", "2024-08-20 09:30:00 Tuesday", '{"weekday": 0}'),
    ("Where did I travel in March 2023?", "2024-08-20 09:30:00 Tuesday", '{"year": 2023, "month": 3}'),
    ("Remind me what I said at 3pm yesterday.", "2024-08-20 09:30:00 Tuesday",
     '{"year": 2024, "month": 8, "day": 19, "hour": 15}'),
    ("May I ask what my favourite food is?", "2024-08-20 09:30:00 Tuesday", "{}"),
]

SEMANTIC_RANK_PROMPT = (
    "Score how relevant each memory is to the query, from 0.0 (unrelated) to 1.0 (answers it).\n"
    "Query: {query}\n\nMemories:\n{memories}\n\n"
    'Reply with JSON only: {{"scores": [{{"index": 1, "score": 0.9}}, ...]}}, one entry per memory.')

_KEY_ALIASES = {"dayofweek": "weekday", "weekday": "weekday", "year": "year", "month": "month", "day": "day",
                "week": "week", "hour": "hour"}
_RANGES = {"year": (1, 9999), "month": (1, 12), "day": (1, 31), "week": (1, 53), "weekday": (0, 6),
           "hour": (0, 23)}


def _stamp(ctx: ScopeContext) -> str:
    return f"{ctx.now:%Y-%m-%d %H:%M:%S} {WEEKDAY_NAMES[ctx.now.weekday()]}"


def parse_time_reply(text: str) -> dict[str, int] | None:
    """The time parts in an LLM reply, tolerating what models write; None when the reply is unusable.

    Accepts JSON or `key: value` pairs; keys in any case, "Day of Week" / "day_of_week" for weekday;
    trailing commas; weekday names; numbers as strings. Unknown keys, -1, nulls and out-of-range
    values are left out. A reply that is neither a JSON object nor names a time part ("Sure! {oops")
    is None, not "no time": the caller's rules then read the query, where {} would drop its time.
    """
    block = re.search(r"\{.*?\}", text, re.DOTALL)
    body = block.group(0) if block else text
    pairs: list[tuple[str, Any]]
    try:
        loaded = json.loads(re.sub(r",\s*([}\]])", r"\1", body))
    except ValueError:
        loaded = None
    if isinstance(loaded, dict):
        pairs = list(loaded.items())
    else:
        found = re.findall(r"[\"']?([A-Za-z][A-Za-z _-]*?)[\"']?\s*[:=]\s*[\"']?(-?\d+|[A-Za-z]+)", body)
        pairs = [(key, value) for key, value in found if _time_key(key)]
        if not pairs:
            return None
    out: dict[str, int] = {}
    for raw_key, raw_value in pairs:
        key = _time_key(raw_key)
        if key is None or raw_value is None:
            continue
        value = _as_int(key, raw_value)
        lo, hi = _RANGES[key]
        if value is not None and lo <= value <= hi:
            out[key] = value
    return out


def _time_key(raw: Any) -> str | None:
    return _KEY_ALIASES.get(re.sub(r"[^a-z]", "", str(raw).lower()))


def _as_int(key: str, value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return int(value)
    text = str(value).strip()
    if key == "weekday":
        names = [n.lower() for n in WEEKDAY_NAMES]
        for i, name in enumerate(names):
            if text.lower() in (name, name[:3]):
                return i
    try:
        return int(float(text))
    except ValueError:
        return None


def parse_rank_reply(text: str, count: int) -> dict[int, float]:
    """Scores by 0-based memory index from an LLM reply (1-based in the prompt), clipped to [0, 1].

    Accepts {"scores": [{"index", "score"}]}, a bare list of those, {"1": 0.8}, or lines like
    "<1> <0.8>" / "1: 0.8". Indices outside 1..count are ignored.
    """
    found: dict[int, float] = {}
    loaded = _load_json(text)
    items: list[tuple[Any, Any]] = []
    if isinstance(loaded, dict) and isinstance(loaded.get("scores"), list):
        loaded = loaded["scores"]
    if isinstance(loaded, list):
        items = [(e.get("index"), e.get("score")) for e in loaded if isinstance(e, dict)]
    elif isinstance(loaded, dict):
        items = list(loaded.items())
    else:
        items = re.findall(r"^\s*<?(?:memory\s*)?(\d+)>?\s*[:\-,.)]?\s*<?(\d*\.?\d+)>?", text,
                           re.MULTILINE | re.IGNORECASE)
    for idx, score in items:
        try:
            i, s = int(idx), float(score)
        except (TypeError, ValueError):
            continue
        if 1 <= i <= count:
            found[i - 1] = min(1.0, max(0.0, s))
    return found


def _load_json(text: str) -> Any:
    """The outermost JSON object or list in `text` (code fences and trailing commas tolerated), or None."""
    match = re.search(r"[\[{].*[\]}]", text, re.DOTALL)
    if not match:
        return None
    try:
        return json.loads(re.sub(r",\s*([}\]])", r"\1", match.group(0)))
    except ValueError:
        return None


class ExtractTimeOp(Op):
    name = "extract_time_op"
    params: ExtractTimeParams

    def run(self, ctx: ScopeContext, wb: Workbench) -> OpTrace:
        if not has_time_keyword(ctx.query):
            ctx.time_hint = None
            return OpTrace(op=self.name, status="skipped", input_size=1, note="no time keyword in the query")
        llm = getattr(wb, "llm", None) if wb is not None else None
        note = None
        if llm is not None and llm.configured:
            try:
                ctx.time_hint = self._ask_llm(ctx, wb)
                return self._done(ctx, "parsed by the LLM")
            except ProviderError as e:
                note = f"LLM failed ({e}); rule-based parser used"
        ctx.time_hint = parse_time_hint(ctx.query, ctx.now)
        note = note or "no LLM configured: rule-based parser used"
        trace = self._done(ctx, note)
        trace.status = "fallback"
        return trace

    def _ask_llm(self, ctx: ScopeContext, wb: Workbench) -> TimeHint | None:
        messages = [Message(role="system", content=EXTRACT_TIME_SYSTEM)]
        for sentence, stamp, answer in EXTRACT_TIME_FEW_SHOT:
            messages.append(Message(role="user",
                                    content=f"Sentence: {sentence}\nSentence timestamp: {stamp}"))
            messages.append(Message(role="assistant", content=answer))
        messages.append(Message(role="user",
                                content=f"Sentence: {quoted(ctx.query)}\nSentence timestamp: {_stamp(ctx)}"))
        reply = wb.llm.complete(messages, model=wb.settings.model_fast, temperature=0.0, max_tokens=128,
                                json_mode=True)
        parts = parse_time_reply(reply.text)
        if parts is None:
            # Not the asked JSON (not even "{}" for "no time"): the rules read the query instead, and the
            # trace says so, rather than the time hint being dropped silently.
            raise ProviderError(f"the reply was not the asked JSON: {reply.text[:80]!r}")
        if not parts:
            return None
        span = range_of_parts(parts, ctx.now)
        if span is None:  # no year (e.g. "on Monday"): the rules' reading of the range, else all time
            rules = parse_time_hint(ctx.query, ctx.now)
            span = (rules.start, rules.end) if rules else (datetime(1, 1, 1, tzinfo=UTC),
                                                           datetime(9999, 12, 31, tzinfo=UTC))
        return TimeHint(parts=parts, start=span[0], end=span[1], expression=ctx.query, source="llm")

    def _done(self, ctx: ScopeContext, note: str) -> OpTrace:
        hint = ctx.time_hint
        output = None if hint is None else {"parts": {k: hint.parts[k] for k in TIME_PARTS
                                                      if k in hint.parts},
                                            "start": hint.start.isoformat(), "end": hint.end.isoformat(),
                                            "expression": hint.expression, "source": hint.source}
        return OpTrace(op=self.name, input_size=1, output_size=0 if hint is None else len(hint.parts),
                       output=output,
                       note=note if hint else f"{note}; no time read from its time words: no time boost")


class SemanticRankOp(Op):
    name = "semantic_rank_op"
    params: SemanticRankParams

    def run(self, ctx: ScopeContext, wb: Workbench) -> OpTrace:
        p, n = self.params, len(ctx.memories)
        llm = getattr(wb, "llm", None) if wb is not None else None
        reason = None
        if not p.enable_ranker:
            reason = "semantic rank skipped: enable_ranker is off"
        elif llm is None or not llm.configured:
            reason = "semantic rank skipped: no LLM configured"
        elif n <= p.output_memory_max_count:
            reason = (f"semantic rank skipped: {n} memories ≤ output_memory_max_count "
                      f"{p.output_memory_max_count}")
        if reason:
            return OpTrace(op=self.name, status="skipped", note=reason, input_size=n, output_size=n,
                           output=[m.summary() for m in ctx.memories])
        listing = "\n".join(f"{i}. {quoted(m.memory.content)}" for i, m in enumerate(ctx.memories, start=1))
        prompt = SEMANTIC_RANK_PROMPT.format(query=quoted(ctx.query), memories=listing)
        try:
            reply = wb.llm.complete([Message(role="user", content=prompt)], model=wb.settings.model_fast,
                                    temperature=0.0, max_tokens=32 + 24 * n, json_mode=True)
        except ProviderError as e:
            ctx.memories = ctx.memories[: p.output_memory_max_count]
            return OpTrace(op=self.name, status="skipped",
                           note=f"semantic rank failed ({e}); retrieval order kept", input_size=n,
                           output_size=len(ctx.memories), output=[m.summary() for m in ctx.memories])
        scores = parse_rank_reply(reply.text, n)
        ctx.memories = rank_by_model(ctx.memories, scores)[: p.output_memory_max_count]
        unscored = n - len(scores)
        note = (f"LLM scored {len(scores)} of {n}"
                + (f"; {unscored} unscored keep their retrieval score (base_source=retrieval) and rank after "
                   "the scored ones" if unscored else ""))
        return OpTrace(op=self.name, input_size=n, output_size=len(ctx.memories), note=note,
                       output=[m.summary() for m in ctx.memories])


def rank_by_model(memories: list[ScopeMemory], scores: dict[int, float]) -> list[ScopeMemory]:
    """Model-scored memories first by llm_score, then the unscored by retrieval score: the two kinds of
    score are never compared with each other."""
    scored = [m.model_copy(update={"llm_score": scores[i]}) for i, m in enumerate(memories) if i in scores]
    unscored = [m for i, m in enumerate(memories) if i not in scores]
    scored.sort(key=lambda m: -(m.llm_score or 0.0))
    unscored.sort(key=lambda m: -m.retrieval.combined)
    return scored + unscored
