"""Which memory a correction supersedes, on the demo's conversations:
`python -m benchmarks.corrections [--data-dir DIR] [--json OUT]`.

The demo (`core.demo.load`, as `workbench demo load` fills a fresh data directory) holds 30 days of
conversations in one instance over six topics (`core.demo.feedback.TOPICS`): each topic's facts are told
once, in order, in the first sessions about it; later sessions ask, thank, and now and then correct
("Actually, we land at Itami, not Kansai."), whether or not the fact was told yet, after whatever
question came before. Each correction names one fact of its topic (`CORRECTS`), or none ("Nara is on
the Thursday": no fact says which day). Every correction formation read is scored:
- right: it superseded that fact, or the latest correction of it (a correction said again word for
  word is a repetition: it names what its earlier self corrected, and supersedes nothing);
- wrong: it superseded anything else;
- missed: it superseded nothing though the fact had been told before it;
- rightly none: nothing superseded, and the fact was not told before it (or never is).
Offline embedder, no LLM: formation's rules (`core.formation.supersede`). The demo tells each fact once, so
a statement that superseded a fact there (an update, `core.formation.updates`) replaced nothing: counted as
`updates`.

Then the cases of tests/data/supersessions.jsonl, each in an instance of its own: its facts told in
conversations of their own a day apart, then a later message in another one (as an import leaves them),
formed as `workbench formation run` forms them. The later message corrects one of the facts, or none:
it compares ("not to peanuts like me") or tells a fact about someone else ("My son is allergic to eggs,
not peanuts."), or it narrates a change (`group` "update": "We just moved to Denver last week") or nearly
does (`group` "near-miss": "My brother just moved to Denver"). `corrects` names the told message it
supersedes, or several (a correction or an update supersedes every fact stating the state it replaces).
Scored as above: right (exactly those), wrong (anything else, or something when it corrects nothing),
missed (nothing, or only some of them), rightly none; and by group. And statement by statement, for the cases that name them
(`statement`, `keeps`): whether the statement corrected is no longer retrieved, and whether the other
statements its messages told still are (a correction hides what it corrects, not the rest of the message).
"""

from __future__ import annotations

import argparse
import json
import uuid
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

from benchmarks.common import bench_workbench, machine, write_json
from core import demo
from core.conversation.imported import store_chains
from core.conversation.indexing import thought_records
from core.conversation.thoughts import CATEGORY_ASSISTANT, CATEGORY_USER, Thought
from core.demo.feedback import TOPICS
from core.formation.run import form_instance
from core.formation.supersede import own_words
from core.index.records import ROW_COLUMNS, row_from_tuple
from core.models import DEFAULT_PROFILE, PRESET_PROFILES
from core.retrieval.ranking import retrievable

CASES = Path(__file__).parents[1] / "tests" / "data" / "supersessions.jsonl"
OUTCOMES = ("right", "wrong", "missed", "rightly none")

# Each correction of the demo and the fact it corrects (None: no fact says it).
CORRECTS: dict[str, str | None] = {
    "Actually, we land at Itami, not Kansai.": TOPICS[0][1][0],
    "No, the ryokan is for three nights, not four.": TOPICS[0][1][1],
    "That's not right, Nara is on the Thursday.": None,
    "Actually, the target is 100 ms, not 120.": TOPICS[1][1][2],
    "That's not correct, Dana moved to billing; Ravi owns it now.": TOPICS[1][1][1],
    "No, the cut-over slipped to April.": TOPICS[1][1][1],
    "Actually, the race is on 25 May.": TOPICS[2][1][0],
    "No, the limit is 12 km, not 14.": TOPICS[2][1][1],
    "That's wrong, my pace was 5:05 per km.": TOPICS[2][1][2],
    "Actually, it's mint, not basil.": TOPICS[3][1][0],
    "No, the price goes up to 49 euros.": TOPICS[3][1][2],
    "That's not it, the window is in the bedroom.": TOPICS[3][1][1],
    "Actually, interviews moved to Wednesdays.": TOPICS[4][1][0],
    "No, the limit is 95,000 for senior roles.": TOPICS[4][1][2],
    "That's not right, she meets the team on Monday.": TOPICS[4][1][1],
    "Actually, the lesson is at 6 pm.": TOPICS[5][1][0],
    "No, it's the B1 exam now.": TOPICS[5][1][1],
    "That's wrong, it was twenty sentences.": TOPICS[5][1][2],
}


