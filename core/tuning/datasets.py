"""Labelled query sets for retrieval evaluation, in two formats.

- LoCoMo (`snap-research/LoCoMo`, a JSON list of samples): each conversation becomes its own evaluation
  instance, its turns memories of kind "turn" (id = the dia_id made id-safe, "D1:3" -> "D1_3"; content
  "speaker: text", plus the photo caption when there is one, never the image search `query`, which
  sometimes holds the answer); created_at and event time = the session's date; the relations a turn's
  speaker states ("my daughter Sara", `core.formation.relations`) in its metadata. Questions become queries
  whose relevant ids are their evidence. Category 5 (adversarial) and questions without usable evidence
  are left out and counted.
- JSONL: one `{"query", "relevant": [ids], "category"?}` per line (or a JSON list of them), against an
  existing instance. A query with no relevant ids (`"relevant": []`) is left out, as the metrics leave it
  out; a query written again (the same text, whitespace and letter case aside) is counted once, with the
  relevant ids of all its lines and its first line's category. They are named in the dataset
  (`unlabelled`, `repeated`, `recategorised`) and counted in `skipped`, never dropped in silence.
"""

from __future__ import annotations

import codecs
import hashlib
import json
import re
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from core.errors import InvalidInput, explain_validation
from core.formation.relations import with_relations
from core.ids import labelled_id, validate_id
from core.index.records import event_time_of
from core.index.text import with_conversation_context
from core.models import MemoryRecord
from core.tuning.metrics import UNCATEGORISED

LOADER_VERSION = "locomo-turns-4"  # part of each instance's content hash: change it when records change
LOCOMO_DOWNLOAD = "https://github.com/snap-research/LoCoMo (file data/locomo10.json)"
EVAL_PREFIX = "eval-locomo"  # every instance the evaluation makes is named "eval-locomo-<sample>-<hash>"
_DIA_RE = re.compile(r"^D\s*:?\s*(\d+)\s*:\s*(\d+)$")
RelevantId = labelled_id("relevant id")  # a memory id a labelled query counts as relevant
UNLABELLED_REASON = "queries with no relevant ids"
REPEATED_REASON = "repeated queries (counted once)"
EMPTIED_REASON = "queries whose relevant ids are all unknown"  # to the instance (`core.tuning.labels.check_ids`)


class EvalQuery(BaseModel):
    qid: str
    query: str
    relevant: list[str]
    category: str
    instance: str
    now: datetime | None = None  # the time the question is asked at (recency is measured from it)


class EvalCorpus(BaseModel):
    """Memories to load into one evaluation instance; `content_hash` names its content."""

    instance: str
    content_hash: str
    records: list[MemoryRecord]


class EvalDataset(BaseModel):
    name: str
    kind: Literal["locomo", "jsonl"]
    queries: list[EvalQuery]
    corpora: list[EvalCorpus] = []
    include_shared: bool = False
    skipped: dict[str, int] = Field(default_factory=dict, description="left out, by reason")
    unknown_ids: list[str] = Field(default_factory=list, description="relevant ids the instance does not "
                                   "hold, left out of the queries (a JSONL set, see core.tuning.labels)")
    unlabelled: list[str] = Field(default_factory=list, description="queries of a JSONL set with no relevant "
                                  "ids, left out")
    emptied: list[str] = Field(default_factory=list, description="queries of a JSONL set none of whose "
                               "relevant ids the instance holds, left out")
    repeated: dict[str, int] = Field(default_factory=dict, description="queries a JSONL set holds more than "
                                     "once (whitespace and letter case aside), with how many times: each is "
                                     "counted once")
    recategorised: dict[str, str] = Field(default_factory=dict, description="repeated queries written with "
                                          "different categories: the category kept (their first line's)")

    @property
    def categories(self) -> list[str]:
        """The categories of the queries, `UNCATEGORISED` among them only beside another: none when the set
        gives none."""
        found = sorted({q.category for q in self.queries})
        return [] if found == [UNCATEGORISED] else found

    @property
    def left_out_queries(self) -> dict[str, list[str]]:
        """The queries left out, by the reason `skipped` counts them under."""
        return {reason: queries for reason, queries in ((UNLABELLED_REASON, self.unlabelled),
                                                        (EMPTIED_REASON, self.emptied)) if queries}


