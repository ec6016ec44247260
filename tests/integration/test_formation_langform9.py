"""Rules 2026-12-07.17 on the real servers: a sentence of two facts of the user's is two observations, and "Where do
I live?" is answered from the first (kept whole, its relevance was 0.326, under the floor); a fact told again in
one message is one observation; a message older rules formed whole is formed again by a plain run with each
sentence at its place (its supersession kept), the repeats removed, and a cut clause forgotten stays forgotten."""

from datetime import UTC, datetime, timedelta

from core import usecases as uc
from core.formation import observations
from core.formation.observations import observation_id
from tests.integration.test_formation import store_chain
from tests.support.clock import Clock

JOINED = "I moved to Porto last month and I work as a nurse at São João hospital."
SISTER = "My sister is a doctor."
HIKE = "I hiked the Rota Vicentina hiking trail last spring."
MESSAGE = f"{JOINED} {SISTER} " + f"{HIKE} " * 3


def _observations(wb, instance, message_id):
    [message] = wb.index.records(instance, ids=[message_id])
    rows = wb.index.records(instance, ids=message.metadata.get("observations", []))
    return message, {r.id.rsplit("-", 1)[1]: r for r in rows}


def test_where_do_i_live_is_answered_from_the_first_of_two_facts(workbench, instance):
    clock = Clock(datetime.now(UTC) - timedelta(hours=1))
    clock.advance(30)
    told = uc.remember(workbench, uc.UiRememberParams(thought=JOINED, chain_id="porto", instance=instance),
                       clock=clock)
    _, formed = _observations(workbench, instance, told.thought1_id)
    assert sorted(o.content for o in formed.values()) == ["I moved to Porto last month",
                                                         "I work as a nurse at São João hospital."]
    clock.advance(30)
    asked = uc.remember(workbench, uc.UiRememberParams(thought="Where do I live?", chain_id="porto",
                                                       instance=instance), clock=clock)
    assert asked.memory == "found" and "I moved to Porto last month" in [c.content for c in asked.context]


def test_a_run_forms_again_what_older_rules_formed_whole_and_repeated(workbench, instance, monkeypatch):
    store_chain(workbench, instance, "porto", [MESSAGE, "Noted.", "No, my sister is a teacher, not a doctor.",
                                               "Noted."], datetime.now(UTC) - timedelta(days=3))
    # The rules of .16: each sentence one fact, a repeat as many.
    monkeypatch.setattr(observations, "RULES", "2026-12-07.16")
    monkeypatch.setattr("core.formation.run.RULES", "2026-12-07.16")
    monkeypatch.setattr(observations, "clauses", lambda statement: [statement])
    monkeypatch.setattr(observations, "_distinct", lambda placed, correcting: (placed, correcting))
    uc.formation_run(workbench, uc.FormationRun(instance=instance))
    _, old = _observations(workbench, instance, "porto-0")
    assert [old[p].content for p in sorted(old)] == [JOINED, SISTER, HIKE, HIKE, HIKE]
    assert old["1"].metadata.get("superseded_by")  # the sister's job, corrected
    monkeypatch.undo()

    run = uc.formation_run(workbench, uc.FormationRun(instance=instance))
    assert (run.chains, run.removed) == (1, 2), run
    _, new = _observations(workbench, instance, "porto-0")
    assert {p: o.content for p, o in new.items()} == {
        "0": "I moved to Porto last month", "1": SISTER, "2": HIKE, "5": "I work as a nurse at São João hospital."}
    assert new["1"].metadata["superseded_by"] == old["1"].metadata["superseded_by"]
    assert not {"superseded_by", "superseded_at"} & (new["0"].metadata.keys() | new["5"].metadata.keys())
    again = uc.formation_run(workbench, uc.FormationRun(instance=instance, every_chain=True))
    assert (again.removed, again.observations) == (0, 5)  # the correction's and the four above

    # Forgetting the first clause leaves the second at its place, and a run gives its place to no other fact.
    uc.forget(workbench, uc.Forget(target="memory", id=new["0"].id, instance=instance))
    [said] = [t.thought for t in workbench.thoughts.chain_thoughts(instance, "porto") if t.id == "porto-0"]
    assert said.startswith("[deleted] and I work as a nurse at São João hospital. My sister")
    for _ in range(2):
        uc.formation_run(workbench, uc.FormationRun(instance=instance, every_chain=True))
        message, left = _observations(workbench, instance, "porto-0")
        assert {p: o.content for p, o in left.items()} == {
            "1": SISTER, "2": HIKE, "5": "I work as a nurse at São João hospital."}
        assert message.metadata["forgotten_places"] == [0]
    # … and the second clause too.
    uc.forget(workbench, uc.Forget(target="memory", id=new["5"].id, instance=instance))
    for _ in range(2):
        uc.formation_run(workbench, uc.FormationRun(instance=instance, every_chain=True))
        message, left = _observations(workbench, instance, "porto-0")
        assert {p: o.content for p, o in left.items()} == {"1": SISTER, "2": HIKE}
        assert message.metadata["forgotten_places"] == [0, 5]
        assert workbench.index.get(instance, [observation_id(instance, "porto-0", 5)]) == []
