"""The MCP server: nine memory tools and two resources for an assistant, served over stdio by
`workbench mcp` (desktop and IDE assistants) and over streamable HTTP at `/mcp` by the API server.

A front end like the CLI: a tool parses its arguments into one use case's request, checks the caller's
scope (`uc.authorize`), calls that use case and returns its result. So a tool's input schema is its
request model's own JSON schema (unknown fields refused), its output schema is the result model's, and
a turn made by an assistant is stored, scored and shown exactly like one made on the Chat page.

A refused call is an MCP tool error whose text is the one-line message the CLI prints
(`core.errors.describe`), never a traceback; an unexpected error's details go to the server log only.
"""

from __future__ import annotations

import functools
import inspect
import json
import logging
import typing
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

import anyio.to_thread
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, ConfigDict

from core import usecases as uc
from core.errors import describe

if TYPE_CHECKING:
    from starlette.applications import Starlette

    from core.runtime import Workbench

__all__ = ["MCP_PATH", "build_mcp_server", "streamable_http_app"]

log = logging.getLogger(__name__)

MCP_PATH = "/mcp"

INSTRUCTIONS = """\
Memory Workbench keeps the user's memory: conversations, facts about them, their past work, and an
agent's step memory per task. Call ui_remember with each user message to answer it from memory and
remember the exchange (pass back the chain_id it returns to stay in the same conversation); use
retrieve_memory to recall without storing anything, add_memory to store a fact as it is,
internal_memory to find the user's earlier documents, memory_bank_add / memory_bank_query for a task's
steps, feedback when the user rates an answer, feedback_summary for how the answers were received over a
period, and forget when the user asks to forget something."""


# -- the tools: one use case each; the docstring is the description the model reads ----------------

def ui_remember(wb: Workbench, req: uc.UiRememberParams, caller: uc.Principal) -> uc.UiRememberResult:
    """Answer the user's latest message from their memory, and remember the exchange.

    Call it once per user turn with the user's message as `thought`. Pass the `chain_id` of the previous
    result to continue the same conversation (omit it to start a new one); a follow-up in the same chain
    also scores the previous answer (continued, corrected or abandoned). The memories most related to
    the message are retrieved (hybrid vector and keyword search; `temporal`, e.g. "last week", limits
    them to a time window) and an answer is written from them (by an LLM, or quoted from the memories
    when none is configured). Put the outputs of tools you ran before for this turn in
    `intermediate_steps` (keyed by tool title) so the answer can use them; `include_history: false`
    leaves the conversation so far out of the prompt. A repeated `request_id` returns the first result.

    Returns the `answer`, the `chain_id`, the ids of the three thoughts stored (`thought2_id` is the
    answer: pass it to `feedback`), the memories used (`context`, with their scores), the model and
    tokens, the time of each stage, the feedback the previous answer got, and `notes` (e.g. memory
    unavailable, history cut to fit); the exact prompt only with `include_prompt: true`.
    """
    if req.include_prompt is None:  # this front end's default: an assistant's context is kept small
        req = req.model_copy(update={"include_prompt": False})
    return uc.remember(wb, req, origin=uc.Origin(source="mcp", key=caller.name), caller=caller)


def internal_memory(wb: Workbench, req: uc.PastTaskQuery, caller: uc.Principal) -> uc.InternalMemoryResult:
    """Search the user's past produced texts (documents written in earlier tasks: minutes, reports,
    drafts) for one query, and extract the key points relevant to it.

    Use it when the task at hand could build on something the user produced before. One query per call,
    in precise keywords; call again for another query. Only texts closer than `max_distance` (cosine
    distance) count, at most `n_max` of them.

    To narrow the search, optionally: `task_types` (e.g. ["email"] when the user asks for an email they
    got help with; an unknown type name is refused with the list of the types there are), and
    `date_from` / `date_to` for when the text was produced, each a day ("2025-11-30"), a month
    ("2025-11") or a phrase ("last week"); both days are included.

    Returns `keypoints.references`: per past task its `user_task_execution_pk`, `produced_text_title`,
    `task_icon` and `extracted_informations` (the key points), with the distance and date of the text
    they were read from; `search` holds the texts found and, when none was close enough, the nearest
    distance; `nothing_within` says why nothing was found (no text within the distance, none matching
    the filter, or no texts for that user); `execution_id` identifies this call in the user's tool
    history.
    """
    return uc.internal_memory(wb, req)