def said_of(message: str) -> str:
    """The fact or correction of the demo a message says: a session may open with thanks or an apology
    before it ("Got it. Candidate Priya Nair did well …")."""
    for text in (*CORRECTS, *(fact for _, facts, _, _ in TOPICS for fact in facts)):
        if message == text or message.endswith(" " + text):
            return text
    return message


def score(wb, instance: str | None = None) -> dict:
    """Each correction observation of `instance` (the default one) scored against `CORRECTS` (see the
    module)."""
    with wb.index.pool.connection() as conn:
        rows = conn.execute(
            "SELECT o.id, o.created_at, o.metadata->>'supersedes', s.content FROM memory o "
            "JOIN memory s ON s.instance = o.instance AND s.id = o.metadata->>'source_thought' "
            "WHERE o.instance = %s AND o.kind = 'observation' ORDER BY o.created_at, o.id",
            (instance or wb.settings.instance,)).fetchall()
    # What each observation is about: the fact its message told or corrects; a correction that names no
    # fact, itself.
    said = {oid: said_of(message) for oid, _, _, message in rows}
    about = {oid: CORRECTS.get(text) or text for oid, text in said.items()}
    told: dict[str, object] = {}
    for oid, at, _, _ in rows:
        if said[oid] not in CORRECTS:
            told.setdefault(said[oid], at)
    outcomes, wrong = Counter(), []
    for oid, at, target, _ in rows:
        if said[oid] not in CORRECTS:
            continue
        if target is not None:
            right = about.get(target) == about[oid]
            outcomes["right" if right else "wrong"] += 1
            if not right:
                wrong.append({"correction": said[oid], "superseded": said.get(target, target)})
        else:
            fact = CORRECTS[said[oid]]
            outcomes["missed" if fact in told and told[fact] < at else "rightly none"] += 1
    total = sum(outcomes.values())
    # The demo tells each fact once: a statement that superseded a fact (an update) replaced nothing there.
    updates = [{"statement": said.get(by, by), "superseded": said.get(oid, oid)}
               for oid, by in _superseded_by(wb, instance or wb.settings.instance)]
    return {"corrections": total, **{k: outcomes[k] for k in OUTCOMES},
            "correct_share": round((outcomes["right"] + outcomes["rightly none"]) / max(1, total), 3),
            "wrong_examples": wrong[:10], "updates": len(updates), "update_examples": updates[:10]}


def _superseded_by(wb, instance: str) -> list[tuple[str, str]]:
    """(fact, the statement that superseded it) for every fact of `instance` a statement, not a correction,
    superseded (an update: `core.formation.updates`); not the facts' copies."""
    with wb.index.pool.connection() as conn:
        return conn.execute("SELECT t.id, o.id FROM memory t JOIN memory o ON o.instance = t.instance "
                            "AND o.id = t.metadata->>'superseded_by' WHERE t.instance = %s AND t.kind = ANY(%s) "
                            "AND o.metadata->>'message_kind' = 'statement' ORDER BY t.created_at, t.id",
                            (instance, ["observation", "user"])).fetchall()


def load_cases(path: Path = CASES) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _store_chain(wb, instance: str, chain: str, user_text: str, at: datetime) -> None:
    """One user message and a short answer, stored and indexed without formation, as an import leaves them."""
    said = ((user_text, CATEGORY_USER), ("Noted.", CATEGORY_ASSISTANT))
    thread = [Thought(id=f"{chain}-{i}", instance=instance, chain_id=chain, thought=text, seq=i + 1,
                      timestamp=at + timedelta(seconds=20 * i), thought_number=1, category=category)
              for i, (text, category) in enumerate(said)]
    store_chains(wb.thoughts, instance, [(chain, thread)])
    wb.index.add(thought_records(thread, {t.id for t in thread}))