class JsonlQuery(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1)
    relevant: list[RelevantId]  # empty: the query is left out, and named (`EvalDataset.unlabelled`)
    category: str | int = UNCATEGORISED


def normalise_query(query: str) -> str:
    """"what  did I eat" and "what did I eat " are one query: whitespace is collapsed."""
    return " ".join(query.split())


def query_key(query: str) -> str:
    """What makes two lines of a set the same query: their text, whitespace and letter case aside ("Who owns
    billing" and "who owns  billing" are one query, which would otherwise weigh twice)."""
    return normalise_query(query).casefold()


# A reason's first plural noun, in the singular for a count of 1 (`counted`).
_SINGULAR = {"queries": "query", "questions": "question", "ids": "id"}


def counted(n: int, reason: str) -> str:
    """"1 query with no relevant ids", "2 queries with no relevant ids": a `skipped` reason with its count."""
    if n != 1:
        return f"{n:,} {reason}"
    words = reason.split(" ")
    first = next((i for i, w in enumerate(words) if w in _SINGULAR), None)
    if first is not None:
        words[first] = _SINGULAR[words[first]]
    return f"1 {' '.join(words)}"


def left_out(skipped: dict[str, int]) -> str:
    """A set's `skipped` in words: "1 query with no relevant ids; 2 repeated queries (counted once)"."""
    return "; ".join(counted(n, reason) for reason, n in skipped.items())


# -- LoCoMo -------------------------------------------------------------------------------------

def normalise_dia_id(raw: str) -> str | None:
    """"D1:3", " D1 : 3", "D:11:26" -> "D1:3" / "D11:26"; None when it does not parse."""
    m = _DIA_RE.match(str(raw).strip())
    return f"D{int(m.group(1))}:{int(m.group(2))}" if m else None


def memory_id_of(dia_id: str) -> str:
    """The id-safe memory id of a normalised dia_id: "D1:3" -> "D1_3"."""
    return dia_id.replace(":", "_")


def parse_session_date(text: str) -> datetime:
    """"1:56 pm on 8 May, 2023" -> 2023-05-08 13:56 UTC."""
    cleaned = re.sub(r"\s+", " ", text.strip())
    for fmt in ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y", "%I:%M %p on %B %d, %Y"):
        try:
            return datetime.strptime(cleaned, fmt).replace(tzinfo=UTC)
        except ValueError:
            continue
    import dateparser

    found = dateparser.parse(cleaned, languages=["en"])
    if found is None:
        raise InvalidInput(f"session date {text!r:.60} is not a date like '1:56 pm on 8 May, 2023'")
    return found.replace(tzinfo=UTC) if found.tzinfo is None else found.astimezone(UTC)


def _session_numbers(conversation: dict) -> list[int]:
    """The N of every `session_N` key holding turns (date keys without a session are ignored)."""
    numbers = []
    for key, value in conversation.items():
        m = re.fullmatch(r"session_(\d+)", key)
        if m and isinstance(value, list):
            numbers.append(int(m.group(1)))
    return sorted(numbers)


def _safe(text: str) -> str:
    out = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-._") or "sample"
    return out[:40]


def is_evaluation_instance(instance: str) -> bool:
    """An instance the evaluation made to hold a labelled set's conversation (not one a user works on)."""
    return instance.startswith(EVAL_PREFIX + "-")