def retrieve_memory(wb: Workbench, req: uc.RetrieveReportRequest, caller: uc.Principal) -> uc.RetrievalReport:
    """Recall the user's personal memories related to a query, without storing anything (MemoryScope's
    flow).

    The query's time expression is read (extract_time), memories are retrieved by hybrid search
    (retrieve_memory), re-ranked by meaning (semantic_rank), fused with time and recency (fuse_rerank)
    and printed (print_memory). Use it to recall facts, preferences and events about the user. `params`
    tunes each op (the defaults suit most queries); `profile` picks a fusion profile.

    How many: at most 3 memories by default (`params.retrieve_memory_op.top_k`, 3), fewer when some are
    too weak (below `fuse_rerank_op.fuse_score_threshold`, 0.1), and never more than
    `fuse_rerank_op.output_memory_max_count` (5): for up to 10, send {"retrieve_memory_op": {"top_k": 10},
    "fuse_rerank_op": {"output_memory_max_count": 10}}.

    Returns `answer` (print_memory's text, ready to quote or put in a prompt), `memories` (best first),
    the time the query speaks of, and with `trace: true` every op's input size, output, parameters and
    time. Each memory has its `id`, `type`, `content`, `formatted` line and scores. In [0, 1]:
    `similarity`, the cosine of the memory to the query alone; `semantic`, its cosine to the query widened
    by the query's best keyword matches (the meaning part of the ranking); `text`, its keyword score
    against the best match found; `recency`, exp(-age / tau). Then `retrieval`, the ranking score that
    weighs them (with `speaker` and `chain`); `relevance`, meaning and keywords without recency (what the
    thresholds read); `fused`, the final order's score (`llm_score` when a model scored the memory, else
    `retrieval`, times the memory type's and the time match's ratios).
    """
    return uc.retrieval_report(wb, req)


def add_memory(wb: Workbench, req: uc.AddMemory, caller: uc.Principal) -> uc.AddedMemory:
    """Store a memory about the user as it is; it is searchable at once (ui_remember, retrieve_memory).

    Use it for something worth remembering that came up outside a ui_remember turn. `kind`: observation
    (a fact observed about the user), insight (something inferred from several observations),
    obs_customized (an observation in your own form) or conversation (a line of conversation). Give
    `tags` and `event_time` (when what it says happened) when known. Sending the same `id` again
    replaces the memory, so a retry is safe; the id of a conversation's message or a bank entry is
    refused. `metadata` takes at most 20,000 characters as JSON.

    Returns the memory's `id`, kind, creation time and event time.
    """
    return uc.add_memory(wb, req, caller=caller)


def memory_bank_add(wb: Workbench, req: uc.BankAdd, caller: uc.Principal) -> uc.AddEntryResult:
    """Record one step of an agent's task in a memory bank (the agent's working memory for the task).

    An entry holds the skill used, its thinking, the command it ran and the result, with an importance
    (0-1) and tags. `bank` names the task's bank; it is created on first use. `max_entries` and
    `compression_threshold`, when given, become the bank's settings (left out, the bank keeps its own; 6
    for a new one); when it fills its oldest half is compressed into one summary. Give the entry an `id`
    to make a retry safe: the same entry sent again returns the stored one (`repeated: true`), while
    another entry under that id is refused.

    Returns the entry as stored (with its step number and summary), the compression it caused if any,
    and notes.
    """
    return uc.bank_add(wb, req, caller=caller)


class BankEntries(BaseModel):
    """What memory_bank_query returns: the matching steps and summaries."""

    entries: list[uc.MemoryEntry]


