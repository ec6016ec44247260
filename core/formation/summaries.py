"""Session summaries: seed 003's session-summaries index (`idx:{instance}:session-summaries`).

A chain that ended (an answer given with `next_thought_needed = false`) or went quiet for
`ABANDON_AFTER_S` (abandoned, DESIGN §11) is summarised into one `session_summary` memory: by the LLM
when one is configured (JSON; asked once more when the reply is not, then the extractive summary), else
extractively: the statements the user made that tell something (what formation keeps of a message,
without requests, questions, thanks or remarks on the answer) ranked by TF-IDF centrality in the chain, the
best `SUMMARY_SENTENCES` in the order they were said. A chain that told nothing, or whose summary would
repeat one of its observations word for word, has none. Its metadata keeps the chain's time span, the turns
it covers, the rules that made it and the thoughts it drew on. Its id comes from the chain, so summarising
again replaces it: one summary per chain, made again only when the chain grew, the rules changed, or an LLM
can now do better than the rules.

When: an ended chain at once (`on_turn`, from the turn); a quiet one by the sweep (`summarise_quiet`,
with the abandonment sweep); the chains of an instance by `summarise_instance` (`workbench formation
run`, after an import or once an LLM is configured: all of them, or those `core.formation.run` names).
A summary that said a fact a correction or an update superseded is marked superseded with it
(`core.formation.supersede`), and made again from what stands: by the turn that told the correction
(`summarise_superseded`), or, superseded by `workbench formation run`, by the same run (`unsummarised`).
"""

from __future__ import annotations

import math
import re
import time
from collections import Counter
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Literal

import numpy as np
from psycopg import sql
from pydantic import BaseModel, ValidationError

from core.conversation.feedback import _APOSTROPHES, ABANDON_AFTER_S, is_acknowledgement
from core.conversation.keys import (
    SUMMARIES_SWEPT,
    chain_meta_key,
    chain_tombstone,
    chains_key,
    summarising_key,
)
from core.conversation.prompts import quoted
from core.conversation.thoughts import CATEGORY_ASSISTANT, CATEGORY_USER, Thought
from core.errors import ProviderError
from core.formation.important import derived_id, mark_important
from core.formation.kinds import sentences, told_before_question
from core.formation.observations import SERVER_FAILURES, rules_formation
from core.formation.supersede import own_words, states, superseded_statements, supersession_of
from core.index.records import event_time_of
from core.llm import Message
from core.models import MemoryRecord, MemoryRow

if TYPE_CHECKING:
    from core.runtime import Workbench

SUMMARY_KIND = "session_summary"
SUMMARY_SENTENCES = 3
# The extractive rules' version, kept on each summary they write: one written by older rules is made again.
# 2: only the statements formation keeps, that tell something, and none that repeats one observation.
# 3: a superseded statement is left out where the message's sentences run it together with pasted code.
SUMMARY_RULES = 3
# The claim on storing a chain's summary (`summarising_key`) is held for the write alone (a few index reads
# and writes): kept at most SUMMARY_CLAIM_S (a process that died holding it), waited for SUMMARY_WAIT_S.
SUMMARY_CLAIM_S = 30
SUMMARY_WAIT_S = 2.0
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
    """(thought id, statement) of every statement the user made that tells something, once (the first
    time: a statement said again, in the same words, would be its own most central neighbour and fill the
    summary twice).

    A message's statements are the facts formation keeps of it (`observations.rules_formation`: a statement's
    or a correction's, and what a question tells before it asks); instructions, questions and
    acknowledgements leave none, nor does code pasted into a message. Of those, a statement that only
    speaks of the exchange tells nothing (`tells_something`: "That didn't work.", "Now in bullet points.").
    Before, every sentence of every user message was a candidate: instructions ("Make it more casual.")
    and filler filled the summaries of a ChatGPT import: 83 of 836 held "Hmm, that didn't work."."""
    out, seen = [], set()
    for t in thoughts:
        if t.category != CATEGORY_USER:
            continue
        formed = rules_formation(t.thought)
        cut = formed.joined.keys() | formed.joined.values()
        for n, fact in enumerate(formed.facts):  # pasted code leaves none (`kinds._PASTED`)
            fact = " ".join(fact.split())
            # a clause cut before "and I" (`core.formation.clauses`) ends without its sentence's stop
            fact += "." if n in cut and fact[-1:].isalnum() else ""
            words = tuple(_WORD.findall(fact.lower()))
            if len(words) >= 3 and words not in seen and tells_something(fact):
                seen.add(words)
                out.append((t.id, fact))
    return out


