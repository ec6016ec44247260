"""Demo: a dozen realistic conversations over the last 30 days, run through ui_remember itself.

A simulated clock replays each chain at its day and hour, with realistic gaps between turns, so the
stored times, retrieval recency and feedback all come out of the real flow.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from core.conversation.metrics import Origin
from core.conversation.turn import Remember, UiRememberParams
from core.demo import marks
from core.runtime import Workbench

# (chain id, days ago, hour, tags, [(seconds since previous turn, user text)])
CHAINS: list[tuple[str, int, int, list[str], list[tuple[int, str]]]] = [
    ("lisbon-trip", 29, 19, ["travel"], [
        (0, "I'm planning a trip to Lisbon from 12 to 16 May with my sister Ana."),
        (40, "We want to stay in Alfama and visit the Gulbenkian museum on the Tuesday."),
        (25, "Thanks! Also remember that Ana is vegetarian, so restaurants need good veggie options."),
    ]),
    ("q3-budget", 27, 10, ["work", "finance"], [
        (0, "The Q3 marketing budget was approved at 48,000 euros, down from 55,000."),
        (90, "Actually, it was 46,500 euros after the legal fees were moved to another line."),
        (50, "Got it. The next budget review with Priya is on the first Monday of October."),
    ]),
    ("rex-vet", 25, 8, ["pets"], [
        (0, "Rex, my border collie, has his yearly vaccination at the Northside vet clinic."),
        (70, "The vet said he should lose about two kilos, so we cut his kibble to 300 grams a day."),
    ]),
    ("kitchen-reno", 22, 20, ["home"], [
        (0, "We chose oak cabinets and a white quartz worktop for the kitchen renovation."),
        (35, "The contractor, Marek, starts on 3 November and estimates three weeks of work."),
        (200, "No, the worktop is grey quartz, not white. We changed it last week."),
    ]),
    ("python-migration", 20, 14, ["work", "engineering"], [
        (0, "Our billing service still runs Python 3.9; we must move it to 3.11 before the January freeze."),
        (28, "The blocker is the old Celery 4 dependency; Tomasz is testing Celery 5.3 in staging."),
        (45, "Perfect, and the load test target is 1,200 requests per second at p95 under 150 ms."),
    ]),
    ("running-plan", 18, 7, ["health"], [
        (0, "I signed up for the Porto half marathon on 2 November; my goal is under 1 hour 55."),
        (60, "My long run this Sunday was 16 km at 5:40 per km and my knee felt fine."),
    ]),
    ("book-club", 15, 21, ["hobbies"], [
        (0, "Book club picked 'Klara and the Sun' by Kazuo Ishiguro for next month."),
        (20, "Great. We meet at Joana's place on the last Thursday, and I'm bringing the dessert."),
    ]),
    ("redis-incident", 12, 16, ["work", "engineering"], [
        (0, "Yesterday's outage was Redis running out of memory because session keys had no TTL."),
        (33, "We set a 24 hour TTL on session keys and added an alert at 80 percent memory."),
        (41, "That works. The postmortem is due Friday and Lena owns the follow-up actions."),
    ]),
    ("gift-ideas", 9, 18, ["family"], [
        (0, "My dad turns 70 on 14 December; he loves jazz and old Leica cameras."),
        (80, "I'm thinking of a Bill Evans vinyl box set, around 120 euros."),
    ]),
    ("dentist", 6, 9, ["health"], [
        (0, "Dentist appointment moved to Wednesday 10:30 with Dr. Okafor for the crown fitting."),
    ]),
    ("team-offsite", 4, 11, ["work"], [
        (0, "The engineering offsite is in Sintra on 20 and 21 January, 14 people."),
        (55, "Budget is 9,000 euros including the venue, and we need a room with a projector."),
        (30, "Thanks. Agenda owner is Priya; I handle travel bookings."),
    ]),
    ("recall-check", 1, 10, ["travel"], [
        (0, "What do I need to remember for the Lisbon trip with Ana?"),
        (45, "And when does Marek start on the kitchen?"),
    ]),
]


MARK = "chain"


def load(wb: Workbench, say: Callable[[str], None]) -> None:
    reset(wb)  # loading twice gives the same chains, not twice their turns
    now = datetime.now(UTC)
    instance = wb.settings.instance
    for chain_id, days_ago, hour, tags, turns in CHAINS:
        if marks.is_foreign_chain(wb, MARK, chain_id):
            say(f"demo: a chain named {chain_id!r} is not the demo's; left as it is, not loaded")
            continue
        marks.mark(wb, MARK, [chain_id])
        clock = now.replace(hour=hour, minute=5, second=0, microsecond=0) - timedelta(days=days_ago)
        remember = Remember(wb, clock=lambda: clock, origin=Origin(source="demo"))
        for n, (gap, text) in enumerate(turns, start=1):
            clock += timedelta(seconds=gap)
            remember.run(UiRememberParams(thought=text, chain_id=chain_id, thought_number=n,
                                          total_thoughts=len(turns), tags=tags,
                                          next_thought_needed=n < len(turns) or days_ago > 0),
                         instance=instance)
            clock += timedelta(seconds=3)  # the answer arrives a moment after the question
    marked = wb.thoughts.sweep_abandoned(instance)
    say(f"demo: {len(CHAINS)} conversations, {marked} answers marked abandoned")


def reset(wb: Workbench) -> None:
    marks.remove_chains(wb, MARK)
