"""Session summaries: seed 003's session-summaries index (`idx:{instance}:session-summaries`).

A chain that ended (an answer given with `next_thought_needed = false`) or went quiet for
`ABANDON_AFTER_S` (abandoned, DESIGN §11) is summarised into one `session_summary` memory: by the LLM
when one is configured (JSON; asked once more when the reply is not, then the extractive summary), else
extractively: the user's statement sentences ranked by TF-IDF centrality in the chain, the best
`SUMMARY_SENTENCES` in the order they were said. Its metadata keeps the chain's time span, the turns it
covers and the thoughts it drew on. Its id comes from the chain, so summarising again replaces it: one
summary per chain, made again only when the chain grew or an LLM can now do better than the rules.

When: an ended chain at once (`on_turn`, from the turn); a quiet one by the sweep (`summarise_quiet`,
with the abandonment sweep); every chain of an instance by `summarise_instance` (`workbench formation
run`, after an import or once an LLM is configured).
"""

from __future__ import annotations

import math
import re
import time
from collections import Counter
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Literal

import numpy as np
from pydantic import BaseModel, ValidationError

from core.conversation.feedback import ABANDON_AFTER_S, is_acknowledgement
from core.conversation.keys import SUMMARIES_SWEPT, chain_tombstone, chains_key
from core.conversation.thoughts import CATEGORY_ASSISTANT, CATEGORY_USER, Thought
from core.errors import ProviderError
from core.formation.important import derived_id, mark_important
from core.formation.kinds import about_the_chat, sentences, told_before_question
from core.formation.supersede import own_words, states, superseded_statements, supersession_of
from core.index.records import event_time_of
from core.llm import Message
from core.models import MemoryRecord, MemoryRow

if TYPE_CHECKING:
    from core.runtime import Workbench

SUMMARY_KIND = "session_summary"
SUMMARY_SENTENCES = 3
SWEEP_LIMIT = 10  # chains one sweep summarises: it runs when a page loads, so it stays short
SWEEP_LOOKBACK_S = 86400.0  # an instance's first sweep looks this far back; older chains: formation run
LLM_ATTEMPTS = 2
TRANSCRIPT_MESSAGES = 60  # the last messages shown to the LLM, each cut at MESSAGE_CHARS
MESSAGE_CHARS = 1000
Progress = Callable[[int, int], None]  # (chains done, chains in all)

SUMMARY_SYSTEM = (
    "You write the long-term memory of a conversation between a user and an assistant. Reply with JSON "
    'only: {"summary": "<at most 3 sentences: the facts, plans, preferences and events the user stated, '
    'in plain words, third person>", "important": [<numbers of the user\'s messages worth remembering for '
    "a long time>]}. Leave out greetings, thanks and the assistant's own suggestions."
)
_WORD = re.compile(r"[a-z0-9']+")


class SummaryDraft(BaseModel):
    """A chain's summary before it is stored: its text, the user messages it drew on, and (LLM) the
    messages picked as important."""

    text: str
    method: Literal["llm", "extractive"]
    source_ids: list[str]
    important_ids: list[str] = []


class _Reply(BaseModel):
    summary: str
    important: list[int] = []


def statement_sentences(thoughts: list[Thought]) -> list[tuple[str, str]]:
    """(thought id, sentence) of every sentence the user stated, once (the first time: a sentence said
    again, in the same words, would be its own most central neighbour and fill the summary twice); questions
    (but for what one tells before its question: "Inês turns 7 on October 10, ideas…?"), acknowledgements
    and what only speaks about the conversation ("Sorry, I got pulled away.") left out. Sentences end where
    `kinds.sentences` ends them: not at "Dr." ("…at 9:30 with Dr." had lost the name)."""
    out, seen = [], set()
    for t in thoughts:
        if t.category != CATEGORY_USER:
            continue
        for sentence in sentences(t.thought.strip()):
            if re.search(r"\?\W*$", sentence):  # what it tells before its question, if anything
                sentence = told_before_question(sentence) or ""
            words = tuple(_WORD.findall(sentence.lower()))
            if (len(words) >= 3 and words not in seen and not is_acknowledgement(sentence)
                    and not about_the_chat(sentence)):
                seen.add(words)
                out.append((t.id, sentence.strip()))
    return out


