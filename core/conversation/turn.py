"""ui_remember: one conversational turn with memory (docs/ARCHITECTURE.md, "The path of a turn").

A call retrieves context from the instance's memory (hybrid search, fused by the active profile),
builds the prompt with the standard tool-input format, synthesises an answer (LLM, or an extractive
answer labelled as such), stores the user thought and the answer atomically with the feedback of the
answer that preceded it in the chain, stores a metrics thought, and indexes the new thoughts.

Every turn has a request id (the caller's, or one made here), and its write is idempotent by it: a repeat
returns the first result and writes nothing, so a turn whose outcome is unknown (`OutcomeUnknown`) is
safe to retry with the same id.
"""

from __future__ import annotations

import hashlib
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Literal, Self

import psycopg
import redis
from pydantic import BaseModel, ConfigDict, Field, field_validator

from core.conversation.feedback import feedback_score
from core.conversation.indexing import sync_index
from core.conversation.metrics import (
    ContextItem,
    FusionUsed,
    MemoryOutcome,
    Origin,
    StageLatency,
    TurnMetrics,
)
from core.conversation.prompts import CHRONOLOGICAL, SYNTHESIS_SYSTEM, quoted
from core.conversation.thoughts import (
    CATEGORY_ASSISTANT,
    CATEGORY_METRICS,
    CATEGORY_USER,
    FeedbackRecord,
    Thought,
)
from core.conversation.tool_input import ChatMessage, ToolInputSchema, fit_history, format_query
from core.errors import InvalidInput, ProviderError, ServiceUnavailable, WorkbenchError, outage
from core.formation.kinds import classify
from core.formation.run import turn_formation
from core.formation.summaries import on_turn
from core.ids import Id, validate_id
from core.limits import MESSAGE_MAX_CHARS
from core.llm import Completion, Message
from core.llm.base import LLMCallFailed
from core.models import DEFAULT_PROFILE, PRESET_PROFILES, FusionProfile, ScoredMemory, SomeText, Tags
from core.retrieval.fusion import (
    BEST_SHARE,
    CHAIN_WEIGHT,
    OTHERS_SHARE,
    SPEAKER_WEIGHT,
    best_states,
    others_bar,
)
from core.retrieval.hybrid import SearchRequest, hybrid_search
from core.retrieval.ranking import above_floor, asks_only_time, floor_relevance
from core.retrieval.timeparse import has_time_keyword, parse_time_hint
from core.tokens import count_tokens

if TYPE_CHECKING:
    from core.runtime import Workbench

DEEP_CONTEXT_THRESHOLD = 8  # more context items than this → the deep model
STYLES = ("default", "deep", "chronological")
REDIS_DOWN = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError)
HISTORY_PAGE = 60  # the chain's thoughts read at a time for the prompt's history, newest first
# The caller's intermediate steps go into the prompt whole, so their size is bounded here: the prompt
# must still fit a model's context beside the history and the memories.
MEMORY_STEP = "memory_retrieval"  # the step this turn adds itself; a caller's step may not replace it
MAX_STEPS = 16
MAX_STEP_TITLE = 100
MAX_STEP_CHARS = 20_000
MAX_STEPS_CHARS = 60_000


