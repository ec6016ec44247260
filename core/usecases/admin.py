"""Administration: what is stored; chains and memories (browse, search, export, delete); services;
re-embedding; the demo data."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from datetime import datetime
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from core import demo
from core.admin.deletion import DeletionReport, delete_chain, delete_memory
from core.admin.explorer import (BROWSE_EXPORT_MAX, ChainDetail, ChainPage, ExplorerSearch, Hit, InstanceRow,
                                 MemoryBrowse, MemoryPage, browse_export, browse_memories, chain_detail,
                                 export_chain, hits_jsonl, hits_of, instances_overview, list_chains,
                                 recent_memories, search_memory)
from core.admin.explorer import SearchOutcome as Found
from core.admin.overview import Overview, memories_by_model, not_in_vector_leg, overview
from core.admin.overview import instance_names as user_instances
from core.bank.index_ids import entry_index_id, summary_index_id
from core.config import settings_file_in_use
from core.conversation.indexing import sync_before_search
from core.conversation.thoughts import FeedbackRecord, Thought
from core.ids import ID_PATTERN, SHARED_INSTANCE, Id
from core.limits import TITLE_FILTER_MAX_CHARS
from core.services import RedisRepair, ServicesStopped, ServiceStatus
from core.usecases.base import InstanceRequest, Progress

if TYPE_CHECKING:
    from core.runtime import Workbench


def stored_counts(wb: Workbench, req: InstanceRequest) -> Overview:
    """The overview tiles (conversations, messages, indexed memories, past tasks, answers with feedback,
    instances) and the indexed memories per kind and per embedding model."""
    return overview(wb, req.instance_in(wb))


def instances(wb: Workbench) -> list[InstanceRow]:
    """Every instance with conversations or indexed memory, with its counts."""
    return instances_overview(wb)


INSTANCES_WAIT_S = 1.0  # how long the list of instances waits for Postgres before it goes without it
_INSTANCE_NAMES = ThreadPoolExecutor(max_workers=2, thread_name_prefix="instance-names")


def instance_names(wb: Workbench) -> list[str]:
    """The instances a user can work on (`core.admin.overview.instance_names`). Postgres's part is waited for
    INSTANCES_WAIT_S at most: while Postgres hangs, the instances Redis holds chains of, rather than every
    page's sidebar waiting 5 s for it before the page is drawn (the Chains view, all in Redis, waited so).
    A Postgres down still fails at once, with its message; the sidebar's status says a hung one."""
    asked = _INSTANCE_NAMES.submit(user_instances, wb)
    try:
        return asked.result(timeout=INSTANCES_WAIT_S)
    except FutureTimeout:
        return sorted(set(wb.thoughts.instances()) - {SHARED_INSTANCE})


class ServicesReport(BaseModel):
    instance: str
    data_dir: str = Field(description="where the embedded servers keep their data (DATA_DIR)")
    services: list[ServiceStatus]
    embedder: str
    llm: str
    settings_file: str


def services(wb: Workbench) -> ServicesReport:
    """Each service's state (starting the embedded ones), with what to do when one is down, and which
    secrets file the settings were read from."""
    return ServicesReport(instance=wb.settings.instance, data_dir=str(wb.settings.data_dir),
                          services=wb.services.status(),
                          embedder=wb.embedder.name, llm=wb.settings.llm_provider,
                          settings_file=settings_file_in_use())


READY_WITHIN_S = 3.0  # what a readiness probe waits for the services: a load balancer's own times out soon after
_readiness_checks: dict[int, Future[list[ServiceStatus]]] = {}  # one in flight per Workbench (by id)
_readiness_lock = threading.Lock()


class ServiceReadiness(BaseModel):
    name: str
    reachable: bool | None = Field(description="null: its status did not come within the readiness bound")


class Readiness(BaseModel):
    """Whether the services answer, for a probe: names and states only (no address, no version)."""

    ready: bool
    services: list[ServiceReadiness]
    detail: str = Field("", description="when not ready: which service, and what to check")