def centrality(sentences: list[str]) -> list[float]:
    """Each sentence's mean cosine to the others over TF-IDF vectors (idf = ln((1 + n) / (1 + df)) + 1):
    the sentences sharing the chain's recurring, rarer words first. One sentence: 1."""
    if len(sentences) < 2:
        return [1.0] * len(sentences)
    counts = [Counter(_WORD.findall(s.lower())) for s in sentences]
    vocab = {w: i for i, w in enumerate(sorted(set().union(*counts)))}
    df = Counter(w for c in counts for w in c)
    n = len(sentences)
    m = np.zeros((n, len(vocab)))
    for row, c in enumerate(counts):
        for w, tf in c.items():
            m[row, vocab[w]] = tf * (math.log((1 + n) / (1 + df[w])) + 1)
    m /= np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-12)
    sims = m @ m.T
    return list((sims.sum(axis=1) - 1.0) / (n - 1))


def extractive_summary(thoughts: list[Thought]) -> SummaryDraft | None:
    """The chain's `SUMMARY_SENTENCES` most central statement sentences in their order; None when the user
    stated nothing (only questions and thanks)."""
    found = statement_sentences(thoughts)
    if not found:
        return None
    scores = centrality([s for _, s in found])
    best = sorted(sorted(range(len(found)), key=lambda i: -scores[i])[:SUMMARY_SENTENCES])
    return SummaryDraft(text=" ".join(found[i][1] for i in best), method="extractive",
                        source_ids=list(dict.fromkeys(found[i][0] for i in best)))


def llm_summary(wb: Workbench, thoughts: list[Thought]) -> SummaryDraft | None:
    """The LLM's summary and important picks; None when it failed or never answered with the JSON asked."""
    messages = [t for t in thoughts if t.category in (CATEGORY_USER, CATEGORY_ASSISTANT)][-TRANSCRIPT_MESSAGES:]
    users = [t for t in messages if t.category == CATEGORY_USER]
    number = {t.id: i for i, t in enumerate(users, start=1)}
    lines = [f"[{number[t.id]}] user: {t.thought[:MESSAGE_CHARS]}" if t.id in number
             else f"assistant: {t.thought[:MESSAGE_CHARS]}" for t in messages]
    prompt = [Message(role="system", content=SUMMARY_SYSTEM), Message(role="user", content="\n".join(lines))]
    for _ in range(LLM_ATTEMPTS):
        try:
            reply = wb.llm.complete(prompt, model=wb.settings.model_fast, temperature=0.0, max_tokens=300,
                                    json_mode=True)
        except ProviderError:
            return None
        text = reply.text
        try:
            parsed = _Reply.model_validate_json(text[text.find("{"):text.rfind("}") + 1])
        except ValidationError:
            continue
        if parsed.summary.strip():
            return SummaryDraft(text=parsed.summary.strip(), method="llm", source_ids=[t.id for t in users],
                                important_ids=[users[i - 1].id for i in parsed.important if 1 <= i <= len(users)])
    return None


def standing_part(thought: Thought, superseded: Iterable[MemoryRow]) -> Thought | None:
    """A user message as far as what it said still stands: without the sentences that say a fact a
    correction superseded (`superseded`: the message's superseded rows), or None when nothing is left (or
    the message itself was the fact). "I live in Lisbon. My sister is a nurse.", its Lisbon statement
    corrected, is summarised as "My sister is a nurse."."""
    gone = [own_words(r) for r in superseded]
    if not gone:
        return thought
    if any(r.id == thought.id for r in superseded):
        return None

    def said(sentence: str) -> bool:
        told = told_before_question(sentence) if re.search(r"\?\W*$", sentence) else None
        return any(states(fact, sentence) or (told and states(fact, told)) for fact in gone)

    left = " ".join(s.strip() for s in sentences(thought.thought.strip()) if not said(s))
    return thought.model_copy(update={"thought": left}) if re.search(r"\w", left) else None