_MARKER = re.compile(r"\[[^\]]*\]")  # what an import writes for a message of attachments alone
# A statement about the assistant's last answer, opening with what refers to it and naming nothing ("That
# didn't work.", "It's too long.", "This is great."); "That's why we moved to Denver." names a place.
_ABOUT_THE_ANSWER = re.compile(
    r"^\W*(?:(?:and|but|so|ok|okay|now|also)\s+)*(?:it|this|that|these|those)(?!\s+(?:morning|afternoon|"
    r"evening|night|week|weekend|month|year|time|day|summer|winter|spring|autumn|fall)s?\b)(?:'s|'ll|'d)?(?![\w'-])",
    re.IGNORECASE)
# A thing of the user's world the demonstrative points at: "That restaurant was great." is no remark on
# the answer; "That video you showed me…", "This version is better" are.
_WORLD_THING = re.compile(
    r"^\W*(?:(?:and|but|so|ok|okay|now|also)\s+)*(?:this|that|these|those)\s+(?!(?:answer|response|reply|one|list|"
    r"summary|draft|version|video|link|example|explanation|code|suggestion|idea|plan|text|email|message|"
    r"translation|tip|advice|part|point|bit|format|table|chart|image|picture|photo|recipe|option|step|"
    r"sentence|paragraph|word|story|poem|joke|output|result|script|snippet|fix|way)s?\b)[a-z-]+\s+"
    r"(?:is|was|are|were)\b", re.IGNORECASE)
# A request for the answer's form without a clause of its own: a preposition first, no subject or verb
# ("Now in bullet points.", "In Python, please, with comments."). "In May we moved to Porto." has both.
_FORM_REQUEST = re.compile(
    r"^\W*(?:(?:and|but|so|ok|okay|now|also|just|then)\s+)*(?:in|as|with|without|into|like|for|more|less)\b",
    re.IGNORECASE)
# Whose world a statement speaks of ("It was my sister, not my brother.", "That isn't right, she's a dentist.").
_SOMEONE = re.compile(r"\b(?:my|mine|our|ours|we|we're|we've|we'd|we'll|us|he|he's|she|she's|him|her|his|hers|"
                      r"they|they're|their|them)\b", re.IGNORECASE)
_CLAUSE = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|me|my|we|we're|we've|our|you|he|she|it|it's|they|there|is|are|"
                     r"was|were|am|be|been|has|have|had|do|does|did|will|would|can|could|should|must|\w+'s|"
                     r"\w+ed)\b", re.IGNORECASE)
_NAMES = re.compile(r"(?<=\w)[\s,;:(\"'-]+(?!I\b)[A-Z]|\d")  # a capitalised word after the first (not "I"), a number


def tells_something(statement: str) -> bool:
    """Whether a statement tells something of the user's world, not of the exchange: no thanks, no
    attachment's marker, not one about the assistant's last answer (`_ABOUT_THE_ANSWER`, unless it speaks of
    someone: "It was my sister, not my brother.", or of a thing of theirs: "That restaurant was great.") nor a
    request for its form (`_FORM_REQUEST`), unless it names something (a capitalised word after the first, a
    number)."""
    if is_acknowledgement(statement):  # "Thanks for the tips!" after a fact: formation keeps it as one
        return False
    if not re.search(r"\w", _MARKER.sub("", statement)):  # "[photo: IMG_4032.jpeg]": an import's attachment
        return False
    if _NAMES.search(statement):
        return True
    plain = statement.translate(_APOSTROPHES)
    if _ABOUT_THE_ANSWER.match(plain):
        return bool(_SOMEONE.search(plain) or _WORLD_THING.match(plain))
    return not (_FORM_REQUEST.match(plain) and not _CLAUSE.search(plain))


