"""Updates on the real servers: a statement that narrates a change ("We just moved to Denver last week")
supersedes the facts stating the state it replaces, told in other conversations; it stays a statement; a
correction supersedes every fact stating what it replaces; near-misses supersede nothing; deleting either
side mends the history; forming again changes nothing."""

from datetime import UTC, datetime, timedelta

from core import usecases as uc
from core.formation.supersede import SUPERSEDED_ALSO, UPDATE
from tests.support.clock import Clock


def turn(wb, instance, chain, text, clock):
    clock.advance(30)
    return uc.remember(wb, uc.UiRememberParams(thought=text, chain_id=chain, instance=instance), clock=clock)


def facts(wb, instance):
    """content → metadata of the instance's observations."""
    with wb.index.pool.connection() as conn:
        return {c: m for c, m in conn.execute(
            "SELECT content, metadata FROM memory WHERE instance = %s AND kind = 'observation'", (instance,))}


def superseded(wb, instance):
    return sorted(c for c, m in facts(wb, instance).items() if "superseded_at" in m)


CHICAGO = ["I live in Chicago and it's freezing here. What's a warming soup I can make tonight?",
           ("Maya is 4 and refuses to eat vegetables. We live in a small apartment in Logan Square in Chicago, "
            "any tips?")]


def test_a_narrated_move_supersedes_the_homes_it_replaces_and_stays_a_statement(workbench, instance):
    clock = Clock(datetime.now(UTC) - timedelta(hours=2))
    for text in CHICAGO:
        turn(workbench, instance, "2023", text, clock)
    turn(workbench, instance, "misc", "My brother just moved to Boston.", clock)
    turn(workbench, instance, "2024", "We just moved to Denver last week. Does altitude change baking?", clock)
    assert superseded(workbench, instance) == ["I live in Chicago and it's freezing here.",
                                               "We live in a small apartment in Logan Square in Chicago."]
    moved = facts(workbench, instance)["We just moved to Denver last week."]
    assert moved["message_kind"] == "statement" and moved["update"] is True
    assert "Maya is 4 and refuses to eat vegetables." in facts(workbench, instance)
    assert sum(bool(m.get(SUPERSEDED_ALSO)) for m in facts(workbench, instance).values()) == 1  # one named
    asked = turn(workbench, instance, "ask", "Where do I live now?", clock)
    assert not [c for c in asked.context if "Chicago" in c.content]


def test_near_misses_supersede_nothing(workbench, instance):
    clock = Clock(datetime.now(UTC) - timedelta(hours=2))
    for text in ("I live in Chicago.", "I drive a 2015 Honda Civic.", "I work at Acme Logistics."):
        turn(workbench, instance, "told", text, clock)
    for text in ("My brother just moved to Denver.", "We also bought a second car, a Toyota RAV4.",
                 "We moved to Chicago in 2019.", "If we moved to Denver, Priya would have a shorter commute.",
                 "My wife just started at Brightwave Health.", "I'd love to drive a Tesla someday."):
        turn(workbench, instance, "later", text, clock)
    assert superseded(workbench, instance) == []


def test_a_correction_supersedes_every_fact_stating_the_state_it_replaces(workbench, instance):
    """Finding 12 of the ChatGPT import: "No, I don't live in Chicago anymore" had superseded one of the two
    Chicago facts. Deleting the one superseded along with it leaves what the correction names as it was;
    deleting the correction makes both current again."""
    clock = Clock(datetime.now(UTC) - timedelta(hours=2))
    for text in CHICAGO:
        turn(workbench, instance, "2023", text, clock)
    fix = turn(workbench, instance, "fix", "No, I don't live in Chicago anymore: I live in Denver now.", clock)
    assert superseded(workbench, instance) == ["I live in Chicago and it's freezing here.",
                                               "We live in a small apartment in Logan Square in Chicago."]
    rows = facts(workbench, instance)
    (correction,) = [m for c, m in rows.items() if c.startswith("I don't live in Chicago anymore")]
    named = [c for c, m in rows.items() if "superseded_at" in m and not m.get(SUPERSEDED_ALSO)]
    along = [c for c, m in rows.items() if m.get(SUPERSEDED_ALSO)]
    assert len(named) == 1 and len(along) == 1 and "update" not in correction

    report = uc.forget(workbench, uc.Forget(instance=instance, target="memory", id=fix.thought1_id))
    assert superseded(workbench, instance) == [], report.notes