class UiRememberParams(BaseModel):
    """ui_remember's request parameters, plus `profile`, `request_id` and `instance`. Unknown fields are
    refused."""

    model_config = ConfigDict(extra="forbid")

    thought: SomeText = Field(min_length=1, max_length=MESSAGE_MAX_CHARS)
    thought_number: int | None = Field(
        None, ge=1, le=1_000_000,
        description="the turn's place in the chain; the store numbers turns in the order they are stored "
                    "(concurrent writers cannot agree on a number), and a given number that differs is noted")
    total_thoughts: int = Field(1, ge=1, le=1_000_000)
    chain_id: Id | None = None
    next_thought_needed: bool = True
    search_type: Literal["hybrid", "vector", "text"] = "hybrid"
    top_k: int = Field(5, ge=1, le=100)
    similarity_threshold: float = Field(0.0, ge=0, le=1, allow_inf_nan=False)
    token_cap: int | None = Field(None, ge=1, le=1_000_000)
    style: str | None = Field(None, description="default, deep (the larger model) or chronological (memories "
                                                "in time order), in any case; left out: default",
                              json_schema_extra=lambda schema: schema["anyOf"][0].update(enum=list(STYLES)))
    tags: Tags = []
    filter_tags: bool = Field(False, description="retrieve only memories carrying one of `tags` (the tags are "
                                                 "stored with the turn either way)")
    temporal: str | None = Field(None, max_length=200)
    profile: Id | None = None
    request_id: Id | None = Field(
        None, description="idempotency key: the same id again, with the same message (and the same chain_id, "
                          "or none), returns the first call's result, not a new turn (with another message it "
                          "is refused; in another chain it is another turn's key); one is made when left "
                          "out (retrying a turn whose outcome was unknown needs the id its error message gives)")
    instance: Id | None = Field(None, description="the memory instance; None: the INSTANCE setting")
    intermediate_steps: dict[str, str] = Field(
        {}, description="outputs of the caller's earlier tools, by tool title, put into the prompt's "
                        f"\"Intermediate tool outputs:\" beside the memory retrieval: at most {MAX_STEPS} "
                        f"steps of {MAX_STEP_CHARS:,} characters, {MAX_STEPS_CHARS:,} in all",
        json_schema_extra={"maxProperties": MAX_STEPS, "additionalProperties": {
            "type": "string", "maxLength": MAX_STEP_CHARS}, "propertyNames": {
                # A title as `_steps` takes it: printable, no bracket, no space at either end, not MEMORY_STEP.
                "minLength": 1, "maxLength": MAX_STEP_TITLE, "not": {"const": MEMORY_STEP},
                "pattern": r"^[^\s\[\]\x00-\x1f\x7f-\x9f]"
                           r"([^\[\]\x00-\x1f\x7f-\x9f]*[^\s\[\]\x00-\x1f\x7f-\x9f])?$"}})
    include_history: bool = Field(True, description="whether the chain's chat history goes into the prompt")
    include_prompt: bool | None = Field(
        None, description="whether the result carries the exact prompt (`prompt`, chat history included); "
                          "left out, the front end decides: the MCP tool leaves it out (an assistant need not "
                          "read its own conversation back at every turn), the HTTP API, the CLI and the "
                          "dashboard include it. The turn's metrics thought keeps it either way")

    @field_validator("style")
    @classmethod
    def _style(cls, v: str | None) -> str | None:
        if v is None or not v.strip():
            return None
        if v.strip().lower() not in STYLES:
            raise ValueError(f"must be one of {', '.join(STYLES)} (any case)")
        return v.strip().lower()

    @field_validator("filter_tags")
    @classmethod
    def _filter_needs_tags(cls, v: bool, info) -> bool:
        if v and not info.data.get("tags"):
            raise ValueError("filter_tags needs at least one tag: give tags, or leave filter_tags off")
        return v

    @field_validator("intermediate_steps")
    @classmethod
    def _steps(cls, v: dict[str, str]) -> dict[str, str]:
        if len(v) > MAX_STEPS:
            raise ValueError(f"at most {MAX_STEPS} steps")
        for title, output in v.items():
            # A title is printed as "[title]" on a line of its own: a newline or a bracket in it could
            # make a step's output read as another step's, or as the memories.
            if not (1 <= len(title) <= MAX_STEP_TITLE) or not title.isprintable() or "[" in title \
                    or "]" in title or title != title.strip():
                raise ValueError(f"each step title must be 1–{MAX_STEP_TITLE} printable characters without "
                                 "brackets or surrounding spaces")
            if title == MEMORY_STEP:
                raise ValueError(f"{MEMORY_STEP!r} is the turn's own step (the retrieved memories)")
            if len(output) > MAX_STEP_CHARS:
                raise ValueError(f"step {title!r}: at most {MAX_STEP_CHARS:,} characters")
        if sum(map(len, v.values())) > MAX_STEPS_CHARS:
            raise ValueError(f"at most {MAX_STEPS_CHARS:,} characters in all steps together")
        return v


class UiRememberResult(BaseModel):
    status: str = "ok"
    thought1_id: str
    thought2_id: str
    thought3_id: str | None
    model_used: str | None
    usage_total_tokens: int | None
    usage_prompt_tokens: int | None = Field(None, description="of the total, the prompt's (None when extractive "
                                                               "or the LLM did not report it)")
    usage_completion_tokens: int | None = Field(None, description="of the total, the answer's")
    # For the dashboard and the CLI:
    model_selected: str = Field(description="the model the heuristic chose; model_used is None when the "
                                            "answer is extractive (no LLM), so analytics group by this")
    instance: str
    chain_id: str
    request_id: str | None = Field(None, description="the turn's request id (the caller's, or the one made "
                                                      "for it): sending it again returns this result")
    answer: str
    synthesis: Literal["llm", "extractive"]
    synthesis_error: str | None = Field(
        None, description="why the answer is extractive although an LLM is configured: what its call did, in a "
                          "few words (\"HTTP 500\", \"no answer within 30 s\", \"127.0.0.1:8080 unreachable\", "
                          "\"empty answer\"; the notes say it in full); None when the LLM answered or none is "
                          "configured")
    profile: str
    fusion: FusionUsed | None = Field(None, description="the profile's definition as this turn ranked with it")
    context: list[ContextItem]
    memory: MemoryOutcome = Field("found", description="whether memories went to synthesis: found, "
                                                       "none_matched (none reached the relevance floor) or "
                                                       "unavailable (retrieval failed)")
    context_dropped_by_token_cap: int = 0
    history_turns_dropped: int = 0
    prompt: list[Message]
    latency: StageLatency
    tags: list[str] = []
    previous_feedback: FeedbackRecord | None = None
    notes: list[str] = []

    def metrics(self, origin: Origin | None = None) -> TurnMetrics:
        """What the turn's metrics thought records of it (its answer thought: `TurnMetrics.ANSWER_FIELDS`),
        with the front end and key it came through (`origin`; None: not recorded)."""
        return TurnMetrics(model=self.model_used or "extractive", model_selected=self.model_selected,
                           synthesis=self.synthesis, profile=self.profile,
                           source=origin and origin.source, key=origin and origin.key, tags=self.tags,
                           tokens=self.usage_total_tokens, prompt_tokens=self.usage_prompt_tokens,
                           completion_tokens=self.usage_completion_tokens,
                           context_items=len(self.context), memory=self.memory,
                           answer_id=self.thought2_id, latency=self.latency, fusion=self.fusion,
                           context=self.context, prompt=self.prompt, notes=self.notes)