def repeats_an_observation(text: str, observations: Iterable[str]) -> bool:
    """Whether `text` says, word for word, nothing one of the observations does not (their words in the
    same order, the summary's as a run of them): such a summary is a second copy of that fact."""
    words = " ".join(_WORD.findall(text.lower()))
    return bool(words) and any(f" {words} " in f" {' '.join(_WORD.findall(o.lower()))} " for o in observations)


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
    """The chain's `SUMMARY_SENTENCES` most central statements that tell something, in their order; None
    when the user told nothing (only questions, requests and thanks)."""
    found = statement_sentences(thoughts)
    if not found:
        return None
    scores = centrality([s for _, s in found])
    best = sorted(sorted(range(len(found)), key=lambda i: -scores[i])[:SUMMARY_SENTENCES])
    return SummaryDraft(text=" ".join(found[i][1] for i in best), method="extractive",
                        source_ids=list(dict.fromkeys(found[i][0] for i in best)))


class LLMUse:
    """Whether a run of summaries still asks the LLM: once its server failed on SERVER_FAILURES summaries in
    a row (a call failing after its retries, not a reply without the JSON asked), the rules make the run's
    other summaries. A dead server was asked again for every conversation: a formation run of 21 messages
    spent 9 min 17 s on 604 summary calls against a server answering 500."""

    def __init__(self) -> None:
        self.failed_in_a_row = 0
        self.skipped = 0  # summaries the rules made because the LLM was no longer asked

    @property
    def asking(self) -> bool:
        return self.failed_in_a_row < SERVER_FAILURES

    def note(self) -> str | None:
        """What the run's result says when the LLM was not asked for some summaries."""
        if not self.skipped:
            return None
        return (f"session summaries: the LLM server failed on {SERVER_FAILURES} summaries in a row, so the rules "
                f"made the next {self.skipped:,} (a later `workbench formation run` gives them to the LLM again)")


def llm_summary(wb: Workbench, thoughts: list[Thought], use: LLMUse | None = None) -> SummaryDraft | None:
    """The LLM's summary and important picks; None when it failed or never answered with the JSON asked.
    `use`: the run's count of the server's failures in a row (`LLMUse`)."""
    messages = [t for t in thoughts if t.category in (CATEGORY_USER, CATEGORY_ASSISTANT)][-TRANSCRIPT_MESSAGES:]
    users = [t for t in messages if t.category == CATEGORY_USER]
    number = {t.id: i for i, t in enumerate(users, start=1)}
    lines = [f"[{number[t.id]}] user: {quoted(t.thought[:MESSAGE_CHARS])}" if t.id in number
             else f"assistant: {quoted(t.thought[:MESSAGE_CHARS])}" for t in messages]
    prompt = [Message(role="system", content=SUMMARY_SYSTEM), Message(role="user", content="\n".join(lines))]
    for _ in range(LLM_ATTEMPTS):
        try:
            reply = wb.llm.complete(prompt, model=wb.settings.model_fast, temperature=0.0, max_tokens=300,
                                    json_mode=True)
        except ProviderError:
            if use is not None:
                use.failed_in_a_row += 1
            return None
        if use is not None:
            use.failed_in_a_row = 0
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
    """A user message as far as what it said still stands: without the statements a correction or an
    update superseded (`superseded`: the message's superseded rows), or None when nothing is left (or the
    message itself was the fact). "I live in Lisbon. My sister is a nurse.", its Lisbon statement
    corrected, is summarised as "My sister is a nurse.".

    A statement is cut out where the message says it word for word (`_verbatim`), then every sentence that
    says one is left out: the message's sentences are not always formation's statements. Pasted code and
    the statement after it ("```…``` Maya is 5 now.") are one sentence, which does not say the statement
    alone, so the summary of a ChatGPT import said "Maya is 5 now" as current after "Maya is 6 now"."""
    gone = [own_words(r) for r in superseded]
    if not gone:
        return thought
    if any(r.id == thought.id for r in superseded):
        return None

    def said(sentence: str) -> bool:
        told = told_before_question(sentence) if re.search(r"\?\W*$", sentence) else None
        return any(states(fact, sentence) or (told and states(fact, told)) for fact in gone)

    text = thought.thought
    for fact in gone:
        text = _verbatim(fact).sub(" ", text)
    left = " ".join(s.strip() for s in sentences(text.strip()) if not said(s))
    return thought.model_copy(update={"thought": left}) if re.search(r"\w", left) else None


def _verbatim(fact: str) -> re.Pattern[str]:
    """The fact's words as a message says them, whatever the spacing between them."""
    return re.compile(r"\s+".join(map(re.escape, fact.split())))


