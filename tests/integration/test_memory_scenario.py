"""The issue's scripted chat, through real `uc.remember` turns offline (the product's embedder, no LLM):
facts told, questions asked, a correction, thanks. At each question the memory that answers it comes
first, no acknowledgement or question is ever retrieved, and after the correction the corrected fact
is found instead of the superseded one."""

from datetime import UTC, datetime, timedelta

from core import usecases as uc
from tests.support.clock import Clock

TOLD = ["My Lisbon trip is on 14 March, I fly out at 7am.",
        "My sister Ana is vegetarian.",
        "I work as a nurse at St Mary's hospital.",
        "My conference last spring was in Paris.",
        "We adopted a dog named Rex last month."]


def test_the_scripted_conversation(workbench, instance):
    clock = Clock(datetime.now(UTC) - timedelta(hours=3))
    chain = "scenario"
    retrieved: list = []
    sent: list[tuple[str, str]] = []  # (kind of message, text)

    def say(text: str, kind: str):
        clock.advance(40)
        r = uc.remember(workbench, uc.UiRememberParams(thought=text, chain_id=chain, instance=instance),
                        clock=clock)
        retrieved.extend(r.context)
        sent.append((kind, text))
        return r

    say("Hi!", "acknowledgement")
    say("What do I need to remember for the Lisbon trip?", "question")
    for fact in TOLD:
        say(fact, "statement")
        say("Thanks!", "acknowledgement")

    def first(question: str) -> str:
        context = say(question, "question").context
        assert context, question
        return context[0].content

    assert first("When is my Lisbon trip?") == TOLD[0]
    assert first("What does my sister Ana eat?") == TOLD[1]
    assert first("Where do I work?") == TOLD[2]
    assert first("Where was my conference?") == TOLD[3]
    say("No, it was Lyon.", "correction")
    say("Got it, thanks.", "acknowledgement")
    after = say("Which city was the conference in?", "question").context
    contents = [c.content for c in after]
    assert contents[0] == f"It was Lyon. (correcting: {TOLD[3]})", contents
    assert TOLD[3] not in contents  # superseded: kept, not retrieved
    assert first("What's my dog called?") == TOLD[4]

    # Nothing a question or a thanks said was ever handed to synthesis as a memory.
    asked = {text for kind, text in sent if kind in ("question", "acknowledgement")}
    assert not asked & {c.content for c in retrieved}
    # The superseded fact is kept, marked with when it stopped being true and what replaced it.
    history = uc.fact_history(workbench, uc.FactHistoryRequest(instance=instance, memory_id=after[0].id))
    assert [m.content for m in history.facts] == [TOLD[3], contents[0]]
    assert history.facts[0].superseded_by == after[0].id and history.facts[0].superseded_at is not None