def fusion_used(profile: FusionProfile, search_type: str) -> FusionUsed:
    """What a turn records of the fusion it ranked with: the profile as it is now, which a later save under
    its name does not change."""
    return FusionUsed(name=profile.name, method=profile.method, w_sem=profile.w_sem, w_text=profile.w_text,
                      w_rec=profile.w_rec, tau_s=profile.tau_s, rrf_k=profile.rrf_k,
                      speaker_weight=SPEAKER_WEIGHT, chain_weight=CHAIN_WEIGHT, search_type=search_type)


def choose_model(style: str | None, context_items: int, fast: str, deep: str) -> str:
    """The deep model when style is "deep" or more than 8 context items go to synthesis, else fast."""
    return deep if style == "deep" or context_items > DEEP_CONTEXT_THRESHOLD else fast


def fit_context(items: list[ScoredMemory], token_cap: int | None) -> tuple[list[ScoredMemory], int]:
    """Keep the best-scored memories whose tokens fit in `token_cap`, each counted as the prompt carries it
    (its line: date, kind, relevance and text, and the line break); returns (kept, dropped)."""
    if token_cap is None:
        return items, 0
    kept, used = [], 0
    for item in items:
        cost = count_tokens(format_memories([item])) + 1
        if used + cost <= token_cap:
            kept.append(item)
            used += cost
    return kept, len(items) - len(kept)


def _memories(n: int) -> str:
    return f"{n} retrieved {'memory' if n == 1 else 'memories'}"


# What the result kept when a turn is stored says until its call finishes it (metrics thought, previous
# feedback, every stage's time), and what a repeat says when it had to finish the turn itself.
UNFINISHED = "the metrics thought was not stored: this turn's call ended before it"
FINISHED_BY_REPEAT = ("this request's first call stored the turn but had not finished it {wait:g} s later (its "
                      "process stopped, or is slow): this repeat finished it as the call would have (indexed "
                      "its thoughts, made the message's important copy and the chain's summary where due, and "
                      "stored the metrics thought); the stage times after the store were not measured")
BEING_FINISHED = ("this request's first call stored the turn but had not finished it, and another repeat of it is "
                  "finishing it now: the metrics thought is not stored yet; send the request again for the "
                  "complete result")
REPEAT_WAIT_S = 5.0  # how long a repeat waits for the first call of its request to finish the turn
REPEAT_POLL_S = 0.05
REPEAT_OF_DELETED = ("this request was served before and its message has been deleted since; it was not stored "
                     "again (send it with a new request_id to store it)")
# "Message": a statement, which is stored, gets it as often as a question.
NO_MEMORY_MATCHES = "no memory matches this message"
# Said instead when retrieval failed: nothing was looked up, so nothing is known to match or not.
MEMORY_NOT_SEARCHED = "memory could not be searched for this message (its store is unavailable)"


def format_memories(items: list[ScoredMemory], memory: MemoryOutcome = "found") -> str:
    """The memories for the prompt, each with its date, kind and relevance (what the floor read, not the
    ranking score, which also weighs recency and the memory's chain), and the event's date when it tells
    more than the date it was said. None: no memory matches, or, when retrieval failed (`memory`
    "unavailable"), that memory could not be searched."""
    if not items:
        return f"({MEMORY_NOT_SEARCHED if memory == 'unavailable' else NO_MEMORY_MATCHES})"
    return "\n".join(f"- [{m.memory.created_at:%Y-%m-%d %H:%M}] ({m.memory.kind}, relevance "
                     f"{m.score.relevance:.2f}{_event(m, ', event ')}{_superseded(m, ', ')}) "
                     f"{quoted(m.memory.content)}" for m in items)


def _event(m: ScoredMemory, before: str, after: str = "") -> str:
    event = m.memory.event_time.beside(m.memory.created_at)
    return f"{before}{event}{after}" if event else ""


def _superseded(m: ScoredMemory, before: str, after: str = "") -> str:
    """"superseded 2026-03-14" for a memory a later one replaced (a windowed search hands it, `_held`): true
    until then, not now."""
    ended = m.memory.metadata.get("superseded_at")
    return f"{before}superseded {str(ended)[:10]}{after}" if ended else ""


# The kinds of message that tell the assistant something rather than ask it (`core.formation.kinds`).
TELLING = frozenset({"statement", "correction"})