def locomo_sample(sample: dict, *, instance_prefix: str = EVAL_PREFIX) -> tuple[EvalCorpus, list[EvalQuery],
                                                                               dict[str, int]]:
    """One LoCoMo sample as (corpus, queries, skipped-by-reason)."""
    conv = sample.get("conversation") if isinstance(sample, dict) else None
    if not isinstance(conv, dict):
        raise InvalidInput("a LoCoMo sample needs a 'conversation' object")
    sample_id = str(sample.get("sample_id", "sample"))[:80]
    digest = hashlib.sha256((LOADER_VERSION + json.dumps(conv, sort_keys=True)).encode()).hexdigest()
    instance = f"{instance_prefix}-{_safe(sample_id)}-{digest[:10]}"
    records: list[MemoryRecord] = []
    last_time: datetime | None = None
    for n in _session_numbers(conv):
        date_text = conv.get(f"session_{n}_date_time")
        if not isinstance(date_text, str) or not date_text.strip():
            raise InvalidInput(f"{sample_id}: session_{n} needs a session_{n}_date_time text "
                               "like '1:56 pm on 8 May, 2023'")
        at = parse_session_date(date_text)
        last_time = max(last_time or at, at)
        for turn in conv[f"session_{n}"]:
            if not isinstance(turn, dict):
                raise InvalidInput(f"{sample_id}: session_{n} must be a list of turn objects "
                                   "(dia_id, speaker, text)")
            dia = normalise_dia_id(turn.get("dia_id", ""))
            if dia is None or not isinstance(turn.get("text"), str) or not turn["text"].strip():
                continue
            content = f"{turn.get('speaker', '?')}: {turn['text']}"
            if turn.get("blip_caption"):
                content += f" [shares a photo: {turn['blip_caption']}]"
            records.append(MemoryRecord(instance=instance, id=memory_id_of(dia), kind="turn", content=content,
                                        created_at=at, chain_id=f"session-{n}", event_time=event_time_of(at),
                                        metadata=with_relations({"dia_id": dia, "session": n,
                                                                 "sample_id": sample_id}, content)))
    records = with_conversation_context(records)  # a turn is searched with its neighbours' words too
    known = {r.id for r in records}
    queries: list[EvalQuery] = []
    skipped: dict[str, int] = {}

    def skip(reason: str, count: int = 1) -> None:
        skipped[reason] = skipped.get(reason, 0) + count

    qas = sample.get("qa", [])
    if not isinstance(qas, list) or not all(isinstance(qa, dict) for qa in qas):
        raise InvalidInput(f"{sample_id}: 'qa' must be a list of objects (question, evidence, category)")
    for i, qa in enumerate(qas):
        category = str(qa.get("category", "?"))[:40]
        if category == "5":
            skip("category 5 (adversarial)")
            continue
        evidence = qa.get("evidence") or []
        if not isinstance(evidence, list):  # one id written without its list
            evidence = [evidence]
        question = qa.get("question")
        if not isinstance(question, str) or not question.strip():
            skip("questions without text")
            continue
        relevant, bad = [], 0
        for raw in evidence:
            for piece in str(raw).split(";"):
                dia = normalise_dia_id(piece)
                if dia is None or memory_id_of(dia) not in known:
                    bad += bool(piece.strip())
                    continue
                if memory_id_of(dia) not in relevant:
                    relevant.append(memory_id_of(dia))
        if bad:
            skip("evidence ids malformed or not among the turns (dropped)", bad)
        if not relevant:
            skip("questions without usable evidence")
            continue
        queries.append(EvalQuery(qid=f"{sample_id}#{i}", query=question, relevant=relevant,
                                 category=category, instance=instance, now=last_time))
    return EvalCorpus(instance=instance, content_hash=digest, records=records), queries, skipped


def load_locomo(data: list, *, name: str = "locomo", samples: list[str] | None = None) -> EvalDataset:
    corpora, queries, skipped = [], [], {}
    for i, sample in enumerate(data, start=1):
        if not isinstance(sample, dict):
            raise InvalidInput(f"sample {i} of the LoCoMo file must be an object with 'sample_id', "
                               f"'conversation' and 'qa', not {json.dumps(sample)[:40]}")
        if samples and str(sample.get("sample_id")) not in samples:
            continue
        corpus, qs, sk = locomo_sample(sample)
        corpora.append(corpus)
        queries += qs
        for k, v in sk.items():
            skipped[k] = skipped.get(k, 0) + v
    if not queries:
        raise InvalidInput("the LoCoMo file has no question with usable evidence"
                           + (f" among samples {', '.join(samples)}" if samples else "")
                           + ": a question needs evidence ids like 'D1:3' naming turns of its sample")
    return EvalDataset(name=name, kind="locomo", queries=queries, corpora=corpora, skipped=skipped)


# -- JSONL --------------------------------------------------------------------------------------

EXPECTED = '(expected {"query": str, "relevant": [ids], "category"?: str})'


