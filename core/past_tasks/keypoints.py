"""Key points of the past tasks found for a query, extracted batch by batch.

With an LLM: the hits go in batches of 3 (short contexts), one call each, the batches in parallel.
Each answer is a JSON object `{"results": [{user_task_execution_pk, produced_text_title, task_icon,
extracted_informations}]}` listing only the relevant hits; hits left out are dropped as irrelevant.
An answer that is not such JSON is retried up to 3 times (4 calls at most); after that the batch is
reported as failed and the other batches still return. Titles and icons are taken from the database,
not from the answer, so a model cannot rename a reference.

Offline: the sentences of each hit most similar to the query (by the active embedder), labelled
extractive; nothing is judged irrelevant, because no model read the texts.
"""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

import numpy as np
from pydantic import BaseModel, ConfigDict, ValidationError

from core.conversation.prompts import quoted
from core.errors import ProviderError
from core.llm import Message
from core.past_tasks.models import FailedBatch, KeyPoints, PastTaskHit, PastTaskReference
from core.tokens import truncate_to_tokens

if TYPE_CHECKING:
    from core.runtime import Workbench

BATCH_SIZE = 3
JSON_RETRIES = 3
TEXT_TOKEN_BUDGET = 1200  # per hit in a prompt: three texts and the answer fit a small context
EXTRACTIVE_SENTENCES = 3
MAX_POINTS = 8

SYSTEM_PROMPT = """You help a user find information in the tasks you helped them with before \
(meeting minutes, emails, notes, plans). You receive the user's query and up to three past tasks.
For each past task that contains information relevant to the query, extract that information as \
short, self-contained key points (facts, decisions, names, dates, figures). Leave out past tasks that \
are not relevant.
Answer with only a JSON object of this shape:
{"results": [{"user_task_execution_pk": <int>, "produced_text_title": "<title>", "task_icon": "<icon>", \
"extracted_informations": ["<key point>", ...]}]}
Use {"results": []} when none is relevant."""

RETRY_PROMPT = ("Your answer was not valid: {error}. Answer again with only the JSON object described, "
                "no other text.")


class _AnswerItem(BaseModel):
    model_config = ConfigDict(extra="ignore")

    user_task_execution_pk: int
    produced_text_title: str = ""
    task_icon: str = ""
    extracted_informations: list[str] = []


def extract_key_points(wb: Workbench, query: str, hits: list[PastTaskHit]) -> KeyPoints:
    if not wb.llm.configured:
        return extractive_key_points(wb.embedder, query, hits)
    batches = [hits[i:i + BATCH_SIZE] for i in range(0, len(hits), BATCH_SIZE)]
    model = wb.settings.model_fast
    with ThreadPoolExecutor(max_workers=min(4, len(batches) or 1)) as pool:
        outcomes = list(pool.map(lambda b: _llm_batch(wb.llm, model, query, b), batches))
    refs, dropped, failed = [], [], []
    tokens = calls = 0
    for batch_refs, batch_dropped, batch_failed, batch_tokens, batch_calls in outcomes:
        refs += batch_refs
        dropped += batch_dropped
        failed += [batch_failed] if batch_failed else []
        tokens += batch_tokens
        calls += batch_calls
    note = (f"{len(failed)} of {len(batches)} batches failed; their past tasks have no key points."
            if failed else None)
    return KeyPoints(mode="llm", references=sorted(refs, key=lambda r: r.distance), dropped=dropped,
                     failed_batches=failed, note=note, model=model, total_tokens=tokens, llm_calls=calls)


def _llm_batch(llm, model: str, query: str, batch: list[PastTaskHit]):
    """One batch: (references, dropped pks, failure or None, tokens used, calls made)."""
    messages = [Message(role="system", content=SYSTEM_PROMPT),
                Message(role="user", content=batch_prompt(query, batch))]
    pks = [h.user_task_execution_pk for h in batch]
    tokens = calls = 0
    error = ""
    for _ in range(1 + JSON_RETRIES):
        try:
            done = llm.complete(messages, model=model, temperature=0.0, max_tokens=1024, json_mode=True)
        except ProviderError as e:  # the client already retried the HTTP call
            calls += 1
            failed = FailedBatch(user_task_execution_pks=pks, reason=str(e), attempts=calls)
            return [], [], failed, tokens, calls
        calls += 1
        tokens += done.total_tokens or 0
        try:
            items = parse_answer(done.text)
            break
        except ValueError as e:
            error = str(e)
            messages += [Message(role="assistant", content=done.text[:4000]),
                         Message(role="user", content=RETRY_PROMPT.format(error=error))]
    else:
        return [], [], FailedBatch(user_task_execution_pks=pks, attempts=calls,
                                   reason=f"no valid JSON after {calls} attempts ({error})"), tokens, calls
    by_pk = {h.user_task_execution_pk: h for h in batch}
    kept: dict[int, PastTaskReference] = {}
    for item in items:  # pks not in the batch, repeated ones and empty lists are ignored
        hit = by_pk.get(item.user_task_execution_pk)
        points = [p.strip() for p in item.extracted_informations
                  if p and p.strip() and not is_salutation(p)][:MAX_POINTS]
        if hit is not None and points and hit.user_task_execution_pk not in kept:
            kept[hit.user_task_execution_pk] = _reference(hit, points)
    return list(kept.values()), [pk for pk in pks if pk not in kept], None, tokens, calls