def extractive_answer(items: list[ScoredMemory], failed: str | None = None, *, told: bool = False,
                      memory: MemoryOutcome = "found") -> str:
    """The memories that passed the relevance floor, quoted; none: says no memory matches, or that memory
    could not be searched when retrieval failed (`memory` "unavailable"). Its label says why there is no LLM
    answer: none is configured, or the configured one `failed` (what its call did).

    A message that `told` something (a statement, a correction: `core.formation.kinds`) asked for nothing:
    the answer says it is noted, and the memories follow as related ones, not as "the most relevant" to a
    question nobody asked ("I switched from my Kindle to a Kobo last week." was answered with "We changed
    it last week.")."""
    why = "no LLM configured" if failed is None else f"the LLM failed: {failed}"
    lines = [f"- {m.memory.created_at:%Y-%m-%d}{_event(m, ' (event ', ')')}{_superseded(m, ' (', ')')}: "
             f"{m.memory.content}" for m in items[:3]]
    if told:
        noted = f"Extractive answer ({why}): noted. Your message is stored, so later turns can use it."
        return noted + ("\nRelated memories:\n" + "\n".join(lines) if lines else "")
    if not items:
        return (f"Extractive answer ({why}): {MEMORY_NOT_SEARCHED if memory == 'unavailable' else NO_MEMORY_MATCHES}. "
                "Your message is stored, so later turns can use it.")
    return f"Extractive answer ({why}) — the most relevant memories:\n" + "\n".join(lines)


class Synthesising(str):
    """Yielded by `Remember.stream` just before the LLM is asked, so a front end can say what it waits for:
    `model`, for at most `timeout_s` (LLM_TIMEOUT_S, its retries included). An empty string, like
    `AnswerRestarts`: a consumer that only joins the text is unaffected by the markers."""

    model: str
    timeout_s: float

    def __new__(cls, model: str, timeout_s: float) -> Self:
        marker = super().__new__(cls, "")
        marker.model, marker.timeout_s = model, timeout_s
        return marker


class AnswerRestarts(str):
    """Yielded by `Remember.stream` when the LLM's answer broke off after some of its text was yielded: that
    text is void, and the pieces after this marker are the whole answer (the extractive one). `reason`: what
    happened. An empty string (see `Synthesising`)."""

    reason: str

    def __new__(cls, reason: str) -> Self:
        marker = super().__new__(cls, "")
        marker.reason = reason
        return marker


