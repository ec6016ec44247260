"""What the Memory explorer page reads: instances, pages of chains, a chain's thoughts (and its JSON
export), and search across everything stored, each hit with the chain or bank it came from and, when a
later correction superseded the fact it states, when and by what."""

from __future__ import annotations

import json
import logging
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from datetime import UTC, date, datetime, time, timedelta
from typing import TYPE_CHECKING, Literal

import psycopg
import redis
from pydantic import BaseModel, ConfigDict, Field, field_validator

from core.bank.index_ids import BANK_KINDS
from core.conversation.keys import chain_meta_key, chains_key
from core.conversation.thoughts import ChainSummary, FeedbackRecord, Thought
from core.errors import NotFound, ServiceUnavailable, describe, outage
from core.formation.supersede import UPDATE, own_words, superseded_at
from core.ids import SHARED_INSTANCE, Id, validate_id
from core.index.records import ROW_COLUMNS, row_from_tuple
from core.limits import QUERY_MAX_CHARS
from core.models import AS_STORED, FusionProfile, MemoryKind, MemoryRow
from core.past_tasks.models import default_max_distance
from core.retrieval.hybrid import SearchRequest, hybrid_search
from core.tuning.datasets import is_evaluation_instance

if TYPE_CHECKING:
    from core.runtime import Workbench

log = logging.getLogger(__name__)
Order = Literal["newest", "oldest"]
SearchMode = Literal["hybrid", "vector", "text"]


class InstanceRow(BaseModel):
    instance: str
    chains: int
    indexed: int
    banks: int
    evaluation: bool = Field(False, description="made by an evaluation to hold a labelled set's conversation "
                                                "(`eval-locomo-…`); instance pickers leave it out")


class ChainPage(BaseModel):
    instance: str
    total: int
    page: int
    pages: int
    page_size: int
    order: Order
    title: str | None = Field(None, description="the title filter the page was listed with: only chains whose "
                                                "title contains it (case-insensitive) are counted and listed")
    chains: list[ChainSummary]


class ChainDetail(BaseModel):
    instance: str
    chain_id: str
    title: str
    thoughts: list[Thought]
    feedback: dict[str, FeedbackRecord]
    indexed: int | None = Field(description="rows of this chain in the memory index (None: Postgres did not "
                                            "answer; `index_note` says so)")
    index_note: str | None = Field(None, description="why `indexed` is not counted, and what to do")