def summarise_chain(wb: Workbench, instance: str, chain_id: str, *, reason: Literal["ended", "quiet"]) -> bool:
    """Summarise one chain (and mark its important messages) unless its summary is current: same turns,
    made by the LLM or with none configured, superseded by no correction. Returns whether a summary was
    written.

    It is made from the statements that stand: what a correction superseded (in this chain or another) is
    left out (`standing_part`: the statement, not the rest of its message), so a chain holding a correction
    is summarised with the corrected fact alone. Drawn from the old fact as well, the summary was
    superseded with it as it was written, and everything else the session said was lost to retrieval."""
    thoughts = wb.thoughts.chain_thoughts(instance, chain_id)
    users = [t for t in thoughts if t.category == CATEGORY_USER]
    if not users:
        return False
    sid = derived_id("summary", chain_id)
    old = next(iter(wb.index.get(instance, [sid])), None)
    if old is not None and old.metadata.get("turns") == len(users) and not old.metadata.get("superseded_at") and (
            old.metadata.get("method") == "llm" or not wb.llm.configured):
        return False
    stale = superseded_statements(wb.index, instance, [t.id for t in users])
    standing = [s for t in thoughts if (s := standing_part(t, stale.get(t.id, ()))) is not None]
    draft = (llm_summary(wb, standing) if wb.llm.configured else None) or extractive_summary(standing)
    mark_important(wb, users, draft.important_ids if draft else ())
    if draft is not None:
        start, end = thoughts[0].timestamp, thoughts[-1].timestamp
        # A correction superseding a statement the summary says, since they were read, marks it as it should.
        known = {r.id for rows in stale.values() for r in rows}
        kept = supersession_of(wb.index, instance, draft.source_ids, known=known,
                               text=draft.text if draft.method == "extractive" else None)
        wb.index.add([MemoryRecord(
            instance=instance, id=sid, kind=SUMMARY_KIND, content=draft.text, created_at=end, chain_id=chain_id,
            event_time=event_time_of(start), tags=sorted({tag for t in users for tag in t.tags}),
            metadata={"chain_id": chain_id, "started_at": start.isoformat(), "ended_at": end.isoformat(),
                      "turns": len(users), "method": draft.method, "reason": reason,
                      "source_ids": draft.source_ids, **kept})])
    # A deletion of the chain that began meanwhile (its tombstone is set first and outlives it) may have
    # removed the chain's rows before these were written: they go too, so nothing of the chain is left.
    if wb.thoughts.r.exists(chain_tombstone(instance, chain_id)):
        wb.index.delete_chain(instance, chain_id)
        return False
    return draft is not None


def on_turn(wb: Workbench, user: Thought, *, ended: bool) -> None:
    """After a turn is stored and indexed: its message's important copy, and the chain's summary if it ended."""
    mark_important(wb, [user])
    if ended:
        summarise_chain(wb, user.instance, user.chain_id, reason="ended")


def summarise_quiet(wb: Workbench, instance: str, now: float | None = None, limit: int = SWEEP_LIMIT) -> int:
    """The sweep's part: summarise the chains whose last activity is `ABANDON_AFTER_S` or more ago and
    came after the previous sweep's mark (`SUMMARIES_SWEPT`; an instance's first sweep looks back
    `SWEEP_LOOKBACK_S`), at most `limit`, oldest first. Returns the summaries written."""
    cutoff = (now or time.time()) - ABANDON_AFTER_S
    r = wb.thoughts.r
    mark = r.zscore(SUMMARIES_SWEPT, instance)
    since = cutoff - SWEEP_LOOKBACK_S if mark is None else mark
    due = r.zrangebyscore(chains_key(instance), since, cutoff, start=0, num=limit, withscores=True)
    made = sum(summarise_chain(wb, instance, chain, reason="quiet") for chain, _ in due)
    # A full batch stops at its last chain (inclusive next time: summarising is idempotent).
    r.zadd(SUMMARIES_SWEPT, {instance: due[-1][1] if len(due) == limit else cutoff}, gt=True)
    return made


def summarise_instance(wb: Workbench, instance: str, *, progress: Progress | None = None) -> int:
    """Summarise every chain of the instance that ended or went quiet (the active ones are left to the
    sweep), idempotently. Returns the summaries written."""
    cutoff = time.time() - ABANDON_AFTER_S
    chains = wb.thoughts.r.zrange(chains_key(instance), 0, -1, withscores=True)
    made = 0
    for done, (chain, last_at) in enumerate(chains, start=1):
        ended = last_at > cutoff and _ended(wb, instance, chain)
        if last_at <= cutoff or ended:
            made += summarise_chain(wb, instance, chain, reason="ended" if ended else "quiet")
        if progress:
            progress(done, len(chains))
    return made


def _ended(wb: Workbench, instance: str, chain_id: str) -> bool:
    """Whether the chain's last answer was given with next_thought_needed = false."""
    last = wb.thoughts.chain_meta(instance, chain_id).get("last_answer_id")
    thoughts = wb.thoughts.get_many(instance, chain_id, [last]) if last else []
    return bool(thoughts) and not thoughts[0].next_thought_needed
