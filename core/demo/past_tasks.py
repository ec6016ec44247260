"""Demo past tasks: three users, 40 produced texts each over about seven months, through `ingest`.

Every topic of `past_tasks_content` becomes kick-off minutes, an email, notes, a plan and follow-up
minutes. Some plans get a second version a week later (the same execution ingested again), one text
per user is deleted by its user, and each user has made one internal memory query, so every part
of the Past tasks page has something to show.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from core.demo import marks
from core.demo.past_tasks_content import USERS
from core.past_tasks.models import PastTaskQuery
from core.past_tasks.search import run_internal_memory
from core.past_tasks.store import ProducedTextInput

if TYPE_CHECKING:
    from core.runtime import Workbench

# One query per user, made through the tool so the history is not empty.
DEMO_QUERIES = {"maria.lopez": "Stripe SDK crash iOS release", "tom.becker": "late pallet deliveries penalty",
                "aisha.khan": "confocal microscope booking"}
DEMO_QUERY_MAX_DISTANCE = 0.5  # wordllama puts relevant texts at 0.35-0.5 from a keyword query


MARK, TOOL_MARK = "past_task", "tool_run"


def load(wb: Workbench, say: Callable[[str], None]) -> None:
    reset(wb)  # loading twice gives the same data, not twice the data
    store = wb.past_tasks
    instance = wb.settings.instance
    now = datetime.now(UTC)
    for user_id, user in USERS.items():
        # A user of the same name keeps their own texts: the demo's are told apart by their marks.
        texts, updates, deleted = _texts(instance, user_id, user, now)
        stored = store.ingest(texts)
        marks.mark(wb, MARK, [s.user_task_execution_pk for s in stored])
        store.ingest(updates)
        store.mark_deleted(instance, user_id, stored[deleted].user_task_execution_pk)
        say(f"demo: {len(texts)} past tasks for {user_id} ({len(updates)} with a second version)")
        run = f"demo-{uuid.uuid4().hex}"
        marks.mark(wb, TOOL_MARK, [run])
        run_internal_memory(wb, PastTaskQuery(instance=instance, user_id=user_id, query=DEMO_QUERIES[user_id],
                                              max_distance=DEMO_QUERY_MAX_DISTANCE), execution_id=run)


def reset(wb: Workbench) -> None:
    pks, runs = marks.marked(wb, MARK), marks.marked(wb, TOOL_MARK)
    wb.past_tasks.delete_executions(wb.settings.instance, [int(pk) for pk in pks], runs)
    marks.unmark(wb, MARK, pks)
    marks.unmark(wb, TOOL_MARK, runs)


def _texts(instance: str, user_id: str, user: dict, now: datetime):
    rng = random.Random(user_id)  # the same texts on every load
    me = user["name"].split()[0]
    texts: list[ProducedTextInput] = []
    updates: list[ProducedTextInput] = []
    for i, topic in enumerate(user["topics"]):
        start = (now - timedelta(days=215 - i * 22 + rng.randint(0, 6))).replace(
            hour=rng.randint(8, 16), minute=rng.choice((0, 15, 30, 45)), second=0, microsecond=0)
        t = dict(topic, me=me, user_id=user_id)
        for kind, offset, title, body in (
            ("meeting minutes", 0, f"Minutes: {t['subject']} kick-off", _minutes),
            ("email", 1, f"Email to {t['recipient'][0]}: {t['subject']}", _email),
            ("note", 3, f"Notes on {t['subject']}", _notes),
            ("plan", 6, f"Plan: {t['subject']}", _plan),
            ("meeting minutes", rng.randint(24, 38), f"Minutes: {t['subject']} follow-up", _follow_up),
        ):
            when = min(start + timedelta(days=offset, minutes=rng.randint(0, 90)), now - timedelta(hours=2))
            item = ProducedTextInput(instance=instance, user_id=user_id, task=kind, title=title,
                                     production=body(t, when, rng), created_at=when,
                                     source_key=f"demo/{user_id}/{i}/{kind}/{offset}")
            texts.append(item)
            if kind == "plan" and i % 3 == 0:  # plans get revised once the first actions are done
                later = min(when + timedelta(days=8), now - timedelta(hours=1))
                updates.append(item.model_copy(update={
                    "created_at": later, "title": f"{title} (updated)",
                    "production": f"Update {later:%d %B}: {t['status']}\n\n{item.production}"}))
    return texts, updates, 5 * 5 + 2  # the notes of the sixth topic are deleted by the user


def _due(when: datetime, days: int) -> str:
    return f"{when + timedelta(days=days):%A %d %B}"


def _who(t: dict, owner: str) -> str:
    return "I" if owner == t["me"] else owner


def _minutes(t: dict, when: datetime, rng: random.Random) -> str:
    people = ", ".join([t["me"], *t["people"]])
    lines = [f"Date: {when:%A %d %B %Y}, {when:%H:%M}", f"Attendees: {people}", "",
             "## Context", t["summary"],
             "", "## Discussion", *[f"- {f}" for f in t["facts"]], f"- Risk raised: {t['risk']}",
             f"- Open question: {t['question']}", "", "## Decisions", *[f"- {d}" for d in t["decisions"]],
             "", "## Action items", *[f"- {o}: {a} (due {_due(when, d)})" for o, a, d in t["actions"]]]
    return "\n".join(lines)


def _email(t: dict, when: datetime, rng: random.Random) -> str:
    name, role = t["recipient"]
    greeting = ("Hello everyone," if name.startswith("the ") else f"Dear {name}," if name.startswith(
        ("Dr.", "Prof.")) else f"Hello {name.split()[0]},")
    opening = rng.choice(("Thank you for your time yesterday.", "Here is a follow-up to our discussion.",
                          "As promised, here is a short summary.", "I hope you are well."))
    steps = [f"- {_who(t, o)} will {a} by {_due(when, d)}." for o, a, d in t["actions"]]
    return "\n".join([greeting, "", f"{opening} {t['summary']}", "", " ".join(t["facts"][:2]), "",
                      "We agreed on the following:", *[f"- {d}" for d in t["decisions"]], "",
                      "Next steps:", *steps, "", f"One open question for you as {role}: {t['question']}", "",
                      rng.choice(("Best regards,", "Kind regards,", "Thanks,")), t["me"]])


def _notes(t: dict, when: datetime, rng: random.Random) -> str:
    return "\n".join([f"- {t['summary']}", *[f"- {f}" for f in t["facts"]], f"- Risk: {t['risk']}",
                      f"- Open question: {t['question']}",
                      f"- Talk to {t['people'][0]} before the decision on {_due(when, 2)}."])


def _plan(t: dict, when: datetime, rng: random.Random) -> str:
    steps = [f"{n}. {o}: {a} by {_due(when, d)}." for n, (o, a, d) in enumerate(t["actions"], 1)]
    steps.append(f"{len(steps) + 1}. Review {t['metric']} four weeks after the change.")
    return "\n".join([f"Goal: {t['goal']}", "", "Steps", *steps, "", "Decided so far",
                      *[f"- {d}" for d in t["decisions"]], "", "Risks", f"- {t['risk']}", "",
                      f"Success measure: {t['metric']}."])


def _follow_up(t: dict, when: datetime, rng: random.Random) -> str:
    owner = t["actions"][0][0]
    return "\n".join([f"Date: {when:%A %d %B %Y}, {when:%H:%M}",
                      f"Attendees: {', '.join([t['me'], *t['people']])}", "", "## Status", t["status"], "",
                      "## Reviewed", f"- Decision from the kick-off: {t['decisions'][0]}",
                      f"- {t['facts'][-1]}",
                      "", "## Next steps", f"- {owner}: report on {t['metric']} at the next meeting.",
                      f"- {t['me']}: share the status with {t['recipient'][0]}."])