def summarise_chain(wb: Workbench, instance: str, chain_id: str, *, reason: Literal["ended", "quiet"],
                    use: LLMUse | None = None) -> bool:
    """Summarise one chain (and mark its important messages) unless its summary is current (`current`).
    Returns whether this call wrote a summary: of processes summarising the chain at once (two sweeps, two
    API replicas, a sweep and `workbench formation run`), the first to store it counts it; the others find
    it stored and neither write nor count it (`_summarise`), so that sweeps at once count each summary once.

    It is made from the statements that stand: what a correction superseded (in this chain or another) is
    left out (`standing_part`: the statement, not the rest of its message), so a chain holding a correction
    is summarised with the corrected fact alone. Drawn from the old fact as well, the summary was
    superseded with it as it was written, and everything else the session said was lost to retrieval.

    None is made, and one made before is removed, when the chain told nothing (`statement_sentences`) or
    the summary would say word for word what one of its observations says (`repeats_an_observation`: a
    chain of requests and one fact): a second copy of that fact, ranked beside it, only pushed another
    memory out of the top k."""
    return bool(_summarise(wb, instance, chain_id, reason=reason, use=use))


def _summarise(wb: Workbench, instance: str, chain_id: str, *, reason: Literal["ended", "quiet"],
               use: LLMUse | None = None) -> bool | None:
    """`summarise_chain`'s work. The summary is drawn up unclaimed (a process killed while the LLM writes it
    blocks no other), then stored under the chain's claim (`summarising_key`, held for the write alone), and
    not stored when another process stored it meanwhile. None when another process held the claim
    throughout SUMMARY_WAIT_S."""
    counted = _counted(wb, instance, [chain_id])[0]  # before the thoughts: a turn after them is seen next time
    thoughts = wb.thoughts.chain_thoughts(instance, chain_id)
    users = [t for t in thoughts if t.category == CATEGORY_USER]
    if not users:
        _mark_summarised(wb, instance, chain_id, counted, by_llm=False)
        return False
    sid = derived_id("summary", chain_id)
    old = next(iter(wb.index.get(instance, [sid])), None)
    if old is not None and current(old.metadata, len(users), llm=wb.llm.configured):
        _mark_summarised(wb, instance, chain_id, counted, by_llm=old.metadata.get("method") == "llm")
        return False
    stale = superseded_statements(wb.index, instance, [t.id for t in users])
    standing = [s for t in thoughts if (s := standing_part(t, stale.get(t.id, ()))) is not None]
    asking = wb.llm.configured and (use is None or use.asking)
    if wb.llm.configured and not asking:
        use.skipped += 1
    by_llm = llm_summary(wb, standing, use) if asking else None
    draft = by_llm or extractive_summary(standing)
    mark_important(wb, users, draft.important_ids if draft else ())
    if draft is not None and repeats_an_observation(draft.text, _observations(wb, instance, chain_id)):
        draft = None
    key = summarising_key(instance, chain_id)
    if (token := _claim(wb, key)) is None:
        return None
    try:
        if draft is not None:
            now = next(iter(wb.index.get(instance, [sid])), None)
            if now is not None and current(now.metadata, len(users), llm=wb.llm.configured):
                return False  # another process (a sweep at once) stored it since it was read, and counts it
            start, end = thoughts[0].timestamp, thoughts[-1].timestamp
            # A correction superseding a statement the summary says, since they were read, marks it as it should.
            known = {r.id for rows in stale.values() for r in rows}
            kept = supersession_of(wb.index, instance, draft.source_ids, known=known,
                                   text=draft.text if draft.method == "extractive" else None)
            wb.index.add([MemoryRecord(
                instance=instance, id=sid, kind=SUMMARY_KIND, content=draft.text, created_at=end,
                chain_id=chain_id, event_time=event_time_of(start), tags=sorted({tag for t in users for tag in t.tags}),
                metadata={"chain_id": chain_id, "started_at": start.isoformat(), "ended_at": end.isoformat(),
                          "turns": len(users), "method": draft.method, "reason": reason, "rules": SUMMARY_RULES,
                          "source_ids": draft.source_ids, **kept})])
        elif old is not None:
            wb.index.delete(instance, [sid])
        _mark_summarised(wb, instance, chain_id, counted, by_llm=by_llm is not None)
    finally:
        wb.thoughts.release(key, token)
    # A deletion of the chain that began meanwhile (its tombstone is set first and outlives it) may have
    # removed the chain's rows before these were written: they go too, so nothing of the chain is left.
    if wb.thoughts.r.exists(chain_tombstone(instance, chain_id)):
        wb.index.delete_chain(instance, chain_id)
        return False
    return draft is not None