def readiness(wb: Workbench, within_s: float = READY_WITHIN_S) -> Readiness:
    """Redis and Postgres reachable, known within `within_s`. The services' status waits for a hung
    server's timeouts (POSTGRES_STATEMENT_TIMEOUT_S and more, 30 s with the defaults) the first time it
    asks: a probe waited that long, and a load balancer gives up long before. Here the status is read in a
    thread of its own, one at a time per Workbench, and a probe that got no answer within `within_s` is
    told so (not ready, the services' states unknown); the next probes read the states once it answers."""
    with _readiness_lock:
        check = _readiness_checks.get(id(wb))
        if check is None or check.done():
            check = _readiness_checks[id(wb)] = Future()
            threading.Thread(target=_read_status, args=(wb, check), name="readiness", daemon=True).start()
    try:
        statuses = check.result(timeout=within_s)
    except FutureTimeout:
        return Readiness(ready=False, services=[ServiceReadiness(name=n, reachable=None) for n in ("Redis", "Postgres")],
                         detail=f"Redis and Postgres did not both answer within {within_s:g} s (one hung or "
                                "overloaded); see `workbench services` on the server")
    services = [ServiceReadiness(name=s.name, reachable=s.reachable) for s in statuses]
    down = [s.name for s in services if not s.reachable]
    return Readiness(ready=not down, services=services,
                     detail=f"{', '.join(down)} unreachable; see `workbench services` on the server" if down else "")


def _read_status(wb: Workbench, check: Future[list[ServiceStatus]]) -> None:
    try:
        check.set_result(wb.services.status())
    except BaseException as e:  # noqa: BLE001 - handed to the probe, which reports it
        check.set_exception(e)
    finally:
        with _readiness_lock:
            if _readiness_checks.get(id(wb)) is check:
                del _readiness_checks[id(wb)]


def stop_services(wb: Workbench) -> ServicesStopped:
    """Stop the data directory's embedded Redis (SHUTDOWN SAVE) and Postgres (fast shutdown), whoever
    started them (the result's `still_used_by` names the processes that used them); external services are
    left alone. `wb` is closed with them (a use case given it raises `WorkbenchClosed`, where its closed pools
    failed with the driver's error): make a new Workbench to go on, which starts them again. With both
    services external nothing stops, and `wb` stays open."""
    stopped = wb.services.stop_embedded()
    if wb.settings.redis_embedded or wb.settings.postgres_embedded:  # its connections were closed
        wb.close()
    return stopped


def service_statuses(wb: Workbench) -> list[ServiceStatus]:
    """Each service's state (starting the embedded ones) without loading a model, so a front end can show
    which service is down even when the embedder cannot load."""
    return wb.services.status()


def repair_redis(wb: Workbench) -> RedisRepair:
    """Make the embedded Redis start again after its append-only file was damaged (a crash mid-write, a
    full disk): back the file up, then cut it at its first damaged command. What follows that point is
    lost; the backup keeps it."""
    return wb.services.repair_redis()


def embedder_name(wb: Workbench) -> str:
    """The active embedding model, stored beside every vector (loading it: fails when it cannot load)."""
    return wb.embedder.name


class ChainList(InstanceRequest):
    page: int = Field(1, ge=1)
    page_size: int = Field(20, ge=1, le=200)
    order: Literal["newest", "oldest"] = "newest"
    title: str | None = Field(None, max_length=TITLE_FILTER_MAX_CHARS,
                              description="only chains whose title contains this, ignoring case (blank: all)")

    @field_validator("title")
    @classmethod
    def _blank_title_is_none(cls, v: str | None) -> str | None:  # a cleared filter box sends ""
        return (v.strip() or None) if v is not None else None