class ExplorerSearch(BaseModel):
    """A search of the explorer page. Dates are whole days, both included."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=QUERY_MAX_CHARS)
    instance: Id
    mode: SearchMode = "hybrid"
    kinds: list[MemoryKind] = Field([], description="only memories of these kinds; none: every kind")
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


class SupersededStatement(BaseModel):
    """One statement of a message that a later correction superseded."""

    statement: str
    superseded_at: datetime
    superseded_by: str | None
    superseded_by_content: str | None
    superseded_by_update: bool = False


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
    # The score and every part of it (`core.retrieval.fusion.fuse`): None for a memory listed without a search
    # (`recent_memories`). speaker and chain are 0 in a search by one leg (vector or text), where they play no
    # part; `SearchOutcome.fusion` says how they add up.
    score: float | None = None
    semantic: float | None = None
    text: float | None = None
    recency: float | None = None
    speaker: float | None = None
    chain: float | None = Field(None, description="the best own score among the hits' candidates of its chain")
    superseded_at: datetime | None = Field(
        None, description="when a later correction superseded the fact this memory states (for a user "
                          "message: the fact of its observation); None: current")
    superseded_by: str | None = Field(None, description="the id of the correction's observation that "
                                                        "superseded it")
    superseded_by_content: str | None = Field(None, description="what that correction says (None when it is "
                                                                "no longer stored)")
    superseded_by_update: bool = Field(False, description="what superseded it is a statement that narrates a "
                                                          "change (\"We just moved to Denver\"), not a correction")
    superseded_statements: list[SupersededStatement] = Field(
        [], description="a user message telling several statements, some of which later corrections "
                        "superseded while the others stand: those statements (the message is not marked)")


class SearchOutcome(BaseModel):
    hits: list[Hit]
    candidates: int
    search_ms: float
    fusion: FusionProfile = Field(AS_STORED, description="the weights the hits were scored with")
    speaker_and_chain: bool = Field(True, description="the speaker and chain parts counted (a hybrid search): "
                                                      "score = (own + CHAIN_WEIGHT·chain) / (1 + CHAIN_WEIGHT), "
                                                      "own = the fusion + SPEAKER_WEIGHT·speaker; else score = "
                                                      "the fusion")
    left_out: int = Field(0, description="results that did not match (see `search_memory`), not shown")
    min_similarity: float | None = Field(None, description="the cosine a hit needs to count as semantically "
                                                           "close; None in full-text mode")
    capped: bool = Field(False, description="the search stopped at `top_k` results: more memories may match "
                                            "(ask for more, or narrow the search)")


def instances_overview(wb: Workbench) -> list[InstanceRow]:
    """Every instance's counts in a few round trips: one count of chains, memories and banks per instance
    took 436 ms among 800 instances (2,400 round trips); now 120 ms, most of it Postgres planning the scan
    of each partition (about 0.1 ms each)."""
    indexed = wb.index.instances()
    names = sorted(set(wb.thoughts.instances()) | set(indexed))
    p = wb.redis().pipeline(transaction=False)
    for n in names:
        p.zcard(chains_key(n))
    chains = dict(zip(names, p.execute(), strict=True))
    memories, banks = _instance_counts(wb, indexed), _bank_counts(wb, names)
    return [InstanceRow(instance=n, chains=chains[n], indexed=memories.get(n, 0), banks=banks.get(n, 0),
                        evaluation=is_evaluation_instance(n)) for n in names]


COUNTED_AT_ONCE = 50  # instances a statement counts the memories of: it locks their partitions, ~10 each


def _instance_counts(wb: Workbench, instances: list[str]) -> dict[str, int]:
    """{instance: memories}, a statement per COUNTED_AT_ONCE instances, each planned for its values (never
    prepared: at its sixth run a prepared statement is planned generically once, over every partition), so
    it reads and locks those instances' partitions only (all of them at once would hold 8,000 locks among
    800 instances, a third of the server's lock table)."""
    counts: dict[str, int] = {}
    with wb.pool().connection() as conn:
        for start in range(0, len(instances), COUNTED_AT_ONCE):
            counts.update(conn.execute("SELECT instance, count(*) FROM memory WHERE instance = ANY(%s) "
                                       "GROUP BY instance", (instances[start:start + COUNTED_AT_ONCE],),
                                       prepare=False).fetchall())
    return counts


def _bank_counts(wb: Workbench, instances: list[str]) -> dict[str, int]:
    with wb.pool().connection() as conn:
        return dict(conn.execute("SELECT instance, count(*) FROM bank WHERE instance = ANY(%s) GROUP BY instance",
                                 (instances,)).fetchall())


