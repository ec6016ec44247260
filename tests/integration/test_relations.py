"""Who is who, end to end: the user says "My daughter Inês loves drawing." and, later, "Inês turns 7 on
October 10."; asked "How old is my daughter?", retrieval finds the Inês memories first, the one that
answers included, through real offline turns (`uc.remember`, as `workbench remember`; `uc.retrieval_report`,
as `workbench retrieve`). Deleting the memory that told who the daughter is, or its chain, takes the
relation with it: the question no longer reaches "Inês turns 7…"."""

from __future__ import annotations

from core import usecases as uc
from core.index.partitions import searched_partitions
from core.retrieval.relations import related_words

DAUGHTER = "My daughter Inês loves drawing."
BIRTHDAY = "Inês turns 7 on October 10."
OTHERS = ["I work as a nurse at the city hospital.", "My car is a blue Honda Civic.",
          "We are planning a trip to Lisbon in March.", "My favourite food is sushi."]
QUESTION = "How old is my daughter?"


def tell(wb, instance: str, text: str) -> uc.UiRememberResult:
    """One `workbench remember` call: a turn of a new chain."""
    return uc.remember(wb, uc.UiRememberParams(thought=text, instance=instance))


def retrieved(wb, instance: str, query: str = QUESTION) -> list[str]:
    report = uc.retrieval_report(wb, uc.RetrieveReportRequest(query=query, instance=instance))
    return [m["content"] for m in report.memories]


def relations(wb, instance: str) -> list[dict]:
    with wb.pool().connection() as conn:
        rows = conn.execute("SELECT metadata->'relations' FROM memory WHERE instance = %s "
                            "AND metadata ? 'relations'", (instance,)).fetchall()
    return [r for (found,) in rows for r in found]


def told(wb, instance: str) -> dict[str, uc.UiRememberResult]:
    return {text: tell(wb, instance, text) for text in [DAUGHTER, *OTHERS[:2], BIRTHDAY, *OTHERS[2:]]}


def test_my_daughter_is_found_by_her_name(workbench, instance):
    told(workbench, instance)
    assert relations(workbench, instance) == [{"holder": "user", "role": "daughter", "name": "Inês"}]

    # `workbench retrieve`: the two memories about Inês first, the one that answers among them (before,
    # the question reached only the first: the other shares no word with it)
    found = retrieved(workbench, instance)
    assert set(found[:2]) == {DAUGHTER, BIRTHDAY}, found
    # …and a chat turn hands it to synthesis (above the relevance floor)
    answer = tell(workbench, instance, QUESTION)
    assert BIRTHDAY in [c.content for c in answer.context], answer.context
    # The name also reads as its role: "Inês" finds what was said of "my daughter"
    assert retrieved(workbench, instance, "What does Inês like?")[0] == DAUGHTER


def test_deleting_the_memory_that_told_it_forgets_the_relation(workbench, instance):
    said = told(workbench, instance)
    with workbench.search_pool().connection() as conn:
        assert related_words(conn, QUESTION, searched_partitions(workbench.search_pool(), [instance]))
    uc.forget(workbench, uc.Forget(instance=instance, target="memory", id=said[DAUGHTER].thought1_id))
    assert relations(workbench, instance) == []
    with workbench.search_pool().connection() as conn:
        assert related_words(conn, QUESTION, searched_partitions(workbench.search_pool(), [instance])) == []
    assert BIRTHDAY not in retrieved(workbench, instance)


def test_deleting_the_chain_forgets_the_relation(workbench, instance):
    said = told(workbench, instance)
    assert BIRTHDAY in retrieved(workbench, instance)
    uc.forget(workbench, uc.Forget(instance=instance, target="chain", id=said[DAUGHTER].chain_id))
    assert relations(workbench, instance) == []
    assert BIRTHDAY not in retrieved(workbench, instance)


def test_a_name_reads_as_its_role(workbench, instance):
    for text in ["My son loves football.", "Our son Tomás is 3.", *OTHERS]:
        tell(workbench, instance, text)
    # "Tomás" stands for "my son" too: what was said of "my son" without his name is found by it
    assert "My son loves football." in retrieved(workbench, instance, "What do we know about Tomás?")[:2]