def batch_prompt(query: str, batch: list[PastTaskHit]) -> str:
    """The query and the batch's past tasks, each under its "--- user_task_execution_pk:" line; every text
    an import or a caller gave (query, task name, icon, title, the text itself) is `quoted`, so none can
    begin a line as a past task's header or its "Title:" does."""
    parts = [f"Query: {quoted(query)}", "", "Past tasks:"]
    for h in batch:
        text = truncate_to_tokens(h.production, TEXT_TOKEN_BUDGET)
        cut = " [truncated]" if len(text) < len(h.production) else ""
        parts += [(f"--- user_task_execution_pk: {h.user_task_execution_pk} | task: {quoted(h.task_name)} | "
                   f"task_icon: {quoted(h.task_icon)} | date: {h.date:%Y-%m-%d}"),
                  f"Title: {quoted(h.title)}", "", quoted(text + cut, block=True), ""]
    return "\n".join(parts)


def parse_answer(text: str) -> list[_AnswerItem]:
    """The items of an answer; ValueError says what is wrong with it."""
    text = re.sub(r"^\s*```(?:json)?\s*|\s*```\s*$", "", text.strip())
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"not JSON ({e.msg} at character {e.pos})") from e
    if isinstance(data, dict):
        if "results" in data:
            data = data["results"]
        elif "user_task_execution_pk" in data:
            data = [data]
    if not isinstance(data, list):
        raise ValueError('expected {"results": [...]}')
    try:
        return [_AnswerItem.model_validate(x) for x in data]
    except ValidationError as e:
        first = e.errors(include_input=False, include_url=False)[0]
        raise ValueError(f"result item {'.'.join(map(str, first['loc']))}: {first['msg']}") from e


def _reference(hit: PastTaskHit, points: list[str]) -> PastTaskReference:
    return PastTaskReference(user_task_execution_pk=hit.user_task_execution_pk, produced_text_title=hit.title,
                             task_icon=hit.task_icon, extracted_informations=points, distance=hit.distance,
                             date=hit.date)


# -- offline --------------------------------------------------------------------------------------

_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)]|#+)\s*")
# A full stop after these is not the end of a sentence ("Dr. Chen", "e.g. the budget").
_ABBREVIATIONS = ("dr.", "prof.", "mr.", "mrs.", "ms.", "st.", "e.g.", "i.e.", "etc.", "vs.", "no.",
                  "approx.")


# The greeting and the sign-off of a letter or an email ("Dear Prof. Daniel Weber,", "Best regards, Anna"):
# a line of their own, with a name at most, never a key point. "Hi team, the budget is approved." is kept.
_SALUTATION = re.compile(
    r"^(?:(?:dear|hi|hello|hey|good (?:morning|afternoon|evening)|greetings)(?:\s+[\w.'-]+){0,5}"
    r"|(?:(?:with )?(?:best|kind|warm|warmest|many) (?:regards|wishes|thanks)|regards|sincerely"
    r"|yours (?:sincerely|truly|faithfully)|thanks|thank you|cheers)[,.!]?(?:\s+[\w.'-]+){0,3})\s*[,:!.]?$",
    re.IGNORECASE)


def is_salutation(text: str) -> bool:
    return bool(_SALUTATION.match(text.strip()))


def unwrapped(text: str) -> list[str]:
    """The text's lines, a line that continues a sentence broken across lines (hard-wrapped Markdown or
    mail) joined to the one before: that one ends without punctuation, and this one is no list item,
    heading or salutation. Lines that end a sentence or a salutation ("Dear Ana,") stay apart."""
    blocks: list[str] = []
    for line in text.split("\n"):
        before = blocks[-1].rstrip() if blocks else ""
        if (line.strip() and before and before[-1] not in ".!?:;,)\"'”" and not before.lstrip().startswith("#")
                and not _BULLET.match(line) and not is_salutation(line)):
            blocks[-1] = f"{before} {line.strip()}"
        else:
            blocks.append(line)
    return blocks


def sentences(text: str) -> list[str]:
    """Sentences and list items of a text, without bullet markers; fragments under 3 words and
    salutations skipped."""
    pieces: list[str] = []
    for line in unwrapped(text):
        joined = ""
        for part in re.split(r"(?<=[.!?])\s+", line.strip()):
            joined = f"{joined} {part}" if joined else part
            last = joined.split()[-1:] or [""]
            if last[0].lower() not in _ABBREVIATIONS:
                pieces.append(joined)
                joined = ""
        if joined:
            pieces.append(joined)
    out = []
    for piece in pieces:
        piece = _BULLET.sub("", piece).strip()
        if len(piece.split()) >= 3 and not is_salutation(piece):
            out.append(piece if len(piece) <= 400 else piece[:399] + "…")
    return out[:300]


def extractive_key_points(embedder, query: str, hits: list[PastTaskHit]) -> KeyPoints:
    per_hit = [sentences(h.production) or [h.title] for h in hits]
    flat = [s for group in per_hit for s in group]
    refs = []
    if flat:
        vectors = embedder.embed_batch([query, *flat])
        sims = vectors[1:] @ vectors[0]
        start = 0
        for hit, group in zip(hits, per_hit, strict=True):
            scores = sims[start:start + len(group)]
            start += len(group)
            best = np.argsort(-scores, kind="stable")[:EXTRACTIVE_SENTENCES]
            refs.append(_reference(hit, [group[i] for i in best]))
    return KeyPoints(mode="extractive", references=refs,
                     note="Key points are extractive: the sentences most similar to the query. No LLM is "
                          "configured (set GROQ_API_KEY, or LLM_BASE_URL for an OpenAI-compatible server).")