def load_jsonl(text: str, *, instance: str, name: str = "jsonl") -> EvalDataset:
    """One query per line. A query with no relevant ids is left out and a query written again (`query_key`)
    is counted once (with the relevant ids of all its lines, the category of its first), both named and
    counted."""
    lines = ((n, f"line {n}", line) for n, line in enumerate(text.splitlines(), start=1) if line.strip())
    return _labelled_queries(lines, instance=instance, name=name, what="the JSONL file")


def load_query_list(items: list, *, instance: str, name: str = "json") -> EvalDataset:
    """A JSON list of the objects a JSONL set has one per line, read as that set is."""
    entries = ((n, f"item {n}", json.dumps(item)) for n, item in enumerate(items, start=1))
    return _labelled_queries(entries, instance=instance, name=name, what="the JSON list")


def _labelled_queries(entries: Iterable[tuple[int, str, str]], *, instance: str, name: str, what: str
                      ) -> EvalDataset:
    """The queries of (number, where, JSON object) entries, as `load_jsonl` says (query "qN" is the one of
    line or item N); `what` names the file in errors."""
    validate_id(instance, "instance")
    by_key: dict[str, EvalQuery] = {}
    seen: dict[str, int] = {}
    written: dict[str, str] = {}  # key: the query as first written, which the notes name
    unlabelled: list[str] = []
    categories: dict[str, set[str]] = {}
    for n, where, raw in entries:
        try:
            item = JsonlQuery.model_validate_json(raw)
        except ValidationError as e:
            raise InvalidInput(f"{where}: {explain_validation(e)} {EXPECTED}") from e
        key = query_key(item.query)
        written.setdefault(key, normalise_query(item.query))
        seen[key] = seen.get(key, 0) + 1
        if not item.relevant:
            if key not in unlabelled:
                unlabelled.append(key)
            continue
        categories.setdefault(key, set()).add(str(item.category))
        if key in by_key:
            first = by_key[key]
            first.relevant += [i for i in item.relevant if i not in first.relevant]
            continue
        by_key[key] = EvalQuery(qid=f"q{n}", query=item.query, relevant=list(dict.fromkeys(item.relevant)),
                                category=str(item.category), instance=instance)
    if not seen:
        raise InvalidInput(f'{what} has no queries: it needs {{"query": str, "relevant": [ids]}} objects')
    unlabelled = [written[q] for q in unlabelled if q not in by_key]  # written with ids elsewhere: it is scored
    if not by_key:
        which = "its one query has no" if len(seen) == 1 else f"none of its {len(seen):,} queries has a"
        raise InvalidInput(f"{what} has nothing to score: {which} relevant id; a query needs "
                           '"relevant": [ids] of the memories that answer it')
    repeated = {written[q]: n for q, n in seen.items() if n > 1 and q in by_key}
    recategorised = {written[q]: by_key[q].category for q, cats in categories.items() if len(cats) > 1}
    skipped = {reason: n for reason, n in ((UNLABELLED_REASON, len(unlabelled)),
                                           (REPEATED_REASON, len(repeated))) if n}
    return EvalDataset(name=name, kind="jsonl", queries=list(by_key.values()), include_shared=True,
                       skipped=skipped, unlabelled=unlabelled, repeated=repeated, recategorised=recategorised)


def set_notes(dataset: EvalDataset) -> list[str]:
    """What a JSONL set held that is not scored as written, in words, naming the queries: "1 query appears
    twice: 'where did I park the car?'; counted once." (The unknown ids have their own note.)"""
    notes = []
    if repeated := dataset.repeated:
        n, times = len(repeated), set(repeated.values())
        if len(times) == 1:
            how = {2: "twice", 3: "three times"}.get(min(times), f"{min(times)} times")
            shown = _quoted([repr(q[:80]) for q in repeated])
        else:
            how, shown = "more than once", _quoted([f"{q[:80]!r} ({c}×)" for q, c in repeated.items()])
        notes.append(f"{n} {'query appears' if n == 1 else 'queries appear'} {how} (whitespace and letter case "
                     f"aside): {shown}; {'counted' if n == 1 else 'each counted'} once.")
    if recategorised := dataset.recategorised:
        n = len(recategorised)
        notes.append(f"{n} repeated {'query is' if n == 1 else 'queries are'} written with more than one "
                     f"category; {'it is' if n == 1 else 'each is'} counted in its first line's: "
                     + _quoted([f"{q[:80]!r} in {c!r}" for q, c in recategorised.items()]) + ".")
    if unlabelled := dataset.unlabelled:
        n = len(unlabelled)
        notes.append(f"{n} {'query has' if n == 1 else 'queries have'} no relevant ids: "
                     f"{_quoted([repr(q[:80]) for q in unlabelled])}; left out of the scores.")
    if emptied := dataset.emptied:
        n = len(emptied)
        notes.append(f"{n} {'query has' if n == 1 else 'queries have'} no relevant id in the instance: "
                     f"{_quoted([repr(q[:80]) for q in emptied])}; left out of the scores.")
    return notes


