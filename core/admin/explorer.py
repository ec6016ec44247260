"""What the Memory explorer page reads: instances, pages of chains, a chain's thoughts (and its JSON
export), and search across everything stored, each hit with the chain or bank it came from."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, time, timedelta
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from core.bank.bank import list_banks
from core.bank.index_ids import BANK_KINDS
from core.errors import NotFound
from core.ids import Id, SHARED_INSTANCE, validate_id
from core.retrieval.hybrid import SearchRequest, hybrid_search
from core.conversation.thoughts import ChainSummary, FeedbackRecord, Thought

if TYPE_CHECKING:
    from core.runtime import Workbench

Order = Literal["newest", "oldest"]
SearchMode = Literal["hybrid", "vector", "text"]


class InstanceRow(BaseModel):
    instance: str
    chains: int
    indexed: int
    banks: int


class ChainPage(BaseModel):
    instance: str
    total: int
    page: int
    pages: int
    page_size: int
    order: Order
    chains: list[ChainSummary]


class ChainDetail(BaseModel):
    instance: str
    chain_id: str
    title: str
    thoughts: list[Thought]
    feedback: dict[str, FeedbackRecord]
    indexed: int  # rows of this chain in the memory index


class ExplorerSearch(BaseModel):
    """A search of the explorer page. Dates are whole days, both included."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=10_000)
    instance: Id
    mode: SearchMode = "hybrid"
    kinds: list[str] = []
    chain_id: Id | None = None
    tags: list[str] = []
    date_from: date | None = None
    date_to: date | None = None
    top_k: int = Field(20, ge=1, le=200)

    @field_validator("query")
    @classmethod
    def _not_blank(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("type a word or a phrase to search for")
        return v.strip()

    @field_validator("chain_id", mode="before")
    @classmethod
    def _blank_chain_is_none(cls, v: object) -> object:  # the page's text box sends "" for "any chain"
        return (v.strip() or None) if isinstance(v, str) else v


class Hit(BaseModel):
    id: str
    instance: str
    kind: str
    content: str
    created_at: datetime
    chain_id: str | None
    chain_title: str | None  # None when the chain no longer exists in the thought store
    bank: str | None
    shared: bool  # in the shared instance, searched beside every other: deleted from there, not here
    tags: list[str]
    score: float
    semantic: float
    text: float


class SearchOutcome(BaseModel):
    hits: list[Hit]
    candidates: int
    search_ms: float


def instances_overview(wb: Workbench) -> list[InstanceRow]:
    names = set(wb.thoughts.instances()) | set(wb.index.instances())
    return [InstanceRow(instance=n, chains=wb.thoughts.chain_count(n), indexed=wb.index.count(n),
                        banks=len(list_banks(wb, n))) for n in sorted(names)]


def list_chains(wb: Workbench, instance: str, *, page: int = 1, page_size: int = 20,
                order: Order = "newest") -> ChainPage:
    """One page of the instance's chains by last activity (newest or oldest first), without SCAN."""
    validate_id(instance, "instance")
    page_size = max(1, min(page_size, 200))
    total = wb.thoughts.chain_count(instance)
    pages = max(1, -(-total // page_size))
    page = max(1, min(page, pages))
    offset = (page - 1) * page_size
    if order == "newest":
        chains = wb.thoughts.chains(instance, offset=offset, limit=page_size)
    else:  # the same ranking read from its other end
        end = total - offset
        start = max(0, end - page_size)
        found = wb.thoughts.chains(instance, offset=start, limit=end - start) if end > 0 else []
        chains = list(reversed(found))
    return ChainPage(instance=instance, total=total, page=page, pages=pages, page_size=page_size, order=order,
                     chains=chains)


def chain_detail(wb: Workbench, instance: str, chain_id: str) -> ChainDetail:
    validate_id(instance, "instance")
    validate_id(chain_id, "chain_id")
    store = wb.thoughts
    thoughts = store.chain_thoughts(instance, chain_id)
    if not thoughts:
        raise NotFound(f"no chain {chain_id!r} in instance {instance!r} (it may have been deleted)")
    with wb.pool().connection() as conn:
        indexed = conn.execute("SELECT count(*) FROM memory WHERE instance = %s AND chain_id = %s",
                               (instance, chain_id)).fetchone()[0]
    title = store.chain_meta(instance, chain_id).get("title", "")
    return ChainDetail(instance=instance, chain_id=chain_id, title=title,
                       thoughts=thoughts, feedback=store.feedback([t.id for t in thoughts]), indexed=indexed)


def export_chain(wb: Workbench, instance: str, chain_id: str) -> str:
    """The chain as a JSON document: its thoughts in order, with the feedback on each answer."""
    d = chain_detail(wb, instance, chain_id)
    doc = {"format": "memory-workbench/chain@1", "exported_at": datetime.now(UTC).isoformat(),
           "instance": instance, "chain_id": chain_id, "title": d.title,
           "thoughts": [json.loads(t.model_dump_json()) for t in d.thoughts],
           "feedback": {k: json.loads(v.model_dump_json()) for k, v in d.feedback.items()}}
    return json.dumps(doc, indent=2, ensure_ascii=False)


def search_memory(wb: Workbench, req: ExplorerSearch) -> SearchOutcome:
    since = datetime.combine(req.date_from, time.min, UTC) if req.date_from else None
    until = datetime.combine(req.date_to + timedelta(days=1), time.min, UTC) if req.date_to else None
    found = hybrid_search(wb.pool(), wb.embedder, SearchRequest(
        query=req.query, instance=req.instance, top_k=req.top_k, pool_size=max(50, 2 * req.top_k),
        search_type=req.mode, kinds=req.kinds or None, chain_id=req.chain_id, tags=req.tags or None,
        since=since, until=until))
    chains = {(m.memory.instance, m.memory.chain_id) for m in found.results if m.memory.chain_id}
    titles = _chain_titles(wb, chains)
    hits = [Hit(id=m.memory.id, instance=m.memory.instance, kind=m.memory.kind, content=m.memory.content,
                created_at=m.memory.created_at, chain_id=m.memory.chain_id,
                chain_title=titles.get((m.memory.instance, m.memory.chain_id)),
                bank=m.memory.metadata.get("bank") if m.memory.kind in BANK_KINDS else None,
                shared=m.memory.instance == SHARED_INSTANCE, tags=m.memory.tags, score=m.score.combined,
                semantic=m.score.semantic, text=m.score.text)
            for m in found.results]
    return SearchOutcome(hits=hits, candidates=found.candidates, search_ms=found.embed_ms + found.search_ms)


def _chain_titles(wb: Workbench, chains: set[tuple[str, str]]) -> dict[tuple[str, str], str]:
    out = {}
    for instance, chain in chains:
        meta = wb.thoughts.chain_meta(instance, chain)
        if meta:
            out[(instance, chain)] = meta.get("title", "")
    return out