def chains(wb: Workbench, req: ChainList) -> ChainPage:
    """One page of the instance's chains by last activity; with `title`, of the chains whose title contains
    it (case-insensitive): the filter reads every chain's title (`ThoughtStore.chains_titled`: 10–30 ms at
    10,000 chains)."""
    return list_chains(wb, req.instance_in(wb), page=req.page, page_size=req.page_size, order=req.order,
                       title=req.title)


class ChainRef(InstanceRequest):
    chain_id: Id


def chain(wb: Workbench, req: ChainRef) -> ChainDetail:
    """A chain's thoughts in order, with the feedback on each answer."""
    return chain_detail(wb, req.instance_in(wb), req.chain_id)


class ChainExport(BaseModel):
    instance: str
    chain_id: str
    document: str = Field(description="JSON, format memory-workbench/chain@1 (`ChainDocument`)")


class ChainDocument(BaseModel):
    """A chain's export document, as `workbench chains export` writes it and the HTTP export sends it:
    `workbench import` reads it back as the workbench-chain format. Its schema, for the OpenAPI page
    (`core.admin.explorer.export_chain` writes the document)."""

    model_config = ConfigDict(extra="forbid")

    format: Literal["memory-workbench/chain@1"]
    exported_at: datetime
    instance: str
    chain_id: str
    title: str
    thoughts: list[Thought] = Field(description="every thought of the chain in order: user, assistant and "
                                                "metrics thoughts")
    feedback: dict[str, FeedbackRecord] = Field(description="the feedback on each answer, by its thought id")


def chain_export(wb: Workbench, req: ChainRef) -> ChainExport:
    instance = req.instance_in(wb)
    return ChainExport(instance=instance, chain_id=req.chain_id,
                       document=export_chain(wb, instance, req.chain_id))


def chain_delete(wb: Workbench, req: ChainRef) -> DeletionReport:
    """The chain from every store: thoughts, feedback, queued index writes, served requests, index rows,
    the copies other records hold of its text, and the files on disk (docs/ARCHITECTURE.md, "Deleting")."""
    return delete_chain(wb, req.instance_in(wb), req.chain_id)


class MemoryRef(InstanceRequest):
    memory_id: Id
    chain_id: Id | None = Field(None, description="the thought's chain, when it is not indexed yet")


def memory_delete(wb: Workbench, req: MemoryRef) -> DeletionReport:
    """One memory from every store, its copies elsewhere included (a bank summary takes the entries it
    compressed with it)."""
    return delete_memory(wb, req.instance_in(wb), req.memory_id, chain_id=req.chain_id)


class SearchOutcome(Found):
    named: str | None = Field(None, description="the query is this memory's id: it is the first hit, whatever "
                                                "it says and whatever the filters (its scores are None when the "
                                                "search itself did not find it)")


def memory_search(wb: Workbench, req: ExplorerSearch) -> SearchOutcome:
    """Hybrid, semantic or full-text search of everything stored; each hit names its chain or bank. A query
    that is a memory's id (a thought's, an added memory's, an observation's, a bank entry's or summary's as
    the bank gave it; in the instance or the shared one) finds that memory first: the Chat page shows the
    ids of the memories a turn used, to be found here. At most two primary-key lookups, only for a query
    shaped like an id. First, the thoughts still queued for the memory index are indexed
    (`sync_before_search`)."""
    sync_before_search(wb)
    found = SearchOutcome(**dict(search_memory(wb, req)))
    named = _memory_named(wb, req.instance, req.query)
    if named is None:
        return found
    same = next((h for h in found.hits if (h.instance, h.id) == (named.instance, named.id)), named)
    others = [h for h in found.hits if h is not same]
    return found.model_copy(update={"hits": [same, *others][: req.top_k], "named": named.id})


def _memory_named(wb: Workbench, instance: str, query: str) -> Hit | None:
    if not ID_PATTERN.fullmatch(query):
        return None
    ids = [query, entry_index_id(query), summary_index_id(query)]  # a bank item by the id the bank gave it
    for where in dict.fromkeys((instance, SHARED_INSTANCE)):
        if rows := sorted(wb.index.get(where, ids), key=lambda row: ids.index(row.id)):
            return hits_of(wb, rows[:1])[0]
    return None