def score_cases(wb, cases: list[dict] | None = None, prefix: str | None = None) -> dict:
    """Each case of `cases` (tests/data/supersessions.jsonl by default) formed in an instance of its own
    (see the module) and scored by what its later message superseded."""
    cases = load_cases() if cases is None else cases
    prefix = prefix or f"sup-{uuid.uuid4().hex[:8]}"
    outcomes, wrong, missed, by_group = Counter(), [], [], {}
    statements = {"corrected": 0, "hidden": 0, "others": 0, "others_kept": 0, "others_hidden": []}
    start = datetime.now(UTC) - timedelta(days=len(cases) + 30)
    for n, case in enumerate(cases):
        instance = f"{prefix}-{n}"
        for i, text in enumerate(case["told"]):
            _store_chain(wb, instance, f"told-{i}", text, start + timedelta(days=i))
        _store_chain(wb, instance, "later", case["later"], start + timedelta(days=len(case["told"]) + 1))
        form_instance(wb, instance)
        with wb.index.pool.connection() as conn:
            # Every fact superseded (a message's observations, or the message itself), by whatever observation
            # superseded it: a correction or an update may supersede several facts (not their copies).
            superseded = sorted({row[0] for row in conn.execute(
                "SELECT s.content FROM memory t JOIN memory o ON o.instance = t.instance "
                "AND o.id = t.metadata->>'superseded_by' JOIN memory s ON s.instance = t.instance "
                "AND s.id = COALESCE(t.metadata->>'source_thought', t.id) "
                "WHERE t.instance = %s AND t.kind = ANY(%s)", (instance, ["observation", "user"])).fetchall()})
        _statements_kept(wb, instance, case, statements)
        expected = case["corrects"]
        expected = sorted({expected} if isinstance(expected, str) else set(expected or ()))
        group = case.get("group", "correction")
        if superseded == expected:
            outcome = "right" if expected else "rightly none"
        elif set(superseded) - set(expected):
            outcome = "wrong"
            wrong.append({"later": case["later"], "superseded": superseded, "corrects": expected})
        else:  # nothing, or only some of the facts it replaces
            outcome = "missed"
            missed.append({"later": case["later"], "superseded": superseded, "corrects": expected})
        outcomes[outcome] += 1
        by_group.setdefault(group, Counter())[outcome] += 1
    total = sum(outcomes.values())
    return {"cases": total, **{k: outcomes[k] for k in OUTCOMES},
            "correct_share": round((outcomes["right"] + outcomes["rightly none"]) / max(1, total), 3),
            "by_group": {g: {"cases": sum(c.values()), **{k: c[k] for k in OUTCOMES}}
                         for g, c in by_group.items()},
            "statements": {**statements, "others_hidden": statements["others_hidden"][:10]},
            "wrong_examples": wrong[:20], "missed_examples": missed[:20]}


def _statements_kept(wb, instance: str, case: dict, into: dict) -> None:
    """Statement by statement, for a case that names them: whether the statement its correction corrects
    (`statement`) is no longer retrieved, and whether each other statement its messages told (`keeps`) still
    is: found in a memory the default profile retrieves (`retrievable`), in the memory's own words (a
    correction's note of what it corrected aside). Counted into `into`."""
    if "keeps" not in case:
        return
    with wb.index.pool.connection() as conn:
        rows = [row_from_tuple(r) for r in conn.execute(
            f"SELECT {ROW_COLUMNS} FROM memory WHERE instance = %s", (instance,)).fetchall()]
    profile = PRESET_PROFILES[DEFAULT_PROFILE]
    current = [own_words(r).casefold() for r in rows if retrievable(r, profile)]
    if case.get("statement"):
        into["corrected"] += 1
        into["hidden"] += not any(case["statement"].casefold() in text for text in current)
    for statement in case["keeps"]:
        kept = any(statement.casefold() in text for text in current)
        into["others"] += 1
        into["others_kept"] += kept
        if not kept:
            into["others_hidden"].append(statement)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", help="servers' directory (default: a fresh temporary one, removed after)")
    ap.add_argument("--json", dest="out", help="write the result as JSON to OUT")
    args = ap.parse_args(argv)
    with bench_workbench(args.data_dir) as wb:
        demo.load(wb, say=lambda _: None)
        result = {**score(wb), "cases": score_cases(wb), "machine": machine()}
    write_json(result, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