def list_chains(wb: Workbench, instance: str, *, page: int = 1, page_size: int = 20,
                order: Order = "newest", title: str | None = None) -> ChainPage:
    """One page of the instance's chains by last activity (newest or oldest first), without SCAN; with
    `title`, of those whose title contains it, ignoring case (`ThoughtStore.chains_titled`: it reads every
    chain's title, so `total` and `pages` count the matches).

    A page past the last one is empty and keeps its number, so a script that pages until it gets nothing
    stops (it was the last page again, and such a loop never ended).
    """
    validate_id(instance, "instance")
    page_size = max(1, min(page_size, 200))
    page = max(1, page)
    offset = (page - 1) * page_size
    if title:
        total, chains = wb.thoughts.chains_titled(instance, title, offset=offset, limit=page_size,
                                                  oldest_first=order == "oldest")
        return ChainPage(instance=instance, total=total, page=page, pages=max(1, -(-total // page_size)),
                         page_size=page_size, order=order, title=title, chains=chains)
    total = wb.thoughts.chain_count(instance)
    pages = max(1, -(-total // page_size))
    if offset >= total:
        chains = []
    elif order == "newest":
        chains = wb.thoughts.chains(instance, offset=offset, limit=page_size)
    else:  # the same ranking read from its other end
        end = total - offset
        start = max(0, end - page_size)
        chains = list(reversed(wb.thoughts.chains(instance, offset=start, limit=end - start)))
    return ChainPage(instance=instance, total=total, page=page, pages=pages, page_size=page_size, order=order,
                     chains=chains)


COUNT_WAIT_S = 1.0  # how long an open chain waits for its count of index rows before it is shown without
_COUNTS = ThreadPoolExecutor(max_workers=2, thread_name_prefix="chain-rows")


def chain_detail(wb: Workbench, instance: str, chain_id: str) -> ChainDetail:
    """The chain as Redis holds it, and its rows in the memory index counted in Postgres, waited for
    COUNT_WAIT_S at most. Postgres down or hung leaves the count out (`index_note` says why and what to do),
    not the chain: its thoughts were refused along with the count, and with Postgres hung only once its time
    limit ran out."""
    d = _stored_chain(wb, instance, chain_id)
    try:
        indexed = _COUNTS.submit(_index_rows, wb, instance, chain_id).result(timeout=COUNT_WAIT_S)
    except (psycopg.OperationalError, ServiceUnavailable, FutureTimeout) as e:
        why = (f"Postgres did not answer within {COUNT_WAIT_S:g} s" if isinstance(e, FutureTimeout)
               else outage(e, "Postgres"))
        return d.model_copy(update={"index_note": f"Its rows in the memory index were not counted: {why}. "
                                                  "Check that Postgres runs (`workbench services`, or the "
                                                  "sidebar), then open the chain again."})
    return d.model_copy(update={"indexed": indexed})


def _index_rows(wb: Workbench, instance: str, chain_id: str) -> int:
    with wb.pool().connection() as conn:
        return conn.execute("SELECT count(*) FROM memory WHERE instance = %s AND chain_id = %s",
                            (instance, chain_id), prepare=False).fetchone()[0]


def _stored_chain(wb: Workbench, instance: str, chain_id: str) -> ChainDetail:
    """The chain's thoughts, title and feedback: Redis alone (`indexed` None)."""
    validate_id(instance, "instance")
    validate_id(chain_id, "chain_id")
    store = wb.thoughts
    thoughts = store.chain_thoughts(instance, chain_id)
    if not thoughts:
        raise NotFound(f"no chain {chain_id!r} in instance {instance!r} (it may have been deleted)")
    title = store.chain_meta(instance, chain_id).get("title", "")
    return ChainDetail(instance=instance, chain_id=chain_id, title=title,
                       thoughts=thoughts, feedback=store.feedback([t.id for t in thoughts]), indexed=None)


def export_chain(wb: Workbench, instance: str, chain_id: str) -> str:
    """The chain as a JSON document: its thoughts in order, with the feedback on each answer (Redis alone:
    it waited on Postgres for a count it does not hold)."""
    d = _stored_chain(wb, instance, chain_id)
    doc = {"format": "memory-workbench/chain@1", "exported_at": datetime.now(UTC).isoformat(),
           "instance": instance, "chain_id": chain_id, "title": d.title,
           "thoughts": [json.loads(t.model_dump_json()) for t in d.thoughts],
           "feedback": {k: json.loads(v.model_dump_json()) for k, v in d.feedback.items()}}
    return json.dumps(doc, indent=2, ensure_ascii=False)


def search_memory(wb: Workbench, req: ExplorerSearch) -> SearchOutcome:
    """The hits that match, never padded to `top_k` with unrelated ones: full-text mode keeps those the
    text leg found (the query's words in them or in the messages around them), semantic mode those
    semantically close (cosine to the query above the active embedder's calibrated past-task distance,
    `default_max_distance`), hybrid either. Every stored copy of a text is a hit of its own, but a message
    and the observation formed of its whole text show once (`_told_by_observation`)."""
    since = datetime.combine(req.date_from, time.min, UTC) if req.date_from else None
    until = datetime.combine(req.date_to + timedelta(days=1), time.min, UTC) if req.date_to else None
    # The explorer shows what is stored: questions too, and every copy of a text (`distinct`, `near_duplicate`
    # off): ranking's "identical texts count once" showed 1 hit of 280 memories saying "I work at Acme Corp",
    # hiding the duplicates a curator came to find and delete.
    # Twice the hits asked for, so the messages folded into their observations leave room for the next ones.
    ask = 2 * req.top_k
    found = hybrid_search(wb.search_pool(), wb.embedder, SearchRequest(
        query=req.query, instance=req.instance, top_k=ask, pool_size=max(50, 2 * ask),
        search_type=req.mode, kinds=req.kinds or None, chain_id=req.chain_id, tags=req.tags or None,
        since=since, until=until, profile=AS_STORED, distinct=False, near_duplicate=1.0,
        time_boost=False))  # in the order of the scores it shows: a time the query names re-sorts nothing
    close = None if req.mode == "text" else 1.0 - default_max_distance(wb.embedder.name)
    matched = [m for m in found.results
               if (req.mode != "vector" and m.score.text_rank is not None)
               or (close is not None and m.score.similarity > close)]
    told = _told_by_observation([m.memory for m in matched])
    shown = [m for m in matched if m.memory.id not in told]
    capped = len(shown) > req.top_k or (len(found.results) >= ask and len(shown) == req.top_k)
    matched = shown[: req.top_k]
    hits = hits_of(wb, [m.memory for m in matched])
    for hit, m in zip(hits, matched, strict=True):
        s = m.score
        hit.score, hit.semantic, hit.text, hit.recency = s.combined, s.semantic, s.text, s.recency
        hit.speaker, hit.chain = s.speaker, s.chain
    return SearchOutcome(hits=hits, candidates=found.candidates, search_ms=found.embed_ms + found.search_ms,
                         left_out=len(found.results) - len(shown) - len(told), min_similarity=close,
                         fusion=AS_STORED, speaker_and_chain=req.mode == "hybrid", capped=capped)


def _told_by_observation(memories: list[MemoryRow]) -> set[str]:
    """The ids of the messages among `memories` whose whole text an observation among them repeats, formed
    from them: one fact, shown once, as the observation (its history, its id as retrieval gives it; deleting
    it deletes the message that said nothing else). Copies in other messages and chains stay: those are
    repeats a curator looks for."""
    found = {m.id: m for m in memories}
    return {m.id for m in memories for o in _observations(m)
            if o in found and found[o].content.strip() == m.content.strip()}


def recent_memories(wb: Workbench, instance: str, limit: int = 20) -> list[Hit]:
    """The instance's newest indexed memories, newest first: what the explorer shows before a search."""
    validate_id(instance, "instance")
    with wb.pool().connection() as conn:
        rows = conn.execute(f"SELECT {ROW_COLUMNS} FROM memory WHERE instance = %s "
                            "ORDER BY created_at DESC, id LIMIT %s", (instance, limit),
                            prepare=False).fetchall()
    return hits_of(wb, [row_from_tuple(r) for r in rows])


class PageEdge(BaseModel):
    """A row's place in the listing's order: its time, and its id among the rows of the same time."""

    created_at: datetime
    id: str


class PageMark(BaseModel):
    """Where a page of a listing began and ended, handed back with the next request (`MemoryBrowse.shown`):
    the page after it, before it, or itself again is then read from its edge row (keyset) rather than by
    skipping every row before it (OFFSET), which cost the last page of 200,000 memories a read of all of them."""

    page: int
    first: PageEdge
    last: PageEdge
    selection: str = Field(description="the filters, order and page size the page was listed with "
                                       "(`_selection`): a mark of another listing is not used")


class MemoryBrowse(BaseModel):
    """The explorer's listing of what is stored, without words to search for: the instance's memories
    narrowed by kind, chain, tags and days (UTC, both included), in time order, a page at a time."""

    model_config = ConfigDict(extra="forbid")

    instance: Id
    kinds: list[MemoryKind] = Field([], description="only memories of these kinds; none: every kind")
    chain_id: Id | None = None
    tags: list[str] = Field([], description="only memories carrying any of these tags")
    date_from: date | None = None
    date_to: date | None = None
    order: Order = "newest"
    page: int = Field(1, ge=1)
    page_size: int = Field(20, ge=1, le=200)
    shown: PageMark | None = Field(None, description="the `mark` of the page shown before: a page near it is "
                                                     "read from its edge; ignored when it is of another listing")

    @field_validator("chain_id", mode="before")
    @classmethod
    def _blank_chain_is_none(cls, v: object) -> object:  # the page's text box sends "" for "any chain"
        return ExplorerSearch._blank_chain_is_none(v)


class MemoryPage(BaseModel):
    instance: str
    total: int = Field(description="every memory the filters keep, not only this page's")
    page: int
    pages: int
    page_size: int
    order: Order
    hits: list[Hit] = Field(description="this page's memories, in `order` of their time")
    mark: PageMark | None = Field(None, description="where this page began and ended, to hand back as "
                                                    "`MemoryBrowse.shown` (None: the page is empty)")
    skipped: int = Field(0, description="rows read and passed over to reach the page: 0 for the first and "
                                        "last pages and those next to the page shown; a page typed in far "
                                        "from them, the rows between it and the nearest of them")


BROWSE_EXPORT_MAX = 20_000  # memories one export of a listing writes; the archive is for a whole instance


# One statement whatever the filters (a filter not given is NULL), so no SQL is built from values.
BROWSE_WHERE = ("instance = %(instance)s AND (%(kinds)s::text[] IS NULL OR kind = ANY(%(kinds)s)) "
                "AND (%(chain)s::text IS NULL OR chain_id = %(chain)s) "
                "AND (%(tags)s::text[] IS NULL OR tags && %(tags)s) "
                "AND (%(since)s::timestamptz IS NULL OR created_at >= %(since)s) "
                "AND (%(until)s::timestamptz IS NULL OR created_at < %(until)s)")
BROWSE_COUNT = f"SELECT count(*) FROM memory WHERE {BROWSE_WHERE}"
# A page read from an end of the listing, or from an edge row (keyset: "after" it, or "from" it, itself
# included), newest (DESC) or oldest (ASC) first; ties of time by id. A statement per shape rather than
# one with "edge IS NULL OR …", which a plan made for every edge could not use the time index for. Each is
# sent unprepared, as every read through `memory` (docs/ARCHITECTURE.md): planned with the instance known.
BROWSE_EDGE = {(True, None): "", (True, "after"): "AND (created_at, id) < (%(at)s, %(id)s) ",
               (True, "from"): "AND (created_at, id) <= (%(at)s, %(id)s) ", (False, None): "",
               (False, "after"): "AND (created_at, id) > (%(at)s, %(id)s) ",
               (False, "from"): "AND (created_at, id) >= (%(at)s, %(id)s) "}
BROWSE_READ = {key: f"SELECT {ROW_COLUMNS} FROM memory WHERE {BROWSE_WHERE} {edge}"
                    f"ORDER BY created_at {'DESC' if key[0] else 'ASC'}, id {'DESC' if key[0] else 'ASC'} "
                    "LIMIT %(limit)s OFFSET %(offset)s" for key, edge in BROWSE_EDGE.items()}


def _browse_params(req: MemoryBrowse) -> dict:
    """The named parameters of BROWSE_WHERE: days whole, in UTC, both included."""
    return {"instance": req.instance, "kinds": list(req.kinds) or None, "chain": req.chain_id,
            "tags": req.tags or None,
            "since": datetime.combine(req.date_from, time.min, UTC) if req.date_from else None,
            "until": datetime.combine(req.date_to + timedelta(days=1), time.min, UTC) if req.date_to else None}


def _selection(req: MemoryBrowse) -> str:
    """The listing a page belongs to: its filters, order and page size (not the page)."""
    return req.model_dump_json(exclude={"page", "shown"})


class _Read(BaseModel):
    """How a page is read: `forward` in the listing's order (else in the reverse order, then turned round),
    from an end (`edge` None) or from an edge row (`how`: "after" it, or "from" it, itself included), passing
    over `skip` rows, `limit` rows."""

    forward: bool
    edge: PageEdge | None = None
    how: Literal["after", "from"] | None = None
    skip: int
    limit: int


def _reads(req: MemoryBrowse, total: int) -> list[_Read]:
    """The ways to read page `req.page` of `total` rows: from the start, from the end, and from the page
    shown when it is of this listing; `browse_memories` takes the one that passes over the fewest rows."""
    offset = (req.page - 1) * req.page_size
    rows = min(req.page_size, total - offset)
    reads = [_Read(forward=True, skip=offset, limit=rows), _Read(forward=False, skip=total - offset - rows, limit=rows)]
    mark = req.shown
    if mark is None or mark.selection != _selection(req):
        return reads
    if req.page > mark.page:
        reads.append(_Read(forward=True, edge=mark.last, how="after", skip=(req.page - mark.page - 1) * req.page_size,
                           limit=rows))
    elif req.page == mark.page:  # the page again (any rerun of the page): from its first row, itself included
        reads.append(_Read(forward=True, edge=mark.first, how="from", skip=0, limit=rows))
    else:
        reads.append(_Read(forward=False, edge=mark.first, how="after",
                           skip=(mark.page - req.page - 1) * req.page_size, limit=rows))
    return reads


def browse_memories(wb: Workbench, req: MemoryBrowse) -> MemoryPage:
    """One page of the memories the filters keep, newest or oldest first (ties by id, so a memory is on
    exactly one page), with the true count of all of them. A page past the last one is empty and keeps its
    number, as `list_chains` does.

    The page is read from the nearest place it is known to start from: the start (page 1), the end (the
    last page: the listing read backwards), or the edge of the page shown (`req.shown`: the next and the
    previous page), by keyset on (created_at, id), which the time index finds without reading the rows
    before; a page typed in far from all of them passes over the rows between (`MemoryPage.skipped`)."""
    with wb.pool().connection() as conn:
        total = conn.execute(BROWSE_COUNT, _browse_params(req), prepare=False).fetchone()[0]
        memories, skipped = _page_rows(conn, req, total)
    return _page_of(wb, req, total, memories, skipped)


def _page_rows(conn, req: MemoryBrowse, total: int) -> tuple[list[MemoryRow], int]:
    """The rows of page `req.page` of `total`, read the way that passes over the fewest (`_reads`), and
    how many it passed over."""
    if (req.page - 1) * req.page_size >= total:
        return [], 0
    read = min(_reads(req, total), key=lambda r: r.skip)
    newest_first = (req.order == "newest") == read.forward
    edge = {"at": read.edge.created_at, "id": read.edge.id} if read.edge else {}
    rows = conn.execute(BROWSE_READ[(newest_first, read.how)],
                        {**_browse_params(req), **edge, "limit": read.limit, "offset": read.skip},
                        prepare=False).fetchall()
    return [row_from_tuple(r) for r in (rows if read.forward else rows[::-1])], read.skip


def _page_of(wb: Workbench, req: MemoryBrowse, total: int, memories: list[MemoryRow], skipped: int) -> MemoryPage:
    return MemoryPage(instance=req.instance, total=total, page=req.page, pages=max(1, -(-total // req.page_size)),
                      page_size=req.page_size, order=req.order, hits=hits_of(wb, memories),
                      mark=_mark(req, memories), skipped=skipped)


def _mark(req: MemoryBrowse, memories: list[MemoryRow]) -> PageMark | None:
    if not memories:
        return None
    return PageMark(page=req.page, first=PageEdge(created_at=memories[0].created_at, id=memories[0].id),
                    last=PageEdge(created_at=memories[-1].created_at, id=memories[-1].id), selection=_selection(req))


def browse_export(wb: Workbench, req: MemoryBrowse) -> tuple[int, str]:
    """Every memory the listing's filters keep (all pages, in its order, at most BROWSE_EXPORT_MAX) as JSON
    lines (`hits_jsonl`); with how many matched in all, so a cut export says so. Counted once, each page of
    200 read from the previous one's edge (keyset), not past every row before it."""
    page = req.model_copy(update={"page": 1, "page_size": 200, "shown": None})
    memories: list[MemoryRow] = []
    with wb.pool().connection() as conn:
        total = conn.execute(BROWSE_COUNT, _browse_params(req), prepare=False).fetchone()[0]
        while len(memories) < min(total, BROWSE_EXPORT_MAX):
            rows, _ = _page_rows(conn, page, total)
            if not rows:
                break
            memories += rows
            page = page.model_copy(update={"page": page.page + 1, "shown": _mark(page, rows)})
    return total, hits_jsonl(hits_of(wb, memories[:BROWSE_EXPORT_MAX]))


def hits_jsonl(hits: list[Hit]) -> str:
    """Memories as JSON lines, one object a memory: id, kind, content, created_at, chain_id (or bank),
    tags, and when a correction superseded it, when and by what. For reading and sharing a selection;
    a whole instance moves with the archive (`workbench export`)."""
    keep = ("id", "instance", "kind", "content", "created_at", "chain_id", "bank", "tags", "superseded_at",
            "superseded_by", "score")
    return "".join(json.dumps({k: v for k, v in h.model_dump(mode="json", include=set(keep)).items()
                               if v not in (None, [])}, ensure_ascii=False) + "\n" for h in hits)


def hits_of(wb: Workbench, memories: list[MemoryRow]) -> list[Hit]:
    """Memories as hits, each naming the chain (with its title) or the bank it came from, and marked when
    a later correction superseded the fact it states (`_supersessions`)."""
    titles = _chain_titles(wb, {(m.instance, m.chain_id) for m in memories if m.chain_id})
    gone = _supersessions(wb, memories)
    return [Hit(id=m.id, instance=m.instance, kind=m.kind, content=m.content, created_at=m.created_at,
                chain_id=m.chain_id, chain_title=titles.get((m.instance, m.chain_id)),
                bank=m.metadata.get("bank") if m.kind in BANK_KINDS else None,
                shared=m.instance == SHARED_INSTANCE, tags=m.tags, **gone.get((m.instance, m.id), {}))
            for m in memories]


def _supersessions(wb: Workbench, memories: list[MemoryRow]) -> dict[tuple[str, str], dict]:
    """(instance, id) -> the Hit fields of each memory that states a fact a later correction superseded:
    `superseded_at`, `superseded_by`, `superseded_by_content` for a memory marked itself (an observation,
    or a copy of one: its important copy, a session summary drawn from it) and for a user message every
    statement of which is superseded; `superseded_statements` for a message some of whose statements stand
    (formation leaves one observation per statement). At most two primary-key lookups per instance, none
    when nothing is superseded."""
    out: dict[tuple[str, str], dict] = {}
    for instance in {m.instance for m in memories}:
        rows = [m for m in memories if m.instance == instance]
        marked = {m.id: m for m in rows if _ended(m)}
        told = {o: m.id for m in rows if m.id not in marked for o in _observations(m)}
        statements: dict[str, list[MemoryRow]] = {}
        for o in wb.index.get(instance, sorted(told)) if told else []:
            statements.setdefault(told[o.id], []).append(o)
        parts = {}
        for message, observations in statements.items():
            ended = [o for o in observations if _ended(o)]
            if ended and len(ended) == len(observations):
                marked[message] = ended[0]
            elif ended:
                parts[message] = ended
        by = {r.id: c for r in [*marked.values(), *(o for e in parts.values() for o in e)]
              if isinstance(c := r.metadata.get("superseded_by"), str)}
        wanted = sorted(set(by.values()))
        by_rows = {c.id: c for c in wb.index.get(instance, wanted)} if wanted else {}
        said = {i: own_words(c) for i, c in by_rows.items()}
        updates = {i for i, c in by_rows.items() if c.metadata.get(UPDATE)}
        for memory_id, r in marked.items():
            correction = by.get(r.id)
            out[(instance, memory_id)] = {"superseded_at": _ended(r), "superseded_by": correction,
                                          "superseded_by_content": said.get(correction),
                                          "superseded_by_update": correction in updates}
        for memory_id, ended in parts.items():
            out[(instance, memory_id)] = {"superseded_statements": [
                SupersededStatement(statement=own_words(o), superseded_at=_ended(o), superseded_by=by.get(o.id),
                                    superseded_by_content=said.get(by.get(o.id)),
                                    superseded_by_update=by.get(o.id) in updates) for o in ended]}
    return out


def _ended(m: MemoryRow) -> datetime | None:
    """When a correction superseded the memory; None when none did (or the mark is not a time: the
    metadata of a memory added through the API is the caller's)."""
    try:
        return superseded_at(m)
    except ValueError:
        return None


def _observations(m: MemoryRow) -> list[str]:
    """The ids of the observations formation made from a user message."""
    ids = m.metadata.get("observations")
    return [o for o in ids if isinstance(o, str)] if isinstance(ids, list) else []


def _chain_titles(wb: Workbench, chains: set[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """Read at a glance (`Services.redis_glance`), in one round trip: when Redis does not answer quickly
    (hung, down), the hits come without their chain titles (logged at debug) rather than the search, which
    needs only Postgres, waiting REDIS_TIMEOUT_S and failing."""
    if not chains:
        return {}
    ordered = sorted(chains)
    try:
        p = wb.redis_glance().pipeline(transaction=False)
        for instance, chain in ordered:
            p.hgetall(chain_meta_key(instance, chain))
        metas = p.execute()
    except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError) as e:
        log.debug("memory search: hits shown without their chain titles: %s", describe(e).message)
        return {}
    return {key: meta.get("title", "") for key, meta in zip(ordered, metas, strict=True) if meta}