def memory_bank_query(wb: Workbench, req: uc.BankQuery, caller: uc.Principal) -> BankEntries:
    """Read the steps and summaries of a memory bank that match a query: any of `keywords`, any of
    `tags`, a minimum importance, a date range (all optional).

    Use it before the next step of a task, to recall what was already done and found.

    Returns `entries`, most important first, then newest; a summary has skill_name "MemorySummary".
    """
    return BankEntries(entries=uc.bank_query(wb, req))


def forget(wb: Workbench, req: uc.Forget, caller: uc.Principal) -> uc.DeletionReport:
    """Forget something for good, from every store (copies and search index included): one memory
    (`target` "memory", by its id: an add_memory id, a ui_remember thought id (add its `chain_id`: a
    thought just stored may not be indexed yet), a memory id from ui_remember's `context` or
    retrieve_memory's `memories`, or the id of a bank step or summary as memory_bank_add and
    memory_bank_query return it), a whole conversation (`target` "chain", by its chain_id) or a whole
    memory bank (`target` "bank", by its name). Forgetting a bank summary forgets the steps it
    compressed. Forgetting a fact formed from the user's message ("obs-…") takes it out of that message
    too: the message goes when it said nothing else, else its other statements stay (the notes say which).

    Use it when the user asks to forget something. It cannot be undone.

    Forgetting what is not there is not an error, so a retry is safe: it returns the same report with
    every count zero and a note "… nothing was there to forget (already forgotten, or a mistyped id)".

    Returns what was removed, counted per store (`thoughts`, `index_rows`, `bank_rows`, …), and notes.
    """
    return uc.forget(wb, req)


def feedback(wb: Workbench, req: uc.RateAnswer, caller: uc.Principal) -> uc.RatingRecord:
    """Rate an answer of ui_remember: `rating` "up" or "down", with an optional `comment` saying why.

    Use it when the user says an answer was good or wrong (their follow-up messages already give
    implicit feedback; this is the explicit kind). `answer_id` is the `thought2_id` of the ui_remember
    result. Rating the same answer again replaces the earlier rating.

    Returns the stored rating.
    """
    return uc.rate_answer(wb, req)


def feedback_summary(wb: Workbench, req: uc.SummaryRequest, caller: uc.Principal) -> uc.FeedbackReport:
    """How the answers of ui_remember were received over a period: the figures of the Feedback page, the
    same as `workbench feedback summary` and the HTTP API give. Reads only.

    `since` and `until` take a day ("2026-12-04"), a month ("2026-12"), an ISO time or a phrase ("this
    week", "last week", "7 days ago"); a period counts whole ("until": "2026-12-04" includes that day);
    left out: from the first answer, up to now. `by` adds the same figures per day, week (from Monday,
    UTC), model, profile, chain, tag, source (the front end) or key (the API key); by day or week every
    one from `since` to `until` is listed, one without answers with 0 answers (neither given: from the
    first answer's to the last's). `models` and `ratings` ("up", "down", "none"), each one value or a
    list, keep only those answers.

    Returns `summary`: answers, mean feedback score (0-1, from what the user did next) with its 95%
    interval, continue, abandon and correction rates (also without the "ended" answers, given with
    next_thought_needed false), time to the next turn, explicit ratings (rated_up, rated_down,
    rated_up_share), tokens and latency; `groups` with `by`; `imported_left_out`, answers imported from
    another system that are not counted.
    """
    return uc.feedback_summary(wb, req)


@dataclass(frozen=True)
class _Spec:
    fn: Callable[..., BaseModel]
    title: str
    write: bool  # what `uc.authorize` checks: a read-only key may call only the tools that write nothing
    destructive: bool = False
    idempotent: bool = False


TOOLS = (
    _Spec(ui_remember, "Answer from memory and remember the turn", write=True),
    # It records the call in the user's tool history, but stores no memory: a read-only key may search.
    _Spec(internal_memory, "Search the user's past produced texts", write=False),
    _Spec(retrieve_memory, "Recall personal memories (MemoryScope)", write=False, idempotent=True),
    _Spec(add_memory, "Store a memory", write=True),
    _Spec(memory_bank_add, "Add a step to a task's memory bank", write=True),
    _Spec(memory_bank_query, "Query a task's memory bank", write=False, idempotent=True),
    _Spec(forget, "Forget a memory, a conversation or a memory bank", write=True, destructive=True,
          idempotent=True),
    _Spec(feedback, "Rate an answer", write=True, idempotent=True),
    _Spec(feedback_summary, "Summarize the feedback on answers", write=False, idempotent=True),
)

