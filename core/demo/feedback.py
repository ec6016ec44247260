"""Demo: 30 days of conversations for the Feedback page, every turn run through ui_remember itself.

A simulated user replays sessions day by day on a simulated clock. How the user reacts to an answer
(a quick thank-you, a neutral follow-up, a correction, a slow reply, leaving) is drawn at random with
odds that depend on the answer's model and profile, so the deep model earns somewhat better feedback.
The feedback itself is never written here: ui_remember scores each answer from the next turn's text and
timing, and the abandonment sweep (run on the simulated clock, as a live service would) marks answers
left alone for 10 minutes. Some answers are also rated up or down explicitly, as a user would with the
thumbs (the store's own rating write, which `rate_answer` makes); those draws have a random stream of
their own, so the conversations are the same with or without them. Answers are extractive, so loading
the demo never spends LLM tokens.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from core.llm import NoLLM
from core.conversation.metrics import Origin
from core.conversation.turn import Remember, UiRememberParams
from core.demo import marks
from core.runtime import Workbench

PREFIX = "fb-"
MARK = "feedback-chain"
DAYS = 30
SEED = 20240603

# (tags, facts told in order, questions, corrections): the corrections read as corrections to
# ui_remember's scorer ("actually", "no,", "that's not", ...); questions and openings read as neither.
TOPICS: list[tuple[list[str], list[str], list[str], list[str]]] = [
    (["travel"], [
        "I'm going to Kyoto from 3 to 10 April with Sam; we land at Kansai airport.",
        "For Kyoto we booked a ryokan near Gion for the first four nights.",
        "Sam wants to see the Fushimi Inari shrine early in the morning, before the crowds.",
    ], [
        "Which day did we plan for Nara?", "Where are we staying in Kyoto?",
        "What time does our flight land?", "Do we need a rail pass for the trip?",
        "What did Sam want to see first?",
    ], [
        "Actually, we land at Itami, not Kansai.", "No, the ryokan is for three nights, not four.",
        "That's not right, Nara is on the Thursday.",
    ]),
    (["work", "engineering"], [
        "We are moving the search service from Elasticsearch to Postgres 16 with pgvector this quarter.",
        "The search migration owner is Dana; the cut-over is planned for the second week of March.",
        "Our search p95 target after the migration is 120 ms at 800 queries per second.",
    ], [
        "Who owns the search migration?", "When is the cut-over?", "What is the latency target for search?",
        "Which index type did we pick for the vectors?", "What is left before the cut-over?",
    ], [
        "Actually, the target is 100 ms, not 120.", "That's not correct, Dana moved to billing; Ravi owns it now.",
        "No, the cut-over slipped to April.",
    ]),
    (["health"], [
        "I'm training for a 10 km race on 18 May; my goal is under 50 minutes.",
        "Physio said to keep long runs under 14 km until my calf heals.",
        "This week I ran 5 km at 4:55 per km and felt strong.",
    ], [
        "What is my race goal?", "How far can my long runs be right now?", "When is the race?",
        "What pace did I run this week?", "What did the physio say?",
    ], [
        "Actually, the race is on 25 May.", "No, the limit is 12 km, not 14.",
        "That's wrong, my pace was 5:05 per km.",
    ]),
    (["home"], [
        "The balcony gets sun from noon until five, so I planted tomatoes and basil there.",
        "The landlord, Mr. Ortiz, agreed to fix the kitchen window before the end of the month.",
        "Our internet plan renews on 1 June and the price goes up to 45 euros.",
    ], [
        "When does the balcony get sun?", "Who is fixing the kitchen window?",
        "When does the internet plan renew?", "What did I plant on the balcony?",
    ], [
        "Actually, it's mint, not basil.", "No, the price goes up to 49 euros.",
        "That's not it, the window is in the bedroom.",
    ]),
    (["work", "hiring"], [
        "We are hiring two backend engineers; interviews run on Tuesdays and Thursdays.",
        "Candidate Priya Nair did well on the system design round and meets the team on Friday.",
        "The hiring budget allows offers up to 92,000 euros for senior roles.",
    ], [
        "Which days do we interview?", "How did Priya do?", "What is the offer limit for senior roles?",
        "How many engineers are we hiring?", "What is next for Priya?",
    ], [
        "Actually, interviews moved to Wednesdays.", "No, the limit is 95,000 for senior roles.",
        "That's not right, she meets the team on Monday.",
    ]),
    (["learning"], [
        "I'm learning Portuguese with a tutor, Rita, every Monday at 7 pm.",
        "My goal is to pass the A2 exam in October.",
        "Rita asked me to practise the past tense with ten sentences a day.",
    ], [
        "When is my Portuguese lesson?", "Which exam am I preparing for?", "What homework did Rita give?",
        "Who is my tutor?",
    ], [
        "Actually, the lesson is at 6 pm.", "No, it's the B1 exam now.",
        "That's wrong, it was twenty sentences.",
    ]),
]
LATE = "Sorry, I got pulled away."
ACKS = ["Thanks, that works.", "Perfect, thank you.", "Got it.", "Great, that helps.", "Thanks!",
        "That makes sense, thanks."]
STYLES = [("deep", 0.35), ("chronological", 0.10), (None, 0.55)]
PROFILES = [("balanced-default", 0.40), ("fast-chat", 0.25), ("deep-research", 0.20), ("recall-recent", 0.15)]
# How satisfied the simulated user tends to be with an answer (added to a uniform draw in [0, 1)).
MODEL_BONUS = {"deep": 0.12, "fast": 0.0}
PROFILE_BONUS = {"deep-research": 0.06, "balanced-default": 0.02, "fast-chat": -0.02, "recall-recent": -0.05}


class SimClock:
    """The simulated "now": each reading moves it on by a second or two, as answering takes time."""

    def __init__(self, start: datetime, rng: random.Random):
        self.t, self.rng = start, rng

    def __call__(self) -> datetime:
        now = self.t
        self.t += timedelta(seconds=self.rng.uniform(0.5, 2.5))
        return now


def _pick(rng: random.Random, weighted: list[tuple[object, float]]) -> object:
    return rng.choices([v for v, _ in weighted], [w for _, w in weighted])[0]


def _offline(wb: Workbench) -> Workbench:
    """The same services and embedder without an LLM, so 500 demo turns never call a paid API."""
    if not wb.llm.configured:
        return wb
    sim = Workbench(wb.settings, embedder=wb.embedder, llm=NoLLM())
    sim.services = wb.services
    return sim


def _reaction(rng: random.Random, satisfaction: float) -> tuple[str, float]:
    """What the user does next and after how many seconds, from how satisfied they are."""
    if satisfaction > 0.95:
        return "ack", rng.uniform(4, 28)
    if satisfaction > 0.55:
        return rng.choice(["ack", "ask"]), rng.uniform(20, 110)
    if satisfaction > 0.30:
        return "ask", rng.uniform(60, 500)
    if satisfaction > 0.15:
        return "correct", rng.uniform(15, 240)
    return rng.choice(["leave", "late"]), rng.uniform(700, 1500)


# (chance, rating, comments) per reaction: pleased users sometimes give a thumbs up, correcting ones a
# thumbs down, often with a word of why.
RATINGS = {"ack": (0.35, "up", [""]), "ask": (0.05, "up", [""]),
           "correct": (0.5, "down", ["", "Wrong details.", "That was out of date.", "Mixed up two things."])}


def _rating(rng: random.Random, action: str) -> tuple[str, str] | None:
    """The explicit rating the user gives besides their reaction, if any: (up or down, comment)."""
    chance, rating, comments = RATINGS.get(action, (0.0, "up", [""]))
    return (rating, rng.choice(comments)) if rng.random() < chance else None


def load(wb: Workbench, say: Callable[[str], None]) -> None:
    reset(wb)
    sim = _offline(wb)
    instance = wb.settings.instance
    rng = random.Random(SEED)
    rate_rng = random.Random(SEED + 1)
    real_now = datetime.now(UTC)
    deep = wb.settings.model_deep
    chains = turns = 0
    told = [0] * len(TOPICS)  # how many of each topic's facts the user has told so far
    skipped: list[str] = []  # the user's own chains named like a demo session
    for days_ago in range(DAYS - 1, -1, -1):
        day = (real_now - timedelta(days=days_ago)).replace(hour=0, minute=0, second=0, microsecond=0)
        weekend = day.weekday() >= 5
        slots = rng.sample(range(7, 23, 2), k=rng.randint(2, 3) if weekend else rng.randint(4, 7))
        for n, hour in enumerate(sorted(slots)):
            start = day + timedelta(hours=hour, minutes=rng.randint(0, 40))
            if start > real_now - timedelta(hours=2):  # sessions end before "now"
                continue
            chain_id = f"{PREFIX}{day:%m%d}-{n}"
            if marks.is_foreign_chain(wb, MARK, chain_id):
                skipped.append(chain_id)
                continue
            marks.mark(wb, MARK, [chain_id])
            turns += _session(sim, instance, rng, chain_id, SimClock(start, rng), deep, told, rate_rng)
            chains += 1
    marked = wb.thoughts.sweep_abandoned(instance)
    note = " (extractive answers: an LLM is configured but the demo does not spend tokens)" \
        if wb.llm.configured else ""
    say(f"demo: {chains} feedback conversations, {turns} turns over {DAYS} days{note}; "
        f"{marked} more answers marked abandoned")
    if skipped:
        say(f"demo: {len(skipped)} chains named like demo sessions are not the demo's; left as they are "
            f"({', '.join(skipped[:3])}{', …' if len(skipped) > 3 else ''})")


def _session(wb: Workbench, instance: str, rng: random.Random, chain_id: str, clock: SimClock,
             deep: str, told: list[int], rate_rng: random.Random) -> int:
    """One conversation; returns the number of turns it took."""
    topic = rng.randrange(len(TOPICS))
    tags, facts, questions, corrections = TOPICS[topic]

    def opener() -> str:
        # Facts are told once, in order (the first session of a topic tells one); later sessions mostly ask.
        if told[topic] < len(facts) and (told[topic] == 0 or rng.random() < 0.35):
            told[topic] += 1
            return facts[told[topic] - 1]
        return rng.choice(questions)

    style = _pick(rng, STYLES)
    profile = _pick(rng, PROFILES)
    # deep-research pulls more context: over 8 items sends a default-style turn to the deep model too.
    top_k = 10 if profile == "deep-research" else 5
    planned = rng.randint(2, 6)
    remember = Remember(wb, clock=clock, origin=Origin(source="demo"))
    text = opener()
    recent_bonus = 0.05 if clock.t > datetime.now(UTC) - timedelta(days=10) else 0.0
    for k in range(1, planned + 1):
        wb.thoughts.sweep_abandoned(instance, clock.t.timestamp())  # as the live service would
        last = k == planned
        result = remember.run(UiRememberParams(
            thought=text, chain_id=chain_id, thought_number=k, total_thoughts=planned, style=style,
            profile=profile, top_k=top_k, tags=tags, next_thought_needed=not last or rng.random() < 0.3),
            instance=instance)
        if last:
            return k
        tier = "deep" if result.model_selected == deep else "fast"
        bonus = MODEL_BONUS[tier] + PROFILE_BONUS.get(profile, 0.0) + (recent_bonus if tier == "deep" else 0.0)
        action, gap = _reaction(rng, rng.random() + bonus)
        if rated := _rating(rate_rng, action):
            rated_at = clock.t + timedelta(seconds=gap / 2)
            wb.thoughts.record_rating(instance, result.thought2_id, *rated, rated_at)
        if action == "leave":
            return k  # never comes back: the sweep marks the answer abandoned
        clock.t += timedelta(seconds=gap)
        question = opener() if rng.random() < 0.2 else rng.choice(questions)
        text = {"ack": f"{rng.choice(ACKS)} {question}", "ask": question,
                "correct": rng.choice(corrections), "late": f"{LATE} {question}"}[action]
    return planned


def reset(wb: Workbench) -> None:
    marks.remove_chains(wb, MARK)