def _claim(wb: Workbench, key: str) -> str | None:
    """The chain's summary claim, waited for up to SUMMARY_WAIT_S (another process holds it for a write)."""
    deadline = time.monotonic() + SUMMARY_WAIT_S
    while (token := wb.thoughts.claim(key, SUMMARY_CLAIM_S)) is None and time.monotonic() < deadline:
        time.sleep(0.02)
    return token


def current(meta: dict, turns: int, *, llm: bool) -> bool:
    """Whether a summary (its metadata) stands for a chain of `turns` user messages: made from as many,
    superseded by no correction, and made by the LLM, or, with none configured, by the current rules
    (`SUMMARY_RULES`)."""
    return (meta.get("turns") == turns and not meta.get("superseded_at")
            and (meta.get("method") == "llm" or (not llm and meta.get("rules") == SUMMARY_RULES)))


def _observations(wb: Workbench, instance: str, chain_id: str) -> list[str]:
    with wb.index.pool.connection() as conn:
        rows = conn.execute("SELECT content FROM memory WHERE instance = %s AND chain_id = %s "
                            "AND kind = 'observation'", (instance, chain_id), prepare=False).fetchall()
    return [r[0] for r in rows]


# The chain's user turns as its meta counts them when it was last summarised, and by what: "<turns>/<turns
# deleted>/<llm or the rules' version>", whether a summary was written or none was due. Set only on a chain
# still there (a deletion meanwhile removed its meta: no stray key is made again).
_SUMMARISED = "summarised"
_MARK = "if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) end"


def _counted(wb: Workbench, instance: str, chains: list[str]) -> list[list[str | None]]:
    """Each chain's meta fields `turns`, `turns_deleted` and `summarised`, in one round trip: the first two
    change with every user turn added or deleted."""
    p = wb.thoughts.r.pipeline(transaction=False)
    for chain in chains:
        p.hmget(chain_meta_key(instance, chain), ["turns", "turns_deleted", _SUMMARISED])
    return p.execute()


def _mark_of(counted: list[str | None], *, by_llm: bool) -> str:
    return f"{counted[0] or 0}/{counted[1] or 0}/{'llm' if by_llm else SUMMARY_RULES}"


def _mark_summarised(wb: Workbench, instance: str, chain_id: str, counted: list[str | None], *,
                     by_llm: bool) -> None:
    wb.thoughts.r.eval(_MARK, 1, chain_meta_key(instance, chain_id), _SUMMARISED, _mark_of(counted, by_llm=by_llm))


def summarise_again(wb: Workbench, instance: str, chain_id: str) -> None:
    """Have the next `workbench formation run` summarise the chain again: its summary was deleted while
    its turns stayed (a statement forgotten from one of its messages, `core.admin.deletion`)."""
    wb.thoughts.r.hdel(chain_meta_key(instance, chain_id), _SUMMARISED)


def unsummarised(wb: Workbench, instance: str) -> list[str]:
    """The chains whose summary may be out of date (what an incremental `workbench formation run`
    summarises): those that gained or lost a user turn since they were last summarised, or were never
    summarised, or were summarised by older rules, or by the rules while an LLM is now configured; and
    those whose summary a correction has superseded since."""
    chains = wb.thoughts.r.zrange(chains_key(instance), 0, -1)
    llm = wb.llm.configured
    due = {chain for chain, counted in zip(chains, _counted(wb, instance, chains), strict=True)
           if counted[2] not in (_mark_of(counted, by_llm=llm), _mark_of(counted, by_llm=True))}
    if wb.index.partition_exists(instance):
        with wb.index.pool.connection() as conn:
            due |= {r[0] for r in conn.execute(
                "SELECT chain_id FROM memory WHERE instance = %s AND kind = %s AND metadata ? 'superseded_at'",
                (instance, SUMMARY_KIND), prepare=False).fetchall()}
    return [chain for chain in chains if chain in due]


def on_turn(wb: Workbench, user: Thought, *, ended: bool) -> None:
    """After a turn is stored and indexed: its message's important copy, the summaries its statements
    superseded made again (`summarise_superseded`), and the chain's summary if it ended."""
    mark_important(wb, [user])
    summarise_superseded(wb, user)
    if ended:
        summarise_chain(wb, user.instance, user.chain_id, reason="ended")