INSTANCE_HELP = ("the memory instance; default: the key's instance when it is allowed only one, else the "
                 "instance this server is configured with")

# What a field means, for the fields whose model gives no description (a model reads these in the
# input schema). Keyed by field name, or by (tool, field) where one name means different things.
FIELD_HELP: dict[str | tuple[str, str], str] = {
    "thought": "the user's latest message",
    "thought_number": "this message's part number in a multi-part thought (1 for an ordinary turn)",
    "total_thoughts": "how many parts the thought has (1 for an ordinary turn)",
    ("ui_remember", "chain_id"): "the conversation: the chain_id of the previous result to continue it; "
                                 "omit it to start a new one",
    "next_thought_needed": "false when no follow-up is expected: the answer is then never counted as "
                           "abandoned",
    "search_type": "hybrid (vector and keyword), vector or text search for the memories",
    "top_k": "at most this many memories go into the prompt",
    "similarity_threshold": "leave out memories whose cosine similarity to the message is below this (0-1)",
    "token_cap": "token budget for the memories in the prompt: the best that fit are kept",
    "style": "default, deep (the larger model) or chronological (memories in time order)",
    ("ui_remember", "tags"): "tags stored with the turn; with filter_tags, only memories carrying one of "
                             "them are retrieved",
    "temporal": "a time window for the memories, in words: 'last week', 'in March', 'yesterday'",
    "profile": "the fusion profile's name; default: the instance's active profile",
    "request_id": "idempotency key: the same id again returns the first call's result, not a new turn",
    "user_id": "whose past produced texts to search",
    "n_max": "at most this many results",
    ("retrieve_memory", "query"): "what to recall, in words",
    "params": "each op's parameters, e.g. {\"fuse_rerank_op\": {\"fuse_time_ratio\": 2}}; what is left "
              "out keeps its default",
    "content": "the memory's text",
    "kind": "observation, insight, obs_customized or conversation",
    ("add_memory", "tags"): "tags to find the memory by",
    "metadata": "any JSON object kept with the memory",
    "bank": "the memory bank's name (one bank per task)",
    "entry": "the step: skill_name, thinking, command, result, summary (generated when empty), importance "
             "(0-1), tags; step_number 0 lets the bank number it",
    "max_entries": "the bank's size; left out, the bank keeps its own (6 for a new bank)",
    "compression_threshold": "how many live entries make the bank compress its oldest half; left out, the "
                             "bank keeps its own (6 for a new bank)",
    "keywords": "steps holding any of these words (ignoring case) match",
    ("memory_bank_query", "tags"): "steps carrying any of these tags match",
    "min_importance": "only steps at least this important (0-1)",
    "max_results": "at most this many steps and summaries",
    "date_from": "only steps recorded at or after this time (ISO 8601; a summary by its steps' times)",
    "date_to": "only steps recorded at or before this time (ISO 8601; a summary by its steps' times)",
    "target": "what to forget: memory, chain or bank",
    "rating": "up or down",
    "comment": "why, in the user's words (optional)",
}


class _Arguments(ArgModelBase):
    """Takes a tool's arguments as they were sent, so the tool validates them with its request model and
    a refusal reads as the CLI's one-line message (the SDK's own message is multi-line and quotes the
    input)."""

    model_config = ConfigDict(extra="allow")

    def model_dump_one_level(self) -> dict[str, Any]:
        return {"arguments": dict(self.model_extra or {})}


