"""AppTest of the Past tasks page: search with key points, the nearest-distance hint, adding a text, history.

The app builds its own Workbench from the environment (`app_env` points DATA_DIR at the test servers);
users get fresh ids, so the shared "default" instance stays clean between tests.
"""

from __future__ import annotations

import uuid

import pytest
from streamlit.testing.v1 import AppTest

from core import usecases as uc
from core.past_tasks.store import PastTaskStore, ProducedTextInput
from tests.app.conftest import open_page as open_app


@pytest.fixture
def user(workbench) -> str:
    """A user of the app's instance with three texts, and another user whose text must never show."""
    user_id = f"u-{uuid.uuid4().hex[:8]}"
    inst = workbench.settings.instance
    texts = [("Forklift maintenance contract", "LiftPro repairs broken forklifts within 24 hours. "
              "The contract costs 310 EUR per forklift per month."),
             ("Late pallet deliveries", "Kartonwerk delivered cardboard pallets two days late three times."),
             ("Seminar programme", "Six external speakers give talks on Thursdays at 4 pm.")]
    store = PastTaskStore(workbench.pool(), workbench.embedder)
    store.ingest([ProducedTextInput(instance=inst, user_id=user_id, task="note", title=t, production=p)
                  for t, p in texts])
    store.ingest([ProducedTextInput(instance=inst, user_id=user_id + "-other", task="note",
                                    title="Other user's forklift notes",
                                    production="Forklift repairs of another user.")])
    return user_id


def open_page(user_id: str) -> AppTest:
    at = open_app("pages/past_tasks.py", timeout=30)
    at.session_state["pt_user"] = user_id
    return at.run()


def search(at: AppTest, query: str, max_distance: float) -> AppTest:
    at.text_input(key="pt_query").input(query)
    at.slider(key="pt_max_distance").set_value(max_distance)
    return next(b for b in at.button if b.label == "Search").click().run()


def markdown(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown)


def test_search_shows_cards_with_extractive_key_points(app_env, user):
    at = open_page(user)
    assert not at.exception and at.title[0].value == "Past tasks"
    at = search(at, "forklift repairs", 0.9)
    assert not at.exception and not at.error
    shown = markdown(at)
    assert "Forklift maintenance contract" in shown
    assert "LiftPro repairs broken forklifts within 24 hours" in shown  # a key point, escaped Markdown
    assert "Other user" not in shown
    assert any("extractive" in c.value for c in at.caption)
    assert any("distance" in c.value for c in at.caption)


def test_nothing_within_names_the_nearest_distance_and_widens(app_env, user):
    at = search(open_page(user), "forklift repairs", 0.0)
    expected = "Nothing within distance 0.00; the nearest past task is at "
    nothing = [i.value for i in at.info if i.value.startswith(expected)]
    assert len(nothing) == 2  # the result, and the same query in the history tab
    widen = next(b for b in at.button if b.label.startswith("Search again with max distance"))
    at = widen.click().run()
    assert not at.exception
    assert len([i for i in at.info if i.value.startswith("Nothing within")]) == 1  # only in the history now
    assert at.slider(key="pt_max_distance").value > 0
    assert "Forklift maintenance contract" in markdown(at)


def test_a_pasted_text_is_searchable_at_once_and_queries_are_in_the_history(app_env, user):
    at = open_page(user)
    at.text_input(key="pt_paste_title").input("Budget review")
    at.text_area(key="pt_paste_text").input("The marketing budget was cut by 12 percent in the review.")
    at = next(b for b in at.button if b.label == "Add to past tasks").click().run()
    assert not at.exception and "Budget review (new)" in at.success[0].value
    at = search(at, "marketing budget cut", 0.9)
    assert "Budget review" in markdown(at)
    labels = [e.label for e in at.expander]
    assert any("marketing budget cut" in label for label in labels)  # the history tab lists the query
    at.text_input(key="pt_history_contains").input("BUDGET").run()
    assert any("marketing budget cut" in e.label for e in at.expander)
    at.text_input(key="pt_history_contains").input("forklift").run()
    assert not any("marketing budget cut" in e.label for e in at.expander)
    assert "No query holds “forklift”." in [c.value for c in at.caption]


def test_the_slider_starts_at_the_embedders_default_and_says_so(app_env, user):
    at = open_page(user)
    assert at.slider(key="pt_max_distance").value == 0.65
    assert any("Default for `wordllama-l2-supercat-256`: 0.65 (calibrated" in c.value for c in at.caption)
    at.text_input(key="pt_query").input("forklift repairs")
    at = next(b for b in at.button if b.label == "Search").click().run()
    assert "Forklift maintenance contract" in markdown(at)


def test_the_query_limit_is_stated_and_enforced_by_the_input(app_env, user):
    at = open_page(user)
    assert at.text_input(key="pt_query").max_chars == uc.QUERY_MAX_CHARS
    assert any(c.value == uc.limit_caption("Queries", uc.QUERY_MAX_CHARS) for c in at.caption)


def test_an_e_mail_address_is_a_user_id_and_no_llm_is_said_once(app_env, workbench):
    """An agent's user key is often an e-mail address: the page takes it as typed; and without an LLM the
    page says so once, not again under each result."""
    user_id = f"maria+{uuid.uuid4().hex[:8]}@acme.com"
    PastTaskStore(workbench.pool(), workbench.embedder).ingest([ProducedTextInput(
        instance=workbench.settings.instance, user_id=user_id, task="email", title="Late pallet deliveries",
        production="Kartonwerk delivered cardboard pallets two days late three times.")])
    at = search(open_page(user_id), "late pallets", 0.9)
    assert not at.exception and not at.error
    assert "Late pallet deliveries" in markdown(at)
    assert len([c for c in at.caption if "No LLM" in c.value]) == 1


def test_the_query_suggests_no_subject_of_another_user(app_env, user):
    """The placeholder used to suggest "late pallet deliveries", a subject of one demo user's texts; the page
    opens on another, in whose texts the example found nothing. It now says what to type, not a query."""
    at = open_page(user)
    placeholder = at.text_input(key="pt_query").placeholder
    assert placeholder.startswith("precise keywords") and "e.g." not in placeholder, placeholder