def _quoted(shown: list[str], most: int = 5) -> str:
    return ", ".join(shown[:most]) + (f" and {len(shown) - most} more" if len(shown) > most else "")


def load_dataset(source: Path | str | bytes, *, instance: str | None = None, name: str | None = None,
                 samples: list[str] | None = None) -> EvalDataset:
    """Read a LoCoMo JSON or a JSONL query set from a path or bytes; the format is detected."""
    if isinstance(source, bytes):
        raw, label = source, name or "upload"
    else:
        path = Path(source)
        if not path.is_file():
            hint = f" Download LoCoMo from {LOCOMO_DOWNLOAD}." if "locomo" in path.name.lower() else ""
            raise InvalidInput(f"data file {str(path)!r} not found.{hint}")
        raw, label = path.read_bytes(), name or path.stem
    text = utf8_text(raw, label)
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            return _json_list(text, label, samples, instance)
        except RecursionError:  # from the parser, or from reading a value nested inside a sample
            raise InvalidInput(f"{label}: the JSON must not nest so deeply (LoCoMo nests five levels)") from None
    if instance is None:
        raise InvalidInput("a JSONL query set is evaluated against an existing instance; name it")
    return load_jsonl(text, instance=instance, name=label)


def _json_list(text: str, label: str, samples: list[str] | None, instance: str | None) -> EvalDataset:
    """LoCoMo samples, or the labelled queries of a JSONL set written as one JSON list."""
    try:
        data = json.loads(text)
    except ValueError as e:
        raise InvalidInput(f"{label}: not valid JSON ({e})") from e
    first = data[0] if data and isinstance(data[0], dict) else {}
    if "conversation" in first:
        return load_locomo(data, name=label, samples=samples)
    if "query" in first:
        if instance is None:
            raise InvalidInput("a labelled query set is evaluated against an existing instance; name it")
        return load_query_list(data, instance=instance, name=label)
    raise InvalidInput(f"{label}: a JSON list, but neither LoCoMo samples (each needs 'conversation' and 'qa') "
                       f'nor labelled queries {EXPECTED}: write one such object per line (JSONL), or a JSON list '
                       "of them")


def utf8_text(raw: bytes, label: str) -> str:
    """The file as text; bytes that are not UTF-8 are refused with their offset rather than replaced, which
    would change the texts and ids evaluated without a word."""
    body = raw.removeprefix(codecs.BOM_UTF8)
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as e:
        offset = len(raw) - len(body) + e.start
        raise InvalidInput(f"{label}: not UTF-8 text: byte {offset} ({raw[offset]:#04x}) cannot be read "
                           f"({e.reason}); the file must be UTF-8") from None


def default_locomo_path() -> Path | None:
    """The shared LoCoMo dev file when present (../shared/bench/ beside the checkout, or the cwd's)."""
    here = Path(__file__).resolve().parents[2]
    for base in (here.parent, Path.cwd().parent, Path.cwd()):
        candidate = base / "shared" / "bench" / "locomo_dev.json"
        if candidate.is_file():
            return candidate
    return None


__all__ = [
    "EvalCorpus",
    "EvalDataset",
    "EvalQuery",
    "default_locomo_path",
    "is_evaluation_instance",
    "load_dataset",
    "load_jsonl",
    "load_locomo",
    "load_query_list",
    "memory_id_of",
    "normalise_dia_id",
    "normalise_query",
    "parse_session_date",
    "set_notes",
]