def build_mcp_server(wb: Workbench, principal: Callable[[], uc.Principal] = lambda: uc.LOCAL_USER
                     ) -> MCPServer:
    """The MCP server over `wb`: every call is made as `principal()`, read when the call arrives (the
    API server passes one that reads the caller its auth middleware found; stdio serves the local
    user), and a tool's `instance` defaults to the caller's only instance (a key allowed one), else to
    `wb.settings.instance`."""
    server = MCPServer(name="memory-workbench", title="Memory Workbench", instructions=INSTRUCTIONS,
                       version=_version(), log_level="WARNING",
                       tools=[_tool(wb, principal, spec) for spec in TOOLS])
    _add_resources(server, wb, principal)
    return server


def _tool(wb: Workbench, principal: Callable[[], uc.Principal], spec: _Spec) -> Tool:
    name = spec.fn.__name__
    # `Workbench` is only imported for type checkers; the request and result types are what is read.
    hints = typing.get_type_hints(spec.fn, localns={"Workbench": object})
    request: type[BaseModel] = hints["req"]
    result: type[BaseModel] = hints["return"]
    assert "instance" in request.model_fields, f"{name}: the request must name its instance"

    async def call(arguments: dict[str, Any]) -> BaseModel | CallToolResult:
        try:
            caller = principal()  # here, not in the worker thread: it may read the request's context
            sent = _json_objects(request, arguments)
            req = request.model_validate(_with_instance(wb, caller, sent))
            uc.authorize(caller, req.instance, write=spec.write, defaulted=_defaulted(sent))
            # Use cases block (Redis, Postgres, the LLM): a worker thread keeps the event loop serving.
            return await anyio.to_thread.run_sync(functools.partial(spec.fn, wb, req, caller))
        except Exception as e:  # noqa: BLE001 - every failure is a tool error with its one-line message
            return _tool_error(name, e)

    return Tool(fn=call, name=name, title=spec.title, description=inspect.cleandoc(spec.fn.__doc__ or ""),
                parameters=_input_schema(name, request),
                fn_metadata=FuncMetadata(arg_model=_Arguments, output_model=result), is_async=True,
                annotations=ToolAnnotations(title=spec.title, read_only_hint=not spec.write,
                                            destructive_hint=spec.destructive,
                                            idempotent_hint=spec.idempotent, open_world_hint=False))


def _input_schema(tool: str, request: type[BaseModel]) -> dict[str, Any]:
    """The request model's JSON schema, with a description on every field and `instance` optional."""
    schema = request.model_json_schema()
    for field, prop in schema["properties"].items():
        help_text = FIELD_HELP.get((tool, field)) or FIELD_HELP.get(field)
        if help_text and "description" not in prop:
            prop["description"] = help_text
    # Optional in every tool, as the server fills it in: PastTaskQuery's own schema requires it.
    schema["properties"]["instance"] = {"anyOf": [{"type": "string", "pattern": uc.ID_PATTERN.pattern, "minLength": 1,
                                                   "maxLength": 128}, {"type": "null"}],
                                        "default": None, "title": "Instance", "description": INSTANCE_HELP}
    if "instance" in schema.get("required", []):
        schema["required"].remove("instance")
    return schema


def _with_instance(wb: Workbench, caller: uc.Principal, arguments: dict[str, Any]) -> dict[str, Any]:
    """The arguments with the instance a call that names none works on (`Principal.default_instance`: the
    key's only instance, else the server's), filled in before validation, so `req.instance` is the
    instance authorised and worked on."""
    if not _defaulted(arguments):
        return arguments
    return {**arguments, "instance": caller.default_instance(wb.settings.instance)}


def _defaulted(arguments: dict[str, Any]) -> bool:
    return arguments.get("instance") is None


def _json_objects(request: type[BaseModel], arguments: dict[str, Any]) -> dict[str, Any]:
    """Objects and lists sent as JSON text are read as JSON (some desktop clients send nested arguments
    so); a text field keeps its text, and a value that is not an object or list stays as it was."""
    out = dict(arguments)
    for key, value in arguments.items():
        field = request.model_fields.get(key)
        if field is None or field.annotation is str or not isinstance(value, str):
            continue
        try:
            parsed = json.loads(value)
        except (ValueError, RecursionError):
            continue
        if isinstance(parsed, dict | list):
            out[key] = parsed
    return out