def test_deleting_a_fact_superseded_along_leaves_the_named_one_superseded(workbench, instance):
    clock = Clock(datetime.now(UTC) - timedelta(hours=2))
    told = [turn(workbench, instance, f"told-{n}", text, clock) for n, text in enumerate(CHICAGO)]
    turn(workbench, instance, "2024", "We just moved to Denver last week.", clock)
    rows = facts(workbench, instance)
    along = [c for c, m in rows.items() if m.get(SUPERSEDED_ALSO)]
    assert len(along) == 1
    gone = told[0] if along[0].startswith("I live") else told[1]
    uc.forget(workbench, uc.Forget(instance=instance, target="memory", id=gone.thought1_id))
    rows = facts(workbench, instance)
    (update,) = [m for c, m in rows.items() if c == "We just moved to Denver last week."]
    kept = [c for c, m in rows.items() if "superseded_at" in m]
    assert len(kept) == 1 and rows[kept[0]]["superseded_by"] and update["supersedes"]


def test_an_age_said_again_supersedes_the_younger_one_and_forming_again_changes_nothing(workbench, instance):
    clock = Clock(datetime.now(UTC) - timedelta(hours=2))
    turn(workbench, instance, "a", "Maya is 5 now and has a lot of energy.", clock)
    turn(workbench, instance, "b", "Leo turned 2 yesterday.", clock)
    turn(workbench, instance, "c", "Maya is 6 now and has a lot of energy.", clock)
    assert superseded(workbench, instance) == ["Maya is 5 now and has a lot of energy."]
    before = facts(workbench, instance)
    uc.formation_run(workbench, uc.FormationRun(instance=instance, every_chain=True))
    assert facts(workbench, instance) == before


def test_the_explorer_says_a_later_statement_not_a_correction_superseded_the_fact(workbench, instance):
    clock = Clock(datetime.now(UTC) - timedelta(hours=2))
    turn(workbench, instance, "2023", CHICAGO[0], clock)
    turn(workbench, instance, "2024", "We just moved to Denver last week.", clock)
    hits = {h.content: h for h in uc.memory_search(workbench, uc.ExplorerSearch(
        query="live Chicago Denver moved", instance=instance, mode="text", kinds=["observation"])).hits}
    old = hits["I live in Chicago and it's freezing here."]
    assert old.superseded_at is not None and old.superseded_by_update
    assert old.superseded_by_content == "We just moved to Denver last week."


def test_a_move_finds_the_home_it_replaces_among_many_facts_sharing_its_words(workbench, instance):
    """"We just moved to Denver last week." shares no word with "I live in Chicago…": among a history's
    thousands of facts the search for it found others first, and a two-year import had none of its moves
    superseded. The facts naming the attribute it changes are candidates too."""
    clock = Clock(datetime.now(UTC) - timedelta(hours=3))
    turn(workbench, instance, "2023", CHICAGO[0], clock)
    for n in range(15):  # facts that share the update's words, so its search finds them first
        turn(workbench, instance, f"busy-{n}", f"Last week we visited the Denver museum number {n} with friends.",
             clock)
    turn(workbench, instance, "2024", "We just moved to Denver last week.", clock)
    assert superseded(workbench, instance) == ["I live in Chicago and it's freezing here."]


def test_the_user_pass_s_changes_answer_with_the_current_fact(workbench, instance):
    """A coffee order, a diet and a manager changed without "No," (one chain per topic, as an assistant
    stores them over MCP): each question's first memory is the current fact, the old one superseded; "Great
    idea." is an acknowledgement, not retrieved for a question about a birthday."""
    clock = Clock(datetime.now(UTC) - timedelta(hours=2))
    topics = {"coffee": ("I prefer my coffee black, no sugar.", "I switched to oat milk lattes, no more black coffee.",
                         "What's my coffee order?", "oat milk"),
              "diet": ("I've been vegetarian since 2019.", "Actually, I started eating fish again, so I'm pescatarian now.",
                       "Am I vegetarian?", "pescatarian"),
              "work": ("My manager is Priya Shah.", "My new manager at Globex will be Tom Becker.",
                       "Who is my manager?", "Tom Becker")}
    turn(workbench, instance, "sam", "Sam's birthday is on March 3.", clock)
    for chain, (told, changed, _, _) in topics.items():
        turn(workbench, instance, chain, told, clock)
        turn(workbench, instance, "sam", "Great idea.", clock)
        turn(workbench, instance, chain, changed, clock)
    assert superseded(workbench, instance) == sorted(told for told, *_ in topics.values())
    for chain, (_, _, question, current) in topics.items():
        asked = turn(workbench, instance, f"ask-{chain}", question, clock)
        assert current in asked.context[0].content, (question, [c.content for c in asked.context])
    asked = turn(workbench, instance, "ask-sam", "When is Sam's birthday?", clock)
    assert "March 3" in asked.context[0].content and not [c for c in asked.context if c.content == "Great idea."]