def memory_browse(wb: Workbench, req: MemoryBrowse) -> MemoryPage:
    """The instance's memories without a query, narrowed by kind, chain, tags and days, newest or oldest
    first, a page at a time with the count of all of them (the explorer's listing); with `req.shown`, the
    page shown before, the next and the previous page are read from its edge (`browse_memories`). First, the
    thoughts still queued for the memory index are indexed (`sync_before_search`)."""
    sync_before_search(wb)
    return browse_memories(wb, req)


class MemoryExport(BaseModel):
    matched: int = Field(description="memories the selection holds")
    exported: int = Field(description=f"memories written: all of them, or the first {BROWSE_EXPORT_MAX:,}")
    document: str = Field(description="JSON lines, one memory a line (`core.admin.explorer.hits_jsonl`)")


def memory_export(wb: Workbench, req: MemoryBrowse) -> MemoryExport:
    """Every memory a listing's filters keep, all pages, as JSON lines (the explorer's "Download")."""
    matched, document = browse_export(wb, req)
    return MemoryExport(matched=matched, exported=document.count("\n"), document=document)


def hits_export(hits: list[Hit]) -> MemoryExport:
    """A search's hits as JSON lines, as `memory_export` writes a listing."""
    return MemoryExport(matched=len(hits), exported=len(hits), document=hits_jsonl(hits))


class RecentRequest(InstanceRequest):
    limit: int = Field(20, ge=1, le=200)


def recent(wb: Workbench, req: RecentRequest) -> list[Hit]:
    """The instance's newest memories, newest first (the explorer before any search), the thoughts still
    queued for the memory index among them (`sync_before_search`)."""
    sync_before_search(wb)
    return recent_memories(wb, req.instance_in(wb), req.limit)


class ReembedResult(BaseModel):
    instance: str
    model: str
    reembedded: int


def reembed(wb: Workbench, req: InstanceRequest, *, progress: Progress | None = None) -> ReembedResult:
    """Give every memory of the instance made by another embedding model a vector of the active one."""
    instance = req.instance_in(wb)
    stale = not_in_vector_leg(memories_by_model(wb, instance), wb.embedder.name)
    done = wb.index.reembed(instance, progress=(lambda n: progress(n, stale, "re-embedding"))
                            if progress else None)
    return ReembedResult(instance=instance, model=wb.embedder.name, reembedded=done)


class DemoLoad(BaseModel):
    first_run: bool = Field(False, description="only on a fresh embedded install whose demo is not loaded "
                                               "yet (what `make run` asks for)")


class DemoOutcome(BaseModel):
    loaded: bool
    skipped: Literal["external_services", "already_loaded"] | None = Field(
        None, description="why a first run loaded nothing: a front end tells the user about external "
                          "services, and stays quiet on every later run")
    reason: str | None = None


def demo_load(wb: Workbench, req: DemoLoad, *, say: Callable[[str], None] = print) -> DemoOutcome:
    """Realistic demo data made through the product's own flows (turns, feedback, past tasks, banks)."""
    if req.first_run:
        if not (wb.settings.redis_embedded and wb.settings.postgres_embedded):
            return DemoOutcome(loaded=False, skipped="external_services",
                               reason="external services configured; not loading demo data "
                                      "(run 'workbench demo load' to load it there)")
        if demo.is_loaded(wb):
            return DemoOutcome(loaded=False, skipped="already_loaded", reason="already loaded")
    demo.load(wb, say)
    return DemoOutcome(loaded=True)


def demo_reset(wb: Workbench, *, say: Callable[[str], None] = print) -> None:
    """Remove what the demo made, and only that: a user's own chains, banks, memories and past tasks
    named like the demo's stay."""
    demo.reset(wb, say)