def _tool_error(tool: str, e: Exception) -> CallToolResult:
    info = describe(e, "api")
    if info.code == "internal":  # a bug: its details go to the server log, never to the caller
        log.error("MCP tool %s failed", tool, exc_info=e)
    return CallToolResult(content=[TextContent(type="text", text=info.message)], is_error=True)


# -- resources: read-only views, by URI ------------------------------------------------------------

CHAIN_URI = "workbench://chains/{chain_id}{?instance}"
BANK_URI = "workbench://banks/{bank}{?instance}"


def _add_resources(server: MCPServer, wb: Workbench, principal: Callable[[], uc.Principal]) -> None:
    async def read(request: type[BaseModel], use_case: Callable[..., BaseModel], **arguments: Any) -> str:
        try:
            caller = principal()
            req = request.model_validate(_with_instance(wb, caller, arguments))
            uc.authorize(caller, req.instance, write=False, defaulted=_defaulted(arguments))
            result = await anyio.to_thread.run_sync(functools.partial(use_case, wb, req))
        except Exception as e:  # every failure is a resource error with its one-line message
            info = describe(e, "api")
            if info.code == "internal":
                log.error("MCP resource %s failed", request.__name__, exc_info=e)
            raise (ResourceNotFoundError if info.code == "not_found" else ResourceError)(info.message) \
                from None
        return result.model_dump_json(indent=2)

    @server.resource(CHAIN_URI, name="conversation", title="Conversation transcript",
                     mime_type="application/json",
                     description="A conversation chain's transcript: its messages in order, each answer "
                                 "with its feedback and the metrics of its turn (the memories used, the "
                                 "prompt, the time of each stage). `instance` defaults to the key's instance when "
                                 "it has only one, else the server's.")
    async def conversation(chain_id: str, instance: str | None = None) -> str:
        return await read(uc.ConversationRef, uc.conversation, chain_id=chain_id, instance=instance)

    @server.resource(BANK_URI, name="memory_bank", title="Memory bank summaries",
                     mime_type="application/json",
                     description="A memory bank's state: its counts and settings, every entry (with the "
                                 "summary that compressed it), the summaries and the compression events. "
                                 "`instance` defaults to the key's instance when it has only one, else the "
                                 "server's.")
    async def memory_bank(bank: str, instance: str | None = None) -> str:
        return await read(uc.BankRef, uc.bank_snapshot, bank=bank, instance=instance)


def streamable_http_app(server: MCPServer, *, host: str = "127.0.0.1") -> Starlette:
    """The server over streamable HTTP: an ASGI app whose one route is `/mcp` (MCP_PATH), stateless
    (every request stands alone, so any replica of the API can serve any request).

    To serve it inside the API (FastAPI or Starlette):
    - It must be reached at exactly `/mcp`: a route for that path whose endpoint is this app (or an ASGI
      wrapper around it), since a Route passes the path on unchanged; or a mount at the root, after the
      API's own routes (`api.mount("/", app)`). Not `api.mount("/mcp", app)`: that answers at
      `/mcp/mcp`, and a Mount never matches its own path without a trailing slash (a client posting
      to `/mcp` would get a redirect).
    - The API's lifespan must run the session manager: `async with server.session_manager.run(): yield`.
      A mounted app's own lifespan never runs, and without the manager every request fails ("Task
      group is not initialized"). It runs once per server: build a new server for a new app.
    - The caller is set before the request reaches the app (the auth middleware sets a contextvar that
      the `principal` given to `build_mcp_server` reads): the SDK runs each tool call in the context
      of the HTTP request that carried it, so the tool sees the value the middleware set.
    `host`: the address the API listens on; on a loopback one, requests whose Host or Origin header is
    not loopback are refused (DNS-rebinding protection, the SDK's default).
    """
    return server.streamable_http_app(streamable_http_path=MCP_PATH, stateless_http=True, host=host)


def _version() -> str:
    try:
        return version("memory-workbench")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "0"