class Remember:
    """Runs ui_remember turns. `clock` gives "now" (the demo replays 30 days through it)."""

    def __init__(self, wb: Workbench, *, clock: Callable[[], datetime] | None = None,
                 origin: Origin | None = None):
        self.wb = wb
        self.clock = clock or (lambda: datetime.now(UTC))
        self.origin = origin

    def _same_request(self, instance: str, served: UiRememberResult, params: UiRememberParams
                      ) -> UiRememberResult:
        """The result a repeat of a served request gets. InvalidInput when the request id was first sent with
        another message: its result is that message's, and this one would be stored nowhere. When the
        message was deleted since, the repeat is told so; it is not stored again (deleting means gone, and
        a client's late retry must not bring it back)."""
        first = self.wb.thoughts.get_many(instance, served.chain_id, [served.thought1_id])
        if not first:
            return served.model_copy(update={"notes": [*served.notes, REPEAT_OF_DELETED]})
        if first[0].thought != params.thought:
            raise InvalidInput(f"request_id {served.request_id!r} was first sent with another message (chain "
                               f"{served.chain_id!r}); a repeat must send the same one. Send this message with "
                               "a new request_id, or none")
        return self._finished(instance, served) if UNFINISHED in served.notes else served

    def _finished(self, instance: str, served: UiRememberResult) -> UiRememberResult:
        """The complete result of a turn stored by an earlier call of the same request that had not finished
        it: a copy of the call sent at once to another API replica, or a retry after a timeout. Waits up to
        REPEAT_WAIT_S for that call's complete result, so both answer the same; when none comes (the call's
        process was killed, or is slow), finishes the turn as its call would have (`_leave_beside`, then
        `_complete`: the thoughts indexed and formed, the important copy, an ended chain's summary, the
        metrics thought by the id the answer's feedback names) and serves that result. Of repeats at once,
        the one that claims the turn finishes it (`claim_finishing`); the others wait for its result. A slow
        first call that finishes later does the same again, to the same ids."""
        store, request_id = self.wb.thoughts, served.request_id or ""
        if (done := self._served_complete(instance, served)) is not None:
            return done
        token = store.claim_finishing(instance, served.chain_id, request_id)
        if token is None:  # another repeat is finishing it
            done = self._served_complete(instance, served)
            return done or served.model_copy(update={"notes": [
                *(n for n in served.notes if n != UNFINISHED), BEING_FINISHED]})
        try:
            return self._finish(instance, served)
        finally:
            store.release_finishing(instance, served.chain_id, request_id, token)

    def _served_complete(self, instance: str, served: UiRememberResult) -> UiRememberResult | None:
        """The request's complete result once its turn's call (or another repeat) serves it, waited for up to
        REPEAT_WAIT_S; `served` as read when it expired or its chain was deleted meanwhile; None when still
        unfinished."""
        deadline = time.monotonic() + REPEAT_WAIT_S
        while time.monotonic() < deadline:
            time.sleep(REPEAT_POLL_S)
            latest = self.wb.thoughts.served(instance, served.chain_id, served.request_id or "")
            if latest is None:  # expired, or the chain was deleted meanwhile: what was read stands
                return served
            if UNFINISHED not in (result := UiRememberResult.model_validate_json(latest)).notes:
                return result
        return None

    def _finish(self, instance: str, served: UiRememberResult) -> UiRememberResult:
        """`_finished`'s work, under its claim: the stored turn read back and finished."""
        store = self.wb.thoughts
        stored = {t.id: t for t in store.get_many(instance, served.chain_id, [served.thought1_id, served.thought2_id])}
        user, answer = stored.get(served.thought1_id), stored.get(served.thought2_id)
        metrics_id = store.feedback_fields([served.thought2_id], ["metrics_id"])[0][0]
        if user is None or answer is None or not metrics_id:
            return served
        result = served.model_copy(update={"thought3_id": metrics_id, "notes": [
            *(n for n in served.notes if n != UNFINISHED), FINISHED_BY_REPEAT.format(wait=REPEAT_WAIT_S)]})
        self._leave_beside(result, user, answer, server_failed=False, postgres_down=False)
        recorded = TurnMetrics.from_fields(answer.to_hash())  # the first call's front end and key
        origin = Origin(source=recorded.source, key=recorded.key) if recorded.source else None
        if not self._complete(result, answer, seq=answer.seq + 1, number=answer.thought_number, origin=origin):
            return served  # the chain was deleted meanwhile
        return result

    def _leave_beside(self, result: UiRememberResult, user: Thought, answer: Thought, *, server_failed: bool,
                      postgres_down: bool) -> None:
        """What a stored turn leaves beside its thoughts: the thoughts indexed (the user's message formed into
        its kind and observations), the message's important copy, the summaries its statements superseded
        made again, and an ended chain's summary (`on_turn`). A failure is noted in `result`, never raised:
        the turn is stored, and no caller may retry it without its request id. `server_failed`: the LLM
        server failed on the answer, so formation does not ask it again; `postgres_down`: retrieval found
        Postgres down moments ago, so the next turn or sweep indexes."""
        wb = self.wb
        formation = None
        try:  # the formation reads the index too: with Postgres down, both wait for the next turn
            formation = turn_formation(wb)
            if server_failed:
                formation.stop_asking("the LLM server failed on this turn's answer")
            queued = [user, answer] if result.synthesis == "llm" else [user]  # as `append_turn` queued them
            # Retrieval found Postgres down moments ago: a sync would wait for the outbox lock (up to
            # LOCK_WAIT_S, when a drain cut off by an outage left it held) only to fail; the next turn or
            # sweep indexes what is queued.
            sync_error = ("Postgres is unavailable" if postgres_down else
                          sync_index(wb.thoughts, wb.index, formation=formation, own=queued).error)
        except (psycopg.Error, ServiceUnavailable, *REDIS_DOWN) as e:
            sync_error = str(e)
        # e.g. the LLM's reading failed and the rules read the message
        result.notes += formation.notes if formation else []
        if sync_error:
            result.notes.append("indexing deferred: Postgres or Redis is unavailable; this turn is indexed "
                                "when it is back")
        try:  # what the turn leaves beside its thoughts: an important copy, an ended chain's summary
            on_turn(wb, user, ended=not user.next_thought_needed)
        except (psycopg.Error, ServiceUnavailable, ProviderError, *REDIS_DOWN) as e:  # the embedder's too
            reason = e if isinstance(e, ProviderError) else outage(e, "Postgres or Redis")
            result.notes.append(f"important mark or session summary deferred ({reason}); the sweep or "
                                "`workbench formation run` makes it later")

    def _complete(self, result: UiRememberResult, answer: Thought, *, seq: int, number: int,
                  origin: Origin | None) -> bool:
        """The turn's last step: its metrics thought (`result.thought3_id`, at the answer's time; written last,
        so it records every stage but its own write), then the complete result served to the request's
        repeats. False when the chain was deleted meanwhile (nothing written)."""
        store = self.wb.thoughts
        appended = True
        try:
            metrics = result.metrics(origin)
            appended = store.append(Thought(
                id=result.thought3_id, thought=metrics.thought_text(), timestamp=answer.timestamp,
                category=CATEGORY_METRICS, seq=seq, thought_number=number, extra=metrics.to_fields(),
                instance=answer.instance, chain_id=answer.chain_id, total_thoughts=answer.total_thoughts,
                next_thought_needed=answer.next_thought_needed, tags=answer.tags), about=answer.id)
        except ServiceUnavailable:
            result.thought3_id = None
            result.notes.append("metrics thought not stored: Redis refused the write")
        # The turn's write kept the result as it was then (so a retry after a crash never repeats the
        # turn); a repeat gets the complete one: previous feedback, every stage's time.
        try:
            store.serve(answer.instance, answer.chain_id, result.request_id or "", result.model_dump_json())
        except ServiceUnavailable:
            pass  # the earlier copy still answers a repeat
        return appended

    def run(self, params: UiRememberParams, *, instance: str | None = None, notes: Sequence[str] = ()
            ) -> UiRememberResult:
        for piece in self.stream(params, instance=instance, notes=notes):
            if isinstance(piece, UiRememberResult):
                return piece
        raise WorkbenchError("ui_remember produced no result")  # unreachable: stream always ends with one

    def stream(self, params: UiRememberParams, *, instance: str | None = None, notes: Sequence[str] = ()
               ) -> Iterator[str | UiRememberResult]:
        """Yield the answer's text as it is produced, then the `UiRememberResult`. Among the pieces of text,
        two markers (empty strings): `Synthesising` before the LLM is asked, and `AnswerRestarts` when its
        answer broke off (the text so far is void; the pieces after it are the whole answer). `notes`: the
        caller's, first among the turn's (a repeat of a served request keeps the first call's)."""
        wb, store = self.wb, self.wb.thoughts
        instance = validate_id(instance or params.instance or wb.settings.instance, "instance")
        request_id = params.request_id or f"req-{uuid.uuid4().hex}"
        # A repeated request that started a new chain must find the chain of its first call, where its
        # result is kept: so a new chain's id comes from the request id.
        chain_id = params.chain_id or f"chain-{hashlib.sha256(request_id.encode()).hexdigest()[:12]}"
        state = store.turn_state(instance, chain_id, request_id)
        if state.served:
            result = self._same_request(instance, UiRememberResult.model_validate_json(state.served), params)
            yield result.answer
            yield result
            return

        t_start = time.perf_counter()
        now = self.clock()
        notes = list(notes)
        user_id, answer_id, metrics_id = (str(uuid.uuid4()) for _ in range(3))
        history, unread = self._history(instance, chain_id) if params.include_history else ([], 0)
        if not params.include_history:
            notes.append("chat history left out of the prompt (include_history=false)")

        # 1. Retrieval (degrades to no context when Postgres is down; the turn still goes on).
        kind = classify(params.thought)  # a statement or correction tells; the others ask (`core.formation.kinds`)
        profile = self._profile(instance, params.profile, notes)
        since, until = self._time_window(params.temporal, now, notes)
        context: list[ScoredMemory] = []
        memory: MemoryOutcome = "found"
        latency = StageLatency()
        try:
            found = hybrid_search(wb.search_pool(), wb.embedder, SearchRequest(
                query=params.thought, instance=instance, profile=_held(profile, since, until),
                top_k=params.top_k, search_type=params.search_type,
                similarity_threshold=params.similarity_threshold, since=since, until=until, time_of="event",
                tags=params.tags if params.filter_tags else None, exclude_ids=[user_id],
                # The question's own time ranks the memories of then higher (`SearchRequest.time_boost`): a
                # boost, never a restriction, as its words may name a time they do not ask about ("my last day
                # at Acme"); a `temporal` hint, read or not, says the time itself. A message that tells names the
                # time of what it tells ("I moved to Porto last month"), asking for nothing of then: its related
                # memories were any of last month's ("We changed it last week."), not those of Porto or a move.
                time_boost=not (params.temporal and params.temporal.strip()) and kind not in TELLING), now=now)
            context, latency.embed_ms, latency.search_ms = found.results, found.embed_ms, found.search_ms
            notes += [left.note() for left in found.left_out]
            # "the question's time" of a question, "the message's time" of an instruction ("Remind me of …")
            notes += [said] if (said := found.time_note("question" if kind == "question" else "message")) else []
        except (psycopg.Error, ServiceUnavailable) as e:
            memory = "unavailable"
            notes.append(f"retrieval degraded: {outage(e, 'Postgres')}, so this answer uses no stored memory")
        floor = wb.settings.relevance_floor
        relevance = [floor_relevance(m, params.search_type) for m in context]
        stated = [m.score.stated for m in context]  # what the reason line says the others needed
        # A question about a time alone ("What did I do last weekend?") shares no word with what the time holds:
        # within its window, the memories are handed by time rather than held to the floor (`asks_only_time`).
        by_time = since is not None and bool(context) and asks_only_time(params.thought)
        context, below = (context, 0) if by_time else above_floor(context, floor, params.search_type)
        if by_time:
            notes.append(f"the question asks about its time alone: the window's {_memories(len(context))} "
                         "handed in time order, without the relevance floor")
        elif below and not context:
            notes.append(f"{_memories(below)} below the relevance floor {floor:.2f} (RELEVANCE_FLOOR) "
                         "left out")
        elif below and best_states(relevance, stated):
            notes.append(f"{_memories(below)} under the relevance floor {floor:.2f} (RELEVANCE_FLOOR) left out: the "
                         "best states the attribute the question asks, of whom it asks it, so the others need the floor")
        elif below:
            notes.append(f"{_memories(below)} under {others_bar(relevance, floor):.2f} left out: once the best "
                         f"reaches the relevance floor {floor:.2f} (RELEVANCE_FLOOR), the others need "
                         f"{OTHERS_SHARE:g} × it and {BEST_SHARE:g} × the best's relevance ({max(relevance):.2f}), "
                         "at most the floor")
        if memory == "found" and not context:
            memory = "none_matched"
        if params.filter_tags:
            notes.append(f"retrieval restricted to memories tagged {', '.join(params.tags)}")
        # The budget keeps the most relevant; only then does a chronological answer order them by time.
        context, dropped = fit_context(context, params.token_cap)
        if params.style == "chronological" or by_time:
            context.sort(key=lambda m: m.memory.created_at)
        if dropped:
            notes.append(f"{_memories(dropped)} left out to stay within token_cap={params.token_cap}")

        # 2. Prompt, in the standard tool-input format.
        tool_input = ToolInputSchema(
            chat_history=history,
            latest_human_message=params.thought,
            # The caller's tools ran before this one: their outputs first, then the memories.
            intermediate_steps={**params.intermediate_steps, MEMORY_STEP: format_memories(context, memory)})
        query = format_query(tool_input, wb.settings.chat_history_token_budget)
        history_dropped = query.history_turns_dropped + unread
        if history_dropped:
            notes.append(f"chat history cut to the last {query.history_turns_kept} messages "
                         f"({history_dropped} older {'one' if history_dropped == 1 else 'ones'} dropped to fit "
                         f"{query.history_budget} tokens)")
        system = SYNTHESIS_SYSTEM + (CHRONOLOGICAL if params.style == "chronological" else "")
        prompt = [Message(role="system", content=system), Message(role="user", content=query.text)]

        # 3. Synthesis.
        model = choose_model(params.style, len(context), wb.settings.model_fast, wb.settings.model_deep)
        llm = wb.llm  # built (its SDK imported: 0.3–1.5 s in a fresh CLI process) before the stage is timed
        t_syn = time.perf_counter()
        completion: Completion | None = None
        failed: str | None = None  # what the configured LLM's call did, when it gave no answer
        server_failed = False  # the LLM server failed this turn: its formation does not ask it again
        if llm.configured:
            yield Synthesising(model=model, timeout_s=wb.settings.llm_timeout_s)
            try:
                for piece in llm.stream(prompt, model=model, temperature=wb.settings.llm_temperature,
                                           max_tokens=wb.settings.llm_max_tokens):
                    if isinstance(piece, Completion):
                        completion = piece
                    else:
                        yield piece
            except ProviderError as e:
                failed = e.reason if isinstance(e, LLMCallFailed) else str(e)
                server_failed = True
                notes.append(f"{e} Answered extractively instead.")
                if isinstance(e, LLMCallFailed) and e.partial:
                    yield AnswerRestarts(reason=str(e))
        else:
            notes.append("synthesis skipped: no LLM configured (set GROQ_API_KEY or LLM_BASE_URL); "
                         "the answer is extractive")
        if completion is not None and not completion.text.strip():
            # Nothing to show or to remember: stored, an empty answer also failed every later turn's indexing.
            notes.append(f"the model {completion.model} returned an empty answer. Answered extractively instead.")
            completion, failed = None, "empty answer"
        if completion is not None and completion.finish_reason == "length":
            notes.append(f"the answer reached LLM_MAX_TOKENS ({wb.settings.llm_max_tokens}) and was cut there")
        if completion is None:
            told = kind in TELLING
            answer_text = extractive_answer(context, failed, told=told, memory=memory)
            synthesis, model_used, tokens = "extractive", None, None
            yield answer_text
        else:
            answer_text, synthesis = completion.text, "llm"
            model_used, tokens = completion.model, completion.total_tokens
        latency.synthesis_ms = (time.perf_counter() - t_syn) * 1000

        # 4. Store: the turn with the previous answer's feedback atomically, then metrics, index.
        t_store = time.perf_counter()
        answered = max(self.clock(), now)
        common = {"instance": instance, "chain_id": chain_id, "total_thoughts": params.total_thoughts,
                  "next_thought_needed": params.next_thought_needed, "tags": params.tags}
        user = Thought(id=user_id, thought=params.thought, timestamp=now, category=CATEGORY_USER, **common)
        result = UiRememberResult(
            thought1_id=user_id, thought2_id=answer_id, thought3_id=metrics_id, model_used=model_used,
            usage_total_tokens=tokens, usage_prompt_tokens=completion.prompt_tokens if completion else None,
            usage_completion_tokens=completion.completion_tokens if completion else None,
            model_selected=model, instance=instance, chain_id=chain_id,
            request_id=request_id, answer=answer_text,
            synthesis=synthesis, synthesis_error=failed, profile=profile.name,
            fusion=fusion_used(profile, params.search_type),
            context=[_context_item(m, now) for m in context],
            memory=memory,
            context_dropped_by_token_cap=dropped, history_turns_dropped=history_dropped,
            tags=params.tags,
            prompt=prompt, latency=latency, notes=notes)
        answer = Thought(id=answer_id, thought=answer_text, timestamp=answered, category=CATEGORY_ASSISTANT,
                         extra=result.metrics(self.origin).to_fields(TurnMetrics.ANSWER_FIELDS), **common)
        # What a repeat gets should this process stop before the turn's last step: no metrics thought yet.
        first = result.model_copy(update={"thought3_id": None, "notes": [*notes, UNFINISHED]})
        # An extractive answer only restates memories already indexed: indexing it would echo them.
        written = store.append_turn(user, answer, request_id=request_id, result_json=first.model_dump_json(),
                                    score=lambda elapsed: feedback_score(elapsed, params.thought),
                                    expected=state.last_answer,
                                    final=not params.next_thought_needed, index_answer=synthesis == "llm",
                                    metrics_id=metrics_id)
        if written.served:  # the same request, served meanwhile (a concurrent repeat)
            yield self._same_request(instance, UiRememberResult.model_validate_json(written.served), params)
            return
        if written.placed:  # after a turn of the chain stored first, this one's times were moved after it
            answered = written.placed[1]
            user = user.model_copy(update={"timestamp": written.placed[0]})
            answer = answer.model_copy(update={"timestamp": answered})
        if params.thought_number not in (None, written.number):
            result.notes.append(f"thought_number {params.thought_number} given; stored as {written.number}, "
                                "this turn's place in the chain")
        # The turn is stored from here on: a failure below is noted in the result, never raised, so that
        # no caller retries a stored turn without its request id.
        try:
            if written.previous:
                result.previous_feedback = store.feedback([written.previous]).get(written.previous)
        except REDIS_DOWN:
            result.notes.append("the previous answer's feedback is stored but could not be read back")
        latency.store_ms = (time.perf_counter() - t_store) * 1000
        t_index = time.perf_counter()
        self._leave_beside(result, user, answer, server_failed=server_failed, postgres_down=memory == "unavailable")
        latency.index_ms = (time.perf_counter() - t_index) * 1000
        latency.total_ms = (time.perf_counter() - t_start) * 1000
        self._complete(result, answer, seq=written.seq + 2, number=written.number, origin=self.origin)
        yield result

    # -- steps ------------------------------------------------------------------------------

    def _profile(self, instance: str, name: str | None, notes: list[str]) -> FusionProfile:
        try:
            return self.wb.profiles.get(name) if name else self.wb.profiles.active(instance)
        except (psycopg.Error, ServiceUnavailable):
            if name and name in PRESET_PROFILES:
                return PRESET_PROFILES[name]
            notes.append(f"profile store unavailable: used {DEFAULT_PROFILE}")
            return PRESET_PROFILES[DEFAULT_PROFILE]

    def _time_window(self, temporal: str | None, now: datetime, notes: list[str]
                     ) -> tuple[datetime | None, datetime | None]:
        if not temporal or not temporal.strip():
            return None, None
        if not has_time_keyword(temporal):
            raise InvalidInput(f"temporal: {temporal!r} names no time; try e.g. 'yesterday', "
                               "'last week', 'in March', 'two days ago' or '3 March 2024'")
        hint = parse_time_hint(temporal, now)
        if hint is None:  # a time in words the parser does not read ("over the holidays"): not a reason to fail
            # The page calls the field "Time hint", the API and MCP `temporal`: the note names both.
            notes.append(f"the time hint (temporal) {temporal!r} could not be read as a time range: retrieval "
                         "is not restricted by time")
            return None, None
        reading = f": {hint.reading}" if hint.reading else ""
        notes.append(f"retrieval restricted to {hint.start:%Y-%m-%d %H:%M} – {hint.end:%Y-%m-%d %H:%M} "
                     f"(the time hint {temporal!r}{reading})")
        return hint.start, hint.end

    def _history(self, instance: str, chain_id: str) -> tuple[list[ChatMessage], int]:
        """The chain's latest messages, read until they fill the history's token budget (so the budget
        alone cuts them), and how many older ones were not read: they count as dropped too."""
        budget = self.wb.settings.chat_history_token_budget

        def filled(read: list[Thought]) -> bool:
            return len(fit_history(_chat(read), budget)[0]) < len(read)

        read, unread = self.wb.thoughts.recent_messages(instance, chain_id, filled, page=HISTORY_PAGE)
        return _chat(read), unread