# The chains whose summary a statement of the message superseded (the mark names the observation), with
# the reason they were summarised for.
_SUPERSEDED_BY = sql.SQL("""SELECT DISTINCT s.chain_id, s.metadata->>'reason' FROM {table} s
JOIN {table} o ON o.instance = s.instance AND o.id = s.metadata->>'superseded_by'
WHERE s.instance = %s AND s.kind = 'session_summary' AND s.metadata ? 'superseded_at'
  AND o.metadata->>'source_thought' = %s""")  # the instance's partition (`MemoryIndex.table`)


def summarise_superseded(wb: Workbench, user: Thought) -> int:
    """Make again, from the statements that stand, the summaries that the correction or update this
    message told has superseded (`supersede` marks those that said the old fact): marked, a summary is
    left out of retrieval with everything else its session said, until `workbench formation run` made it
    again. By the rules it is a few reads of one chain; with an LLM configured, one call per summary (a
    message seldom supersedes a fact, and then that of one or two sessions). Returns the summaries written."""
    if (table := wb.index.table(user.instance)) is None:
        return 0
    with wb.index.pool.connection() as conn:
        due = conn.execute(_SUPERSEDED_BY.format(table=table), (user.instance, user.id)).fetchall()
    return sum(summarise_chain(wb, user.instance, chain, reason="quiet" if reason == "quiet" else "ended")
               for chain, reason in due)


def summarise_quiet(wb: Workbench, instance: str, now: float | None = None, limit: int = SWEEP_LIMIT) -> int:
    """The sweep's part: summarise the chains whose last activity is `ABANDON_AFTER_S` or more ago and
    came after the previous sweep's mark (`SUMMARIES_SWEPT`; an instance's first sweep looks back
    `SWEEP_LOOKBACK_S`), at most `limit`, oldest first. Returns the summaries written."""
    cutoff = (now or time.time()) - ABANDON_AFTER_S
    r = wb.thoughts.r
    mark = r.zscore(SUMMARIES_SWEPT, instance)
    since = cutoff - SWEEP_LOOKBACK_S if mark is None else mark
    due = r.zrangebyscore(chains_key(instance), since, cutoff, start=0, num=limit, withscores=True)
    made, busy = 0, []
    for chain, last_at in due:
        written = _summarise(wb, instance, chain, reason="quiet")
        made += bool(written)
        busy += [last_at] if written is None else []
    # A full batch stops at its last chain (inclusive next time: summarising is idempotent). A chain whose
    # claim another process held keeps the mark at it: should that process stop, a later sweep summarises it
    # (should it finish, its own mark, further on, stands).
    mark = due[-1][1] if len(due) == limit else cutoff
    r.zadd(SUMMARIES_SWEPT, {instance: min([mark, *busy])}, gt=True)
    return made


def summarise_instance(wb: Workbench, instance: str, *, chains: Iterable[str] | None = None,
                       progress: Progress | None = None, use: LLMUse | None = None) -> int:
    """Summarise every chain of the instance (or those of `chains`) that ended or went quiet (the active
    ones are left to the sweep), idempotently. Returns the summaries written. `use`: the LLM's failures
    over the run (`LLMUse`; one of its own when not given)."""
    use = use or LLMUse()
    cutoff = time.time() - ABANDON_AFTER_S
    every = wb.thoughts.r.zrange(chains_key(instance), 0, -1, withscores=True)
    wanted = None if chains is None else set(chains)
    due = [(chain, last_at) for chain, last_at in every if wanted is None or chain in wanted]
    made = 0
    for done, (chain, last_at) in enumerate(due, start=1):
        ended = last_at > cutoff and _ended(wb, instance, chain)
        if last_at <= cutoff or ended:
            made += summarise_chain(wb, instance, chain, reason="ended" if ended else "quiet", use=use)
        if progress:
            progress(done, len(due))
    return made


def _ended(wb: Workbench, instance: str, chain_id: str) -> bool:
    """Whether the chain's last answer was given with next_thought_needed = false."""
    last = wb.thoughts.chain_meta(instance, chain_id).get("last_answer_id")
    thoughts = wb.thoughts.get_many(instance, chain_id, [last]) if last else []
    return bool(thoughts) and not thoughts[0].next_thought_needed