def test_a_run_forming_again_frees_what_older_rules_superseded_by_a_statement_that_is_no_change(
        workbench, instance, monkeypatch):
    """Rules before 2026-12-07.9 read "Agora moro com a Ana." as a move to "Ana" and hid "Eu moro em Lisboa.";
    a data directory kept across versions is formed again by a plain run, which kept the mark: Lisbon stayed
    hidden. Now what no longer reads as a correction or a change supersedes nothing, and the fact is current."""
    clock = Clock(datetime.now(UTC) - timedelta(hours=2))
    monkeypatch.setattr("core.formation.observations.RULES", "2026-12-07.8")
    turn(workbench, instance, "home", "Eu moro em Lisboa.", clock)
    turn(workbench, instance, "later", "Agora moro com a Ana.", clock)
    with workbench.index.pool.connection() as conn:  # the marks the older rules left
        rows = dict(conn.execute("SELECT content, id FROM memory WHERE instance = %s AND kind = 'observation'",
                                 (instance,)).fetchall())
        conn.execute("UPDATE memory SET metadata = metadata || jsonb_build_object('superseded_at', %s::text, "
                     "'superseded_by', %s::text) WHERE instance = %s AND id = %s",
                     (clock.now.isoformat(), rows["Agora moro com a Ana."], instance, rows["Eu moro em Lisboa."]))
        conn.execute("UPDATE memory SET metadata = metadata || jsonb_build_object('supersedes', %s::text, %s::text, "
                     "true) WHERE instance = %s AND id = %s",
                     (rows["Eu moro em Lisboa."], UPDATE, instance, rows["Agora moro com a Ana."]))
    assert superseded(workbench, instance) == ["Eu moro em Lisboa."]
    monkeypatch.undo()
    run = uc.formation_run(workbench, uc.FormationRun(instance=instance))
    assert run.chains == 2 and any("1 memory current again" in n for n in run.notes)
    assert superseded(workbench, instance) == []
    assert not {"supersedes", UPDATE} & set(facts(workbench, instance)["Agora moro com a Ana."])
    again = uc.formation_run(workbench, uc.FormationRun(instance=instance, every_chain=True))
    assert superseded(workbench, instance) == [] and not any("current again" in n for n in again.notes)


def test_a_run_frees_what_a_correction_that_corrects_nothing_now_had_superseded_and_says_so(
        workbench, instance, monkeypatch):
    """Rules before 2026-12-07.14 read "Não, o meu irmão e a Ana vieram jantar." as a correction of "O meu irmão
    é o Rui." (their shared "irmão"). It still reads as a correction, of nothing now: a plain run takes its marks
    off, and its notes say the fact is current again (they said nothing of it)."""
    clock = Clock(datetime.now(UTC) - timedelta(hours=2))
    monkeypatch.setattr("core.formation.observations.RULES", "2026-12-07.13")
    turn(workbench, instance, "family", "O meu irmão é o Rui.", clock)
    turn(workbench, instance, "dinner", "Não, o meu irmão e a Ana vieram jantar.", clock)
    rows = facts(workbench, instance)
    fact = next(c for c in rows if "Rui" in c)
    correction = next(c for c in rows if "jantar" in c)
    with workbench.index.pool.connection() as conn:  # the mark the older rules left
        ids = dict(conn.execute("SELECT content, id FROM memory WHERE instance = %s AND kind = 'observation'",
                                (instance,)).fetchall())
        conn.execute("UPDATE memory SET metadata = metadata || jsonb_build_object('superseded_at', %s::text, "
                     "'superseded_by', %s::text) WHERE instance = %s AND id = %s",
                     (clock.now.isoformat(), ids[correction], instance, ids[fact]))
    assert superseded(workbench, instance) == [fact]
    monkeypatch.undo()
    run = uc.formation_run(workbench, uc.FormationRun(instance=instance))
    assert superseded(workbench, instance) == []
    assert "1 memory current again: the correction that had superseded it corrects nothing under these rules" \
        in run.notes, run.notes
    again = uc.formation_run(workbench, uc.FormationRun(instance=instance, every_chain=True))
    assert superseded(workbench, instance) == [] and not any("current again" in n for n in again.notes)