def _chat(thoughts: list[Thought]) -> list[ChatMessage]:
    return [ChatMessage(type="human" if t.category == CATEGORY_USER else "ai", content=t.thought)
            for t in thoughts]


def _held(profile: FusionProfile, since: datetime | None, until: datetime | None) -> FusionProfile:
    """The profile a turn searches with: within a time window it also retrieves the superseded facts that held
    in it ("Where was I living in February?": the old address, superseded in March; `hybrid_sql.HELD`), each
    marked with its end in its line (`_superseded`); without one, the profile as it is."""
    if since is None and until is None or profile.include_superseded:
        return profile
    return profile.model_copy(update={"include_superseded": True})


def _context_item(m: ScoredMemory, now: datetime) -> ContextItem:
    return ContextItem(id=m.memory.id, kind=m.memory.kind, chain_id=m.memory.chain_id, content=m.memory.content,
                       created_at=m.memory.created_at,
                       age_s=max(0.0, (now - m.memory.created_at).total_seconds()),
                       semantic=m.score.semantic, text=m.score.text, coverage=m.score.coverage,
                       recency=m.score.recency,
                       relevance=m.score.relevance, speaker=m.score.speaker, chain=m.score.chain,
                       combined=m.score.combined, tokens=count_tokens(m.memory.content))
